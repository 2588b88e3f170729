#!/usr/bin/env python3
"""LSQB, the LDBC Labelled Subgraph Query Benchmark: its nine queries on lance-csr, DuckDB and
Kùzu side by side, all three reading the same CSV files (LSQB's projected-FK layout).

    # LSQB's own data set, as published (e.g. data/social-network-sf0.003-projected-fk)
    python3 benches/lsqb/lsqb.py import-published DATA_DIR /tmp/lsqb-0.003
    python3 benches/lsqb/lsqb.py run DATA_DIR /tmp/lsqb-0.003 --runs 5

    # or one made from `lance-csr generate --ldbc --scale N`: OUT/csv (LSQB's files) + OUT/graph
    python3 benches/lsqb/lsqb.py from-generated --scale 10 /tmp/lsqb-gen10
    python3 benches/lsqb/lsqb.py run /tmp/lsqb-gen10/csv /tmp/lsqb-gen10/graph

Subcommands:

  import-published DATA_DIR OUT
      `lance-csr import` of LSQB's 11 node and 25 edge files: the label of a node file is its
      name (Comment and Post also get the label Message, which queries 4, 5, 7 and 8 match), the
      type of an edge file `From_verb_To.csv` is the verb in UPPER_SNAKE (isPartOf ->
      IS_PART_OF), its end labels come from the neo4j-admin header (`:START_ID(City)`).

  from-generated --scale N OUT
      `lance-csr generate --ldbc --scale N` into OUT/generated, writes LSQB's files (same
      names, same headers, '|' delimited) into OUT/csv from that graph through
      `lance-csr query --format csv`, then imports them (as import-published) into OUT/graph.
      The generator has no continents: the files get 6 made-up ones (see README.md).

  run DATA_DIR GRAPH_DIR [--engines ours,duckdb,kuzu] [--runs 5] [--threads T] [--timeout S]
      Each engine runs the nine queries: one warm-up run (its answer is the one checked), then
      --runs timed runs; the median milliseconds are reported, as `lance-csr bench` does.
        ours:   `lance-csr bench --mode csr` on GRAPH_DIR, one query at a time (parse + plan,
                cached after the warm-up, + execute); the answer from one `lance-csr query`.
                Fewer threads than cores: the binary runs under `taskset`.
        duckdb: LSQB's schema.sql, views.sql and q*.sql (sql/), its tables filled from
                DATA_DIR by sql/load-projected-fk.sql; `SET threads`; execute + fetch.
        kuzu:   Kùzu 0.11.3 with LSQB's kuzu/schema.cypher and kuzu/q*.cypher, loaded as
                LSQB's kuzu/convert.sh and load.py do (Message files made by concatenation in
                a scratch folder); `set_max_threads_for_exec`; execute + first row.
      DuckDB and Kùzu run in a venv this script makes (--venv, default /tmp/lsqb-venv;
      `pip install duckdb kuzu==0.11.3`). Prints a markdown table and every answer that differs
      from DuckDB's (or, without DuckDB, from the first engine's); --expect SF also checks them
      against LSQB's expected-output.csv. Exits 1 on a differing answer.

The lance-csr binary: --bin, else $LANCE_CSR_BIN, else $CARGO_TARGET_DIR/release/lance-csr,
else target/release/lance-csr of this repository.
"""

import argparse
import ast
import csv
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
QUERIES = [f"q{i}" for i in range(1, 10)]
KUZU_VERSION = "0.11.3"
PACKAGES = {"duckdb": "duckdb", "kuzu": f"kuzu=={KUZU_VERSION}"}
NAMES = {"ours": "ours", "duckdb": "DuckDB", "kuzu": "Kùzu"}

# LSQB's projected-FK files (its scripts/headers.txt): 11 node files, 25 edge files.
NODE_FILES = ["City", "Comment", "Company", "Continent", "Country", "Forum", "Person", "Post",
              "Tag", "TagClass", "University"]
EDGE_FILES = [
    "City_isPartOf_Country", "Comment_hasCreator_Person", "Comment_hasTag_Tag",
    "Comment_isLocatedIn_Country", "Comment_replyOf_Comment", "Comment_replyOf_Post",
    "Company_isLocatedIn_Country", "Country_isPartOf_Continent", "Forum_containerOf_Post",
    "Forum_hasMember_Person", "Forum_hasModerator_Person", "Forum_hasTag_Tag",
    "Person_hasInterest_Tag", "Person_isLocatedIn_City", "Person_knows_Person",
    "Person_likes_Comment", "Person_likes_Post", "Person_studyAt_University",
    "Person_workAt_Company", "Post_hasCreator_Person", "Post_hasTag_Tag",
    "Post_isLocatedIn_Country", "TagClass_isSubclassOf_TagClass", "Tag_hasType_TagClass",
    "University_isLocatedIn_City",
]
# Node files whose nodes also carry the label Message.
MESSAGES = {"Comment", "Post"}
# The continents from-generated makes up when the generated graph has none.
CONTINENTS = 6
CONTINENT_IDS = 9900000000


def die(msg):
    sys.exit(f"lsqb.py: {msg}")


def edge_parts(name):
    """`City_isPartOf_Country` -> ("City", "IS_PART_OF", "Country")."""
    src, verb, dst = name.split("_")
    typ = "".join("_" + c if c.isupper() else c.upper() for c in verb)
    return src, typ, dst


def header(name):
    if name in NODE_FILES:
        return f"id:ID({name})"
    src, _, dst = edge_parts(name)
    return f":START_ID({src})|:END_ID({dst})"


def lance_csr(arg):
    b = (arg or os.environ.get("LANCE_CSR_BIN")
         or os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")),
                         "release", "lance-csr"))
    if not os.access(b, os.X_OK):
        die(f"no lance-csr binary at {b} (--bin or LANCE_CSR_BIN)")
    return b


def graph_toml(d):
    g = os.path.join(d, "graph.toml")
    return g if os.path.isfile(g) else d


# ---------------------------------------------------------------- import-published

def check_files(data_dir):
    for name in NODE_FILES + EDGE_FILES:
        path = os.path.join(data_dir, name + ".csv")
        if not os.path.isfile(path):
            die(f"{path}: missing (LSQB's projected-FK layout has {len(NODE_FILES)} node "
                f"and {len(EDGE_FILES)} edge files)")
        with open(path) as f:
            first = f.readline().strip()
        if first != header(name):
            die(f"{path}: header {first!r}, expected {header(name)!r} (LSQB's "
                "scripts/preprocess.sh writes these neo4j-admin headers)")


def import_published(data_dir, out, binary, overwrite=False):
    check_files(data_dir)
    cmd = [binary, "import", "--delimiter", "|", "--out", out]
    if overwrite:
        cmd.append("--overwrite")
    for name in NODE_FILES:
        labels = name + (",Message" if name in MESSAGES else "")
        cmd += ["--node", f"{labels}={os.path.join(data_dir, name + '.csv')}"]
    for name in EDGE_FILES:
        cmd += ["--rel", f"{edge_parts(name)[1]}={os.path.join(data_dir, name + '.csv')}"]
    print("$ " + shlex.join(cmd), flush=True)
    subprocess.run(cmd, check=True)


# ---------------------------------------------------------------- from-generated

def query_rows(binary, graph, text):
    """The rows of a `lance-csr query --format csv` as lists of strings (header dropped)."""
    p = subprocess.Popen([binary, "query", "-g", graph, "--format", "csv", text],
                         stdout=subprocess.PIPE, text=True)
    reader = csv.reader(p.stdout)
    next(reader, None)
    yield from reader
    if p.wait() != 0:
        die(f"lance-csr query failed: {text}")


def write_file(csv_dir, name, rows):
    n = 0
    with open(os.path.join(csv_dir, name + ".csv"), "w") as f:
        f.write(header(name) + "\n")
        for r in rows:
            f.write("|".join(r) + "\n")
            n += 1
    print(f"  {name}.csv: {n} rows", flush=True)
    return n


def from_generated(args):
    binary = lance_csr(args.bin)
    out = os.path.abspath(args.out)
    gen, csv_dir, graph = (os.path.join(out, d) for d in ("generated", "csv", "graph"))
    for d in (csv_dir, graph):
        if os.path.exists(d) and os.listdir(d) and not args.overwrite:
            die(f"{d} is not empty (--overwrite replaces it)")
    if os.path.exists(gen):
        shutil.rmtree(gen)
    cmd = [binary, "generate", "--ldbc", "--scale", str(args.scale), "--seed", str(args.seed),
           "--out", gen]
    print("$ " + shlex.join(cmd), flush=True)
    subprocess.run(cmd, check=True)
    g = graph_toml(gen)

    # What the generated graph has: its labels and its (from labels, type, to labels).
    labels, triples = set(), set()
    schema = "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a) AS a, type(r) AS r, labels(b) AS b"
    for a, r, b in query_rows(binary, g, schema):
        a, b = ast.literal_eval(a), ast.literal_eval(b)
        labels.update(a + b)
        triples.update((x, r, y) for x in a for y in b)
    for a, in query_rows(binary, g, "MATCH (a) RETURN DISTINCT labels(a) AS a"):
        labels.update(ast.literal_eval(a))

    if os.path.exists(csv_dir):
        shutil.rmtree(csv_dir)
    os.makedirs(csv_dir)
    print(f"writing LSQB's files into {csv_dir}", flush=True)
    made_up = "Continent" not in labels
    for name in NODE_FILES:
        if name == "Continent" and made_up:
            write_file(csv_dir, name, ([str(CONTINENT_IDS + i)] for i in range(CONTINENTS)))
            continue
        if name not in labels:
            die(f"the generated graph has no :{name} nodes")
        write_file(csv_dir, name, query_rows(
            binary, g, f"MATCH (n:{name}) RETURN n.id AS id ORDER BY id"))
    for name in EDGE_FILES:
        src, typ, dst = edge_parts(name)
        if name == "Country_isPartOf_Continent" and made_up:
            # Countries in id order take the continents in turn.
            with open(os.path.join(csv_dir, "Country.csv")) as f:
                countries = [line.strip() for line in f][1:]
            write_file(csv_dir, name, ([c, str(CONTINENT_IDS + i % CONTINENTS)]
                                       for i, c in enumerate(countries)))
            continue
        if (src, typ, dst) not in triples:
            die(f"the generated graph has no (:{src})-[:{typ}]->(:{dst})")
        rows = query_rows(binary, g, f"MATCH (a:{src})-[:{typ}]->(b:{dst}) "
                                     "RETURN a.id AS src, b.id AS dst ORDER BY src, dst")
        if name == "Person_knows_Person":
            rows = one_per_pair(rows)
        write_file(csv_dir, name, rows)
    if made_up:
        print(f"  (the generated graph has no continents: Continent.csv holds {CONTINENTS} "
              "made-up ones, the countries taking them in turn)", flush=True)
    if not args.keep_generated:
        shutil.rmtree(gen)
    import_published(csv_dir, graph, binary, overwrite=True)
    print(f"\nnow: python3 {sys.argv[0]} run {csv_dir} {graph}")


def one_per_pair(rows):
    """KNOWS rows as LSQB's file has them: each friendship once, the lower id first (the
    generator stores some friendships in both directions, and either way round)."""
    rows = [(int(a), int(b)) for a, b in rows]
    pairs = sorted({(min(a, b), max(a, b)) for a, b in rows})
    if len(pairs) < len(rows):
        print(f"  (KNOWS: {len(rows) - len(pairs)} friendships stored in both directions, "
              "written once)")
    return ([str(a), str(b)] for a, b in pairs)


# ---------------------------------------------------------------- run: ours

def cpus():
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


def run_ours(args, data_dir, graph):
    binary = lance_csr(args.bin)
    g = graph_toml(graph)
    prefix = []
    avail = cpus()
    if args.threads < len(avail):
        if not shutil.which("taskset"):
            die(f"--threads {args.threads} needs taskset to hold lance-csr to that many cores")
        prefix = ["taskset", "-c", ",".join(str(c) for c in avail[:args.threads])]
    version = subprocess.run([binary, "--version"], capture_output=True,
                             text=True).stdout.strip()
    yield {"engine": "ours", "version": f"{version} ({binary}, --mode {args.mode})"}
    tmp = tempfile.mkdtemp(prefix="lsqb-ours-")
    limit = ["--timeout", f"{args.timeout:g}"] if args.timeout else []
    backstop = (args.timeout * (args.runs + 2) + 300) if args.timeout else None
    try:
        for q in QUERIES:
            print(f"  ours {q} ...", file=sys.stderr, flush=True)
            src = os.path.join(HERE, "queries", q + ".cypher")
            qdir = os.path.join(tmp, q)
            os.makedirs(qdir)
            shutil.copy(src, qdir)
            r = ours_call(prefix + [binary, "query", "-g", g, "--mode", args.mode,
                                    "--format", "csv", "-f", src] + limit, backstop)
            if "status" in r:
                yield {"query": q, **r}
                continue
            lines = r["stdout"].strip().splitlines()
            try:
                answer = int(lines[1])
            except (IndexError, ValueError):
                yield {"query": q, "status": "error", "error": f"output {r['stdout']!r}"}
                continue
            r = ours_call(prefix + [binary, "bench", "--graph", g, "--queries", qdir, "--mode",
                                    args.mode, "--runs", str(args.runs), "--format", "csv"]
                          + limit, backstop)
            if "status" in r:
                yield {"query": q, "answer": answer, **r}
                continue
            row = next(csv.DictReader(r["stdout"].splitlines()))
            yield {"query": q, "status": "ok", "answer": answer,
                   **{k: float(row[k]) for k in ("median_ms", "min_ms", "max_ms")}}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def ours_call(cmd, backstop):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=backstop)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": "killed after the backstop"}
    if p.returncode == 0:
        return {"stdout": p.stdout}
    err = p.stderr.strip()
    status = "timeout" if "limit exceeded" in err and "time limit" in err else "error"
    return {"status": status, "error": err}


# ---------------------------------------------------------------- run: DuckDB and Kùzu (in the venv)

def ensure_venv(venv, engines):
    py = os.path.join(venv, "bin", "python")
    need = [e for e in engines if e in PACKAGES]
    check = "; ".join(f"import {e}" for e in need)
    if "kuzu" in need:
        check += f"; assert kuzu.__version__ == '{KUZU_VERSION}', kuzu.__version__"
    if os.path.exists(py) and subprocess.run([py, "-c", check],
                                             capture_output=True).returncode == 0:
        return py
    if not os.path.exists(py):
        print(f"creating the venv {venv}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([py, "-m", "pip", "install", "-q"] + [PACKAGES[e] for e in need], check=True)
    return py


def run_worker(engine, args, data_dir):
    py = ensure_venv(args.venv, [engine])
    cmd = [py, os.path.abspath(__file__), "engine", engine, data_dir, "--runs", str(args.runs),
           "--threads", str(args.threads), "--timeout", f"{args.timeout:g}"]
    if args.scratch:
        cmd += ["--scratch", args.scratch]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    for line in p.stdout:
        yield json.loads(line)
    if p.wait() != 0:
        yield {"fatal": f"{engine} worker exited with {p.returncode}"}


def timed(fn, cancel, timeout):
    """(ms, value) of fn(), `cancel` called if it runs past `timeout` seconds."""
    timer = threading.Timer(timeout, cancel) if timeout else None
    if timer:
        timer.start()
    try:
        t = time.perf_counter()
        v = fn()
        return (time.perf_counter() - t) * 1e3, v
    finally:
        if timer:
            timer.cancel()


def measure(name, fn, cancel, args):
    """One warm-up run (the answer), then --runs timed runs: a result line."""
    out = {"query": name}
    try:
        _, answer = timed(fn, cancel, args.timeout)
        out["answer"] = int(answer)
        ms = sorted(timed(fn, cancel, args.timeout)[0] for _ in range(max(args.runs, 1)))
    except Exception as e:  # noqa: BLE001 - every engine error is a result
        msg = str(e).strip()
        interrupted = "interrupt" in msg.lower() or "timeout" in msg.lower()
        return {**out, "status": "timeout" if interrupted else "error", "error": msg}
    return {**out, "status": "ok", "median_ms": ms[len(ms) // 2], "min_ms": ms[0],
            "max_ms": ms[-1]}


def emit(d):
    print(json.dumps(d), flush=True)


def engine_duckdb(args, scratch):
    import duckdb
    sql = os.path.join(HERE, "sql")
    db = os.path.join(scratch, "lsqb.duckdb")
    t = time.perf_counter()
    con = duckdb.connect(db)
    con.execute(open(os.path.join(sql, "schema.sql")).read())
    path = os.path.abspath(args.data_dir).replace("'", "''")
    con.execute(open(os.path.join(sql, "load-projected-fk.sql")).read().replace("PATHVAR", path))
    for name in NODE_FILES:
        n = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
        with open(os.path.join(args.data_dir, name + ".csv")) as f:
            lines = sum(1 for _ in f) - 1
        if n != lines:
            raise SystemExit(f"DuckDB: {name} has {n} rows, {name}.csv {lines} (a node with "
                             "two values of a key LSQB's schema holds one of)")
    con.execute(open(os.path.join(sql, "views.sql")).read())
    con.close()
    con = duckdb.connect(db, read_only=True)
    con.execute(f"SET threads = {args.threads}")
    emit({"engine": "duckdb", "version": f"DuckDB {duckdb.__version__}",
          "load_s": time.perf_counter() - t})
    for q in QUERIES:
        print(f"  duckdb {q} ...", file=sys.stderr, flush=True)
        text = open(os.path.join(sql, q + ".sql")).read()
        emit(measure(q, lambda: con.execute(text).fetchall()[0][0], con.interrupt, args))
    con.close()


def engine_kuzu(args, scratch):
    import kuzu
    data = os.path.abspath(args.data_dir)
    conv = os.path.join(scratch, "kuzu-csv")
    os.makedirs(conv)
    t = time.perf_counter()

    # LSQB's kuzu/convert.sh, into the scratch folder instead of the data folder.
    def concat(target, *sources):
        with open(os.path.join(conv, target + ".csv"), "w") as out:
            for i, s in enumerate(sources):
                with open(os.path.join(data, s + ".csv")) as f:
                    if i:
                        next(f)
                    shutil.copyfileobj(f, out)

    with open(os.path.join(conv, "Person_knows_Person_bidirectional.csv"), "w") as out, \
            open(os.path.join(data, "Person_knows_Person.csv")) as f:
        out.write(next(f))
        rows = [line.rstrip("\n").split("|") for line in f]
        out.writelines(f"{a}|{b}\n" for a, b in rows)
        out.writelines(f"{b}|{a}\n" for a, b in rows)
    for target, a, b in [
        ("Message", "Comment", "Post"),
        ("Message_hasCreator_Person", "Comment_hasCreator_Person", "Post_hasCreator_Person"),
        ("Message_hasTag_Tag", "Comment_hasTag_Tag", "Post_hasTag_Tag"),
        ("Message_isLocatedIn_Country", "Comment_isLocatedIn_Country", "Post_isLocatedIn_Country"),
        ("Message_replyOf_Message", "Comment_replyOf_Comment", "Comment_replyOf_Post"),
        ("Person_likes_Message", "Person_likes_Comment", "Person_likes_Post"),
    ]:
        concat(target, a, b)
    concat("Forum_containerOf_Message", "Forum_containerOf_Post")

    # LSQB's kuzu/load.py.
    db = kuzu.Database(os.path.join(scratch, "lsqb.kuzu"), max_num_threads=args.threads)
    conn = kuzu.Connection(db)
    for stmt in open(os.path.join(HERE, "kuzu", "schema.cypher")).read().split(";"):
        if stmt.strip():
            conn.execute(stmt)
    nodes = ["Company", "University", "Continent", "Country", "City", "Tag", "TagClass", "Forum",
             "Message", "Person"]
    edges = ["Comment_replyOf_Post", "City_isPartOf_Country", "Message_hasCreator_Person",
             "Message_hasTag_Tag", "Message_isLocatedIn_Country", "Message_replyOf_Message",
             "Company_isLocatedIn_Country", "Country_isPartOf_Continent",
             "Forum_containerOf_Message", "Forum_hasMember_Person", "Forum_hasModerator_Person",
             "Forum_hasTag_Tag", "Person_hasInterest_Tag", "Person_isLocatedIn_City",
             "Person_knows_Person_bidirectional", "Person_likes_Message",
             "Person_studyAt_University", "Person_workAt_Company",
             "TagClass_isSubclassOf_TagClass", "Tag_hasType_TagClass",
             "University_isLocatedIn_City"]
    for name in nodes + edges:
        d = conv if os.path.exists(os.path.join(conv, name + ".csv")) else data
        table = "Person_knows_Person" if name == "Person_knows_Person_bidirectional" else name
        path = os.path.join(d, name + ".csv").replace("'", "\\'")
        conn.execute(f"COPY {table} FROM '{path}' (HEADER=True, DELIM='|')")
    conn.set_max_threads_for_exec(args.threads)
    if args.timeout:
        conn.set_query_timeout(int(args.timeout * 1000))
    emit({"engine": "kuzu", "version": f"Kùzu {kuzu.__version__}",
          "load_s": time.perf_counter() - t})
    for q in QUERIES:
        print(f"  kuzu {q} ...", file=sys.stderr, flush=True)
        text = open(os.path.join(HERE, "kuzu", q + ".cypher")).read()
        emit(measure(q, lambda: conn.execute(text).get_next()[0], conn.interrupt, args))


def engine(args):
    scratch = tempfile.mkdtemp(prefix=f"lsqb-{args.engine}-", dir=args.scratch)
    try:
        {"duckdb": engine_duckdb, "kuzu": engine_kuzu}[args.engine](args, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


# ---------------------------------------------------------------- run: report

def expected(sf):
    out = {}
    with open(os.path.join(HERE, "expected-output.csv")) as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) >= 6 and row[2] == sf:
                out[f"q{row[3]}"] = int(row[5])
    if not out:
        die(f"expected-output.csv has no answers for scale factor {sf}")
    return out


def run(args):
    data_dir = os.path.abspath(args.data_dir)
    check_files(data_dir)
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in engines:
        if e not in NAMES:
            die(f"unknown engine {e} (ours, duckdb, kuzu)")
    results, versions, loads, fatal = {}, {}, {}, []
    for e in engines:
        print(f"{NAMES[e]} ...", file=sys.stderr, flush=True)
        stream = run_ours(args, data_dir, args.graph_dir) if e == "ours" else \
            run_worker(e, args, data_dir)
        results[e] = {}
        for r in stream:
            if "fatal" in r:
                fatal.append(r["fatal"])
            elif "engine" in r:
                versions[e] = r["version"]
                if "load_s" in r:
                    loads[e] = f", loaded in {r['load_s']:.1f} s"
            else:
                results[e][r["query"]] = r
                if r["status"] != "ok":
                    print(f"    {e} {r['query']}: {r['status']}: {r.get('error', '')}",
                          file=sys.stderr, flush=True)

    ref = "duckdb" if "duckdb" in engines else engines[0]
    want = expected(args.expect) if args.expect else {}
    print(f"\nLSQB on {data_dir}: median ms of {args.runs} runs after a warm-up, "
          f"{args.threads} threads, timeout {args.timeout or 'none'} s")
    for e in engines:
        print(f"- {NAMES[e]}: {versions.get(e, '?')}{loads.get(e, '')}")
    print()
    print("| query | " + " | ".join(f"{NAMES[e]} ms" for e in engines) + " | answer |")
    print("|---|" + "---:|" * (len(engines) + 1))
    differ = []
    for q in QUERIES:
        cells = []
        for e in engines:
            r = results[e].get(q)
            cells.append("-" if r is None else f"{r['median_ms']:.1f}" if r["status"] == "ok"
                         else r["status"])
        answers = {e: results[e][q]["answer"] for e in engines
                   if "answer" in results[e].get(q, {})}
        base = answers.get(ref, next(iter(answers.values()), None))
        for e, a in answers.items():
            if a != base:
                differ.append(f"{q}: {NAMES[e]} {a}, {NAMES[ref]} {base}")
        if q in want and base is not None and base != want[q]:
            differ.append(f"{q}: {NAMES[ref]} {base}, LSQB's expected output (SF {args.expect}) "
                          f"{want[q]}")
        print(f"| {q} | " + " | ".join(cells) + f" | {'-' if base is None else base} |")
    print()
    if differ:
        print("Answers that differ:")
        for d in differ:
            print(f"- {d}")
    else:
        print(f"Every answer agrees with {NAMES[ref]}'s"
              + (f" and LSQB's expected output (SF {args.expect})" if want else "") + ".")
    failed = [f"{NAMES[e]} {q}: {r['status']}: {r.get('error', '').splitlines()[0] if r.get('error') else ''}"
              for e in engines for q, r in results[e].items() if r["status"] != "ok"]
    if failed or fatal:
        print("\nNot run to the end:")
        for f in fatal + failed:
            print(f"- {f}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["engine", "version", "threads", "query", "status", "median_ms", "min_ms",
                        "max_ms", "answer"])
            for e in engines:
                for q in QUERIES:
                    r = results[e].get(q, {})
                    w.writerow([e, versions.get(e, ""), args.threads, q, r.get("status", ""),
                                *(f"{r[k]:.3f}" if k in r else "" for k in
                                  ("median_ms", "min_ms", "max_ms")),
                                r.get("answer", "")])
    return 1 if differ else 0


# ---------------------------------------------------------------- command line

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("import-published", help="import LSQB's projected-FK CSV files")
    p.add_argument("data_dir")
    p.add_argument("out")
    p.add_argument("--bin")
    p.add_argument("--overwrite", action="store_true")

    p = sub.add_parser("from-generated", help="LSQB's files from `lance-csr generate --ldbc`")
    p.add_argument("--scale", required=True)
    p.add_argument("--seed", default="42")
    p.add_argument("out")
    p.add_argument("--bin")
    p.add_argument("--overwrite", action="store_true")
    p.add_argument("--keep-generated", action="store_true",
                   help="keep the generated graph in OUT/generated")

    def common(p):
        p.add_argument("--runs", type=int, default=5)
        p.add_argument("--threads", type=int, default=len(cpus()))
        p.add_argument("--timeout", type=float, default=300,
                       help="seconds per query run (0: none)")
        p.add_argument("--scratch", help="folder for the engines' databases (default: /tmp)")

    p = sub.add_parser("run", help="run the nine queries on each engine")
    p.add_argument("data_dir")
    p.add_argument("graph_dir")
    p.add_argument("--engines", default="ours,duckdb,kuzu")
    p.add_argument("--bin")
    p.add_argument("--mode", default="csr", choices=["csr", "join"])
    p.add_argument("--venv", default=os.environ.get("LSQB_VENV", "/tmp/lsqb-venv"))
    p.add_argument("--expect", metavar="SF",
                   help="also check the answers against LSQB's expected output for this SF")
    p.add_argument("--csv", help="also write the results to this CSV file")
    common(p)

    p = sub.add_parser("engine", help=argparse.SUPPRESS)  # run's worker inside the venv
    p.add_argument("engine", choices=["duckdb", "kuzu"])
    p.add_argument("data_dir")
    common(p)

    args = ap.parse_args()
    if args.cmd == "import-published":
        import_published(os.path.abspath(args.data_dir), os.path.abspath(args.out),
                         lance_csr(args.bin), args.overwrite)
    elif args.cmd == "from-generated":
        from_generated(args)
    elif args.cmd == "run":
        sys.exit(run(args))
    else:
        engine(args)


if __name__ == "__main__":
    main()
