"""The package survives its callers: parameters that hold themselves or nest without end,
huge parameters, a stream closed from another thread, a graph inherited by a forked child,
and results larger than the memory limit each end in a Python exception or work."""

import multiprocessing
import subprocess
import sys
import threading
import time

import pytest

import lance_csr

ENDLESS = ("MATCH (a:Person)-[:KNOWS]-(b)-[:KNOWS]-(c)-[:KNOWS]-(d)-[:KNOWS]-(e) "
           "RETURN a.id AS a, e.id AS e")


def test_parameters_that_hold_themselves_or_nest_deeply_raise(sample):
    looped = []
    looped.append(looped)
    cyclic = {}
    cyclic["self"] = cyclic
    deep = []
    for _ in range(200_000):
        deep = [deep]
    for bad in [looped, cyclic, deep]:
        with pytest.raises(lance_csr.Error, match="nest deeper than"):
            sample.query("RETURN $x AS x", {"x": bad})
    # As deep as allowed: planned quickly, and the value comes back whole.
    ok = 1
    for _ in range(60):
        ok = [ok]
    started = time.time()
    got = sample.query("RETURN $x AS x", {"x": ok}).rows()[0][0]
    assert got == ok
    assert time.time() - started < 30


def test_a_list_of_millions_of_integers_as_a_parameter(sample_path):
    # In a process of its own: its peak memory is the query's.
    code = (
        "import resource, sys, lance_csr\n"
        "g = lance_csr.Graph.open(sys.argv[1])\n"
        "xs = list(range(int(sys.argv[2])))\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "q = 'RETURN size($xs) AS n, $xs[-1] AS last, 77 IN $xs AS a, -1 IN $xs AS b'\n"
        "print(*g.query(q, {'xs': xs}).rows()[0])\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n"
    )
    for n in [1_000_000, 10_000_000]:
        done = subprocess.run([sys.executable, "-c", code, str(sample_path), str(n)],
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        row, grew = done.stdout.split("\n")[:2]
        assert row == f"{n} {n - 1} True False", row
        print(f"{n:,} integers: the query grew the process by {grew} MB")
        # Read into one Arrow list, 8 bytes an integer (a value per element took 64).
        assert int(grew) < 30 * n // 1_000_000 + 100, grew


def test_closing_a_stream_while_another_thread_reads_it(social_path):
    g = lance_csr.Graph.open(social_path)
    try:
        for _ in range(3):
            stream = g.query_stream(ENDLESS)
            read = []
            done = threading.Event()

            def reader():
                for b in stream:
                    read.append(b.num_rows)
                done.set()

            t = threading.Thread(target=reader)
            t.start()
            time.sleep(0.3)
            started = time.time()
            stream.close()
            assert time.time() - started < 5, "close waited for the reader"
            assert done.wait(30), "the reader did not stop"
            t.join()
        # The graph still answers.
        assert g.query("RETURN 1 AS x").rows() == [(1,)]
    finally:
        g.close()


def child_with_inherited(graph, path, out):
    try:
        graph.query("RETURN 1 AS x")
        out.put("answered")
    except lance_csr.Error as e:
        out.put(f"raised: {e}")
    # A graph opened in the child works.
    with lance_csr.Graph.open(path) as g:
        out.put(g.query("MATCH (p:Person) RETURN count(*) AS n").rows()[0][0])


def test_a_forked_child_opens_its_own_graph(sample_path):
    g = lance_csr.Graph.open(sample_path)
    try:
        n = g.query("MATCH (p:Person) RETURN count(*) AS n").rows()[0][0]
        ctx = multiprocessing.get_context("fork")
        out = ctx.Queue()
        p = ctx.Process(target=child_with_inherited, args=(g, sample_path, out))
        p.start()
        p.join(120)
        assert p.exitcode == 0, "the child hung or died"
        first = out.get(timeout=5)
        assert first.startswith("raised") and "open the graph in the child" in first, first
        assert out.get(timeout=5) == n
        # The parent's graph goes on.
        assert g.query("MATCH (p:Person) RETURN count(*) AS n").rows()[0][0] == n
    finally:
        g.close()


def test_a_collected_result_counts_against_the_memory_limit(social_path):
    with lance_csr.Graph.open(social_path, memory_limit=50 << 20) as g:
        with pytest.raises(lance_csr.LimitError, match="result is larger than the memory"):
            g.query("UNWIND range(1, 2000) AS i UNWIND range(1, 5000) AS j RETURN i, j")
        # Streamed, it is read within the limit.
        with g.query_stream("UNWIND range(1, 3000000) AS i RETURN i") as s:
            assert sum(b.num_rows for b in s) == 3_000_000
