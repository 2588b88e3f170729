import concurrent.futures
import datetime
import math
import os
import signal
import threading
import time
import zoneinfo

import pyarrow as pa
import pytest

import lance_csr

# A query that runs for seconds on the scale-1 graph (every walk of up to 6 KNOWS hops).
HEAVY = "MATCH (a:Person)-[:KNOWS*1..6]-(b:Person) RETURN count(*) AS n"


def one(g, query, params=None):
    rows = g.query(query, params).rows()
    assert len(rows) == 1
    return rows[0]


def test_open_schema_and_a_query(sample_path):
    with lance_csr.Graph.open(sample_path) as g:
        s = g.schema()
        assert s["labels"]["Person"]["key"] == "id"
        assert s["labels"]["Person"]["rows"] == 6
        assert s["labels"]["Person"]["properties"]["firstName"] == "Utf8"
        knows = [r for r in s["relationships"] if r["type"] == "KNOWS"]
        assert knows and knows[0]["from"] == "Person" and knows[0]["to"] == "Person"
        r = g.query(
            "MATCH (p:Person {id: $id})-[:KNOWS]->(f) RETURN f.firstName AS name ORDER BY name",
            {"id": 1},
        )
        assert r.columns == ["name"]
        assert [row["name"] for row in r] == ["Bob", "Carl"]
        assert len(r) == 2
    assert g.closed
    with pytest.raises(lance_csr.Error, match="closed"):
        g.query("RETURN 1")


def test_integers_floats_and_nulls_round_trip(sample):
    big, small = 2**63 - 1, -(2**63)
    assert one(sample, "RETURN $a AS a, $b AS b", {"a": big, "b": small}) == (big, small)
    assert one(sample, "RETURN 9223372036854775807 AS a, $a - 1 AS b", {"a": big}) == (big, big - 1)
    with pytest.raises(lance_csr.Error, match="64 bits"):
        sample.query("RETURN $a AS a", {"a": 2**63})
    with pytest.raises(lance_csr.ArithmeticError):
        sample.query("RETURN $a + 1 AS a", {"a": big})
    nan, inf, null = one(sample, "RETURN $x AS nan, 1.0 / 0.0 AS inf, null AS n", {"x": float("nan")})
    assert math.isnan(nan) and inf == math.inf and null is None
    assert one(sample, "RETURN 0.1 + 0.2 AS x")[0] == 0.1 + 0.2
    assert one(sample, "RETURN $t AS t, $f AS f", {"t": True, "f": False}) == (True, False)


def test_nested_lists_and_maps_round_trip(sample):
    value = [1, [2.5, None, ["x", {"k": [True, None]}]], {"a": {"b": []}}, "", -7]
    assert one(sample, "RETURN $v AS v", {"v": value}) == (value,)
    assert one(sample, "RETURN [1, 'a', null] AS v")[0] == [1, "a", None]
    assert one(sample, "RETURN {a: 1, b: [1, 2], c: null} AS m")[0] == {"a": 1, "b": [1, 2], "c": None}
    assert one(sample, "RETURN $t AS t", {"t": (1, 2)})[0] == [1, 2]
    with pytest.raises(lance_csr.Error, match="keys must be strings"):
        sample.query("RETURN $m AS m", {"m": {1: 2}})
    with pytest.raises(lance_csr.Error, match="cannot be a"):
        sample.query("RETURN $m AS m", {"m": object()})


def test_nodes_relationships_and_paths(sample):
    r = sample.query(
        "MATCH p = (a:Person {id: 1})-[k:KNOWS]->(b:Person {id: 2}) RETURN a, k, b, p"
    )
    (a, k, b, p), = r.rows()
    assert isinstance(a, lance_csr.Node) and a.labels == ["Person"]
    assert a["firstName"] == "Ann" and a.get("missing") is None and "age" in a
    assert a.properties["id"] == 1
    assert isinstance(k, lance_csr.Relationship) and k.type == "KNOWS"
    assert isinstance(k["creationDate"], int)
    assert isinstance(p, lance_csr.Path) and len(p) == 1
    assert p.start_node == a and p.end_node == b
    assert p.nodes[1]["firstName"] == "Bob" and p.relationships[0].type == "KNOWS"
    # A path's relationship knows its ends.
    rel = p.relationships[0]
    assert rel.start_element_id == p.nodes[0].element_id
    assert rel.end_element_id == p.nodes[1].element_id
    assert repr(a).startswith("(:Person {") and "firstName: 'Ann'" in repr(a)
    # Several labels.
    (m,), = sample.query("MATCH (m:Message:Post) RETURN m LIMIT 1").rows()
    assert set(m.labels) >= {"Post", "Message"}
    # As Arrow structs.
    t = r.to_arrow()
    assert pa.types.is_struct(t.schema.field("a").type)
    assert t.column("a").to_pylist()[0]["firstName"] == "Ann"
    assert t.column("p").to_pylist()[0]["__nodes"][1]["firstName"] == "Bob"


def test_temporal_values_round_trip(sample):
    london = zoneinfo.ZoneInfo("Europe/London")
    values = {
        "d": datetime.date(2020, 2, 29),
        "lt": datetime.time(12, 30, 15, 250000),
        "t": datetime.time(8, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))),
        "ldt": datetime.datetime(1999, 12, 31, 23, 59, 59, 999999),
        "dt": datetime.datetime(2021, 7, 1, 9, 0, tzinfo=datetime.timezone.utc),
        "zdt": datetime.datetime(2021, 7, 1, 9, 0, tzinfo=london),
        "dur": lance_csr.Duration(months=14, days=3, seconds=5, nanoseconds=7),
        "td": datetime.timedelta(days=2, seconds=3, microseconds=4),
    }
    row = one(sample, "RETURN " + ", ".join(f"${k} AS {k}" for k in values), values)
    got = dict(zip(values, row))
    for k in ["d", "lt", "t", "ldt", "dt", "dur"]:
        assert got[k] == values[k], k
    assert got["zdt"] == values["zdt"] and got["zdt"].tzinfo.key == "Europe/London"
    assert got["t"].utcoffset() == datetime.timedelta(hours=-5)
    assert got["td"] == lance_csr.Duration(days=2, seconds=3, nanoseconds=4000)
    # The engine computes with them.
    (d,) = one(sample, "RETURN $d + duration('P1D') AS d", values)
    assert d == datetime.date(2020, 3, 1)
    (zoned,) = one(sample, "RETURN datetime('2015-07-21T21:40:32.142+01:00[Europe/London]') AS x")
    assert zoned == datetime.datetime(2015, 7, 21, 21, 40, 32, 142000, tzinfo=london)
    (dur,) = one(sample, "RETURN duration('P1M2DT3.5S') AS x")
    assert str(dur) == "P1M2DT3.5S" and dur.months == 1 and dur.nanoseconds == 500_000_000


def test_arrow_polars_and_pandas(sample):
    r = sample.query(
        "MATCH (p:Person) RETURN p.firstName AS name, p.age AS age, [p.id, 'x'] AS mixed ORDER BY age"
    )
    t = r.to_arrow()
    assert t.column_names == ["name", "age", "mixed"]
    assert t.column("age").to_pylist() == sorted(t.column("age").to_pylist())
    # Values of mixed kind are their Cypher text in Arrow, Python values in rows.
    assert t.column("mixed").to_pylist()[0].startswith("[")
    assert next(iter(r))["mixed"][1] == "x"
    assert r.to_polars()["name"].to_list() == t.column("name").to_pylist()
    assert r.to_pandas()["age"].tolist() == t.column("age").to_pylist()


def test_query_stream_yields_batches_and_arrow_readers_take_it(social_path):
    sample = lance_csr.Graph.open(social_path)
    q = "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id AS i, b.id AS j"
    (n,) = one(sample, "MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k)")
    batches = list(sample.query_stream(q))
    assert all(isinstance(b, pa.RecordBatch) for b in batches)
    assert len(batches) > 1, "a large result comes in several batches"
    assert sum(b.num_rows for b in batches) == n
    reader = pa.RecordBatchReader.from_stream(sample.query_stream(q))
    assert reader.read_all().num_rows == n
    import polars as pl

    assert pl.DataFrame(sample.query_stream(q)).height == n
    import duckdb

    stream = sample.query_stream(q)
    assert duckdb.sql("SELECT count(*) AS c FROM stream").fetchall() == [(n,)]
    s = sample.query_stream(q)
    assert s.columns == ["i", "j"] and s.schema.names == ["i", "j"]
    first = next(iter(s))
    s.close()
    assert first.num_rows > 0
    with pytest.raises(lance_csr.Error, match="closed"):
        s.read_all()
    with pytest.raises(lance_csr.SemanticError):
        sample.query_stream("RETURN x")


def test_prepared_queries_are_reused_across_threads(sample):
    p = sample.prepare("MATCH (p:Person {id: $id}) RETURN p.firstName AS name")
    assert p.text.startswith("MATCH")
    names = {1: "Ann", 2: "Bob", 3: "Carl", 4: "Dana", 5: "Eve", 6: "Finn"}

    def ask(i):
        pid = i % 6 + 1
        return pid, [row["name"] for row in p.query({"id": pid})]

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        for pid, got in ex.map(ask, range(400)):
            assert got == [names[pid]]
    assert [b.num_rows for b in p.query_stream({"id": 1})] == [1]


def test_an_error_of_each_class(sample):
    cases = [
        ("MATCH (p:Person RETURN p", lance_csr.SyntaxError, "SyntaxError"),
        ("MATCH (p:Persn) RETURN p", lance_csr.SemanticError, "SyntaxError"),
        ("RETURN x", lance_csr.SemanticError, "SyntaxError"),
        ("RETURN 1 / 0", lance_csr.ArithmeticError, "ArithmeticError"),
        ("RETURN date('2015-13-01') AS d", lance_csr.ArgumentError, "ArgumentError"),
        ("UNWIND [1, true] AS x RETURN x + 1 AS y", lance_csr.TypeError, "TypeError"),
    ]
    for query, cls, cypher_class in cases:
        with pytest.raises(cls) as info:
            sample.query(query)
        e = info.value
        assert isinstance(e, lance_csr.Error)
        assert e.cypher_class == cypher_class, (query, e.cypher_class)
        assert e.kind
    with pytest.raises(lance_csr.SemanticError) as info:
        sample.query("MATCH (p:Person)\nRETURN p.firstName, q")
    e = info.value
    assert (e.line, e.column) == (2, 21)
    assert "^" in str(e) and "q" in str(e)
    with pytest.raises(lance_csr.ConfigError):
        lance_csr.Graph.open("/nonexistent/graph.toml")
    with pytest.raises(lance_csr.Error, match="mode"):
        lance_csr.Graph.sample(mode="fast")


def test_a_timeout_is_a_limit_error(social_path):
    with lance_csr.Graph.open(social_path, timeout=0.2) as g:
        start = time.monotonic()
        with pytest.raises(lance_csr.LimitError):
            g.query(HEAVY)
        assert time.monotonic() - start < 30
        assert one(g, "MATCH (p:Person) RETURN count(*) AS n") == (1000,)


def test_memory_no_reservation_covers_fails_the_query_not_the_process(social_path):
    # The module counts its allocations. Memory the process gains while a query with a limit
    # runs, past the limit and its margin (the pool sees none of it: another graph's result),
    # fails that query at its next look; the process and later queries go on.
    # A result of several batches (the backstop looks between them).
    q = "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id AS i, b.id AS j"
    with lance_csr.Graph.open(social_path, memory_limit=1 << 20) as limited:
        with lance_csr.Graph.open(social_path) as free:
            stream = iter(limited.query_stream(q))
            assert next(stream).num_rows > 0
            # 2,000 strings of 100 KB: 200 MB.
            held = free.query(
                "UNWIND range(1, 2000) AS x RETURN $s + toString(x) AS s", {"s": "a" * 100_000}
            )
            with pytest.raises(lance_csr.LimitError, match="counted by the allocator"):
                for _ in stream:
                    pass
            assert len(held) == 2000
            del held
        (n,) = one(limited, "MATCH (:Person)-[k:KNOWS]->(:Person) RETURN count(k)")
        assert sum(b.num_rows for b in limited.query_stream(q)) == n


def test_interrupt_from_another_thread_cancels_a_running_query(social_path):
    with lance_csr.Graph.open(social_path) as g:
        started = threading.Event()
        outcome = {}

        def run():
            started.set()
            try:
                g.query(HEAVY)
                outcome["result"] = "finished"
            except lance_csr.Interrupted as e:
                outcome["result"] = e

        t = threading.Thread(target=run)
        t.start()
        started.wait()
        time.sleep(0.5)
        g.interrupt()
        t.join(timeout=30)
        assert not t.is_alive()
        assert isinstance(outcome["result"], lance_csr.Interrupted)
        # The graph still answers.
        assert one(g, "MATCH (p:Person {id: 1000}) RETURN p.id") == (1000,)


# A product of three scans: no operator of ours, DataFusion's joins under an aggregate.
PRODUCT = ("MATCH (a:Person), (b:Person), (c:Person) WHERE a.id + b.id <> c.id "
           "RETURN count(*) AS n")


def cpu_used_in_a_second():
    """This process's CPU time (every thread's, the engine's workers included) over one
    second, after a moment for what was stopping to stop."""
    import resource

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    time.sleep(0.2)
    before = cpu()
    time.sleep(1.0)
    return cpu() - before


@pytest.mark.parametrize("query", [HEAVY, PRODUCT], ids=["paths", "product"])
def test_an_interrupted_query_stops_using_the_cpu(social_path, query):
    with lance_csr.Graph.open(social_path) as g:
        outcome = []

        def run():
            try:
                g.query(query)
                outcome.append("finished")
            except lance_csr.Interrupted:
                outcome.append("interrupted")

        t = threading.Thread(target=run)
        t.start()
        time.sleep(1.0)
        g.interrupt()
        t.join(timeout=30)
        assert outcome == ["interrupted"]
        # Nothing of the query runs on: the process's CPU time stands still (a busy
        # worker would add up to a second per core).
        used = cpu_used_in_a_second()
        assert used < 0.15, f"{used:.2f} s of CPU in the second after the interrupt"


def test_a_timed_out_query_stops_using_the_cpu(social_path):
    with lance_csr.Graph.open(social_path, timeout=0.5) as g:
        with pytest.raises(lance_csr.LimitError):
            g.query(PRODUCT)
        used = cpu_used_in_a_second()
        assert used < 0.15, f"{used:.2f} s of CPU in the second after the timeout"


def test_ctrl_c_cancels_a_running_query(social_path):
    with lance_csr.Graph.open(social_path) as g:
        timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        start = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            g.query(HEAVY)
        assert time.monotonic() - start < 30
        timer.join()


def test_the_gil_is_released_while_a_query_runs(social_path):
    with lance_csr.Graph.open(social_path) as g:
        done = threading.Event()
        outcome = []

        def run():
            try:
                g.query(HEAVY)
            except lance_csr.Interrupted:
                outcome.append("interrupted")
            finally:
                done.set()

        t = threading.Thread(target=run)
        t.start()
        # Python code keeps running in this thread while the query runs in the other.
        ticks, start = 0, time.monotonic()
        while time.monotonic() - start < 0.5:
            ticks += 1
            time.sleep(0.001)
        assert not done.is_set(), "the query should still be running"
        g.interrupt()
        t.join(timeout=30)
        assert outcome == ["interrupted"]
        assert ticks > 50


def test_a_graph_from_pyarrow_tables(sample):
    person = pa.table({"id": [1, 2, 3], "name": ["a", "b", "c"]})
    knows = pa.table({"src": [1, 2], "dst": [2, 3], "since": [2001, 2002]})
    schema = {
        "nodes": {"Person": {"table": "person", "id": "id"}},
        "relationships": [
            {"type": "KNOWS", "table": "knows", "from": "Person", "to": "Person"}
        ],
    }
    for mode in ["csr", "join"]:
        g = lance_csr.Graph.from_tables({"person": person, "knows": knows}, schema, mode=mode)
        r = g.query("MATCH (a:Person)-[k:KNOWS]->(b)-[:KNOWS]->(c) RETURN a.name, k.since, c.name")
        assert r.rows() == [("a", 2001, "c")]
    with pytest.raises(lance_csr.Error, match="lacks"):
        lance_csr.Graph.from_tables({"person": person}, schema)


def test_a_graph_from_lance_datasets_written_by_pylance(tmp_path):
    import lance
    person = lance.write_dataset(
        pa.table({"id": [10, 20, 30], "name": ["x", "y", "z"]}), str(tmp_path / "person.lance")
    )
    follows = lance.write_dataset(
        pa.table({"a": [10, 10, 20], "b": [20, 30, 30]}), str(tmp_path / "follows.lance")
    )
    schema = {
        "nodes": {"User": {"table": "person", "id": "id", "labels": ["User", "Account"]}},
        "relationships": [
            {"type": "FOLLOWS", "table": "follows", "from": "User", "to": "User", "src": "a", "dst": "b"}
        ],
    }
    g = lance_csr.Graph.from_tables({"person": person, "follows": follows}, schema)
    r = g.query("MATCH (u:Account)-[:FOLLOWS]->(v) RETURN u.name, count(v) AS n ORDER BY u.name")
    assert r.rows() == [("x", 2), ("y", 1)]
    # Read where it lies: an append shows after refresh.
    lance.write_dataset(pa.table({"a": [30], "b": [10]}), str(tmp_path / "follows.lance"), mode="append")
    g.refresh()
    assert one(g, "MATCH ()-[f:FOLLOWS]->() RETURN count(f) AS n") == (4,)
    # A result streamed into a new Lance dataset (pylance reads the stream from its own
    # runtime's threads).
    out = lance.write_dataset(
        pa.RecordBatchReader.from_stream(g.query_stream("MATCH (u:User)-[:FOLLOWS]->(v) RETURN u.id AS a, v.id AS b")),
        str(tmp_path / "out.lance"),
    )
    assert sorted(out.to_table().to_pylist(), key=lambda r: (r["a"], r["b"])) == [
        {"a": 10, "b": 20}, {"a": 10, "b": 30}, {"a": 20, "b": 30}, {"a": 30, "b": 10}
    ]


def test_import_mirrors_the_cli(tmp_path):
    (tmp_path / "users.csv").write_text("id,name\n1,ann\n2,bob\n")
    (tmp_path / "follows.csv").write_text("src,dst\n1,2\n2,1\n")
    path = lance_csr.import_(
        tmp_path / "g",
        [f"User={tmp_path / 'users.csv'}"],
        [f"FOLLOWS:User:User:src:dst={tmp_path / 'follows.csv'}"],
    )
    with lance_csr.Graph.open(path) as g:
        assert g.query("MATCH (a)-[:FOLLOWS]->(b) RETURN a.name, b.name ORDER BY a.name").rows() == [
            ("ann", "bob"),
            ("bob", "ann"),
        ]
    with pytest.raises(lance_csr.Error):
        lance_csr.import_(tmp_path / "g", [f"User={tmp_path / 'users.csv'}"])


def test_explain_and_refresh(sample):
    text = sample.explain("MATCH (p:Person {id: 1})-[:KNOWS]->(f) RETURN f.firstName")
    assert "CsrExpand" in text
    # Every node of the optimized plan with its estimated rows; the hop with what it reads.
    estimates = text.split("== estimates", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    assert estimates and all(line.startswith("rows ~") for line in estimates), text
    assert any("reads ~" in line and "CsrExpand" in line for line in estimates), text
    analyzed = sample.explain("MATCH (p:Person) RETURN count(*)", analyze=True)
    assert "output_rows" in analyzed or "rows" in analyzed
    assert sample.refresh() == 0
