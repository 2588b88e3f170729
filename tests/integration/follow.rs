//! A graph that follows its datasets (`LiveGraph`): another writer's appends, deletes and
//! compactions with cleanup show in its answers, and a query whose state's files are gone
//! runs again on the latest state instead of failing.

use lance_csr::{Graph, LiveGraph, Params};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::sample_on_disk;

async fn answer(g: &std::sync::Arc<LiveGraph>, q: &str) -> Vec<Vec<String>> {
    lance_csr::rows(&g.query(q, &Params::new()).await.unwrap())
}

async fn dataset(dir: &Path, name: &str) -> lance::Dataset {
    lance::Dataset::open(&dir.join(name).to_string_lossy())
        .await
        .unwrap()
}

/// What `compact_files` and then `cleanup_old_versions` with no grace period do (pylance's
/// names): the data files of every earlier version are deleted.
async fn compact_and_clean_up(dir: &Path, name: &str) {
    let mut ds = dataset(dir, name).await;
    lance::dataset::optimize::compact_files(&mut ds, Default::default(), None)
        .await
        .unwrap();
    let removed = ds
        .cleanup_old_versions(chrono::Duration::zero(), Some(true), None)
        .await
        .unwrap();
    assert!(removed.data_files_removed > 0, "{name}: {removed:?}");
}

/// Several fragments in `name`, so that compacting rewrites its files.
async fn append_copy(dir: &Path, name: &str) {
    use futures::TryStreamExt;
    let ds = dataset(dir, name).await;
    let batches: Vec<_> = ds
        .scan()
        .try_into_stream()
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let schema = batches[0].schema();
    lance_csr::append_lance(&dir.join(name), schema, batches)
        .await
        .unwrap();
}

const KNOWS: &str = "MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k)";
const FINN: &str = "MATCH (:Person {id: 6})-[:KNOWS]->(x:Person) RETURN x.firstName";

/// Runs `body` on threads with the binary's deep stacks: Lance plans a scan of a dataset
/// with deleted rows in a frame larger than a test thread's 2 MiB in a debug build.
fn deep<F: std::future::Future<Output = ()>>(body: impl FnOnce() -> F + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(move || {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_stack_size(32 << 20)
                .enable_all()
                .build()
                .unwrap()
                .block_on(body())
        })
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

#[test]
fn appends_and_deletes_show_after_a_refresh() {
    deep(appends_and_deletes);
}

async fn appends_and_deletes() {
    let (dir, cfg) = sample_on_disk().await;
    let live = LiveGraph::new(Graph::open(&cfg).await.unwrap());
    let knows = answer(&live, KNOWS).await;
    assert_eq!(live.refresh().await.unwrap(), None, "nothing changed");

    // An append: one more KNOWS.
    let b =
        lance_csr_datasets::social::edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    let rel = "person_knows_person.lance";
    lance_csr::append_lance(&dir.path().join(rel), b.schema(), vec![b])
        .await
        .unwrap();
    // Read as it was until refreshed, then the new state (its changed index rebuilt).
    assert_eq!(answer(&live, KNOWS).await, knows);
    assert_eq!(live.refresh().await.unwrap(), Some(1));
    assert_eq!(answer(&live, FINN).await, vec![vec!["Ann".to_string()]]);

    // A delete.
    let mut ds = dataset(dir.path(), rel).await;
    ds.delete("src = 6").await.unwrap();
    assert!(live.refresh().await.unwrap().is_some());
    assert_eq!(answer(&live, KNOWS).await, knows);
    assert!(answer(&live, FINN).await.is_empty());
}

/// A state whose files a compaction's cleanup deleted cannot be read; a query started on it
/// runs again on the latest state, with that state's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_whose_files_are_gone_runs_on_the_latest_state() {
    let (dir, cfg) = sample_on_disk().await;
    append_copy(dir.path(), "city.lance").await;
    let q = "MATCH (c:City) RETURN c.name AS name ORDER BY name";
    let live = LiveGraph::new(Graph::open(&cfg).await.unwrap());
    let twice = answer(&live, "MATCH (c:City) RETURN count(*)").await;
    let old = live.current();

    compact_and_clean_up(dir.path(), "city.lance").await;
    // The state the graph holds is gone: read directly, it fails...
    let e = old.query(q, &Params::new()).await.err();
    assert!(e.is_some(), "the old state's files should be gone");
    // ...through the live graph, the query runs on the compacted state.
    let names = answer(&live, q).await;
    assert_eq!(names.len(), twice[0][0].parse::<usize>().unwrap());
    assert!(!std::sync::Arc::ptr_eq(&live.current(), &old));
}

/// A stream whose state's files go before its first batch is read runs on the latest state:
/// its rows are that state's, and the stream says nothing of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_whose_files_go_before_it_is_read_runs_on_the_latest_state() {
    let (dir, cfg) = sample_on_disk().await;
    append_copy(dir.path(), "city.lance").await;
    let live = LiveGraph::new(Graph::open(&cfg).await.unwrap());
    let q = "MATCH (c:City) RETURN c.name AS name";
    let want = answer(&live, q).await.len();
    let mut stream = live.query_stream(None, q, Params::new()).await.unwrap();
    let old = live.current();
    compact_and_clean_up(dir.path(), "city.lance").await;
    let mut rows = 0;
    while let Some(b) = stream.next_batch().await.unwrap() {
        rows += b.num_rows();
    }
    assert_eq!(rows, want);
    assert!(!std::sync::Arc::ptr_eq(&live.current(), &old));
}

/// An error of the query itself (not a file gone) is not run again and waits for no
/// refresh: the graph stays on its state though its datasets moved.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_query_is_not_run_again() {
    let (dir, cfg) = sample_on_disk().await;
    let live = LiveGraph::new(Graph::open(&cfg).await.unwrap());
    let before = live.current();
    append_copy(dir.path(), "city.lance").await;
    for bad in [
        "MATCH (c:City) RETURN c.name / 0",
        "MATCH (c:City) RETURN nosuchfunction(c)",
        "RETURN 1 +",
    ] {
        assert!(live.query(bad, &Params::new()).await.is_err(), "{bad}");
        assert!(std::sync::Arc::ptr_eq(&live.current(), &before), "{bad}");
    }
    assert_eq!(live.refresh().await.unwrap(), Some(0));
    assert!(!std::sync::Arc::ptr_eq(&live.current(), &before));
}

/// `follow` refreshes in the background: a write shows without anyone asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_followed_graph_sees_a_write_by_itself() {
    let (dir, cfg) = sample_on_disk().await;
    let live = LiveGraph::new(Graph::open(&cfg).await.unwrap());
    let (tx, mut refreshed) = tokio::sync::mpsc::unbounded_channel();
    live.follow(Duration::from_millis(100), move |r| {
        let _ = tx.send(r.map_err(|e| e.to_string()));
    });
    let b =
        lance_csr_datasets::social::edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    lance_csr::append_lance(
        &dir.path().join("person_knows_person.lance"),
        b.schema(),
        vec![b],
    )
    .await
    .unwrap();
    // A generous bound for a loaded machine; the interval is 100 ms.
    let started = Instant::now();
    let report = tokio::time::timeout(Duration::from_secs(60), refreshed.recv())
        .await
        .expect("no refresh within 60 s")
        .unwrap();
    assert_eq!(report, Ok(1), "after {:?}", started.elapsed());
    assert_eq!(answer(&live, FINN).await, vec![vec!["Ann".to_string()]]);
    // Dropping the graph stops its task: the channel closes.
    drop(live);
    let ended = tokio::time::timeout(Duration::from_secs(10), refreshed.recv()).await;
    assert_eq!(ended, Ok(None));
}

/// A dataset deleted and written again starts its version numbers over: the quick look a
/// followed graph takes each interval sees it by its manifest file, not only the full check
/// every 30 intervals. An unchanged dataset is never taken as moved (that would rebuild the
/// catalog at every interval).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dataset_written_again_at_the_same_version_is_seen_at_once() {
    let (dir, cfg) = sample_on_disk().await;
    let live = LiveGraph::new(Graph::open(&cfg).await.unwrap());
    assert!(!live.current().moved().await);
    let path = dir.path().join("person_knows_person.lance");
    let version = dataset(dir.path(), "person_knows_person.lance")
        .await
        .version()
        .version;
    std::fs::remove_dir_all(&path).unwrap();
    let b =
        lance_csr_datasets::social::edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    lance_csr::write_lance(&path, b.schema(), vec![b])
        .await
        .unwrap();
    let again = dataset(dir.path(), "person_knows_person.lance").await;
    assert_eq!(
        again.version().version,
        version,
        "written again at the same number"
    );
    assert!(live.current().moved().await);
    assert!(live.refresh().await.unwrap().is_some());
    assert_eq!(answer(&live, KNOWS).await, vec![vec!["1".to_string()]]);
    assert!(!live.current().moved().await);
    // The same state in a manifest file rewritten (a copy): taken once, nothing rebuilt, and
    // not seen as moved again.
    let manifest = std::fs::read_dir(path.join("_versions"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "manifest"))
        .unwrap();
    let copy = manifest.with_extension("copy");
    std::fs::copy(&manifest, &copy).unwrap();
    std::fs::rename(&copy, &manifest).unwrap();
    assert!(live.current().moved().await);
    assert_eq!(live.refresh().await.unwrap(), Some(0));
    assert!(!live.current().moved().await);
    assert_eq!(live.refresh().await.unwrap(), None);
    assert_eq!(answer(&live, KNOWS).await, vec![vec!["1".to_string()]]);
}
