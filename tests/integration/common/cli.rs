//! Running the `lance-csr` binary from the tests.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The binary, as a command to add arguments to.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lance-csr"))
}

/// The binary run with `args` to its end.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("binary runs")
}

/// The binary started with `args` in the background, its output discarded (cluster
/// processes).
pub fn spawn_quiet(args: &[&str]) -> Child {
    bin()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("binary starts")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// `text` queried on the graph at `graph` as CSV; the query must succeed.
pub fn query_csv(graph: &Path, text: &str) -> String {
    let o = run(&[
        "query",
        "--graph",
        graph.to_str().unwrap(),
        "--format",
        "csv",
        text,
    ]);
    assert!(o.status.success(), "{text}: {}", stderr(&o));
    stdout(&o)
}
