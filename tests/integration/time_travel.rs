//! Reading a graph as it was (`GraphOptions::as_of`, `--as-of`): every dataset at a version
//! number, a tag or a time; indexes of past states kept apart from the latest's (which serve
//! the tables unchanged since).

use lance_csr::{AsOf, Graph, GraphOptions, Params};
use lance_csr_datasets::social::edge_batch;

use crate::common::cli::bin;

/// Whom Finn (6) knows, and how many KNOWS relationships there are.
async fn finn_and_knows(g: &Graph) -> (Vec<String>, String) {
    let q = "MATCH (:Person {id: 6})-[:KNOWS]->(x:Person) RETURN x.firstName AS f ORDER BY f";
    let r = g.query(q, &Params::new()).await.unwrap();
    let finn = lance_csr::rows(&r)
        .into_iter()
        .map(|r| r.join("|"))
        .collect();
    let q = "MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k) AS n";
    let r = g.query(q, &Params::new()).await.unwrap();
    (finn, lance_csr::rows(&r)[0][0].clone())
}

async fn open_at(cfg: &std::path::Path, at: AsOf) -> lance_csr::Result<Graph> {
    Graph::open_with(cfg, GraphOptions::default().with_as_of(at)).await
}

/// The index files in `dir`.
fn index_files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".csr") || n.ends_with(".keys"))
        .collect();
    v.sort();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graph_reads_as_it_was_at_a_version_a_tag_or_a_time() {
    let (dir, cfg) = crate::common::sample_on_disk().await;
    let before = (vec![], "7".to_string());
    assert_eq!(
        finn_and_knows(&Graph::open(&cfg).await.unwrap()).await,
        before
    );
    lance_csr::tag_graph(&cfg, "first").await.unwrap();
    // A tag exists once per dataset; numbers read as versions.
    assert!(lance_csr::tag_graph(&cfg, "first").await.is_err());
    assert!(lance_csr::tag_graph(&cfg, "12").await.is_err());
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let then = chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now());
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;

    // Two appends to the KNOWS dataset (versions 2 and 3); the other datasets stay at 1.
    let knows = dir.path().join("person_knows_person.lance");
    for (from, to) in [(6, 1), (6, 2)] {
        let b = edge_batch(vec![from], vec![to], Some(("creationDate", vec![0])));
        lance_csr::append_lance(&knows, b.schema(), vec![b])
            .await
            .unwrap();
    }
    let latest = Graph::open(&cfg).await.unwrap();
    let now = (vec!["Ann".to_string(), "Bob".to_string()], "9".to_string());
    assert_eq!(finn_and_knows(&latest).await, now);

    // A version number: each dataset at it, or at its latest where that is older.
    let v2 = open_at(&cfg, AsOf::Version(2)).await.unwrap();
    assert_eq!(
        finn_and_knows(&v2).await,
        (vec!["Ann".to_string()], "8".to_string())
    );
    for at in [
        AsOf::Version(1),
        AsOf::Tag("first".into()),
        AsOf::Time(then),
        "first".parse().unwrap(),
    ] {
        let g = open_at(&cfg, at.clone()).await.unwrap();
        assert_eq!(finn_and_knows(&g).await, before, "as of {at}");
        // The join path reads the same state.
        let join = g.with_mode(lance_csr::Mode::Join).await.unwrap();
        assert_eq!(finn_and_knows(&join).await, before, "as of {at}, joins");
    }
    // A graph read as it was stays there.
    let mut past = open_at(&cfg, AsOf::Version(1)).await.unwrap();
    assert_eq!(past.refresh().await.unwrap(), 0);
    assert_eq!(finn_and_knows(&past).await, before);

    // States the graph was never in are errors that say so.
    for (at, says) in [
        (AsOf::Version(4), "has no version 4"),
        (AsOf::Version(0), "has no version 0"),
        (AsOf::Tag("nope".into()), "has no tag \"nope\""),
        (
            AsOf::Time(
                chrono::DateTime::<chrono::Utc>::from(std::time::SystemTime::now())
                    - chrono::Duration::days(3650),
            ),
            "has no version committed at or before",
        ),
    ] {
        let e = open_at(&cfg, at.clone()).await.err().expect("an error");
        assert!(e.to_string().contains(says), "as of {at}: {e}");
    }

    // The latest state read as of its version: the latest's files serve it whole.
    let v3 = open_at(&cfg, AsOf::Version(3)).await.unwrap();
    assert_eq!(finn_and_knows(&v3).await, now);

    // Each state's indexes live apart: the latest's files stay up to date, and opening a
    // past state again reads its files instead of building them.
    let status = lance_csr::index_status(&cfg).await.unwrap().join("\n");
    assert!(
        status.contains("KNOWS(Person->Person)                    up to date"),
        "{status}"
    );
    assert!(
        status.contains("person_knows_person.lance@1")
            && status.contains("person_knows_person.lance@2"),
        "{status}"
    );
    let at = dir.path().join("_csr").join("at");
    let states: Vec<_> = std::fs::read_dir(&at)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(states.len(), 2, "{states:?}");
    // Only the KNOWS table changed: the other tables' files are the latest's, shared.
    let files: Vec<Vec<String>> = states.iter().map(|s| index_files(s)).collect();
    assert!(
        files
            .iter()
            .all(|f| f.len() == 1 && f[0].starts_with("person_knows_person.lance.")),
        "{files:?}"
    );
    let stamps = |d: &std::path::Path| -> Vec<std::time::SystemTime> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "csr"))
            .map(|p| std::fs::metadata(p).unwrap().modified().unwrap())
            .collect()
    };
    let written: Vec<_> = states.iter().map(|s| stamps(s)).collect();
    let again = open_at(&cfg, AsOf::Version(1)).await.unwrap();
    assert_eq!(finn_and_knows(&again).await, before);
    let after: Vec<_> = states.iter().map(|s| stamps(s)).collect();
    assert_eq!(
        written, after,
        "a past state's indexes are read, not built again"
    );

    // `index build --force` style removal takes the past states' folders too.
    lance_csr::remove_index_files(&cfg).unwrap();
    assert!(!at.exists());
}

#[test]
fn the_cli_reads_as_of_a_version_a_tag_or_a_time() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (dir, cfg) = rt.block_on(crate::common::sample_on_disk());
    let g = cfg.to_str().unwrap();
    let o = bin().args(["tag", "--graph", g, "v-one"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("person_knows_person.lance at version 1"));
    let b = edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    rt.block_on(lance_csr::append_lance(
        &dir.path().join("person_knows_person.lance"),
        b.schema(),
        vec![b],
    ))
    .unwrap();
    let count = |as_of: Option<&str>| {
        let mut args = vec!["query", "--graph", g, "--format", "csv"];
        if let Some(a) = as_of {
            args.extend(["--as-of", a]);
        }
        args.push("MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k) AS n");
        let o = bin().args(&args).output().unwrap();
        let out = String::from_utf8_lossy(&o.stdout).to_string();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (
            o.status.success(),
            out.lines().nth(1).unwrap_or_default().to_string(),
            err,
        )
    };
    assert_eq!(count(None).1, "8");
    assert_eq!(count(Some("1")).1, "7");
    assert_eq!(count(Some("2")).1, "8");
    assert_eq!(count(Some("v-one")).1, "7");
    assert!(!count(Some("2000-01-01")).0);
    let (ok, _, err) = count(Some("9"));
    assert!(!ok && err.contains("the graph has no version 9"), "{err}");
    // EXPLAIN and index status see the past state too.
    let o = bin()
        .args([
            "explain",
            "--graph",
            g,
            "--as-of",
            "1",
            "MATCH (a:Person) RETURN a.id",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = bin()
        .args(["index", "status", "--graph", g])
        .output()
        .unwrap();
    let status = String::from_utf8_lossy(&o.stdout);
    assert!(status.contains("indexed past state"), "{status}");
}
