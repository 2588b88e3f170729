//! LSQB's nine subgraph counts on its own published data (sf0.003, projected-fk files in
//! `benches/lsqb/data/`, imported as published): the answers DuckDB gives on LSQB's SQL texts,
//! with our rules on (factorized counts, intersections) and on the join path.

use crate::common::cli::{run, stderr, stdout};
use crate::common::project_root;

/// `Person_knows_Person` -> `KNOWS`: the middle part of an edge file's name in UPPER_SNAKE.
fn rel_type(file: &str) -> String {
    let verb = file.split('_').nth(1).expect("From_verb_To");
    let mut out = String::new();
    for c in verb.chars() {
        if c.is_uppercase() {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[test]
fn lsqb_counts_agree_with_duckdb_on_published_data() {
    let root = project_root().join("benches/lsqb");
    let data = root.join("data/social-network-sf0.003-projected-fk");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let mut args: Vec<String> = ["import", "--delimiter", "|", "--out"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(out.display().to_string());
    let mut files: Vec<String> = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    for f in &files {
        let path = data.join(f).display().to_string();
        let name = f.trim_end_matches(".csv");
        match name.contains('_') {
            true => args.extend(["--rel".into(), format!("{}={path}", rel_type(name))]),
            false => {
                let message = matches!(name, "Comment" | "Post");
                let labels = format!("{name}{}", if message { ",Message" } else { "" });
                args.extend(["--node".into(), format!("{labels}={path}")]);
            }
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let graph = stdout(&o).trim().to_string();
    // DuckDB's answers on LSQB's SQL texts over the same files.
    let want = [20608, 281, 0, 3047, 4973, 33201, 7188, 2436, 23669];
    for (i, want) in want.iter().enumerate() {
        let text =
            std::fs::read_to_string(root.join(format!("queries/q{}.cypher", i + 1))).unwrap();
        for mode in ["csr", "join"] {
            let o = run(&[
                "query", "--graph", &graph, "--mode", mode, "--format", "csv", &text,
            ]);
            assert!(o.status.success(), "q{} {mode}: {}", i + 1, stderr(&o));
            assert_eq!(stdout(&o), format!("count\n{want}\n"), "q{} {mode}", i + 1);
        }
    }
}
