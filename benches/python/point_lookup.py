#!/usr/bin/env python3
"""The cost of a point lookup through Python: lance_csr against LadybugDB's Python API on the
same graph, and the throughput of several Python threads.

    pip install ladybug pylance            # and lance_csr: (cd python && maturin develop --release)
    lance-csr generate --scale 10 --ldbc --out /tmp/ldbc10
    python3 benches/python/point_lookup.py /tmp/ldbc10 --seconds 5

Per engine it runs the same query with a person id from the IS1 bindings
(`benches/ldbc-snb/interactive-short-1.csv`) cycled call after call, the rows fetched into
Python (`Result.rows()` / `QueryResult.get_all()`): a prepared query, one warm-up round, then
`--seconds` of calls on 1 thread and on `--threads` threads. It prints microseconds per call
(median and 99th percentile, one thread) and calls per second.
"""

import argparse
import csv
import os
import statistics
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "benches", "ldbc-snb", "ladybug"))

QUERY = (
    "MATCH (p:Person {id: $id}) "
    "RETURN p.firstName AS firstName, p.lastName AS lastName, p.gender AS gender"
)


def ids():
    with open(os.path.join(ROOT, "benches", "ldbc-snb", "interactive-short-1.csv")) as f:
        return [int(r["personId"]) for r in csv.DictReader(f)]


def timed(call, persons, seconds):
    """Latencies (seconds) of calls made for `seconds`, cycling through `persons`."""
    out, i, end = [], 0, time.perf_counter() + seconds
    while True:
        t = time.perf_counter()
        if t >= end:
            return out
        call(persons[i % len(persons)])
        out.append(time.perf_counter() - t)
        i += 1


def threaded(call, persons, seconds, threads):
    """Calls per second of `threads` threads calling for `seconds`."""
    counts = [0] * threads

    def work(k):
        counts[k] = len(timed(call, persons[k:] + persons[:k], seconds))

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / seconds


def report(name, call, persons, seconds, threads):
    for p in persons:
        call(p)
    lat = sorted(timed(call, persons, seconds))
    p50 = statistics.median(lat) * 1e6
    p99 = lat[int(len(lat) * 0.99)] * 1e6
    one = len(lat) / seconds
    many = threaded(call, persons, seconds, threads)
    print(
        f"| {name} | {p50:.1f} | {p99:.1f} | {one:,.0f} | {many:,.0f} | {many / one:.2f}x |",
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", help="a graph made by `lance-csr generate --ldbc`")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--only", choices=["lance_csr", "ladybug"])
    a = ap.parse_args()
    persons = ids()
    print(f"| engine | p50 us | p99 us | calls/s, 1 thread | calls/s, {a.threads} threads | ratio |")
    print("|---|---|---|---|---|---|")
    if a.only in (None, "lance_csr"):
        import lance_csr

        g = lance_csr.Graph.open(os.path.join(a.graph, "graph.toml"))
        prepared = g.prepare(QUERY)
        report(
            "lance_csr (prepared)",
            lambda pid: prepared.query({"id": pid}).rows(),
            persons,
            a.seconds,
            a.threads,
        )
        report(
            "lance_csr (Graph.query)",
            lambda pid: g.query(QUERY, {"id": pid}).rows(),
            persons,
            a.seconds,
            a.threads,
        )
    if a.only in (None, "ladybug"):
        import ladybug
        from run import load

        db_dir = os.path.join(tempfile.mkdtemp(prefix="ladybug-point-"), "db")
        db, conn = load(a.graph, db_dir, lambda _: None)
        stmt = conn.prepare(QUERY)
        local = threading.local()

        def call(pid):
            # A connection per thread, as LadybugDB's documentation asks for concurrent use.
            c = getattr(local, "conn", None)
            if c is None:
                c = local.conn = conn if threading.current_thread() is threading.main_thread() else ladybug.Connection(db)
                local.stmt = stmt if c is conn else c.prepare(QUERY)
            return c.execute(local.stmt, {"id": pid}).get_all()

        report("LadybugDB (prepared)", call, persons, a.seconds, a.threads)


if __name__ == "__main__":
    main()
