#!/usr/bin/env python3
"""Runs the LDBC SNB Interactive read queries on LadybugDB over a graph made by
`lance-csr generate --ldbc`, timed the way `lance-csr bench` times them.

    pip install ladybug pylance
    python3 benches/ldbc-snb/ladybug/run.py /tmp/ldbc10 --runs 5

It reads the graph's Lance datasets (pylance), loads them into a fresh LadybugDB database in
the schema of the LDBC Kuzu implementation (one `Place` table with a `type` column for cities
and countries, one `Organisation` table for universities and companies, relationship tables
spanning several node-table pairs), then runs each `interactive-*.cypher` beside this script
with the bindings of the query's `NAME.csv` one folder up: a prepared statement, one warm-up
run with the first binding, then `--runs` timed runs cycling through the bindings. It prints
the median milliseconds per query (and `--csv FILE` writes them).
"""

import argparse
import csv
import os
import shutil
import sys
import tempfile
import time
import tomllib
import warnings

import lance
import ladybug
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
PARAMS = os.path.dirname(HERE)

# The Kuzu schema keeps one table for each LDBC super-type whose sub-types our generator
# writes as separate tables; its `type` column says which sub-type a row is.
MERGED = {
    "City": ("Place", "city"),
    "Country": ("Place", "country"),
    "University": ("Organisation", "university"),
    "Company": ("Organisation", "company"),
}


def kuzu_type(t):
    if pa.types.is_integer(t):
        return "INT64"
    if pa.types.is_floating(t):
        return "DOUBLE"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "STRING"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return kuzu_type(t.value_type) + "[]"
    raise SystemExit(f"no LadybugDB type for Arrow type {t}")


def columns(schema, skip=()):
    return ", ".join(
        f"{f.name} {kuzu_type(f.type)}" for f in schema if f.name not in skip
    )


def load(graph_dir, db_dir, log):
    with open(os.path.join(graph_dir, "graph.toml"), "rb") as f:
        config = tomllib.load(f)
    tmp = tempfile.mkdtemp(prefix="ladybug-ldbc-")
    try:
        db = ladybug.Database(db_dir)
        conn = ladybug.Connection(db)
        # Node tables: merged ones gain a `type` column.
        node_data = {}
        for name, node in config["nodes"].items():
            table = lance.dataset(os.path.join(graph_dir, node["source"])).to_table()
            if name in MERGED:
                target, kind = MERGED[name]
                table = table.append_column("type", pa.array([kind] * table.num_rows))
            else:
                target = name
            node_data.setdefault(target, []).append(table)
        node_of = {name: MERGED.get(name, (name, None))[0] for name in config["nodes"]}
        for target, tables in node_data.items():
            table = pa.concat_tables(tables, promote_options="default")
            conn.execute(
                f"CREATE NODE TABLE {target} ({columns(table.schema)}, PRIMARY KEY(id))"
            )
            path = os.path.join(tmp, f"{target}.parquet")
            pq.write_table(table, path)
            conn.execute(f"COPY {target} FROM '{path}'")
            log(f"  {target}: {table.num_rows} nodes")
        # Relationship tables: one per type, over every node-table pair it connects.
        rels = {}
        for rel in config.get("relationships", []):
            table = lance.dataset(os.path.join(graph_dir, rel["source"])).to_table()
            table = table.select(
                [rel["src"], rel["dst"]]
                + [c for c in table.column_names if c not in (rel["src"], rel["dst"])]
            )
            rels.setdefault(rel["type"], []).append(
                (node_of[rel["from"]], node_of[rel["to"]], table)
            )
        for rtype, parts in rels.items():
            pairs = []
            for src, dst, _ in parts:
                if (src, dst) not in pairs:
                    pairs.append((src, dst))
            props = columns(parts[0][2].schema, skip=parts[0][2].column_names[:2])
            spec = ", ".join(f"FROM {s} TO {d}" for s, d in pairs)
            conn.execute(
                f"CREATE REL TABLE {rtype} ({spec}{', ' + props if props else ''})"
            )
            for i, (src, dst) in enumerate(pairs):
                tables = [t for s, d, t in parts if (s, d) == (src, dst)]
                table = pa.concat_tables(tables)
                path = os.path.join(tmp, f"{rtype}_{i}.parquet")
                pq.write_table(table, path)
                opts = f" (from='{src}', to='{dst}')" if len(pairs) > 1 else ""
                conn.execute(f"COPY {rtype} FROM '{path}'{opts}")
                log(f"  {rtype} {src}->{dst}: {table.num_rows} relationships")
        return db, conn
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def value(text):
    try:
        return int(text)
    except ValueError:
        return text


def bindings(name):
    with open(os.path.join(PARAMS, name + ".csv"), newline="") as f:
        rows = list(csv.reader(f))
    header = [h.strip() for h in rows[0]]
    return [
        {h: value(v.strip()) for h, v in zip(header, row)} for row in rows[1:] if row
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", help="folder holding graph.toml (lance-csr generate --ldbc)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per query")
    ap.add_argument("--db", help="LadybugDB folder (default: a temporary one)")
    ap.add_argument("--only", help="run only queries whose name contains this")
    ap.add_argument("--timeout", type=int, default=60, help="seconds a query may run")
    ap.add_argument("--csv", help="also write query,median_ms,min_ms,max_ms,rows here")
    args = ap.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)
    log = lambda m: print(m, file=sys.stderr, flush=True)
    db_dir = args.db or tempfile.mkdtemp(prefix="ladybug-db-")
    os.makedirs(db_dir, exist_ok=True)
    db_path = os.path.join(db_dir, "ldbc")
    if os.path.exists(db_path):
        shutil.rmtree(db_path) if os.path.isdir(db_path) else os.remove(db_path)
    log(f"loading {args.graph} into LadybugDB {ladybug.__version__} ...")
    t = time.perf_counter()
    db, conn = load(args.graph, db_path, log)
    log(f"loaded in {time.perf_counter() - t:.1f}s")
    conn.set_query_timeout(args.timeout * 1000)
    names = sorted(
        f[:-7]
        for f in os.listdir(HERE)
        if f.endswith(".cypher") and (not args.only or args.only in f)
    )
    names.sort(key=lambda n: (n.split("-")[1], int(n.rsplit("-", 1)[1])))
    results = []
    for name in names:
        with open(os.path.join(HERE, name + ".cypher")) as f:
            text = f.read()
        params = bindings(name)
        log(f"  {name} ...")
        try:
            prepared = conn.prepare(text)
            rows = len(conn.execute(prepared, params[0]).get_all())
            ms = []
            for i in range(max(args.runs, 1)):
                t = time.perf_counter()
                rows = len(conn.execute(prepared, params[i % len(params)]).get_all())
                ms.append((time.perf_counter() - t) * 1e3)
            results.append((name, sorted(ms)[len(ms) // 2], min(ms), max(ms), rows))
        except Exception as e:  # a query LadybugDB rejects is reported, not fatal
            log(f"    {name}: {e}")
            results.append((name, None, None, None, None))
    print(f"{'query':<28} {'median_ms':>10} {'min_ms':>10} {'max_ms':>10} {'rows':>6}")
    for name, med, lo, hi, rows in results:
        if med is None:
            print(f"{name:<28} {'error':>10}")
        else:
            print(f"{name:<28} {med:>10.3f} {lo:>10.3f} {hi:>10.3f} {rows:>6}")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["query", "median_ms", "min_ms", "max_ms", "rows"])
            for r in results:
                w.writerow(["" if x is None else x for x in r])
    if not args.db:
        shutil.rmtree(db_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
