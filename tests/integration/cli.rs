//! The `lance-csr` binary end to end: demo, query formats, parameters, explain, shell, import,
//! and errors with a caret and a non-zero exit code.

use crate::common::cli::{bin, run, stderr, stdout};
use std::io::Write;
use std::path::Path;
use std::process::{Output, Stdio};
use std::sync::OnceLock;

/// The sample graph written as Lance datasets once for all tests here.
fn sample_graph() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
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
}

#[test]
fn demo_prints_results_and_next_steps() {
    let o = run(&["demo"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(s.contains("Who does Ann know?"), "{s}");
    assert!(s.contains("| Bob    | 42  |"), "{s}");
    assert!(s.contains("| Graph Lovers | 3       |"), "{s}");
    assert!(s.contains("What to try next"), "{s}");
}

#[test]
fn csv_output_has_a_header_then_one_line_per_row() {
    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "--format",
        "csv",
        "MATCH (p:Person) WHERE p.age > 40 RETURN p.firstName AS name, p.age ORDER BY p.age",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "name,p.age\nBob,42\nFinn,55\n");
}

#[test]
fn json_output_and_string_parameters() {
    let o = run(&[
        "query", "--graph", sample_graph(), "--format", "json", "--param", "name='Ann'",
        "--param", "ids=[2, 3]",
        "MATCH (p:Person {firstName: $name})-[:KNOWS]->(f:Person) WHERE f.id IN $ids RETURN f.firstName AS f ORDER BY f",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v, serde_json::json!([{"f": "Bob"}, {"f": "Carl"}]));
}

/// A null of no type (`null`, a list or map of nulls) is JSON's null, not the string "null".
#[test]
fn json_nulls_are_nulls() {
    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "--format",
        "json",
        "RETURN null AS x, [null, 1] AS l, [null] AS n, {a: null} AS m",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v,
        serde_json::json!([{"x": null, "l": [null, 1], "n": [null], "m": {"a": null}}])
    );
}

/// JSON has no NaN or infinities: they are written as the bare tokens `NaN`, `Infinity` and
/// `-Infinity` (not as null, which would lose them), and a string that reads the same stays one.
#[test]
fn json_keeps_non_finite_floats() {
    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "--format",
        "json",
        "RETURN 0.0 / 0.0 AS n, 1.0 / 0.0 AS p, -1.0 / 0.0 AS m, 'NaN' AS s, [0.0 / 0.0] AS l",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    for part in [
        "\"n\": NaN",
        "\"p\": Infinity",
        "\"m\": -Infinity",
        "\"s\": \"NaN\"",
    ] {
        assert!(text.contains(part), "{part} in {text}");
    }
    assert!(!text.contains("null"), "{text}");
}

#[test]
fn query_from_file_and_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("q.cypher");
    std::fs::write(&f, "MATCH (c:City) RETURN count(*) AS n").unwrap();
    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "--format",
        "csv",
        "--file",
        f.to_str().unwrap(),
    ]);
    assert_eq!(stdout(&o), "n\n2\n");
    let mut child = bin()
        .args(["query", "--graph", sample_graph(), "--format", "csv"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"MATCH (t:Tag) RETURN count(*) AS n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(stdout(&o), "n\n2\n");
}

#[test]
fn errors_show_the_line_with_a_caret_and_exit_non_zero() {
    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "MATCH (p:Person)\nRETURN p.nmae",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("Unknown property `nmae`"), "{e}");
    assert!(e.contains("2 | RETURN p.nmae"), "{e}");
    assert!(e.contains("  |          ^^^^"), "{e}");
    assert!(e.lines().count() <= 6, "one screen: {e}");

    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "MATCH (p:Person RETURN p",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("syntax error: Expected: ')' closing the node pattern"),
        "{e}"
    );
    assert!(e.contains("line 1, column 17"), "{e}");

    let o = run(&[
        "query",
        "--graph",
        sample_graph(),
        "--param",
        "x=[1,",
        "RETURN $x",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--param x"), "{}", stderr(&o));
}

#[test]
fn bad_config_and_missing_dataset_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("graph.toml");
    std::fs::write(
        &cfg,
        "[nodes.Person]\nsource = \"person.lance\"\nid = \"id\"\n\n[[relationships]]\ntype = \"KNOWS\"\nfrom = \"Person\"\nto = \"Persn\"\nsource = \"k.lance\"\nsrc = \"src\"\ndst = \"dst\"\n",
    )
    .unwrap();
    let o = run(&["query", "--graph", cfg.to_str().unwrap(), "RETURN 1"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("graph.toml") && e.contains("relationships[0].to") && e.contains("Persn"),
        "{e}"
    );

    std::fs::write(
        &cfg,
        "[nodes.Person]\nsource = \"missing.lance\"\nid = \"id\"\n",
    )
    .unwrap();
    let o = run(&["query", "--graph", cfg.to_str().unwrap(), "RETURN 1"]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(
        e.contains("nodes.Person.source")
            && e.contains("missing.lance")
            && e.contains("does not exist"),
        "{e}"
    );

    let o = run(&["query", "--graph", "/nonexistent/graph.toml", "RETURN 1"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("cannot read"), "{}", stderr(&o));
}

#[test]
fn explain_shows_filters_inside_the_expansion_and_only_used_columns() {
    let q = "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) WHERE k.creationDate > 1400000000000 AND b.age > 35 RETURN b.firstName";
    let o = run(&["explain", "--graph", sample_graph(), q]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    assert!(
        s.contains("== logical plan ==") && s.contains("== physical plan =="),
        "{s}"
    );
    // As lowered: every target column, the filters above.
    assert!(s.contains("CsrExpand: key=a__id -> [k__#src, k__#dst], edges=7, take=b[b__id*, b__firstName, b__lastName, b__gender, b__age, b__birthday, b__creationDate, b__browserUsed], edge=k[k__#src, k__#dst, k__#eid, k__creationDate]"), "{s}");
    // Executed: both filters inside, only the returned column taken.
    assert!(
        s.contains("CsrExpandExec: key=a__id, edges=7, take=b[b__firstName], edge=k[], filter=age@0 > 35, edge_filter=creationDate@0 > 1400000000000"),
        "{s}"
    );
    assert!(!s.contains("HashJoinExec"), "{s}");
    let o = run(&["explain", "--mode", "join", "--graph", sample_graph(), q]);
    let s = stdout(&o);
    assert!(
        s.contains("HashJoinExec") && !s.contains("CsrExpand"),
        "{s}"
    );
}

#[test]
fn join_mode_gives_the_same_answer() {
    let q = "MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.age > 30 RETURN a.firstName, b.firstName ORDER BY a.firstName, b.firstName";
    let csr = run(&["query", "--graph", sample_graph(), "--format", "csv", q]);
    let join = run(&[
        "query",
        "--graph",
        sample_graph(),
        "--format",
        "csv",
        "--mode",
        "join",
        q,
    ]);
    assert!(csr.status.success() && join.status.success());
    assert_eq!(stdout(&csr), stdout(&join));
    assert_eq!(stdout(&csr).lines().count(), 1 + 5);
}

#[test]
fn index_build_status_and_bench() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let o = run(&["generate", "--scale", "0.2", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("CSR build:"), "{}", stderr(&o));
    let cfg = out.join("graph.toml");
    let cfg = cfg.to_str().unwrap();
    let o = run(&["index", "status", "--graph", cfg]);
    let s = stdout(&o);
    assert!(
        s.contains("KNOWS(Person->Person)") && s.contains("up to date"),
        "{s}"
    );
    // Built by generate: a rebuild reads everything and builds nothing.
    let o = run(&["index", "build", "--graph", cfg]);
    assert!(stdout(&o).starts_with("0 indexes built"), "{}", stdout(&o));
    // --force builds every index anew.
    let o = run(&["index", "build", "--graph", cfg, "--force"]);
    let s = stdout(&o);
    assert!(
        o.status.success() && !s.starts_with("0 indexes built"),
        "{s}"
    );
    assert!(s.contains(" 0 read"), "{s}");
    let queries = dir.path().join("q");
    std::fs::create_dir_all(&queries).unwrap();
    std::fs::write(
        queries.join("hop.cypher"),
        "MATCH (p:Person {id: 1007})-[:KNOWS]->(f) RETURN count(*)",
    )
    .unwrap();
    let o = run(&[
        "bench",
        "--graph",
        cfg,
        "--queries",
        queries.to_str().unwrap(),
        "--runs",
        "2",
        "--format",
        "csv",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], "query,mode,median_ms,min_ms,max_ms,rows");
    assert!(
        lines[1].starts_with("hop,csr,") && lines[2].starts_with("hop,join,"),
        "{s}"
    );
    assert_eq!(lines[1].rsplit(',').next(), Some("1"));
    let o = run(&[
        "bench",
        "--graph",
        cfg,
        "--queries",
        queries.to_str().unwrap(),
        "--runs",
        "1",
        "--phases",
    ]);
    let s = stdout(&o);
    assert!(s.contains("join/csr"), "{s}");
    // Where the time goes: one line per query and mode, every phase a number, the total at
    // least the execution.
    assert!(s.contains("median ms per phase"), "{s}");
    for mode in ["csr", "join"] {
        let line = s
            .lines()
            .find(|l| l.starts_with("hop ") && l.split_whitespace().nth(1) == Some(mode))
            .unwrap_or_else(|| panic!("no {mode} phase line in {s}"));
        let ms: Vec<f64> = line
            .split_whitespace()
            .skip(2)
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(ms.len(), 9, "{line}");
        assert!(ms[8] >= ms[7] && ms[7] > 0.0, "{line}");
    }

    // Many bindings from a CSV file (made by a query), latency medians and then throughput.
    let o = run(&[
        "query",
        "--graph",
        cfg,
        "--format",
        "csv",
        "MATCH (p:Person) RETURN p.id AS id ORDER BY id LIMIT 20",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ids = dir.path().join("ids.csv");
    std::fs::write(&ids, stdout(&o)).unwrap();
    assert_eq!(stdout(&o).lines().count(), 21);
    let by_id = dir.path().join("by_id");
    std::fs::create_dir_all(&by_id).unwrap();
    std::fs::write(
        by_id.join("friends.cypher"),
        "MATCH (p:Person {id: $id})-[:KNOWS]->(f) RETURN count(*)",
    )
    .unwrap();
    let bench = |extra: &[&str]| {
        let mut args = vec![
            "bench",
            "--graph",
            cfg,
            "--queries",
            by_id.to_str().unwrap(),
            "--params",
            ids.to_str().unwrap(),
            "--format",
            "csv",
        ];
        args.extend_from_slice(extra);
        run(&args)
    };
    let o = bench(&["--runs", "40"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("friends,csr,"), "{}", stdout(&o));
    let o = bench(&["--concurrency", "2", "--duration", "300ms", "--mode", "csr"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(
        lines[0],
        "query,mode,workers,queries,queries_per_s,p50_ms,p99_ms"
    );
    let f: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(&f[..3], ["friends", "csr", "2"], "{s}");
    let (n, qps, p50, p99): (usize, f64, f64, f64) = (
        f[3].parse().unwrap(),
        f[4].parse().unwrap(),
        f[5].parse().unwrap(),
        f[6].parse().unwrap(),
    );
    assert!(n > 0 && qps > 0.0 && p99 >= p50 && p50 > 0.0, "{s}");
    // Workers sharing one prepared query; a syntax error is reported as it is prepared.
    let o = bench(&[
        "--concurrency",
        "2",
        "--duration",
        "300ms",
        "--mode",
        "csr",
        "--prepared",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o)
            .lines()
            .nth(1)
            .unwrap()
            .starts_with("friends,csr,2,"),
        "{}",
        stdout(&o)
    );
    std::fs::write(by_id.join("broken.cypher"), "MATCH (p RETURN p").unwrap();
    let o = bench(&[
        "--concurrency",
        "1",
        "--duration",
        "100ms",
        "--mode",
        "csr",
        "--prepared",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("broken"), "{}", stderr(&o));
    std::fs::remove_file(by_id.join("broken.cypher")).unwrap();
    // A bindings file whose header names no parameter, or with no lines, is an error.
    std::fs::write(dir.path().join("bad.csv"), "id\n").unwrap();
    let o = run(&[
        "bench",
        "--graph",
        cfg,
        "--queries",
        by_id.to_str().unwrap(),
        "--params",
        dir.path().join("bad.csv").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no parameter lines"), "{}", stderr(&o));
}

/// EXPLAIN says where the plan comes from; `--no-cache` switches the cache off.
#[test]
fn explain_reports_the_plan_cache() {
    let g = sample_graph();
    let q = "MATCH (p:Person {id: $id})-[:KNOWS]->(f:Person) WHERE f.age > $age RETURN f.firstName";
    let o = run(&["explain", "--graph", g, "-p", "id=1", "-p", "age=20", q]);
    let s = stdout(&o);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        s.contains("== plan cache ==\nmiss: planned and cached; the physical plan runs again"),
        "{s}"
    );
    // The kept plan reads the parameters as it runs.
    let kept = &s[s
        .find("== cached physical plan ==")
        .expect("kept plan shown")..];
    assert!(
        kept.contains("ConstRowExec: $id") && kept.contains("> $age"),
        "{kept}"
    );
    let o = run(&[
        "explain",
        "--graph",
        g,
        "--no-cache",
        "-p",
        "id=1",
        "-p",
        "age=20",
        q,
    ]);
    assert!(
        stdout(&o).contains("== plan cache ==\noff"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn shell_runs_multi_line_queries_and_commands() {
    let mut child = bin()
        .args(["shell", "--graph", sample_graph()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .env("HOME", tempfile::tempdir().unwrap().path())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            b"MATCH (p:Person)\nRETURN count(*) AS people;\n:timing\n:explain RETURN 1;\n:explain RETURN 1;\n:quit\n",
        )
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let s = stdout(&o);
    assert!(s.contains("| people |") && s.contains("| 6      |"), "{s}");
    assert!(
        s.contains("timing on") && s.contains("== physical plan ==") && s.contains("time: "),
        "{s}"
    );
    // A repeated query reuses its plan (the graph is unchanged between the two).
    let first = s
        .find("== plan cache ==\nmiss")
        .expect("first explain plans");
    assert!(s[first..].contains("== plan cache ==\nhit"), "{s}");
}

/// A `;` inside a string doesn't end the statement; a script whose query failed exits
/// non-zero (after running the rest).
#[test]
fn shell_scripts_keep_strings_whole_and_report_failures() {
    let shell = |input: &[u8]| {
        let mut child = bin()
            .args(["shell", "--graph", sample_graph()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("HOME", tempfile::tempdir().unwrap().path())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input).unwrap();
        child.wait_with_output().unwrap()
    };
    let o = shell(b":format csv\nRETURN 'a;\nb' AS s, size('x;') AS n;\n");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("s,n\n\"a;\nb\",2\n"), "{}", stdout(&o));
    let o = shell(b"RETURN 1 +;\nRETURN 2 AS two;\n");
    assert!(!o.status.success());
    assert!(stdout(&o).contains("two"), "{}", stdout(&o));
}

/// A shell session sees rows appended to a dataset while it runs.
#[test]
fn shell_sees_dataset_changes_between_queries() {
    use std::io::{BufRead, BufReader};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (dir, cfg) = rt.block_on(crate::common::sample_on_disk());
    let mut child = bin()
        .args(["shell", "--graph", cfg.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .env("HOME", dir.path())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |stdin: &mut std::process::ChildStdin| {
        stdin
            .write_all(b"MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k) AS n;\n")
            .unwrap();
        stdin.flush().unwrap();
        // The first line that is a number is the count (after the `n` header).
        lines
            .by_ref()
            .map(|l| l.unwrap())
            .find(|l| l.trim().parse::<u64>().is_ok())
            .unwrap()
    };
    stdin.write_all(b":format csv\n").unwrap();
    assert_eq!(ask(&mut stdin), "7");
    let extra =
        lance_csr_datasets::social::edge_batch(vec![6], vec![1], Some(("creationDate", vec![0])));
    rt.block_on(lance_csr::append_lance(
        &dir.path().join("person_knows_person.lance"),
        extra.schema(),
        vec![extra],
    ))
    .unwrap();
    assert_eq!(ask(&mut stdin), "8");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn import_turns_csv_into_a_queryable_graph() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("people.csv"),
        "id,name,age\n1,Ann,31\n2,Bob,42\n3,Cy,20\n",
    )
    .unwrap();
    std::fs::write(
        d.join("follows.csv"),
        "from_id,to_id,since\n1,2,2020\n2,3,2021\n1,3,2022\n",
    )
    .unwrap();
    let out = d.join("out");
    let o = run(&[
        "import",
        "--out",
        out.to_str().unwrap(),
        "--node",
        &format!("User={}", d.join("people.csv").display()),
        "--rel",
        &format!(
            "FOLLOWS:User:User:from_id:to_id={}",
            d.join("follows.csv").display()
        ),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("rows ->"), "progress: {}", stderr(&o));
    let cfg = stdout(&o).trim().to_string();
    assert!(Path::new(&cfg).exists());
    let o = run(&[
        "query", "--graph", &cfg, "--format", "csv",
        "MATCH (a:User)-[f:FOLLOWS]->(b:User) WHERE f.since > 2020 RETURN a.name, b.name ORDER BY b.name, a.name",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "a.name,b.name\nAnn,Cy\nBob,Cy\n");
}

/// `--node Post,Message=...`: the table carries every label listed; a label two tables carry is
/// their union.
#[test]
fn import_attaches_extra_labels() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("users.csv"), "id,name\n1,Ann\n2,Bob\n").unwrap();
    std::fs::write(d.join("posts.csv"), "id,text\n10,hi\n11,yo\n").unwrap();
    std::fs::write(d.join("comments.csv"), "id,text\n20,ok\n").unwrap();
    std::fs::write(d.join("p_by.csv"), "src,dst\n10,1\n11,2\n").unwrap();
    std::fs::write(d.join("c_by.csv"), "src,dst\n20,1\n").unwrap();
    let out = d.join("out");
    let file = |f: &str| d.join(f).display().to_string();
    let o = run(&[
        "import",
        "--out",
        out.to_str().unwrap(),
        "--node",
        &format!("User={}", file("users.csv")),
        "--node",
        &format!("Post,Message={}", file("posts.csv")),
        "--node",
        &format!("Comment,Message:id={}", file("comments.csv")),
        "--rel",
        &format!("BY:Post:User={}", file("p_by.csv")),
        "--rel",
        &format!("BY:Comment:User={}", file("c_by.csv")),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = stdout(&o).trim().to_string();
    let toml = std::fs::read_to_string(&cfg).unwrap();
    let parsed: toml::Value = toml::from_str(&toml).unwrap();
    assert_eq!(
        parsed["nodes"]["Post"]["labels"]
            .as_array()
            .map(|a| a.len()),
        Some(2),
        "{toml}"
    );
    let o = run(&[
        "query", "--graph", &cfg, "--format", "csv",
        "MATCH (m:Message)-[:BY]->(u:User {name: 'Ann'}) RETURN labels(m) AS l, m.text AS t ORDER BY t",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "l,t\n\"['Post', 'Message']\",hi\n\"['Comment', 'Message']\",ok\n"
    );
    let o = run(&[
        "import",
        "--out",
        d.join("bad").to_str().unwrap(),
        "--node",
        "A,=x.csv",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("empty label"), "{}", stderr(&o));
}

/// A failing import never touches the graph already in the folder; labels differing only in
/// case get datasets of their own; a non-empty folder is replaced only with `--overwrite`.
#[test]
fn import_validates_first_and_never_clobbers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let file = |name: &str, text: &str| {
        std::fs::write(d.join(name), text).unwrap();
        d.join(name).display().to_string()
    };
    let users = file("users.csv", "id,name\n1,Ann\n2,Bob\n");
    let admins = file("admins.csv", "id,name\n1,Root\n");
    let follows = file("follows.csv", "src,dst\n1,2\n2,1\n");
    let floats = file("floats.csv", "id,name\n1.5,X\n");
    let late_error = file(
        "late.csv",
        &format!("id,name\n{}x,Z\n", "1,A\n".repeat(20_000)),
    );
    let out = d.join("g");
    let out_s = out.to_str().unwrap();
    let import = |extra: &[&str]| {
        let mut args = vec!["import", "--out", out_s];
        args.extend_from_slice(extra);
        run(&args)
    };
    let count = |q: &str| {
        let o = run(&[
            "query",
            "--graph",
            &format!("{out_s}/graph.toml"),
            "--format",
            "csv",
            q,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let (u, a, f) = (
        format!("User={users}"),
        format!("USER={admins}"),
        format!("FOLLOWS:User:User={follows}"),
    );
    let o = import(&["--node", &u, "--node", &a, "--rel", &f]);
    assert!(o.status.success(), "{}", stderr(&o));
    let q = "MATCH (:User)-[r:FOLLOWS]->(:User) RETURN count(r) AS n";
    assert_eq!(count(q), "n\n2\n");
    assert_eq!(count("MATCH (x:USER) RETURN count(x) AS n"), "n\n1\n");
    let before = std::fs::read_to_string(out.join("graph.toml")).unwrap();
    // Refused before writing: a non-empty folder, a float id, a missing column, an unknown
    // label; refused while writing: a value the inferred type can't hold, 20,000 rows in.
    for (args, why) in [
        (vec!["--node", u.as_str()], "not empty"),
        (
            vec!["--overwrite", "--node", &format!("User={floats}")],
            "id column `id` is Float64",
        ),
        (
            vec!["--overwrite", "--node", &format!("User:uid={users}")],
            "no id column `uid`",
        ),
        (
            vec![
                "--overwrite",
                "--node",
                &u,
                "--rel",
                &format!("F:User:Nobody={follows}"),
            ],
            "not imported",
        ),
        (
            vec!["--overwrite", "--node", &format!("User={late_error}")],
            "late.csv",
        ),
    ] {
        let o = import(&args);
        assert!(!o.status.success(), "{args:?} should fail");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(out.join("graph.toml")).unwrap(),
            before
        );
        assert_eq!(count(q), "n\n2\n");
    }
    // Nothing left behind but the graph.
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".g."))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // --overwrite replaces the whole graph.
    let o = import(&["--overwrite", "--node", &u]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(count("MATCH (x:User) RETURN count(x) AS n"), "n\n2\n");
    assert!(!out.join("user_2.lance").exists());
}

#[test]
fn verify_compares_random_queries_and_disable_switches_a_rule_off() {
    let g = sample_graph();
    let o = run(&["verify", "--graph", g, "--random", "15", "--seed", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("15 queries compared") && stdout(&o).contains("0 mismatches"),
        "{}",
        stdout(&o)
    );
    let q = "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN b.id LIMIT 2";
    let expand_line = |o: &Output| -> String {
        stdout(o)
            .lines()
            .find(|l| l.contains("CsrExpandExec"))
            .unwrap_or_default()
            .to_string()
    };
    let on = run(&["explain", "--graph", g, q]);
    assert!(expand_line(&on).contains("fetch=2"), "{}", stdout(&on));
    assert!(
        stdout(&on).contains("== rule counters =="),
        "{}",
        stdout(&on)
    );
    let off = run(&["explain", "--graph", g, "--disable", "absorb_limits", q]);
    assert!(!expand_line(&off).contains("fetch="), "{}", stdout(&off));
    let bad = run(&["explain", "--graph", g, "--disable", "nope", q]);
    assert!(!bad.status.success());
    // Refused by the argument parser, with the rules listed.
    assert!(
        stderr(&bad).contains("invalid value 'nope'") && stderr(&bad).contains("fold_constants"),
        "{}",
        stderr(&bad)
    );
}

/// A reader that stops early (`| head -1`): the program ends quietly with success, no panic.
#[test]
fn a_closed_output_pipe_ends_quietly() {
    use std::io::{BufRead, BufReader};
    let mut child = bin()
        .args([
            "query",
            "--graph",
            sample_graph(),
            "--format",
            "csv",
            "UNWIND range(1, 200000) AS x RETURN x",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "x\n");
    // The pipe is closed here (the reader is dropped).
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
}

/// The search procedures from the command line: `generate --embeddings` declares and builds
/// the indexes, `index status` lists them, `query` and `explain` take the CALL forms and the
/// nearest ordering, and a wrong dimension is an error with a caret.
#[test]
fn searches_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let o = run(&[
        "generate",
        "--scale",
        "0.1",
        "--embeddings",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = out.join("graph.toml");
    let cfg = cfg.to_str().unwrap();
    let s = stdout(&run(&["index", "status", "--graph", cfg]));
    for line in [
        "person_embedding: vector index (Cosine, IvfHnswSq) on Person.embedding: up to date",
        "post_content: full-text index on Post.content: up to date",
    ] {
        assert!(s.contains(line), "{s}");
    }
    let v = "v=[0.5, -0.25, 1.0]";
    let o = run(&[
        "query", "--graph", cfg, "--format", "csv", "--param", v,
        "CALL db.index.vector.queryNodes('person_embedding', 4, $v) YIELD node, score RETURN count(node) AS n, max(score) <= 1.0 AS bounded",
    ]);
    assert_eq!(stdout(&o), "n,bounded\n4,true\n", "{}", stderr(&o));
    let o = run(&[
        "query", "--graph", cfg, "--format", "csv",
        "CALL db.index.fulltext.queryNodes('post_content', 'lance AND graph') YIELD node RETURN count(*) > 0 AS some",
    ]);
    assert_eq!(stdout(&o), "some\ntrue\n", "{}", stderr(&o));
    let o = run(&[
        "explain", "--graph", cfg, "--param", v,
        "MATCH (p:Person) WITH p ORDER BY vector_distance(p.embedding, $v, 'cosine') LIMIT 3 RETURN p.id",
    ]);
    assert!(stdout(&o).contains("ANNSubIndex"), "{}", stdout(&o));
    // verify searches through each vector index and by the exact ordering.
    let o = run(&["verify", "--graph", cfg, "--random", "0"]);
    let s = stdout(&o);
    assert!(o.status.success(), "{s}");
    assert!(
        s.contains("40 vector searches + expansions compared with the exact ordering: recall@10 ")
            && s.contains("10 full-text searches compared with the same search")
            && s.contains(" 0 mismatches"),
        "{s}"
    );
    let o = run(&[
        "query",
        "--graph",
        cfg,
        "CALL db.index.vector.queryNodes('person_embedding', 4, [1.0]) YIELD node RETURN node",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains(
            "the query vector has 1 dimension; index `person_embedding` holds vectors of 3"
        ) && stderr(&o).contains('^'),
        "{}",
        stderr(&o)
    );
}

/// A query stopped by `--timeout` or by Ctrl-C ends the process within moments, whatever
/// operator was running: a path count (our counting operator) or a product of scans
/// (DataFusion's joins under an aggregate).
#[test]
fn a_timeout_or_ctrl_c_stops_a_running_query() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("g");
    let o = run(&["generate", "--scale", "1", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cfg = out.join("graph.toml");
    let cfg = cfg.to_str().unwrap();
    let queries = [
        "MATCH (a:Person), (b:Person), (c:Person) WHERE a.id + b.id <> c.id RETURN count(*) AS n",
        "MATCH (a:Person)-[:KNOWS*1..6]-(b:Person) RETURN count(*) AS n",
    ];
    for q in queries {
        let start = Instant::now();
        let o = run(&["query", "--graph", cfg, "--timeout", "1s", q]);
        assert!(!o.status.success(), "{q}: finished within its time limit");
        assert!(stderr(&o).contains("time limit"), "{q}: {}", stderr(&o));
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{q}: {:?}",
            start.elapsed()
        );
        let mut child = bin()
            .args(["query", "--graph", cfg, q])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(1500));
        assert!(child.try_wait().unwrap().is_none(), "{q}: ended too soon");
        let interrupted = Instant::now();
        let kill = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(kill.success());
        loop {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            if interrupted.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("{q}: still running 10 s after Ctrl-C");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
