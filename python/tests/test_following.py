"""A running server and an open `Graph` follow their datasets while pylance writes them:
appends, deletes, and compaction with cleanup show in the answers within the refresh
interval, and no query fails because the files of the state it started on were removed."""

import datetime
import pathlib
import threading
import time

import lance
import pyarrow as pa
import pytest

import lance_csr

from test_server import Server

KNOWS = "MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k) AS n"
CITIES = "MATCH (c:City) RETURN c.name AS name ORDER BY name"


def folder(graph):
    p = pathlib.Path(graph)
    return p.parent if p.is_file() else p


def eventually(check, what, seconds=60):
    """Waits until `check()` holds; a generous bound for a loaded machine (the interval is
    200 ms)."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, f"{what}: not within {seconds} s"
        time.sleep(0.05)
    return time.monotonic() - start


def writes(graph, count, cities):
    """Appends, deletes, compacts and cleans up with pylance, checking after each that
    `count()` (KNOWS relationships) and `cities()` (City names) follow."""
    base = folder(graph)
    knows = str(base / "person_knows_person.lance")
    city = str(base / "city.lance")
    n0, names = count(), cities()

    ds = lance.dataset(knows)
    extra = pa.table({c: pa.array([6] if c in ("src", "dst") else [0], ds.schema.field(c).type)
                      for c in ds.schema.names})
    lance.write_dataset(extra, knows, mode="append")
    eventually(lambda: count() == n0 + 1, "an append")

    lance.dataset(knows).delete("src = 6 AND dst = 6")
    eventually(lambda: count() == n0, "a delete")

    # Two fragments, then one: the compaction rewrites the table, and the cleanup deletes
    # the files every earlier state read.
    c = lance.dataset(city)
    lance.write_dataset(c.to_table(), city, mode="append")
    eventually(lambda: cities() == sorted(names + names), "a second fragment")
    errors = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            try:
                got = cities()
                if got != sorted(names + names):
                    errors.append(f"wrong answer {got}")
            except Exception as e:  # any failure is what this test is for
                errors.append(repr(e))

    t = threading.Thread(target=reader)
    t.start()
    try:
        c = lance.dataset(city)
        c.optimize.compact_files()
        removed = c.cleanup_old_versions(older_than=datetime.timedelta(0), delete_unverified=True)
        assert removed.data_files_removed > 0
        # Right after the cleanup, before any refresh: the answer, not an error.
        assert cities() == sorted(names + names)
        time.sleep(1.0)
    finally:
        stop.set()
        t.join()
    assert errors == []
    assert len(lance.dataset(city).get_fragments()) == 1


def compact_and_clean_up(uri):
    """Two fragments compacted into one, and the files of every earlier state deleted."""
    lance.write_dataset(lance.dataset(uri).to_table(), uri, mode="append")
    c = lance.dataset(uri)
    c.optimize.compact_files()
    removed = c.cleanup_old_versions(older_than=datetime.timedelta(0), delete_unverified=True)
    assert removed.data_files_removed > 0


def test_an_open_graph_follows_pylance_writes(tmp_path):
    graph = lance_csr.generate(tmp_path / "g", sample=True)
    g = lance_csr.Graph.open(graph, refresh_interval=0.2)
    try:
        writes(
            graph,
            lambda: g.query(KNOWS).rows()[0][0],
            lambda: [r[0] for r in g.query(CITIES).rows()],
        )
    finally:
        g.close()


def test_a_graph_with_no_interval_stays_as_it_was_opened(tmp_path):
    graph = lance_csr.generate(tmp_path / "g", sample=True)
    with lance_csr.Graph.open(graph, refresh_interval=None) as g:
        n0 = g.query(KNOWS).rows()[0][0]
        knows = str(folder(graph) / "person_knows_person.lance")
        lance.write_dataset(lance.dataset(knows).to_table().slice(0, 1), knows, mode="append")
        time.sleep(0.5)
        assert g.query(KNOWS).rows()[0][0] == n0
        assert g.refresh() == 1
        assert g.query(KNOWS).rows()[0][0] == n0 + 1
        # The state it reads is gone: the query runs on the latest (the cities twice over).
        names = [r[0] for r in g.query(CITIES).rows()]
        compact_and_clean_up(str(folder(graph) / "city.lance"))
        assert [r[0] for r in g.query(CITIES).rows()] == sorted(names + names)
    with pytest.raises(lance_csr.Error, match="refresh_interval"):
        lance_csr.Graph.open(graph, refresh_interval=0)


def test_a_running_server_follows_pylance_writes(cli, tmp_path):
    graph = lance_csr.generate(tmp_path / "g", sample=True)
    server = Server(cli, graph, tmp_path, "--refresh-interval", "200ms")
    try:
        with server.driver() as d:
            writes(
                graph,
                lambda: d.execute_query(KNOWS).records[0]["n"],
                lambda: [r["name"] for r in d.execute_query(CITIES).records],
            )
    finally:
        server.stop()


def test_a_server_that_does_not_refresh_answers_once_its_files_are_gone(cli, tmp_path):
    graph = lance_csr.generate(tmp_path / "g", sample=True)
    server = Server(cli, graph, tmp_path, "--no-refresh")
    try:
        with server.driver() as d:
            cities = lambda: [r["name"] for r in d.execute_query(CITIES).records]
            names = cities()
            compact_and_clean_up(str(folder(graph) / "city.lance"))
            assert cities() == sorted(names + names)
    finally:
        server.stop()


def test_a_transaction_reads_the_state_it_began_on(cli, tmp_path):
    graph = lance_csr.generate(tmp_path / "g", sample=True)
    server = Server(cli, graph, tmp_path, "--refresh-interval", "200ms")
    knows = str(folder(graph) / "person_knows_person.lance")
    try:
        with server.driver() as d, d.session() as s:
            tx = s.begin_transaction()
            n0 = tx.run(KNOWS).single()["n"]
            lance.write_dataset(lance.dataset(knows).to_table().slice(0, 1), knows, mode="append")
            eventually(lambda: d.execute_query(KNOWS).records[0]["n"] == n0 + 1, "an append")
            assert tx.run(KNOWS).single()["n"] == n0
            tx.commit()
            assert s.run(KNOWS).single()["n"] == n0 + 1
    finally:
        server.stop()
