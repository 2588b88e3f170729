//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod cases;
pub mod cli;
pub mod reference;
pub mod tck;

use lance_csr::{Graph, Params, QueryResult};

/// The sample graph (in memory), opened once per test.
pub async fn sample() -> Graph {
    Graph::sample().await.expect("sample graph opens")
}

/// Runs a query without parameters, panicking with the rendered error.
pub async fn run(g: &Graph, q: &str) -> QueryResult {
    match g.query(q, &Params::new()).await {
        Ok(r) => r,
        Err(e) => panic!("{}", e.render(q)),
    }
}

/// `NAME=VALUE` parameters (the CLI's `--param`).
pub fn params(kvs: &[String]) -> lance_csr::Result<Params> {
    let mut p = Params::new();
    for kv in kvs {
        let (k, v) = kv.split_once('=').expect("NAME=VALUE");
        p.insert(
            k.trim_start_matches('$').to_string(),
            lance_csr::Value::parse(v)?,
        );
    }
    Ok(p)
}

/// Rows as strings (top-level strings unquoted, nested values in Cypher syntax).
pub fn rows(r: &QueryResult) -> Vec<Vec<String>> {
    lance_csr::rows(r)
}

/// Rows as `a|b|c` lines, for compact assertions.
pub fn lines(r: &QueryResult) -> Vec<String> {
    rows(r).into_iter().map(|r| r.join("|")).collect()
}

/// Same as [`lines`] but sorted, for queries without a fixed order.
pub fn sorted_lines(r: &QueryResult) -> Vec<String> {
    let mut v = lines(r);
    v.sort();
    v
}

/// The project root at run time. `env!("CARGO_MANIFEST_DIR")` is baked in at compile time, and a
/// test binary reused from a shared target folder may have been compiled in another checkout;
/// `cargo test` sets the variable for the running test too, so prefer that.
pub fn project_root() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}

/// The sample graph written as Lance datasets in a folder of its own (no index files yet):
/// the folder (kept while in scope) and its graph.toml.
pub async fn sample_on_disk() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cfg = lance_csr::write_graph(
        dir.path(),
        lance_csr_datasets::sample::tables(),
        &mut |_| {},
    )
    .await
    .unwrap();
    (dir, cfg)
}
