#!/usr/bin/env python3
"""The cost of a point lookup through Python: lance_csr against LadybugDB's Python API on the
same graph, and the throughput of several Python threads.

    pip install ladybug pylance            # and lance_csr: (cd python && maturin develop --release)
    lance-csr generate --scale 10 --ldbc --out /tmp/ldbc10
    python3 benches/python/point_lookup.py /tmp/ldbc10 --seconds 5

Per engine it runs the same query with a person id from the IS1 bindings
(`benches/ldbc-snb/interactive-short-1.csv`) cycled call after call, the rows fetched into
Python (`Result.rows()` / `QueryResult.get_all()`): a prepared query, one warm-up round, then
`--seconds` of calls timed one by one on 1 thread (median and 99th percentile), then calls
counted, not timed, on 1 thread and on `--threads` threads in turn for `--rounds` rounds of
`--seconds / --rounds` each (the median calls per second of each, and their ratio).
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


def counted(call, persons, seconds):
    """How many calls were made in `seconds`, cycling through `persons`. No call is timed on
    its own: the clock is read once per round of 64 calls, so the harness holds the GIL for
    as little as a loop can, and the threads' ratio measures the calls."""
    round_ = [persons[i % len(persons)] for i in range(64)]
    n, end = 0, time.perf_counter() + seconds
    while time.perf_counter() < end:
        for p in round_:
            call(p)
        n += len(round_)
    return n


def threaded(call, persons, seconds, threads):
    """Calls per second of `threads` threads calling for `seconds`."""
    counts = [0] * threads

    def work(k):
        counts[k] = counted(call, persons[k:] + persons[:k], seconds)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return sum(counts) / seconds


def ratio(call, persons, seconds, threads, rounds):
    """Calls per second of 1 thread and of `threads` threads: the medians of `rounds` rounds
    of each, taken in turn, so that a slow spell of a shared machine lands on both."""
    one, many = [], []
    for _ in range(rounds):
        one.append(threaded(call, persons, seconds / rounds, 1))
        many.append(threaded(call, persons, seconds / rounds, threads))
    return statistics.median(one), statistics.median(many)


def report(name, call, persons, seconds, threads, rounds):
    for p in persons:
        call(p)
    lat = sorted(timed(call, persons, seconds))
    p50 = statistics.median(lat) * 1e6
    p99 = lat[int(len(lat) * 0.99)] * 1e6
    one, many = ratio(call, persons, seconds, threads, rounds)
    print(
        f"| {name} | {p50:.1f} | {p99:.1f} | {one:,.0f} | {many:,.0f} | {many / one:.2f}x |",
        flush=True,
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("graph", help="a graph made by `lance-csr generate --ldbc`")
    ap.add_argument("--seconds", type=float, default=5)
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=5, help="rounds the thread counts take in turn")
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
            a.rounds,
        )
        report(
            "lance_csr (Graph.query)",
            lambda pid: g.query(QUERY, {"id": pid}).rows(),
            persons,
            a.seconds,
            a.threads,
            a.rounds,
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

        report("LadybugDB (prepared)", call, persons, a.seconds, a.threads, a.rounds)


if __name__ == "__main__":
    main()
