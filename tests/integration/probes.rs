//! Fault, bad-input and safety probes run against the binary: an import killed at any moment,
//! labels that look like paths, a planted link where the demo writes, inputs that once
//! aborted the process or grew without bound under a memory limit.

use crate::common::cli::{bin, query_csv, run, stderr, stdout};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// A process that ended by a signal (an abort, a segfault, the OOM killer's kill) is a defect
/// whatever it printed.
fn no_signal(o: &Output, what: &str) {
    use std::os::unix::process::ExitStatusExt;
    assert!(
        o.status.signal().is_none(),
        "{what}: killed by signal {:?}\n{}",
        o.status.signal(),
        stderr(o)
    );
}

/// Small deterministic pseudo-random numbers (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Two versions of a small graph as CSV files: `(users, follows)` per version, and their
/// node and relationship counts.
struct Versions {
    files: [(PathBuf, PathBuf); 2],
    counts: [(usize, usize); 2],
}

fn versions(dir: &Path) -> Versions {
    let write = |k: usize, nodes: usize, edges: usize| {
        let users = dir.join(format!("users{k}.csv"));
        let follows = dir.join(format!("follows{k}.csv"));
        let mut u = String::from("id,name\n");
        for i in 0..nodes {
            u.push_str(&format!("{i},n{i}\n"));
        }
        let mut f = String::from("src,dst\n");
        for i in 0..edges {
            f.push_str(&format!("{},{}\n", i % nodes, (i * 7 + 1) % nodes));
        }
        std::fs::write(&users, u).unwrap();
        std::fs::write(&follows, f).unwrap();
        (users, follows)
    };
    Versions {
        files: [write(0, 40, 60), write(1, 70, 130)],
        counts: [(40, 60), (70, 130)],
    }
}

fn import_args(out: &Path, (users, follows): &(PathBuf, PathBuf)) -> Vec<String> {
    vec![
        "import".into(),
        "--out".into(),
        out.display().to_string(),
        "--overwrite".into(),
        "--node".into(),
        format!("User={}", users.display()),
        "--rel".into(),
        format!("FOLLOWS:User:User={}", follows.display()),
    ]
}

/// The node and relationship counts of the graph at `out`, read with the library.
fn counts(out: &Path) -> Result<(usize, usize), String> {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let g = lance_csr::Graph::open(out.join("graph.toml"))
            .await
            .map_err(|e| e.to_string())?;
        let one = |q: &'static str| {
            let g = &g;
            async move {
                let r = g
                    .query(q, &lance_csr::Params::new())
                    .await
                    .map_err(|e| e.to_string())?;
                Ok::<usize, String>(lance_csr::rows(&r)[0][0].parse().unwrap())
            }
        };
        Ok((
            one("MATCH (u:User) RETURN count(u)").await?,
            one("MATCH (:User)-[f:FOLLOWS]->(:User) RETURN count(f)").await?,
        ))
    })
}

/// What a crash or an earlier run left beside `out` (named `.NAME.*`).
fn leftovers(out: &Path) -> Vec<String> {
    let prefix = format!(".{}.", out.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(out.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// `import --overwrite` killed with SIGKILL at random moments (its whole run, the swap
/// included): the graph at `--out` always answers with the old or the new counts, and the
/// next import removes what a kill left.
#[test]
fn import_killed_at_any_moment_leaves_the_old_or_the_new_graph() {
    let iterations: usize = std::env::var("LANCE_CSR_KILL_LOOP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let v = versions(dir.path());
    let out = dir.path().join("g");
    let o = bin().args(import_args(&out, &v.files[0])).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(counts(&out).unwrap(), v.counts[0]);
    // How long a whole import takes here: kills land anywhere from its start to past its end.
    let t = Instant::now();
    let o = bin().args(import_args(&out, &v.files[1])).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let full = t.elapsed().as_micros() as u64;
    let mut current = 1;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut killed = 0;
    for i in 0..iterations {
        let next = 1 - current;
        let mut child = bin()
            .args(import_args(&out, &v.files[next]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.below(full * 6 / 5)));
        let finished = child.try_wait().unwrap().is_some();
        if !finished {
            child.kill().unwrap();
            killed += 1;
        }
        let status = child.wait().unwrap();
        if status.success() {
            current = next;
        }
        let got = counts(&out).unwrap_or_else(|e| panic!("iteration {i}: the graph at --out: {e}"));
        assert!(
            got == v.counts[0] || got == v.counts[1],
            "iteration {i}: {got:?} is neither version"
        );
        if status.success() {
            assert_eq!(got, v.counts[current], "iteration {i}: a finished import");
        }
    }
    assert!(
        killed * 4 >= iterations,
        "only {killed} of {iterations} imports were killed"
    );
    // A clean run removes every leftover.
    let o = bin().args(import_args(&out, &v.files[0])).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
    assert_eq!(counts(&out).unwrap(), v.counts[0]);
}

/// A crash at each step of the swap (the process aborts there, as killed): the old graph
/// stays, or the new one is complete; the next import finishes or undoes it and cleans up.
#[test]
fn import_crashed_at_each_step_of_the_swap_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let v = versions(dir.path());
    let out = dir.path().join("g");
    let o = bin().args(import_args(&out, &v.files[0])).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    // (The two-rename swap, where the kernel can't exchange, and its interruption between
    // the renames are unit-tested in `storage/swap.rs`.)
    for (point, after) in [("written", 0), ("ready", 0), ("exchanged", 1)] {
        let o = bin()
            .args(import_args(&out, &v.files[1]))
            .env("LANCE_CSR_CRASH_AT", point)
            .output()
            .unwrap();
        assert!(
            !o.status.success(),
            "{point}: the crash point was not reached"
        );
        assert_eq!(counts(&out).unwrap(), v.counts[after], "{point}");
        assert!(
            !leftovers(&out).is_empty(),
            "{point}: the crash left nothing to clean"
        );
        // The next import (of the old version) recovers and cleans up.
        let o = bin().args(import_args(&out, &v.files[0])).output().unwrap();
        assert!(o.status.success(), "{point}: {}", stderr(&o));
        assert!(leftovers(&out).is_empty(), "{point}: {:?}", leftovers(&out));
        assert_eq!(counts(&out).unwrap(), v.counts[0], "{point}");
    }
}

/// Labels and types that look like paths become plain dataset names inside `--out`; the
/// graph keeps the original names.
#[test]
fn labels_that_look_like_paths_stay_inside_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("n.csv"), "id,x\n1,10\n2,20\n").unwrap();
    std::fs::write(d.join("e.csv"), "src,dst\n1,2\n").unwrap();
    let inside = d.join("inside");
    std::fs::create_dir(&inside).unwrap();
    let out = inside.join("g");
    let n = d.join("n.csv").display().to_string();
    let e = d.join("e.csv").display().to_string();
    let abs = format!("{}/evil", d.display());
    let o = run(&[
        "import",
        "--out",
        out.to_str().unwrap(),
        "--node",
        &format!("../escape={n}"),
        "--node",
        &format!("{abs}={n}"),
        "--node",
        &format!("..={n}"),
        "--rel",
        &format!("a/../../b:../escape:..={e}"),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Nothing beside the graph but the graph, nothing above it.
    let beside: Vec<_> = std::fs::read_dir(&inside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert_eq!(beside, vec!["g".to_string()]);
    let above: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(
        !above.iter().any(|n| n.contains("escape") || n == "evil"),
        "{above:?}"
    );
    for entry in std::fs::read_dir(&out).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        assert!(
            !name.contains('/') && name != ".." && !name.starts_with(".."),
            "{name}"
        );
    }
    let cfg = out.join("graph.toml");
    let q = |text: &str| query_csv(&cfg, text);
    assert_eq!(q("MATCH (n:`../escape`) RETURN count(n) AS c"), "c\n2\n");
    assert_eq!(
        q(&format!("MATCH (n:`{abs}`) RETURN sum(n.x) AS s")),
        "s\n30\n"
    );
    assert_eq!(
        q("MATCH (:`../escape`)-[r:`a/../../b`]->(m:`..`) RETURN m.id AS m"),
        "m\n2\n"
    );
}

/// The demo writes its sample into a fresh private folder: a link planted where an older
/// version wrote (`$TMPDIR/lance-csr-sample`) is never followed.
#[test]
fn the_demo_never_follows_a_planted_link() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    std::fs::write(victim.join("graph.toml"), "precious").unwrap();
    std::os::unix::fs::symlink(&victim, tmp.path().join("lance-csr-sample")).unwrap();
    let o = bin()
        .arg("demo")
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(victim.join("graph.toml")).unwrap(),
        "precious"
    );
    assert_eq!(std::fs::read_dir(&victim).unwrap().count(), 1);
    // Where it wrote: a folder of its own, readable by its owner only.
    let line = stdout(&o)
        .lines()
        .find(|l| l.contains("the sample graph stays at"))
        .unwrap()
        .to_string();
    let graph = PathBuf::from(line.rsplit(' ').next().unwrap());
    let folder = graph.parent().unwrap();
    assert!(folder.starts_with(tmp.path()), "{}", folder.display());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(folder).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
}

/// Index files get the mode the umask gives the datasets and graph.toml.
#[test]
fn index_files_have_the_datasets_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let v = versions(dir.path());
    let out = dir.path().join("g");
    let o = bin().args(import_args(&out, &v.files[0])).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let want = mode(&out.join("graph.toml"));
    let mut seen = 0;
    for e in std::fs::read_dir(out.join("_csr")).unwrap().flatten() {
        assert_eq!(mode(&e.path()), want, "{}", e.path().display());
        seen += 1;
    }
    assert!(seen >= 2, "index files: {seen}");
}

/// A CSV header of 10^6 columns is refused with a clear error (it once asked for 8 GB and
/// aborted); a wide file under the limit imports in bounded memory.
#[test]
fn a_csv_of_a_million_columns_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let header: Vec<String> = (0..1_000_000).map(|i| format!("c{i}")).collect();
    let mut text = format!("id,{}\n", header.join(","));
    text.push_str(&format!("1,{}\n", vec!["0"; 1_000_000].join(",")));
    std::fs::write(d.join("wide.csv"), text).unwrap();
    let o = run(&[
        "import",
        "--out",
        d.join("g").to_str().unwrap(),
        "--node",
        &format!("W={}", d.join("wide.csv").display()),
    ]);
    no_signal(&o, "a million columns");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("1000001 columns"), "{}", stderr(&o));
    assert!(!d.join("g").exists());
    // 2,000 columns: imported, and readable.
    let header: Vec<String> = (0..2000).map(|i| format!("c{i}")).collect();
    let mut text = format!("id,{}\n", header.join(","));
    for r in 0..50 {
        text.push_str(&format!("{r},{}\n", vec!["7"; 2000].join(",")));
    }
    std::fs::write(d.join("w2.csv"), text).unwrap();
    let o = run(&[
        "import",
        "--out",
        d.join("g2").to_str().unwrap(),
        "--no-index",
        "--node",
        &format!("W={}", d.join("w2.csv").display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(&[
        "query",
        "--graph",
        d.join("g2").to_str().unwrap(),
        "--format",
        "csv",
        "MATCH (w:W) RETURN sum(w.c1999) AS s",
    ]);
    assert_eq!(stdout(&o), "s\n350\n", "{}", stderr(&o));
}

/// Column names with spaces, backquotes, dots, `%` or Lance's own `_rowid`, written by import,
/// read back under their names (backquoted in Cypher), in values and filters.
#[test]
fn hostile_property_names_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("n.csv"),
        "id,a b,`x`,x`y,c.d,_rowid,c%2Ed,e:f\n1,2,3,4,5,6,7,8\n2,20,30,40,50,60,70,80\n",
    )
    .unwrap();
    std::fs::write(d.join("e.csv"), "src,dst,w.x\n1,2,9\n").unwrap();
    let out = d.join("g");
    let o = run(&[
        "import",
        "--out",
        out.to_str().unwrap(),
        "--node",
        &format!("N={}", d.join("n.csv").display()),
        "--rel",
        &format!("E:N:N={}", d.join("e.csv").display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = out.join("graph.toml");
    let q = |text: &str| query_csv(&cfg, text);
    assert_eq!(
        q("MATCH (n:N) WHERE n.```x``` = 3 RETURN n.`a b` AS a, n.`x``y` AS b, n.`c.d` AS c, n.`_rowid` AS d, n.`c%2Ed` AS e, n.`e:f` AS f"),
        "a,b,c,d,e,f\n2,4,5,6,7,8\n"
    );
    assert_eq!(
        q("MATCH (:N)-[r:E]->(m:N) WHERE r.`w.x` > 1 RETURN r.`w.x` AS w, m.`c.d` AS c"),
        "w,c\n9,50\n"
    );
    assert_eq!(
        q("MATCH (n:N {id: 1}) RETURN keys(n) AS k"),
        "k\n\"['id', 'a b', '`x`', 'x`y', 'c.d', '_rowid', 'c%2Ed', 'e:f']\"\n"
    );
}

/// A damaged data file is reported with the dataset it belongs to.
#[test]
fn a_damaged_data_file_names_its_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let v = versions(dir.path());
    let out = dir.path().join("g");
    let o = bin().args(import_args(&out, &v.files[0])).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let data = std::fs::read_dir(out.join("user.lance").join("data"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let len = std::fs::metadata(&data).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&data)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let o = run(&[
        "query",
        "--graph",
        out.join("graph.toml").to_str().unwrap(),
        "MATCH (u:User) RETURN max(u.name) AS m",
    ]);
    no_signal(&o, "a damaged file");
    assert!(!o.status.success());
    assert!(stderr(&o).contains("user.lance"), "{}", stderr(&o));
}

/// Runs the binary with `args`, sampling its peak resident memory (`VmHWM`) until it ends:
/// its output and the peak in KB.
fn peak_rss_kb(args: &[&str]) -> (Output, u64) {
    use std::io::Read;
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Read both pipes as the child writes (a full pipe would stop it).
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let mut peak = 0u64;
    let status = loop {
        if let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) {
            if let Some(hwm) = status
                .lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
            {
                peak = peak.max(hwm);
            }
        }
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let o = Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    };
    (o, peak)
}

/// Values built by expressions count against `--memory-limit`: `range()` past it is a limit
/// error before anything is built; a list comprehension that builds past it too.
#[test]
fn values_built_by_expressions_count_against_the_memory_limit() {
    let g = sample_graph();
    let (o, peak) = peak_rss_kb(&[
        "query",
        "--graph",
        &g,
        "--memory-limit",
        "100MB",
        "RETURN size(range(1, 200000000)) AS n",
    ]);
    no_signal(&o, "range");
    assert!(stderr(&o).contains("limit exceeded"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--memory-limit"), "{}", stderr(&o));
    assert!(peak < 600_000, "peak {peak} KB");
    let (o, _) = peak_rss_kb(&[
        "query",
        "--graph",
        &g,
        "--memory-limit",
        "50MB",
        "RETURN size([x IN range(1, 4000) | range(1, 4000)]) AS n",
    ]);
    no_signal(&o, "comprehension");
    assert!(stderr(&o).contains("limit exceeded"), "{}", stderr(&o));
    // Under the limit it answers.
    let o = run(&[
        "query",
        "--graph",
        &g,
        "--memory-limit",
        "100MB",
        "--format",
        "csv",
        "RETURN size(range(1, 1000000)) AS n, range(10, 1, -4) AS r",
    ]);
    assert_eq!(
        stdout(&o),
        "n,r\n1000000,\"[10, 6, 2]\"\n",
        "{}",
        stderr(&o)
    );
}

/// The table format of a large result prints it in pages: its memory is a page, not the
/// result (as little more than CSV's, which streams); every row is there.
#[test]
fn the_table_format_of_many_rows_prints_in_pages() {
    let g = generated_graph();
    let q = "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c) RETURN a.id, c.firstName";
    let o = run(&[
        "query",
        "--graph",
        &g,
        "--format",
        "csv",
        "MATCH (a:Person)-[:KNOWS]->(b)-[:KNOWS]->(c) RETURN count(*) AS n",
    ]);
    let n: usize = stdout(&o).lines().nth(1).unwrap().parse().unwrap();
    assert!(n > 100_000, "{n}");
    let (csv, csv_peak) = peak_rss_kb(&["query", "--graph", &g, "--format", "csv", q]);
    assert!(csv.status.success(), "{}", stderr(&csv));
    let (o, peak) = peak_rss_kb(&["query", "--graph", &g, "--memory-limit", "100MB", q]);
    no_signal(&o, "a table of many rows");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.ends_with(&format!("\n{n} rows\n")),
        "{}",
        &text[text.len() - 200..]
    );
    let pages = n.div_ceil(lance_csr::TABLE_PAGE_ROWS);
    assert_eq!(text.matches("| a.id ").count(), pages, "a header per page");
    // Every row, as CSV has them.
    let rows = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| a.id "))
        .count();
    assert_eq!(rows, n);
    assert_eq!(stdout(&csv).lines().count(), n + 1);
    assert!(
        peak < csv_peak + 80_000,
        "table {peak} KB, CSV {csv_peak} KB"
    );
}

/// `allShortestPaths` between two nodes of a dense layered graph (4^16 = 4.3e9 shortest
/// paths): counted without building one, and streamed when returned (a reader that stops
/// after five ends it), in bounded memory.
#[test]
fn billions_of_shortest_paths_are_counted_and_streamed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (layers, width) = (16usize, 4usize);
    let mut nodes = vec![0usize];
    let mut edges = Vec::new();
    let mut prev = vec![0usize];
    let mut next_id = 1;
    for _ in 0..layers {
        let cur: Vec<usize> = (next_id..next_id + width).collect();
        next_id += width;
        for &a in &prev {
            for &b in &cur {
                edges.push((a, b));
            }
        }
        nodes.extend(&cur);
        prev = cur;
    }
    let target = next_id;
    nodes.push(target);
    for &a in &prev {
        edges.push((a, target));
    }
    let csv_nodes: String = nodes.iter().map(|n| format!("{n}\n")).collect();
    let csv_edges: String = edges.iter().map(|(a, b)| format!("{a},{b}\n")).collect();
    std::fs::write(d.join("n.csv"), format!("id\n{csv_nodes}")).unwrap();
    std::fs::write(d.join("e.csv"), format!("src,dst\n{csv_edges}")).unwrap();
    let out = d.join("g");
    let o = run(&[
        "import",
        "--out",
        out.to_str().unwrap(),
        "--node",
        &format!("N={}", d.join("n.csv").display()),
        "--rel",
        &format!("E:N:N={}", d.join("e.csv").display()),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = out.join("graph.toml").display().to_string();
    let all = format!("MATCH p = allShortestPaths((a:N {{id: 0}})-[:E*]-(b:N {{id: {target}}}))");
    let (o, peak) = peak_rss_kb(&[
        "query",
        "--graph",
        &cfg,
        "--memory-limit",
        "64MB",
        "--timeout",
        "60s",
        "--format",
        "csv",
        &format!("{all} RETURN count(*) AS c"),
    ]);
    no_signal(&o, "count");
    assert_eq!(stdout(&o), "c\n4294967296\n", "{}", stderr(&o));
    assert!(peak < 300_000, "peak {peak} KB");
    // Two bound ends in separate patterns: the same count, per end.
    let o = run(&[
        "query",
        "--graph",
        &cfg,
        "--format",
        "csv",
        &format!(
            "MATCH (a:N {{id: 0}}), (b:N) WHERE b.id IN [{}, {target}] \
             MATCH p = allShortestPaths((a)-[:E*]-(b)) RETURN b.id AS b, count(*) AS c ORDER BY b",
            target - 1
        ),
    ]);
    assert_eq!(
        stdout(&o),
        format!("b,c\n{},1073741824\n{target},4294967296\n", target - 1),
        "{}",
        stderr(&o)
    );
    // The paths stream: the first five come at once, and the reader stopping ends it.
    let mut child = bin()
        .args([
            "query",
            "--graph",
            &cfg,
            "--memory-limit",
            "64MB",
            "--timeout",
            "60s",
            "--format",
            "csv",
            &format!("{all} RETURN length(p) AS l, p"),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let mut lines = Vec::new();
    {
        use std::io::BufRead;
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        for _ in 0..6 {
            let mut l = String::new();
            reader.read_line(&mut l).unwrap();
            lines.push(l);
        }
    }
    let status = child.wait().unwrap();
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    use std::os::unix::process::ExitStatusExt;
    assert!(
        status.signal().is_none() || status.signal() == Some(13),
        "{status:?}"
    );
    assert_eq!(lines[0], "l,p\n");
    for l in &lines[1..] {
        assert!(l.starts_with(&format!("{},", layers + 1)), "{l}");
    }
}

/// An unbounded `-[:KNOWS*]-` from the hub of a generated graph under a 64 MB limit runs
/// until its timeout in bounded memory, whether it counts, returns the relationships or the
/// paths (batches of long paths are never gathered into batches of 8192 rows), and a reader
/// slower than the query does not keep it from its timeout.
#[test]
fn an_unbounded_traversal_from_a_hub_stays_in_bounded_memory() {
    let cfg = generated_graph();
    let o = run(&[
        "query",
        "--graph",
        &cfg,
        "--format",
        "csv",
        "MATCH (p:Person)-[:KNOWS]-(f) RETURN p.id AS id, count(f) AS d ORDER BY d DESC, id LIMIT 1",
    ]);
    let hub = stdout(&o)
        .lines()
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .to_string();
    for ret in ["count(*) AS c", "r", "p"] {
        let q = format!("MATCH p = (a:Person {{id: {hub}}})-[r:KNOWS*]-(f) RETURN {ret}");
        let t = Instant::now();
        let (o, peak) = peak_rss_kb(&[
            "query",
            "--graph",
            &cfg,
            "--memory-limit",
            "64MB",
            "--timeout",
            "4s",
            "--format",
            "csv",
            &q,
        ]);
        no_signal(&o, &q);
        assert!(stderr(&o).contains("time limit"), "{q}: {}", stderr(&o));
        assert!(
            t.elapsed() < Duration::from_secs(12),
            "{q}: {:?}",
            t.elapsed()
        );
        assert!(peak < 500_000, "{q}: peak {peak} KB");
    }
}

/// A generated social network (scale 0.5) written once for the tests here.
fn generated_graph() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep().join("snb");
        let o = run(&["generate", "--scale", "0.5", "--out", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        dir.join("graph.toml").display().to_string()
    })
    .clone()
}

/// The sample graph written as Lance datasets once.
fn sample_graph() -> String {
    static PATH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        let rt = tokio::runtime::Runtime::new().unwrap();
        let p = rt
            .block_on(lance_csr::write_graph(
                &dir,
                lance_csr_datasets::sample::tables(),
                &mut |_| {},
            ))
            .unwrap();
        p.to_string_lossy().to_string()
    })
    .clone()
}
