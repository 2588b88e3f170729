//! Random-query equivalence: 500 generated queries over the sample graph (patterns with
//! branching and variable length, filters on values from the data, WITH, aggregates, ORDER BY +
//! LIMIT), each run with every rule on and with all of them off; results must be identical.

mod common;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_queries_agree_with_rules_on_and_off() {
    let g = common::sample().await;
    let report = lance_csr::verify::run(&g, 500, 20261130).await.unwrap();
    println!("{}", report.render());
    for q in report.queries.iter().take(12) {
        println!("  e.g. {q}");
    }
    assert!(report.mismatches.is_empty(), "{}", report.render());
    // The generator makes queries the subset accepts, and most of them return rows.
    assert!(report.compared >= 490, "{}", report.render());
    assert!(
        report.nonempty * 2 >= report.compared,
        "{}",
        report.render()
    );
    // The same seed gives the same queries.
    let again = lance_csr::verify::run(&g, 20, 20261130).await.unwrap();
    assert_eq!(again.queries, report.queries[..20]);
}

/// The comparison is real: against a graph with one KNOWS edge fewer, queries over KNOWS differ.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_different_answer_is_reported() {
    use lance_csr::session::Mode;
    let full = common::sample().await;
    let mut tables = lance_csr_datasets::sample::tables();
    let knows = tables
        .iter_mut()
        .find(|t| t.name.contains("knows"))
        .expect("a KNOWS table");
    knows.batch = knows.batch.slice(1, knows.batch.num_rows() - 1);
    let fewer = lance_csr::Graph::from_tables(tables, Default::default())
        .await
        .unwrap()
        .with_mode(Mode::Join)
        .await
        .unwrap();
    let report = lance_csr::verify::compare(&full, &fewer, 200, 7)
        .await
        .unwrap();
    assert!(!report.mismatches.is_empty(), "{}", report.render());
    assert!(report
        .mismatches
        .iter()
        .all(|m| m.optimized != m.unoptimized));
    assert!(report.render().contains("MISMATCH "));
}
