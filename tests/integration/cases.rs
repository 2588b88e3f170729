//! Runs every `tests/cases/*.cypher` case on the sample graph and checks results by hand-written
//! expectations (see the format at the top of `tests/cases/match.cypher`).

use crate::common;

use common::cases::{all_cases, Expect};
use common::{lines, sample};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cypher_cases() {
    run_cases(&sample().await).await;
}

/// The same cases on the sample graph written as Lance datasets: the CSR operators then read
/// columns through Lance scans, which differ from in-memory tables (e.g. column order).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cypher_cases_on_lance() {
    let dir = tempfile::tempdir().unwrap();
    let path = lance_csr::write_graph(
        dir.path(),
        lance_csr_datasets::sample::tables(),
        &mut |_| {},
    )
    .await
    .unwrap();
    // Persisted indexes, as `lance-csr index build` leaves them.
    lance_csr::Graph::build_indexes(&path, &mut |_| {})
        .await
        .unwrap();
    let g = lance_csr::Graph::open(&path).await.unwrap();
    assert!(g.has_all_indexes());
    run_cases(&g).await;
}

async fn run_cases(g: &lance_csr::Graph) {
    let cases = all_cases();
    assert!(cases.len() >= 60, "only {} cases found", cases.len());
    // `LANCE_CSR_CASES=paths.cypher`: only the cases whose `file:line` contains it (timed).
    let only = std::env::var("LANCE_CSR_CASES").ok();
    let mut failures = Vec::new();
    for c in &cases {
        let started = std::time::Instant::now();
        if let Some(o) = &only {
            if !format!("{}:{}", c.file, c.line).contains(o.as_str()) {
                continue;
            }
        }
        let params = common::params(&c.params).expect("case params parse");
        let where_ = format!("{}:{}", c.file, c.line);
        match (&c.expect, g.query(&c.query, &params).await) {
            (Expect::Error(kind), Err(e)) => {
                if &e.kind_name() != kind || !e.is_compile_time() {
                    failures.push(format!(
                        "{where_}: expected {kind}, got {} ({e})",
                        e.kind_name()
                    ));
                }
            }
            (Expect::RuntimeError(kind), Err(e)) => {
                if &e.kind_name() != kind || e.is_compile_time() {
                    failures.push(format!(
                        "{where_}: expected {kind} at run time, got {} ({e})",
                        e.kind_name()
                    ));
                }
            }
            (Expect::Error(kind) | Expect::RuntimeError(kind), Ok(r)) => failures.push(format!(
                "{where_}: expected {kind}, got {} rows",
                r.num_rows()
            )),
            (_, Err(e)) => failures.push(format!("{where_}: {}", e.render(&c.query))),
            (expect, Ok(r)) => {
                let header = r.columns.join("|");
                if header != c.header {
                    failures.push(format!("{where_}: columns {header}, expected {}", c.header));
                    continue;
                }
                let mut got = lines(&r);
                let mut want = match expect {
                    Expect::Ordered(w) | Expect::Rowsort(w) => w.clone(),
                    Expect::Error(_) | Expect::RuntimeError(_) => unreachable!(),
                };
                if matches!(expect, Expect::Rowsort(_)) {
                    got.sort();
                    want.sort();
                }
                if got != want {
                    failures.push(format!("{where_}: got {got:?}\n   expected {want:?}"));
                }
            }
        }
        if only.is_some() {
            println!("{}:{}: {:?}", c.file, c.line, started.elapsed());
        }
    }
    println!("{} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
