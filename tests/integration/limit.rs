//! Limit absorption: a LIMIT without ORDER BY stops expansions and traversals early (their
//! `fetch`), and the rows it returns are rows of the unlimited query; with ORDER BY, across an
//! aggregation, or under SKIP it must not change which rows come back.

use crate::common;

use lance_csr::{Graph, Params};

async fn generated() -> Graph {
    let tables = lance_csr_datasets::social::generate(0.2, 5, &mut |_| {});
    Graph::from_tables(tables, Default::default())
        .await
        .unwrap()
}

fn physical(explain: &str) -> String {
    explain
        .split("== physical plan ==")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

/// A metric's value on an EXPLAIN ANALYZE line (`name=12`, `name=1.5 K`), summed over the
/// partitions DataFusion already aggregated.
fn metric(line: &str, name: &str) -> f64 {
    let at = line.find(&format!("{name}=")).expect("metric present") + name.len() + 1;
    let rest = &line[at..];
    let end = rest.find([',', ']']).unwrap_or(rest.len());
    let v = rest[..end].trim();
    let (num, mul) = match v.split_once(' ') {
        Some((n, "K")) => (n, 1e3),
        Some((n, "M")) => (n, 1e6),
        _ => (v, 1.0),
    };
    num.parse::<f64>().expect("a number") * mul
}

/// Every row of `limited` is a row of `full` (as multisets), and there are `n` of them.
fn subset_of(limited: &[String], full: &[String], n: usize) {
    assert_eq!(limited.len(), n, "{limited:?}");
    let mut rest = full.to_vec();
    for r in limited {
        let i = rest
            .iter()
            .position(|x| x == r)
            .unwrap_or_else(|| panic!("{r} is not a row of the unlimited query"));
        rest.swap_remove(i);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_stops_expansions_and_traversals() {
    let g = generated().await;
    let p = Params::new();
    for (q, op) in [
        (
            "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.age > 30 RETURN a.id, b.id",
            "CsrExpandExec",
        ),
        (
            "MATCH (a:Person)-[:KNOWS*1..3]->(b:Person) RETURN a.id, b.id",
            "VarLengthExec",
        ),
    ] {
        let limited = format!("{q} LIMIT 7");
        let plan = physical(&g.explain(&limited, &p).await.unwrap());
        let line = plan.lines().find(|l| l.contains(op)).unwrap();
        assert!(line.contains("fetch=7"), "{plan}");
        let full = common::lines(&common::run(&g, q).await);
        let got = common::lines(&common::run(&g, &limited).await);
        subset_of(&got, &full, 7);
        // The operator stopped early: it examined far fewer edges than the query has rows.
        let analyzed = g.explain_analyze(&limited, &p).await.unwrap();
        let line = analyzed.lines().find(|l| l.contains(op)).unwrap();
        let scanned = metric(line, "edges_scanned");
        assert!(
            scanned * 10.0 < full.len() as f64,
            "{scanned} edges for 7 of {} rows\n{analyzed}",
            full.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn limit_is_not_absorbed_where_it_would_change_rows() {
    let g = generated().await;
    let p = Params::new();
    for q in [
        // A fixed order: the top rows need the whole expansion (TopK above it).
        "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, b.id ORDER BY b.id, a.id LIMIT 7",
        // Across an aggregation: the groups need every row.
        "MATCH (a:Person)-[:KNOWS]->(b:Person) WITH b, count(*) AS c RETURN b.id, c LIMIT 7",
        // DISTINCT: the first rows may be duplicates.
        "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN DISTINCT b.age LIMIT 7",
    ] {
        let plan = physical(&g.explain(q, &p).await.unwrap());
        for l in plan.lines().filter(|l| l.contains("CsrExpandExec")) {
            assert!(!l.contains("fetch="), "{q}\n{plan}");
        }
    }
    // With ORDER BY the rows are exactly those of the join path.
    let q = "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, b.id ORDER BY b.id, a.id SKIP 3 LIMIT 7";
    let join = g.with_mode(lance_csr::Mode::Join).await.unwrap();
    assert_eq!(
        common::lines(&common::run(&g, q).await),
        common::lines(&common::run(&join, q).await)
    );
}
