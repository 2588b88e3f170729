//! CSR index files: built once and persisted beside the datasets, read back while the datasets
//! are unchanged, never used once a dataset changed; `refresh()` does no work on an unchanged
//! graph and rebuilds exactly what changed.

use lance_csr::{Graph, Params};
use lance_csr_datasets::social::edge_batch;

use crate::common::sample_on_disk;

async fn ids(g: &Graph, q: &str) -> Vec<String> {
    let r = g.query(q, &Params::new()).await.unwrap();
    let mut v: Vec<String> = lance_csr::rows(&r)
        .into_iter()
        .map(|r| r.join("|"))
        .collect();
    v.sort();
    v
}

/// `index status` of the graph at `cfg`, read from the catalog only (opening the graph would
/// rebuild what is stale or corrupt first).
async fn status_without_opening(cfg: &std::path::Path) -> Vec<String> {
    lance_csr::index_status(cfg).await.unwrap()
}

/// The CSR file in `base/_csr` whose name starts with `stem` (names end with a hash of the
/// columns they are built on).
fn index_file(base: &std::path::Path, stem: &str) -> std::path::PathBuf {
    std::fs::read_dir(base.join("_csr"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with(stem) && n.ends_with(".csr")
        })
        .unwrap_or_else(|| panic!("no index file {stem}*.csr"))
}

/// Puts `bytes` at `path` as the engine writes index files (a new file renamed into place):
/// a graph that still maps the old file keeps reading it, as with any writer but a faulty one.
fn replace_file(path: &std::path::Path, bytes: &[u8]) {
    let tmp = path.with_extension("damaged");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The graph at `cfg` with its index files read as queries first need them.
async fn open_deferred(cfg: &std::path::Path) -> Graph {
    let options = lance_csr::GraphOptions::default().with_deferred_indexes(true);
    Graph::open_with(cfg, options).await.unwrap()
}

/// A new version of the sample's KNOWS table, with Finn (6) -> Ann (1) added.
async fn append_finn_knows_ann(dir: &std::path::Path) {
    let b = edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    lance_csr::append_lance(&dir.join("person_knows_person.lance"), b.schema(), vec![b])
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_follow_dataset_versions() {
    let (dir, cfg) = sample_on_disk().await;
    // First open builds and writes every index.
    let first = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert!(first.built >= 18 && first.read == 0, "{first:?}");
    assert!(index_file(dir.path(), "person_knows_person.lance.").exists());
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
    append_finn_knows_ann(dir.path()).await;
    let status = lance_csr::index_status(&cfg).await.unwrap().join("\n");
    assert!(
        status.contains("KNOWS(Person->Person)                    stale"),
        "{status}"
    );
    // The open graph still answers from its own (consistent) snapshot until refreshed...
    assert!(ids(&g, q).await.is_empty());
    // ...and refresh rebuilds only the changed table's index.
    assert_eq!(g.refresh().await.unwrap(), 1);
    assert_eq!(ids(&g, q).await, vec!["Ann"]);
    let join = g.with_mode(lance_csr::Mode::Join).await.unwrap();
    assert_eq!(ids(&join, q).await, vec!["Ann"]);
    // A graph opened afresh never uses the stale file.
    let fresh = Graph::open(&cfg).await.unwrap();
    assert_eq!(ids(&fresh, q).await, vec!["Ann"]);
    assert_eq!(g.refresh().await.unwrap(), 0);
}

/// Eight processes opening a graph whose `_csr/` doesn't exist yet all build the indexes at
/// once: each writes through a temp file of its own and renames it into place, so every one
/// of them answers (they used to share one temp name and fail with "No such file").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_use_builds_indexes_without_failing() {
    let dir = tempfile::tempdir().unwrap();
    // Big enough that the builds overlap (1,000 persons, tens of thousands of edges).
    let cfg = lance_csr::write_graph(
        dir.path(),
        lance_csr_datasets::social::generate(1.0, 42, &mut |_| {}),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert!(!dir.path().join("_csr").exists());
    let q = "MATCH (a:Person {id: 1000})-[:KNOWS]->(b:Person) RETURN count(*) AS n";
    let children: Vec<_> = (0..8)
        .map(|_| {
            std::process::Command::new(env!("CARGO_BIN_EXE_lance-csr"))
                .args([
                    "query",
                    "--graph",
                    cfg.to_str().unwrap(),
                    "--format",
                    "csv",
                    q,
                ])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut outputs = Vec::new();
    for c in children {
        let out = c.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        outputs.push(String::from_utf8_lossy(&out.stdout).to_string());
    }
    // All give the same count, the one the join path gives.
    let join = Graph::open(&cfg)
        .await
        .unwrap()
        .with_mode(lance_csr::Mode::Join)
        .await
        .unwrap();
    let want = format!("n\n{}\n", ids(&join, q).await[0]);
    assert!(outputs.iter().all(|o| o == &want), "{outputs:?} vs {want}");
    // Only finished files are left, no temp files.
    for e in std::fs::read_dir(dir.path().join("_csr")).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().to_string();
        assert!(name.ends_with(".csr") || name.ends_with(".keys"), "{name}");
    }
    // The indexes written are read back by the next open.
    let again = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert_eq!(again.built, 0, "{again:?}");
}

/// Storage that refuses index files (read-only; here `_csr` is a file, so that the test
/// doesn't depend on permissions, which root ignores): the indexes serve from memory, with a
/// warning that names the path, and queries answer on the CSR path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_that_cannot_be_written_serve_from_memory() {
    let (dir, cfg) = sample_on_disk().await;
    std::fs::write(dir.path().join("_csr"), b"not a folder").unwrap();
    let report = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert!(report.unsaved > 0, "{report:?}");
    let warning = report
        .lines
        .iter()
        .find(|l| l.starts_with("warning:"))
        .unwrap();
    assert!(warning.contains("_csr"), "{warning}");
    let g = Graph::open(&cfg).await.unwrap();
    assert!(g.has_all_indexes());
    let n = ids(
        &g,
        "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN count(*) AS n",
    )
    .await;
    assert_eq!(n, vec!["7"]);
}

/// A damaged index file is never used for an answer. Damaged in its head (zeroed, cut off,
/// bytes added): found when it is opened, its hops run as joins, `index status` says
/// corrupt, the next open rebuilds it with a warning. Damaged in a block (a byte flipped in
/// the arrays, the head intact): the query that first reaches the block fails naming the
/// file, which is removed and built again by the next open. Answers are the join path's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_index_files_are_detected_and_rebuilt() {
    let (dir, cfg) = sample_on_disk().await;
    Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    let file = index_file(dir.path(), "person_knows_person.lance.");
    let good = std::fs::read(&file).unwrap();
    // Both directions of every person's edges: every block of the file.
    let q = "MATCH (a:Person) OPTIONAL MATCH (a)-[:KNOWS]-(b:Person) RETURN a.id, b.id";
    let want = ids(
        &Graph::open(&cfg)
            .await
            .unwrap()
            .with_mode(lance_csr::Mode::Join)
            .await
            .unwrap(),
        q,
    )
    .await;
    let flipped = |at: usize| {
        let mut b = good.clone();
        b[at] ^= 0x04;
        b
    };
    let damages: Vec<(&str, Vec<u8>, bool)> = vec![
        ("bit flip in the head", flipped(60), true),
        (
            "zeroed",
            {
                let mut b = good.clone();
                let end = b.len() - 4;
                b[48..end].fill(0);
                b
            },
            true,
        ),
        ("truncated", good[..good.len() - 10].to_vec(), true),
        ("bytes added", [&good[..], b"x"].concat(), true),
        ("bit flip in a block", flipped(good.len() - 9), false),
    ];
    for (what, bytes, in_head) in damages {
        replace_file(&file, &bytes);
        for deferred in [true, false] {
            replace_file(&file, &bytes);
            let g = match deferred {
                true => open_deferred(&cfg).await,
                false => Graph::open(&cfg).await.unwrap(),
            };
            if in_head || !file.exists() {
                assert_eq!(ids(&g, q).await, want, "{what}, deferred {deferred}");
                continue;
            }
            let err = g
                .query(q, &Params::new())
                .await
                .err()
                .map(|e| e.to_string());
            let err = err.unwrap_or_else(|| panic!("{what}: an answer from a damaged block"));
            assert!(
                err.contains("damaged") && err.contains("person_knows_person"),
                "{err}"
            );
            assert!(!file.exists(), "{what}: removed");
            // The next open builds it again.
            let g = Graph::open(&cfg).await.unwrap();
            assert_eq!(ids(&g, q).await, want, "{what}: rebuilt");
            assert_eq!(std::fs::read(&file).unwrap(), good, "{what}: rewritten");
        }
        replace_file(&file, &bytes);
        let status = status_without_opening(&cfg).await;
        assert!(
            status
                .iter()
                .any(|l| l.starts_with("KNOWS(Person->Person)") && l.contains("corrupt")),
            "{what}: {status:?}"
        );
        let report = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
        // `index status` removed a file damaged in a block: then it is missing, not corrupt.
        let corrupt = in_head as usize;
        assert_eq!(
            (report.corrupt, report.built),
            (corrupt, 1),
            "{what}: {report:?}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), good, "{what}: rewritten");
        assert_eq!(
            ids(&Graph::open(&cfg).await.unwrap(), q).await,
            want,
            "{what}"
        );
    }
}

/// An index belongs to one dataset state and one set of columns: a reverse view (another
/// type over the same dataset with `src`/`dst` swapped), a second label over one node dataset
/// keyed by another column, and a dataset deleted and re-created (its version numbers start
/// again) each get answers of their own, the join path's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_belongs_to_its_columns_and_dataset_state() {
    use lance_csr_datasets::social::{batch, edge_batch};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let int64s =
        |v: Vec<i64>| -> arrow::array::ArrayRef { Arc::new(arrow::array::Int64Array::from(v)) };
    let nodes = batch(vec![
        ("id", int64s(vec![1, 2, 3, 4])),
        ("code", int64s(vec![40, 30, 20, 10])),
    ]);
    lance_csr::write_lance(&d.join("n.lance"), nodes.schema(), vec![nodes])
        .await
        .unwrap();
    let e = edge_batch(vec![1, 1, 2], vec![2, 3, 4], None);
    lance_csr::write_lance(&d.join("e.lance"), e.schema(), vec![e.clone()])
        .await
        .unwrap();
    let f = edge_batch(vec![40, 30], vec![10, 20], None);
    lance_csr::write_lance(&d.join("f.lance"), f.schema(), vec![f])
        .await
        .unwrap();
    let cfg = d.join("graph.toml");
    std::fs::write(
        &cfg,
        r#"
[nodes.A]
source = "n.lance"
id = "id"
[nodes.B]
source = "n.lance"
id = "code"
[[relationships]]
type = "E"
from = "A"
to = "A"
source = "e.lance"
src = "src"
dst = "dst"
[[relationships]]
type = "BACK"
from = "A"
to = "A"
source = "e.lance"
src = "dst"
dst = "src"
[[relationships]]
type = "F"
from = "B"
to = "B"
source = "f.lance"
src = "src"
dst = "dst"
"#,
    )
    .unwrap();
    let queries = [
        "MATCH (a:A)-[:E]->(b:A) RETURN a.id, b.id",
        "MATCH (a:A)-[:BACK]->(b:A) RETURN a.id, b.id",
        "MATCH (a:B)-[:F]->(b:B) RETURN a.code, b.code, a.id",
        "MATCH (a:A {id: 1})-[:E*1..2]->(b:A) RETURN b.id",
    ];
    let check = |label: &'static str| {
        let cfg = cfg.clone();
        async move {
            let csr = Graph::open(&cfg).await.unwrap();
            let join = csr.with_mode(lance_csr::Mode::Join).await.unwrap();
            for q in queries {
                assert_eq!(ids(&csr, q).await, ids(&join, q).await, "{label}: {q}");
            }
            ids(&csr, queries[0]).await
        }
    };
    assert_eq!(check("first").await, vec!["1|2", "1|3", "2|4"]);
    assert_eq!(
        ids(&Graph::open(&cfg).await.unwrap(), queries[1]).await,
        vec!["2|1", "3|1", "4|2"]
    );
    // Deleted and re-created with other edges: version 1 again, another dataset.
    std::fs::remove_dir_all(d.join("e.lance")).unwrap();
    let e2 = edge_batch(vec![3], vec![4], None);
    lance_csr::write_lance(&d.join("e.lance"), e2.schema(), vec![e2])
        .await
        .unwrap();
    let status = status_without_opening(&cfg).await;
    assert!(
        status
            .iter()
            .any(|l| l.starts_with("E(A->A)") && l.contains("stale")),
        "{status:?}"
    );
    assert_eq!(check("re-created").await, vec!["3|4"]);
}

/// A prepared query and the plan cache see a dataset change once the graph is refreshed:
/// the plans kept from before are planned anew over the new tables and indexes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_queries_see_a_dataset_change_after_refresh() {
    let (dir, cfg) = sample_on_disk().await;
    let mut g = Graph::open(&cfg).await.unwrap();
    let text = "MATCH (:Person {id: $id})-[:KNOWS]->(x:Person) RETURN x.firstName";
    let friends = g.prepare(text).unwrap();
    async fn run(friends: &lance_csr::Prepared, g: &Graph, id: i64) -> Vec<String> {
        let params = Params::from([("id".to_string(), lance_csr::param(id))]);
        let prepared = lance_csr::rows(&friends.query(g, &params).await.unwrap());
        let cached = lance_csr::rows(&g.query(friends.text(), &params).await.unwrap());
        assert_eq!(prepared, cached, "id {id}");
        prepared.concat()
    }
    assert!(run(&friends, &g, 6).await.is_empty());
    let before_1 = run(&friends, &g, 1).await;
    assert!(!before_1.is_empty());

    append_finn_knows_ann(dir.path()).await;
    assert_eq!(g.refresh().await.unwrap(), 1);
    assert_eq!(run(&friends, &g, 6).await, vec!["Ann"]);
    assert_eq!(run(&friends, &g, 1).await, before_1);
    // A graph opened afresh agrees.
    let fresh = Graph::open(&cfg).await.unwrap();
    assert_eq!(run(&friends, &fresh, 6).await, vec!["Ann"]);
}

/// A graph opened with deferred indexes reads no index file when it opens (one damaged after
/// it opened shows at the first query that reads it: that query's hops run as joins), and
/// answers every query as one that read them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_indexes_answer_like_eager_ones() {
    let (dir, cfg) = sample_on_disk().await;
    let built = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    let eager = Graph::open(&cfg).await.unwrap();
    let deferred = open_deferred(&cfg).await;
    assert!(deferred.has_all_indexes());
    assert!(built.built > 0);
    for q in [
        "MATCH (p:Person {id: 1}) RETURN p.firstName",
        "MATCH (p:Person {id: 1})-[:KNOWS]->(f)-[:KNOWS]->(g) RETURN g.firstName",
        "MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = 2 RETURN f.title",
        "MATCH (a:Person)-[:KNOWS*1..3]->(b:Person) RETURN a.id, count(DISTINCT b)",
        "MATCH (m)-[:HAS_CREATOR]->(p:Person) RETURN labels(m), p.id, count(*)",
    ] {
        assert_eq!(ids(&deferred, q).await, ids(&eager, q).await, "{q}");
    }

    // A query reads only the indexes its plan needs: a point lookup reads no CSR, so one
    // damaged (in its head) after it shows at the first hop over it.
    let opened = open_deferred(&cfg).await;
    assert_eq!(
        ids(&opened, "MATCH (p:Person {id: 1}) RETURN p.firstName").await,
        ids(&eager, "MATCH (p:Person {id: 1}) RETURN p.firstName").await
    );
    let file = index_file(dir.path(), "person_knows_person.lance.");
    let mut bytes = std::fs::read(&file).unwrap();
    bytes[60] ^= 0x04;
    replace_file(&file, &bytes);
    let q = "MATCH (p:Person {id: 1})-[:KNOWS]->(f) RETURN f.firstName";
    let plan = opened.explain(q, &Params::new()).await.unwrap();
    assert!(
        plan.contains("HashJoinExec") && !plan.contains("CsrExpandExec"),
        "{plan}"
    );
    assert_eq!(ids(&opened, q).await, ids(&eager, q).await);
    // A variable-length hop over the damaged index: unrolled into joins.
    let q = "MATCH (p:Person {id: 1})-[:KNOWS*1..2]->(f) RETURN f.firstName";
    assert_eq!(ids(&opened, q).await, ids(&eager, q).await);
    let q = "MATCH (p:Person {id: 1})-[:KNOWS]->(f) RETURN f.firstName";
    // The eager graph read it before the damage.
    let plan = eager.explain(q, &Params::new()).await.unwrap();
    assert!(plan.contains("CsrExpandExec"), "{plan}");
}

/// Plans over Lance scans kept physically run again: each run reads the datasets anew (the
/// scan's stream, shared by its partitions, is made per run), one after the other and at once,
/// and answers as a graph without a plan cache; also where the scan was handed a filter
/// reading a parameter (kept as a filter above the scan, reading each run's value).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_plans_read_lance_scans_afresh_each_run() {
    let (_dir, cfg) = sample_on_disk().await;
    let g = Graph::open(&cfg).await.unwrap();
    let fresh = g
        .with_options(g.options().clone().with_plan_cache(false))
        .await
        .unwrap();
    let queries = [
        "MATCH (p:Person {id: $id})-[:KNOWS]-(f:Person), (g:Person) WHERE g.age > f.age RETURN f.id, count(g) ORDER BY f.id",
        "MATCH (p:Person {id: $id}), (f:Forum) RETURN p.firstName, count(f), min(f.id), max(f.id)",
        // Filters reading parameters, handed to the scan: lifted above it in the kept plan
        // (a column read by the filter only, and one returned too).
        "MATCH (g:Person) WHERE g.age > $age RETURN count(*)",
        "MATCH (p:Person {id: $id}), (g:Person) WHERE g.age >= $age AND g.firstName <> p.firstName RETURN g.id, g.age ORDER BY g.id",
    ];
    for q in queries {
        let by_id = |id: i64| {
            Params::from([
                ("id".to_string(), lance_csr::param(id)),
                ("age".to_string(), lance_csr::param(22 + 4 * id)),
            ])
        };
        let text = g.explain(q, &by_id(1)).await.unwrap();
        let kept = &text[text
            .find("== cached physical plan ==")
            .unwrap_or_else(|| panic!("{q}: not kept physically\n{text}"))..];
        assert!(kept.contains("LanceRead"), "{kept}");
        let mut expected = Vec::new();
        for id in 1..=6 {
            expected.push(lance_csr::rows(&fresh.query(q, &by_id(id)).await.unwrap()));
        }
        for round in 0..2 {
            for id in 1..=6 {
                let got = lance_csr::rows(&g.query(q, &by_id(id)).await.unwrap());
                assert_eq!(
                    got,
                    expected[id as usize - 1],
                    "{q} with id {id}, round {round}"
                );
            }
        }
        let runs = (1..=6).map(|id| {
            let (g, p) = (&g, by_id(id));
            async move { lance_csr::rows(&g.query(q, &p).await.unwrap()) }
        });
        assert_eq!(futures::future::join_all(runs).await, expected, "{q}");
    }
}

/// Two relationship types over one dataset whose ends are different tables keyed by columns
/// of one name index different ordinals: each has its own file, so a second open reads both
/// instead of rebuilding one over the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn types_over_one_dataset_with_other_ends_keep_their_own_files() {
    use lance_csr_datasets::social::{batch, edge_batch};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let int64s =
        |v: Vec<i64>| -> arrow::array::ArrayRef { Arc::new(arrow::array::Int64Array::from(v)) };
    for (name, ids) in [
        ("a", vec![1, 2]),
        ("c", vec![10, 20, 30]),
        ("e", vec![30, 10]),
    ] {
        let b = batch(vec![("id", int64s(ids))]);
        lance_csr::write_lance(&d.join(format!("{name}.lance")), b.schema(), vec![b])
            .await
            .unwrap();
    }
    let l = edge_batch(vec![1, 2, 2], vec![10, 30, 20], None);
    lance_csr::write_lance(&d.join("l.lance"), l.schema(), vec![l])
        .await
        .unwrap();
    let cfg = d.join("graph.toml");
    std::fs::write(
        &cfg,
        r#"
[nodes.A]
source = "a.lance"
id = "id"
[nodes.C]
source = "c.lance"
id = "id"
[nodes.E]
source = "e.lance"
id = "id"
[[relationships]]
type = "TO_C"
from = "A"
to = "C"
source = "l.lance"
src = "src"
dst = "dst"
[[relationships]]
type = "TO_E"
from = "A"
to = "E"
source = "l.lance"
src = "src"
dst = "dst"
"#,
    )
    .unwrap();
    let first = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert!(first.built > 0, "{first:?}");
    let again = Graph::build_indexes(&cfg, &mut |_| {}).await.unwrap();
    assert_eq!(again.built, 0, "{again:?}");
    let g = Graph::open(&cfg).await.unwrap();
    assert_eq!(
        ids(&g, "MATCH (a:A)-[:TO_C]->(c:C) RETURN a.id, c.id").await,
        vec!["1|10", "2|20", "2|30"]
    );
    assert_eq!(
        ids(&g, "MATCH (a:A)-[:TO_E]->(e:E) RETURN a.id, e.id").await,
        vec!["1|10", "2|30"]
    );
}
