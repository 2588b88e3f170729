//! Runs every `tests/cases/*.cypher` case on the sample graph and checks results by hand-written
//! expectations (see the format at the top of `tests/cases/match.cypher`).

mod common;

use common::cases::{all_cases, Expect};
use common::{lines, sample};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cypher_cases() {
    let g = sample().await;
    let cases = all_cases();
    assert!(cases.len() >= 60, "only {} cases found", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let params = lance_csr::cli::parse_params(&c.params).expect("case params parse");
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
            (Expect::Error(kind), Ok(r)) => failures.push(format!(
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
                    Expect::Error(_) => unreachable!(),
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
    }
    println!("{} cases, {} failed", cases.len(), failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
