"""Point lookups and 2-hop counts over Bolt with the neo4j Python driver: queries/s, p50 and
p99 with N concurrent sessions, against a running `lance-csr serve`. Sessions are threads of
one process (`--threads`: the driver's Python code then shares one GIL, which bounds what the
client can send) or processes of their own (the default).

    lance-csr serve --graph /tmp/ldbc10 --no-auth &
    python3 benches/python/bolt_bench.py --graph /tmp/ldbc10 --port 7687 --sessions 1 4 16

The person ids come from the graph's person dataset (pylance), so every lookup finds a node.
"""

import argparse
import multiprocessing
import random
import statistics
import threading
import time

import neo4j

QUERIES = {
    "point": "MATCH (p:Person {id: $id}) RETURN p.firstName AS firstName, p.lastName AS lastName",
    "2hop": "MATCH (p:Person {id: $id})-[:KNOWS]->()-[:KNOWS]->(f) RETURN count(f) AS n",
}


def person_ids(graph):
    import lance

    ds = lance.dataset(f"{graph}/person.lance")
    return ds.to_table(columns=["id"]).column("id").to_pylist()


def session_loop(uri, query, ids, seed, start, stop_at, out):
    """One session running `query` from `start` to `stop_at`; its latencies go to `out`."""
    rng = random.Random(seed)
    lat = []
    with neo4j.GraphDatabase.driver(uri, auth=("neo4j", "x")) as d, d.session(database="neo4j") as s:
        s.run(query, id=rng.choice(ids)).consume()
        time.sleep(max(0.0, start - time.time()))
        while time.time() < stop_at:
            t0 = time.perf_counter()
            s.run(query, id=rng.choice(ids)).consume()
            lat.append(time.perf_counter() - t0)
    out.put(lat)


def run(uri, query, ids, sessions, seconds, threads):
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue() if not threads else __import__("queue").Queue()
    # Every session connects and warms up before the measured window opens.
    start = time.time() + 2.0 + 0.25 * sessions
    stop_at = start + seconds
    make = threading.Thread if threads else ctx.Process
    workers = [make(target=session_loop, args=(uri, query, ids, i, start, stop_at, out))
               for i in range(sessions)]
    for w in workers:
        w.start()
    lat = []
    for _ in workers:
        lat.extend(out.get())
    for w in workers:
        w.join()
    lat.sort()
    return {
        "qps": len(lat) / seconds,
        "p50_us": statistics.median(lat) * 1e6,
        "p99_us": lat[int(len(lat) * 0.99)] * 1e6,
        "n": len(lat),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graph", required=True)
    ap.add_argument("--port", type=int, default=7687)
    ap.add_argument("--sessions", type=int, nargs="+", default=[1, 4, 16])
    ap.add_argument("--seconds", type=float, default=8)
    ap.add_argument("--scheme", default="bolt")
    ap.add_argument("--threads", action="store_true", help="sessions as threads of one process")
    args = ap.parse_args()
    ids = person_ids(args.graph)
    uri = f"{args.scheme}://127.0.0.1:{args.port}"
    kind = "threads" if args.threads else "processes"
    print(f"sessions as {kind}, {args.seconds:.0f} s each")
    print(f"{'query':<6} {'sessions':>8} {'q/s':>9} {'p50 us':>9} {'p99 us':>9}")
    for name, q in QUERIES.items():
        for n in args.sessions:
            r = run(uri, q, ids, n, args.seconds, args.threads)
            print(f"{name:<6} {n:>8} {r['qps']:>9.0f} {r['p50_us']:>9.0f} {r['p99_us']:>9.0f}")


if __name__ == "__main__":
    main()
