//! CSR index files: built once and persisted beside the datasets, read back while the datasets
//! are unchanged, never used once a dataset changed; `refresh()` does no work on an unchanged
//! graph and rebuilds exactly what changed.

use lance_csr::csr::registry::index_status;
use lance_csr::{Graph, Params};
use lance_csr_datasets::social::edge_batch;

async fn ids(g: &Graph, q: &str) -> Vec<String> {
    let r = g.query(q, &Params::new()).await.unwrap();
    let mut v: Vec<String> = lance_csr::output::rows(&r)
        .into_iter()
        .map(|r| r.join("|"))
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_follow_dataset_versions() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = lance_csr::storage::write_graph(
        dir.path(),
        lance_csr_datasets::sample::tables(),
        &mut |_| {},
    )
    .await
    .unwrap();
    // First open builds and writes every index.
    let first = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert!(first.built >= 18 && first.read == 0, "{first:?}");
    assert!(dir
        .path()
        .join("_csr/person_knows_person.lance.csr")
        .exists());
    // Unchanged datasets: everything is read back, nothing built.
    let again = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert_eq!((again.built, again.read), (0, first.built), "{again:?}");

    let mut g = Graph::open(&cfg).await.unwrap();
    let q = "MATCH (:Person {id: 6})-[:KNOWS]->(x:Person) RETURN x.firstName";
    assert!(ids(&g, q).await.is_empty());
    assert_eq!(
        g.refresh().await.unwrap(),
        0,
        "refresh of an unchanged graph does no work"
    );

    // A new version of the KNOWS table: Finn -> Ann.
    let b = edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    lance_csr::storage::append_lance(
        &dir.path().join("person_knows_person.lance"),
        b.schema(),
        vec![b],
    )
    .await
    .unwrap();
    let config = lance_csr::config::GraphConfig::from_file(&cfg).unwrap();
    let catalog = lance_csr::catalog::Catalog::open(config, &mut Default::default())
        .await
        .unwrap();
    let status = index_status(&catalog).join("\n");
    assert!(
        status.contains("KNOWS(Person->Person)                    stale"),
        "{status}"
    );
    // The open graph still answers from its own (consistent) snapshot until refreshed...
    assert!(ids(&g, q).await.is_empty());
    // ...and refresh rebuilds only the changed table's index.
    assert_eq!(g.refresh().await.unwrap(), 1);
    assert_eq!(ids(&g, q).await, vec!["Ann"]);
    let join = g.with_mode(lance_csr::session::Mode::Join).await.unwrap();
    assert_eq!(ids(&join, q).await, vec!["Ann"]);
    // A graph opened afresh never uses the stale file.
    let fresh = Graph::open(&cfg).await.unwrap();
    assert_eq!(ids(&fresh, q).await, vec!["Ann"]);
    assert_eq!(g.refresh().await.unwrap(), 0);
}
