//! The cluster path (feature `distributed`): an in-process Ballista cluster (a scheduler and
//! two executors, with our codecs) runs the case queries, random queries over the sample graph
//! and over a generated graph; every answer must be the in-process one.

use crate::common;
use crate::verify::cli_verify::{self, Shapes};
use common::cases::{all_cases, Expect};
use lance_csr::Graph;
use std::path::PathBuf;
use std::sync::LazyLock;
use tokio::sync::OnceCell;

/// The runtime the cluster lives on and the tests run on: its threads have deep stacks, as
/// the binary's (plans are (de)serialized recursively).
static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .thread_stack_size(32 << 20)
        .enable_all()
        .build()
        .expect("runtime")
});

/// Runs a test's body on [`RUNTIME`] (from a thread with a deep stack too).
fn run<T: Send + 'static, F: std::future::Future<Output = T>>(
    make: impl FnOnce() -> F + Send + 'static,
) -> T {
    std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(move || RUNTIME.block_on(make()))
        .unwrap()
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// The cluster every test here shares (starting one takes a moment).
static CLUSTER: OnceCell<String> = OnceCell::const_new();

async fn cluster() -> &'static str {
    CLUSTER
        .get_or_init(|| async {
            lance_csr::cluster::standalone(2, 2)
                .await
                .expect("standalone cluster starts")
        })
        .await
}

/// `tables` written as Lance datasets with their indexes: the graph.toml.
async fn lance_graph(dir: &std::path::Path, tables: Vec<lance_csr_datasets::Table>) -> PathBuf {
    let path = lance_csr::write_graph(dir, tables, &mut |_| ())
        .await
        .unwrap();
    Graph::build_indexes(&path, &mut |_| ()).await.unwrap();
    path
}

async fn on_cluster(path: &std::path::Path, options: lance_csr::GraphOptions) -> Graph {
    Graph::open_with(path, options)
        .await
        .unwrap()
        .with_cluster(cluster().await)
        .await
        .unwrap()
}

/// The sample graph on Lance (in the returned folder), opened in process and on the cluster.
async fn sample_in_process_and_on_cluster() -> (tempfile::TempDir, Graph, Graph) {
    let dir = tempfile::tempdir().unwrap();
    let path = lance_graph(dir.path(), lance_csr_datasets::sample::tables()).await;
    let local = Graph::open(&path).await.unwrap();
    let remote = on_cluster(&path, Default::default()).await;
    (dir, local, remote)
}

fn outcome(r: &lance_csr::Result<lance_csr::QueryResult>, ordered: bool) -> String {
    match r {
        Ok(r) => {
            let mut lines = common::lines(r);
            if !ordered {
                lines.sort();
            }
            format!("{}\n{}", r.columns.join("|"), lines.join("\n"))
        }
        Err(e) => format!("error {}", e.kind_name()),
    }
}

fn count(r: &lance_csr::Result<lance_csr::QueryResult>) -> String {
    match r {
        Ok(r) => format!("{} rows", r.num_rows()),
        Err(e) => format!("error {}", e.kind_name()),
    }
}

#[test]
fn case_queries_agree_on_a_standalone_cluster() {
    run(|| async {
        let (_dir, local, remote) = sample_in_process_and_on_cluster().await;
        let mut failures = vec![];
        let cases = all_cases();
        assert!(cases.len() >= 60);
        for c in &cases {
            let params = common::params(&c.params).expect("case params parse");
            let ordered = matches!(c.expect, Expect::Ordered(_));
            // `ONLY_CASE=file.cypher:line` runs one case (to look into a failure).
            if let Ok(only) = std::env::var("ONLY_CASE") {
                if format!("{}:{}", c.file, c.line) != only {
                    continue;
                }
            }
            let local_result = local.query(&c.query, &params).await;
            let remote_result = remote.query(&c.query, &params).await;
            let want = outcome(&local_result, ordered);
            let got = outcome(&remote_result, ordered);
            if got != want {
                // The kind alone does not say which stage failed; keep both messages.
                let detail = |r: &lance_csr::Result<lance_csr::QueryResult>| match r {
                    Err(e) => format!("\n   ({e})"),
                    Ok(_) => String::new(),
                };
                failures.push(format!(
                    "{}:{}: {}\n-- in process:\n{want}{}\n-- on the cluster:\n{got}{}",
                    c.file,
                    c.line,
                    c.query,
                    detail(&local_result),
                    detail(&remote_result)
                ));
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} cases differ:\n{}",
            failures.len(),
            cases.len(),
            failures.join("\n\n")
        );
    });
}

/// Tasks that keep every slot of the executors busy for longer than a lost executor takes to
/// notice (a standalone executor asks for work, its sign of life, only with a free slot): no
/// executor is given up, so they finish, once each, and a query beside them still agrees
/// (given up, their tasks ran again until the time limit, and a shuffle was read twice).
#[test]
fn busy_slots_do_not_lose_a_standalone_executor() {
    run(|| async {
        let (_dir, local, remote) = sample_in_process_and_on_cluster().await;
        let remote = std::sync::Arc::new(remote);
        let long = "MATCH (a:Person), (b:Person), (c:Person), (d:Person), (e:Person), \
                    (f:Person), (g:Person), (h:Person), (i:Person) \
                    WHERE a.age + b.age + c.age + d.age + e.age + f.age + g.age + h.age + i.age > 0 \
                    RETURN count(*) AS n";
        let started = std::time::Instant::now();
        let longs: Vec<_> = (0..4)
            .map(|_| {
                let remote = remote.clone();
                tokio::spawn(async move {
                    let r = remote.query(long, &lance_csr::Params::new()).await;
                    (outcome(&r, true), started.elapsed())
                })
            })
            .collect();
        let q = "MATCH (p:Person) WHERE COUNT { MATCH (p)-[:KNOWS]->(d) WITH DISTINCT d \
                 WHERE d.age > p.age } > 0 RETURN p.firstName AS n ORDER BY n";
        let p = lance_csr::Params::new();
        let want = outcome(&local.query(q, &p).await, true);
        let mut beside = 0;
        while !longs.iter().all(|l| l.is_finished()) {
            assert_eq!(outcome(&remote.query(q, &p).await, true), want);
            beside += 1;
        }
        let mut slowest = std::time::Duration::ZERO;
        for l in longs {
            let (got, took) = l.await.unwrap();
            assert_eq!(got, format!("n\n{}", 6u64.pow(9)));
            slowest = slowest.max(took);
        }
        // Busy for longer than the executors' timeout on a cluster of processes.
        assert!(
            slowest.as_secs() > lance_csr::cluster::EXECUTOR_TIMEOUT_SECONDS,
            "the tasks took {slowest:?}: too short to test anything"
        );
        assert!(beside > 0);
    });
}

#[test]
fn random_queries_agree_on_a_standalone_cluster() {
    run(|| async {
        let (_dir, local, remote) = sample_in_process_and_on_cluster().await;
        let report =
            cli_verify::compare(&remote, &local, 70, 20261201, Shapes::Cluster, &mut |_| ())
                .await
                .unwrap();
        println!("{}", report.render());
        assert!(report.mismatches.is_empty(), "{}", report.render());
        assert!(report.compared >= 66, "{}", report.render());
    });
}

#[test]
fn generated_graph_queries_agree_on_a_standalone_cluster() {
    run(|| async {
        let dir = tempfile::tempdir().unwrap();
        let tables = lance_csr_datasets::social::generate(0.5, 11, &mut |_| ());
        let path = lance_graph(dir.path(), tables).await;
        let local = Graph::open(&path).await.unwrap();
        // Small batches and four partitions: the cluster's scans split tables of one fragment
        // into ranges of rows (as big tables are split on big graphs).
        let options = lance_csr::GraphOptions::default()
            .with_batch_size(64)
            .with_target_partitions(4);
        let remote = on_cluster(&path, options).await;
        let p = lance_csr::Params::new();
        // Ranges of rows, read unfiltered and filtered by the scan, limits after the filter.
        let text = remote
            .explain_analyze("MATCH (a:Person) RETURN count(*) AS n", &p)
            .await
            .unwrap();
        assert!(text.contains("[0..") && text.contains("..500]"), "{text}");
        for q in [
            "MATCH (a:Person) WHERE a.id % 3 = 1 RETURN count(*) AS n",
            "MATCH (a:Person) WHERE a.id > 100 AND a.firstName <> 'x' RETURN a.id AS id ORDER BY id LIMIT 9",
            "MATCH (a:Person)-[:KNOWS]->(b) WHERE a.id % 5 = 0 RETURN count(*) AS n",
        ] {
            assert_eq!(
                outcome(&remote.query(q, &p).await, true),
                outcome(&local.query(q, &p).await, true),
                "{q}"
            );
        }
        for n in [1, 7, 100] {
            let q = format!("MATCH (a:Person) WHERE a.id % 2 = 0 RETURN a.id LIMIT {n}");
            assert_eq!(remote.query(&q, &p).await.unwrap().num_rows(), n, "{q}");
        }
        // The bench suite's queries, then random ones over the whole graph.
        let mut files: Vec<_> = std::fs::read_dir(common::project_root().join("benches/queries"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "cypher"))
            .collect();
        files.sort();
        assert!(files.len() >= 20);
        let mut failures = vec![];
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            let q: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let ordered = q.contains("ORDER BY");
            let (want, got) = (local.query(&q, &p).await, remote.query(&q, &p).await);
            // Any rows may answer a LIMIT without ORDER BY: only their number must agree.
            let (want, got) = if q.contains("LIMIT") && !ordered {
                (count(&want), count(&got))
            } else {
                (outcome(&want, ordered), outcome(&got, ordered))
            };
            if got != want {
                failures.push(format!(
                    "{}: in process\n{want}\non the cluster\n{got}",
                    f.display()
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
        let report = cli_verify::compare(&remote, &local, 60, 7, Shapes::WholeGraph, &mut |_| ())
            .await
            .unwrap();
        println!("{}", report.render());
        assert!(report.mismatches.is_empty(), "{}", report.render());
    });
}

/// Subplans are not shared on a cluster (the rule needs one process); LIMITs absorbed into the
/// graph operators still give exactly the rows asked for.
#[test]
fn one_process_rules_on_a_cluster() {
    run(|| async {
        let dir = tempfile::tempdir().unwrap();
        let path = lance_graph(dir.path(), lance_csr_datasets::sample::tables()).await;
        // Sharing at any size (the sample is too small to pass the default minimum).
        let options = lance_csr::GraphOptions::default().with_share_min_saved_work(0);
        let local = Graph::open_with(&path, options.clone()).await.unwrap();
        let remote = on_cluster(&path, options).await;
        // Five branches (one per table leaving a Person) share their anchor in one process.
        let q = "MATCH (p:Person {id: 1})-[r]->(x) RETURN type(r) AS t, count(*) AS n ORDER BY t";
        let p = lance_csr::Params::new();
        let shared = local.explain(q, &p).await.unwrap();
        assert!(shared.contains("SharedSubplan"), "{shared}");
        let plan = remote.explain(q, &p).await.unwrap();
        assert!(!plan.contains("SharedSubplan"), "{plan}");
        assert!(plan.contains("DistributedQueryExec"), "{plan}");
        assert_eq!(
            outcome(&remote.query(q, &p).await, false),
            outcome(&local.query(q, &p).await, false)
        );
        for n in [0, 1, 3, 7] {
            let q =
                format!("MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c) RETURN a.id, c.id LIMIT {n}");
            let r = remote.query(&q, &p).await.unwrap();
            assert_eq!(r.num_rows(), n, "{q}");
        }
    });
}

/// `explain --analyze` on a cluster: the job's stages with exact row counts (more than a
/// thousand, where metrics are shown rounded), the result rows from the last stage.
#[test]
fn explain_analyze_on_a_cluster_counts_rows_per_stage() {
    run(|| async {
        let (_dir, local, remote) = sample_in_process_and_on_cluster().await;
        let p = lance_csr::Params::new();
        let q = "MATCH (a) UNWIND range(1, 1500) AS i RETURN i, count(*) AS n ORDER BY i";
        let rows = local.query(q, &p).await.unwrap().num_rows();
        assert!(rows > 1000, "{rows}");
        let text = remote.explain_analyze(q, &p).await.unwrap();
        let written: Vec<usize> = text
            .lines()
            .filter_map(|l| {
                let l = l.strip_prefix("stage ")?;
                let at = l.find(" partitions, ")? + " partitions, ".len();
                l[at..].split(' ').next()?.parse().ok()
            })
            .collect();
        // A grouped aggregation over several partitions: partial, then final aggregates.
        assert!(written.len() >= 2, "{text}");
        let (last, before) = written.split_last().unwrap();
        let shuffled: usize = before.iter().sum();
        assert_eq!(*last, rows, "{text}");
        assert!(
            shuffled >= rows,
            "every group crosses a stage once at least: {text}"
        );
        assert!(
            text.ends_with(&format!(
                "== {rows} rows; rows shuffled between stages: {shuffled} =="
            )),
            "{text}"
        );
    });
}

/// A query on a cluster has a time limit when none was set (120 s): a cluster with no
/// executor keeps a query waiting without end otherwise (the limit ending such a query with
/// an error is `a_lost_executor_does_not_hang_the_cluster`'s); a limit set is kept.
#[test]
fn a_query_on_a_cluster_has_a_time_limit_by_default() {
    use std::time::Duration;
    run(|| async {
        let dir = tempfile::tempdir().unwrap();
        let path = lance_graph(dir.path(), lance_csr_datasets::sample::tables()).await;
        let remote = on_cluster(&path, Default::default()).await;
        assert_eq!(remote.options().timeout, Some(Duration::from_secs(120)));
        let set = lance_csr::GraphOptions::default().with_timeout(Duration::from_secs(7));
        let remote = on_cluster(&path, set).await;
        assert_eq!(remote.options().timeout, Some(Duration::from_secs(7)));
        let local = Graph::open(&path).await.unwrap();
        assert_eq!(local.options().timeout, None);
    });
}

#[test]
fn a_graph_in_memory_does_not_go_to_a_cluster() {
    run(|| async {
        let url = cluster().await;
        let e = match common::sample().await.with_cluster(url).await {
            Ok(_) => panic!("an in-memory graph went to the cluster"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains("built in memory"), "{e}");
    });
}

/// Child processes killed when dropped.
struct Processes(Vec<std::process::Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// A port `p` such that `p` and `p + 1` are free now.
fn free_ports() -> u16 {
    loop {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        if p < u16::MAX && std::net::TcpListener::bind(("127.0.0.1", p + 1)).is_ok() {
            return p;
        }
    }
}

/// The binary's processes, as `benches/cluster.sh` starts them: a scheduler and two executors
/// (each with its own registry of functions and graphs), queried with `query --cluster`.
#[test]
fn cluster_processes_answer_as_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let path =
        run(move || async move { lance_graph(&root, lance_csr_datasets::sample::tables()).await });
    let graph = path.to_str().unwrap();
    let spawn = common::cli::spawn_quiet;
    let (s, e1, e2) = (free_ports(), free_ports(), free_ports());
    let scheduler = format!("127.0.0.1:{s}");
    let mut procs = Processes(vec![spawn(&["cluster", "scheduler", "--bind", &scheduler])]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    for e in [e1, e2] {
        let bind = format!("127.0.0.1:{e}");
        procs.0.push(spawn(&[
            "cluster",
            "executor",
            "--scheduler",
            &scheduler,
            "--bind",
            &bind,
            "--slots",
            "2",
        ]));
    }
    let url = format!("df://{scheduler}");
    let queries = [
        "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c) RETURN a.firstName, c.firstName ORDER BY a.firstName, c.firstName",
        // Branches over labels, DataFusion's nested functions (labels)
        "MATCH (m:Message) RETURN labels(m) AS l, count(*) AS n ORDER BY l",
        "MATCH (p:Person {id: 1})-[:LIKES]->(m) RETURN labels(m) AS l, count(*) AS n ORDER BY l",
        "MATCH p = shortestPath((a:Person {id: 1})-[:KNOWS*]-(b:Person {id: 4})) RETURN length(p) AS n",
        "MATCH (a:Person) RETURN [x IN [1, 2, 3] WHERE x > a.id % 3 | x * 2] AS xs ORDER BY a.id",
    ];
    // The executors register within a few seconds.
    let started = std::time::Instant::now();
    for q in queries {
        let local = common::cli::run(&["query", "-g", graph, "--format", "csv", q]);
        assert!(local.status.success(), "{q}");
        let remote = loop {
            let out = common::cli::run(&[
                "query",
                "-g",
                graph,
                "--format",
                "csv",
                "--cluster",
                &url,
                "--timeout",
                "60s",
                q,
            ]);
            if out.status.success() || started.elapsed().as_secs() > 60 {
                break out;
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        };
        assert!(
            remote.status.success(),
            "{q}: {}",
            String::from_utf8_lossy(&remote.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&remote.stdout),
            String::from_utf8_lossy(&local.stdout),
            "{q}"
        );
    }
    drop(procs);
}

/// Executors killed (kill -9) mid-query: with one of two lost at a quarter, half and three
/// quarters of a query's time, the scheduler notices within seconds and the job ends on the
/// survivor with the in-process answer; with both lost, or none registered, the client ends at
/// its time limit with an error that says the job was cancelled and what to check.
#[test]
fn a_lost_executor_does_not_hang_the_cluster() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("snb");
    let o = common::cli::run(&["generate", "--scale", "0.5", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let graph = out.join("graph.toml").display().to_string();
    let q = "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c)-[:KNOWS]->(d) WHERE a.age < d.age \
             RETURN d.firstName AS n, count(*) AS k ORDER BY k DESC, n LIMIT 3";
    let local = common::cli::run(&["query", "-g", &graph, "--format", "csv", q]);
    assert!(local.status.success());
    let spawn = common::cli::spawn_quiet;
    let scheduler = format!("127.0.0.1:{}", free_ports());
    let _scheduler = Processes(vec![spawn(&["cluster", "scheduler", "--bind", &scheduler])]);
    let executor = || {
        spawn(&[
            "cluster",
            "executor",
            "--scheduler",
            &scheduler,
            "--bind",
            &format!("127.0.0.1:{}", free_ports()),
            "--slots",
            "2",
        ])
    };
    let url = format!("df://{scheduler}");
    let on_cluster = |timeout: &str| {
        common::cli::bin()
            .args(["query", "-g", &graph, "--format", "csv", "--cluster", &url])
            .args(["--timeout", timeout, q])
            .output()
            .expect("binary runs")
    };
    let mut executors = Processes(vec![executor(), executor()]);
    // Registered and warm: the time of a whole run.
    let t = Instant::now();
    let warm = loop {
        let o = on_cluster("60s");
        if o.status.success() || t.elapsed() > Duration::from_secs(60) {
            break o;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(
        warm.stdout,
        local.stdout,
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    let t = Instant::now();
    assert_eq!(on_cluster("60s").stdout, local.stdout);
    let whole = t.elapsed();
    for quarter in [1u32, 2, 3] {
        let query = std::thread::scope(|s| {
            let run = s.spawn(|| on_cluster("90s"));
            std::thread::sleep(whole * quarter / 4);
            let mut lost = executors.0.remove(0);
            lost.kill().unwrap();
            lost.wait().unwrap();
            run.join().unwrap()
        });
        assert!(
            query.status.success(),
            "lost at {quarter}/4: {}",
            String::from_utf8_lossy(&query.stderr)
        );
        assert_eq!(query.stdout, local.stdout, "lost at {quarter}/4");
        executors.0.push(executor());
    }
    // Both lost mid-query: an error at the time limit, not a wait without end. Early in the
    // query: a run can take half the time of the one measured (the machine less loaded), and
    // one that ended before its executors were lost tests nothing.
    let (query, took) = std::thread::scope(|s| {
        let t = Instant::now();
        let run = s.spawn(|| on_cluster("15s"));
        std::thread::sleep(whole / 10);
        drop(std::mem::replace(&mut executors, Processes(vec![])));
        (run.join().unwrap(), t.elapsed())
    });
    let err = String::from_utf8_lossy(&query.stderr).to_string();
    assert!(!query.status.success());
    assert!(
        err.contains("time limit") && err.contains("executors running"),
        "{err}"
    );
    assert!(took < Duration::from_secs(30), "{took:?}");
    // None registered: the same.
    let t = Instant::now();
    let query = on_cluster("5s");
    let err = String::from_utf8_lossy(&query.stderr).to_string();
    assert!(!query.status.success());
    assert!(
        err.contains("time limit") && err.contains("cancelled"),
        "{err}"
    );
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}
