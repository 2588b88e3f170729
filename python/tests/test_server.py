"""`lance-csr serve` with real clients: the official neo4j Python driver over Bolt (bolt:// and
neo4j:// URIs, TLS), raw sockets for what a driver never sends, and HTTP for the Query API and
metrics. The server runs as the binary of the same build, on free loopback ports."""

import base64
import concurrent.futures
import datetime
import json
import math
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import neo4j
import neo4j.time
import pytz
import pytest

import lance_csr

from test_cases_agree_with_cli import parse_cases

USER, PASSWORD = "reader", "s3cret"


class Server:
    def __init__(self, cli, graph, tmp, *extra, users=True):
        args = [str(cli), "serve", "--graph", str(graph), "--bolt", "127.0.0.1:0",
                "--http", "127.0.0.1:0", *extra]
        if users is True:
            path = tmp / "users"
            path.write_text(f"# who may connect\n{USER}:{PASSWORD}\n")
            os.chmod(path, 0o600)
            args += ["--users", str(path)]
        elif not users:
            args += ["--no-auth"]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.bolt = self.http = None
        deadline = time.time() + 120
        while self.http is None:
            line = self.proc.stdout.readline()
            assert line, f"the server stopped: {self.proc.stderr.read()}"
            assert time.time() < deadline, "the server did not start"
            if m := re.search(r"bolt(?:\+s)?://([\d.]+):(\d+)", line):
                self.bolt = int(m.group(2))
            if m := re.search(r"https?://([\d.]+):(\d+)/db", line):
                self.http = int(m.group(2))

    def driver(self, scheme="neo4j", **config):
        auth = config.pop("auth", (USER, PASSWORD))
        return neo4j.GraphDatabase.driver(f"{scheme}://127.0.0.1:{self.bolt}", auth=auth, **config)

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.http}/metrics", timeout=30) as r:
            return r.read().decode()

    def metric(self, name):
        m = re.search(rf"^{re.escape(name)} (\S+)$", self.metrics(), re.M)
        return float(m.group(1))

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


@pytest.fixture(scope="module")
def server(cli, sample_path, tmp_path_factory):
    s = Server(cli, sample_path, tmp_path_factory.mktemp("server"))
    yield s
    assert s.proc.poll() is None, "the server died during the tests"
    s.stop()


@pytest.fixture(scope="module")
def social_server(cli, social_path, tmp_path_factory):
    """A server over a generated social network, for queries that run for minutes."""
    s = Server(cli, social_path, tmp_path_factory.mktemp("social_server"))
    yield s
    assert s.proc.poll() is None, "the server died during the tests"
    s.stop()


# Four hops from every person: over a hundred million rows, streamed as they are found.
ENDLESS = ("MATCH (a:Person)-[:KNOWS]-(b)-[:KNOWS]-(c)-[:KNOWS]-(d)-[:KNOWS]-(e) "
           "RETURN a.id AS a, e.id AS e")
# Their count: minutes of work unless the server stops it.
ENDLESS_COUNT = ("MATCH (a:Person)-[:KNOWS]-(b)-[:KNOWS]-(c)-[:KNOWS]-(d)-[:KNOWS]-(e) "
                 "RETURN count(*) AS n")


@pytest.fixture(scope="module")
def driver(server):
    with server.driver() as d:
        yield d


# ---- values: the driver's and the library's, in one shape ----

def canonical(v):
    """A result value as plain data, from the library's or the driver's objects alike."""
    if isinstance(v, (lance_csr.Node, neo4j.graph.Node)):
        props = v.properties if isinstance(v, lance_csr.Node) else dict(v)
        return {"_labels": sorted(v.labels), **{k: canonical(x) for k, x in props.items()}}
    if isinstance(v, (lance_csr.Relationship, neo4j.graph.Relationship)):
        props = v.properties if isinstance(v, lance_csr.Relationship) else dict(v)
        return {"_type": v.type, **{k: canonical(x) for k, x in props.items()}}
    if isinstance(v, (lance_csr.Path, neo4j.graph.Path)):
        return {"nodes": [canonical(n) for n in v.nodes],
                "relationships": [canonical(r) for r in v.relationships]}
    if isinstance(v, neo4j.time.Duration):
        return ("duration", v.months, v.days, v.seconds, v.nanoseconds)
    if isinstance(v, lance_csr.Duration):
        return ("duration", v.months, v.days, v.seconds, v.nanoseconds)
    if isinstance(v, (neo4j.time.DateTime, neo4j.time.Date, neo4j.time.Time)):
        return canonical(v.to_native())
    if isinstance(v, (datetime.datetime, datetime.time)):
        offset = v.utcoffset()
        naive = v.replace(tzinfo=None)
        return (type(v).__name__, naive.isoformat(), offset)
    if isinstance(v, datetime.date):
        return ("date", v.isoformat())
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    if isinstance(v, list):
        return [canonical(x) for x in v]
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in v.items()}
    if isinstance(v, bool):
        return ("bool", v)
    return v


def key(row):
    return json.dumps(row, sort_keys=True, default=str)


def test_every_case_gives_the_librarys_rows_over_bolt(server, driver, sample_path):
    cases = parse_cases()
    assert len(cases) >= 300, f"only {len(cases)} cases found"
    g = lance_csr.Graph.open(sample_path)
    failures, compared = [], 0
    with driver.session() as s:
        for c in cases:
            params = {}
            for p in c["params"]:
                name, _, literal = p.partition("=")
                params[name.strip()] = lance_csr.parse_literal(literal.strip())
            try:
                want = [{k: canonical(v) for k, v in row.items()} for row in g.query(c["query"], params)]
            except lance_csr.Error:
                want = None
            try:
                got = [{k: canonical(v) for k, v in r.items()} for r in s.run(c["query"], params)]
            except neo4j.exceptions.Neo4jError as e:
                if want is not None:
                    failures.append(f"{c['where']}: the server failed ({e.code}: {e.message}), the library did not")
                continue
            if want is None:
                failures.append(f"{c['where']}: the library failed, the server returned {len(got)} rows")
                continue
            if got != want and sorted(map(key, got)) != sorted(map(key, want)):
                failures.append(f"{c['where']}: server {got[:3]} vs library {want[:3]}")
                continue
            compared += len(got)
    assert not failures, f"{len(failures)} of {len(cases)} cases differ:\n" + "\n".join(failures[:20])
    assert compared > 500, f"only {compared} rows compared"


PARAMS = {
    "int_max": 2**63 - 1,
    "int_min": -(2**63),
    "small": -7,
    "float": 1.5e300,
    "nan": float("nan"),
    "inf": float("-inf"),
    "text": "Zürich ✓ 漢字",
    "empty": "",
    "yes": True,
    "none": None,
    "list": [1, "two", None, [3.5, False]],
    "map": {"a": 1, "nested": {"b": [1, 2]}, "s": "x"},
    "date": datetime.date(1984, 10, 11),
    "localtime": datetime.time(12, 34, 56, 789012),
    "time": neo4j.time.Time(12, 34, 56, 5, tzinfo=pytz.FixedOffset(-180)),
    "localdatetime": datetime.datetime(2015, 7, 21, 20, 40, 32, 142000),
    "datetime": datetime.datetime(2015, 7, 21, 20, 40, 32, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
    # The driver takes named zones from pytz (given a zoneinfo zone it computes offsets
    # from objects zoneinfo does not expect, and can crash).
    "zoned": pytz.timezone("Europe/Berlin").localize(datetime.datetime(2021, 3, 28, 3, 30)),
    "duration": neo4j.time.Duration(months=14, days=-3, seconds=3661, nanoseconds=5),
}


def test_parameters_of_every_type_come_back_unchanged(driver):
    with driver.session() as s:
        for name, value in PARAMS.items():
            got = s.run(f"RETURN ${name} AS v", {name: value}).single()["v"]
            if isinstance(value, neo4j.time.Duration):
                assert canonical(got) == canonical(value), name
            elif isinstance(value, datetime.datetime) and value.tzinfo is not None:
                native = got.to_native()
                assert native == value and native.utcoffset() == value.utcoffset(), (name, got)
            elif isinstance(value, neo4j.time.Time):
                assert (got.hour, got.minute, got.second, got.nanosecond) == (12, 34, 56, 5), got
                assert got.utcoffset() == value.utcoffset(), got
            elif isinstance(value, (datetime.date, datetime.time)):
                assert canonical(got) == canonical(value), (name, got)
            else:
                assert canonical(got) == canonical(value), (name, got)
        # A zoned datetime keeps its zone's name.
        zone = s.run("RETURN $z.timezone AS z", z=PARAMS["zoned"]).single()["z"]
        assert zone == "Europe/Berlin"
        # Byte arrays have no Cypher literal here: refused with a type error, not dropped.
        with pytest.raises(neo4j.exceptions.CypherTypeError):
            s.run("RETURN $b AS v", b=b"\x00\xff").consume()
        # Parameters are used, not only returned.
        n = s.run("UNWIND $xs AS x RETURN sum(x) AS n", xs=[1, 2, 3]).single()["n"]
        assert n == 6


def test_graph_values_carry_element_ids_and_paths_their_directions(driver, sample):
    with driver.session() as s:
        rec = s.run("MATCH p = (a:Person {firstName: 'Ann'})-[k:KNOWS]->(b) "
                    "RETURN a, k, b, p ORDER BY b.firstName LIMIT 1").single()
        a, k, b, p = rec["a"], rec["k"], rec["b"], rec["p"]
        lib = next(iter(sample.query("MATCH p = (a:Person {firstName: 'Ann'})-[k:KNOWS]->(b) "
                                     "RETURN a, k, b, p ORDER BY b.firstName LIMIT 1")))
        assert a.element_id == lib["p"].nodes[0].element_id
        assert k.start_node.element_id == a.element_id and k.end_node.element_id == b.element_id
        assert p.start_node == a and p.end_node == b and len(p) == 1
        assert p.relationships[0].element_id == k.element_id
        # Walked against its direction, the path still knows where the relationship starts.
        rev = s.run("MATCH p = (b:Person {firstName: 'Ann'})<-[:KNOWS]-(a) RETURN p LIMIT 1").single()["p"]
        r = rev.relationships[0]
        assert r.start_node == rev.end_node and r.end_node == rev.start_node


def test_transactions_and_routing(server):
    for scheme in ["neo4j", "bolt"]:
        with server.driver(scheme) as d:
            records, _, keys = d.execute_query(
                "MATCH (p:Person) RETURN count(p) AS n", routing_=neo4j.RoutingControl.READ)
            assert keys == ["n"] and records[0]["n"] > 0
            with d.session(default_access_mode=neo4j.READ_ACCESS) as s:
                def work(tx):
                    first = tx.run("MATCH (p:Person) RETURN p.firstName AS f ORDER BY f")
                    second = tx.run("RETURN 1 AS one")
                    return [r["f"] for r in first], second.single()["one"]
                names, one = s.execute_read(work)
                assert one == 1 and names == sorted(names) and len(names) > 1
                tx = s.begin_transaction()
                assert tx.run("RETURN 2 AS x").single()["x"] == 2
                tx.rollback()


def test_writes_are_refused_and_the_connection_goes_on(driver):
    with driver.session() as s:
        for q in ["CREATE (n:Person {firstName: 'Eve'})", "MATCH (n) DETACH DELETE n",
                  "MATCH (n:Person) SET n.x = 1 RETURN n"]:
            with pytest.raises(neo4j.exceptions.ClientError) as e:
                s.run(q).consume()
            assert e.value.code == "Neo.ClientError.Statement.AccessMode", e.value.code
        assert s.run("RETURN 1 AS x").single()["x"] == 1


def test_errors_carry_neo4j_codes_and_the_caret(driver):
    with driver.session() as s:
        cases = {
            "MATCH (n RETURN n": "Neo.ClientError.Statement.SyntaxError",
            "RETURN nope": "Neo.ClientError.Statement.SemanticError",
            "RETURN 1 / 0": "Neo.ClientError.Statement.ArithmeticError",
            "RETURN $missing": "Neo.ClientError.Statement.ParameterMissing",
            "CALL db.no.such.procedure()": "Neo.ClientError.Procedure.ProcedureNotFound",
        }
        for q, code in cases.items():
            with pytest.raises(neo4j.exceptions.Neo4jError) as e:
                s.run(q).consume()
            assert e.value.code == code, (q, e.value.code, e.value.message)
        with pytest.raises(neo4j.exceptions.CypherSyntaxError) as e:
            s.run("MATCH (n RETURN n").consume()
        assert "^" in e.value.message and "line 1, column 10" in e.value.message
        labels = s.run("CALL db.labels() YIELD label").value()
        assert "Person" in labels and labels == sorted(labels)


def test_auth_failure(server):
    with server.driver(auth=(USER, "wrong")) as d:
        with pytest.raises(neo4j.exceptions.AuthError):
            d.verify_connectivity()
    with server.driver(auth=("nobody", PASSWORD)) as d:
        with pytest.raises(neo4j.exceptions.AuthError):
            d.verify_connectivity()


def test_a_million_rows_stream_lazily(server, driver):
    before = server.rss_kib()
    total, count = 0, 0
    with driver.session(fetch_size=1000) as s:
        for r in s.run("UNWIND range(1, 1000000) AS i RETURN i, 'row ' + toString(i) AS s"):
            total += r["i"]
            count += 1
            if count == 1000:
                during = server.rss_kib()
    assert count == 1_000_000 and total == 1_000_000 * 1_000_001 // 2
    grown_mib = (max(during, server.rss_kib()) - before) / 1024
    # The server holds a batch and a PULL's worth of records, not the result.
    assert grown_mib < 200, f"the server grew by {grown_mib:.0f} MiB"


def test_16_clients_streaming_at_once_stay_in_bounded_memory(social_server):
    # Each result has over a hundred million rows: held, any one would take gigabytes.
    before = social_server.rss_kib()
    opened, read = threading.Barrier(17), []

    def stream(d):
        with d.session(fetch_size=1000) as s:
            rows = s.run(ENDLESS)
            read.append(len([next(rows) for _ in range(3000)]))
            opened.wait(120)  # every stream open and part read
            opened.wait(120)  # the server's memory measured
        return True

    with social_server.driver(max_connection_pool_size=32) as d:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            done = [pool.submit(stream, d) for _ in range(16)]
            opened.wait(120)
            during = social_server.rss_kib()
            opened.wait(120)
            assert all(f.result(120) for f in done)
    assert read == [3000] * 16
    grown_mib = (during - before) / 1024
    assert grown_mib < 300, f"the server grew by {grown_mib:.0f} MiB holding 16 open streams"


def test_closing_a_session_stops_its_query(social_server):
    finished = threading.Event()
    with social_server.driver() as d:
        def read_some_then_close():
            with d.session(fetch_size=100) as s:
                r = s.run(ENDLESS)
                assert len([next(r) for _ in range(10)]) == 10
            finished.set()

        t = threading.Thread(target=read_some_then_close, daemon=True)
        t.start()
        t.join(120)
        assert finished.is_set(), "closing the session did not end the query"
        # The same in an explicit transaction, closed without consuming.
        with d.session(fetch_size=100) as s:
            tx = s.begin_transaction()
            r = tx.run(ENDLESS)
            next(r)
            tx.close()
        with d.session() as s:
            assert s.run("RETURN 1 AS x").single()["x"] == 1


def running_client(server, tmp_path, query):
    """A driver in a process of its own, once it has sent `query` and waits for its result."""
    script = tmp_path / "client.py"
    script.write_text(
        "import neo4j, sys\n"
        f"d = neo4j.GraphDatabase.driver('bolt://127.0.0.1:{server.bolt}', auth=('{USER}', '{PASSWORD}'))\n"
        "s = d.session()\n"
        f"r = s.run('{query}')\n"
        "print('running', flush=True)\n"
        "r.single()\n"
    )
    client = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert client.stdout.readline().strip() == "running"
    return client


def test_a_killed_client_stops_its_query(social_server, tmp_path):
    server = social_server
    failures = server.metric('lance_csr_query_failures_total{protocol="bolt"}')
    client = running_client(server, tmp_path, ENDLESS_COUNT)
    time.sleep(0.5)
    client.kill()
    client.wait()
    deadline = time.time() + 60
    while server.metric('lance_csr_query_failures_total{protocol="bolt"}') <= failures:
        assert time.time() < deadline, "the server did not stop the query of a killed client"
        time.sleep(0.2)
    # The scrape itself counts (HTTP connections do).
    assert server.metric("lance_csr_connections_open") <= 3


def server_cpu_seconds(server):
    """The server process's CPU time so far, from /proc (user + system clock ticks)."""
    with open(f"/proc/{server.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PRODUCT_COUNT = ("MATCH (a:Person), (b:Person), (c:Person) WHERE a.id + b.id <> c.id "
                 "RETURN count(*) AS n")


@pytest.mark.parametrize("query", [ENDLESS_COUNT, PRODUCT_COUNT], ids=["paths", "product"])
def test_a_closed_connection_stops_the_servers_work(social_server, tmp_path, query):
    server = social_server
    client = running_client(server, tmp_path, query)
    time.sleep(1.0)
    busy = server_cpu_seconds(server)
    time.sleep(0.5)
    assert server_cpu_seconds(server) - busy > 0.2, "the query was not running"
    client.kill()
    client.wait()
    # Within a moment of the connection closing, the server's CPU time stands still.
    time.sleep(0.5)
    before = server_cpu_seconds(server)
    time.sleep(1.0)
    used = server_cpu_seconds(server) - before
    assert used < 0.15, f"the server used {used:.2f} s of CPU in the second after the client left"
    with server.driver() as d, d.session() as s:
        assert s.run("RETURN 1 AS x").single()["x"] == 1


def test_a_client_timeout_stops_the_query(social_server):
    with social_server.driver() as d, d.session() as s:
        q = neo4j.Query(ENDLESS_COUNT, timeout=0.5)
        with pytest.raises(neo4j.exceptions.ClientError) as e:
            s.run(q).consume()
        assert "TransactionTimedOut" in e.value.code
        assert s.run("RETURN 1 AS x").single()["x"] == 1


def test_32_concurrent_sessions(driver, sample):
    queries = [
        "MATCH (p:Person)-[:KNOWS]->(f) RETURN p.firstName AS a, count(f) AS n ORDER BY a",
        "MATCH (p:Person) RETURN p.firstName AS a, p.age AS n ORDER BY a",
    ]
    want = {q: [tuple(canonical(x) for x in row) for row in sample.query(q).rows()] for q in queries}

    def work(i):
        q = queries[i % 2]
        with driver.session() as s:
            for _ in range(5):
                got = [tuple(canonical(x) for x in r.values()) for r in s.run(q)]
                assert got == want[q]
        return i

    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        assert sorted(pool.map(work, range(32))) == list(range(32))


# ---- what drivers never send: raw Bolt ----

def bolt_socket(port, versions=b"\x00\x00\x04\x05" + b"\x00" * 12):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"\x60\x60\xb0\x17" + versions)
    return s, s.recv(4)


def send_message(s, body):
    out = []
    for i in range(0, len(body), 65535):
        chunk = body[i:i + 65535]
        out += [struct.pack(">H", len(chunk)), chunk]
    s.sendall(b"".join(out) + b"\x00\x00")


def recv_message(s):
    data = b""
    while True:
        n = struct.unpack(">H", recv_exact(s, 2))[0]
        if n == 0:
            return data
        data += recv_exact(s, n)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        part = s.recv(n - len(buf))
        if not part:
            raise ConnectionError("closed")
        buf += part
    return buf


def pack_str(x):
    b = x.encode()
    return (bytes([0x80 | len(b)]) if len(b) < 16 else b"\xd0" + bytes([len(b)])) + b


def hello_logon(s):
    send_message(s, b"\xb1\x01\xa1" + pack_str("user_agent") + pack_str("raw/1"))
    assert recv_message(s)[:2] == b"\xb1\x70"
    auth = (b"\xb1\x6a\xa3" + pack_str("scheme") + pack_str("basic") + pack_str("principal")
            + pack_str(USER) + pack_str("credentials") + pack_str(PASSWORD))
    send_message(s, auth)
    assert recv_message(s)[:2] == b"\xb1\x70"


def test_version_negotiation(server):
    s, v = bolt_socket(server.bolt, b"\x00\x00\x04\x04" + b"\x00" * 12)
    assert v == b"\x00\x00\x04\x04"
    s.close()
    s, v = bolt_socket(server.bolt, b"\x00\x00\x00\x03" + b"\x00" * 12)
    assert v == b"\x00\x00\x00\x00"
    s.close()
    with server.driver("bolt", max_connection_pool_size=1) as d:
        with d.session() as session:
            assert session.run("RETURN 1 AS x").single()["x"] == 1


def test_malformed_and_huge_messages_do_not_take_the_server_down(server, driver):
    s, v = bolt_socket(server.bolt)
    assert v == b"\x00\x00\x04\x05"
    hello_logon(s)
    # 100 MB in one message: refused, and the connection still answers after a RESET.
    big = b"\xb3\x10\xd2" + struct.pack(">I", 100 << 20) + b"x" * (100 << 20) + b"\xa0\xa0"
    send_message(s, big)
    reply = recv_message(s)
    assert reply[:2] == b"\xb1\x7f" and b"Neo.ClientError.Request.Invalid" in reply
    send_message(s, b"\xb0\x0f")
    assert recv_message(s)[:2] == b"\xb1\x70"
    run = b"\xb3\x10" + pack_str("RETURN 1 AS x") + b"\xa0\xa0"
    send_message(s, run)
    assert recv_message(s)[:2] == b"\xb1\x70"
    s.close()
    # Garbage: the connection is closed with a failure, nothing else happens.
    for junk in [b"\xff\xff\xff", b"\xb1\x10\xd2\xff\xff\xff\xff", b"\x91" * 5000 + b"\xc0",
                 b"\xb1\x01\x01"]:
        s, _ = bolt_socket(server.bolt)
        send_message(s, junk)
        reply = recv_message(s)
        assert reply[:2] == b"\xb1\x7f", (junk[:8], reply)
        s.close()
    # Before authentication only small messages: a large one closes the connection.
    s, _ = bolt_socket(server.bolt)
    agent = b"\xd2" + struct.pack(">I", 1 << 20) + b"x" * (1 << 20)
    send_message(s, b"\xb1\x01\xa1" + pack_str("user_agent") + agent)
    reply = recv_message(s)
    assert reply[:2] == b"\xb1\x7f" and b"before authentication" in reply
    with pytest.raises(ConnectionError):
        recv_message(s)
    s.close()
    # A client that sends half a handshake and leaves.
    c = socket.create_connection(("127.0.0.1", server.bolt))
    c.sendall(b"\x60\x60")
    c.close()
    with driver.session() as session:
        assert session.run("RETURN 1 AS x").single()["x"] == 1


def test_connections_past_the_limit_are_refused(cli, sample_path, tmp_path):
    srv = Server(cli, sample_path, tmp_path, "--max-connections", "2")
    try:
        held = []
        for _ in range(2):
            s, _ = bolt_socket(srv.bolt)
            hello_logon(s)
            held.append(s)
        s, _ = bolt_socket(srv.bolt)
        send_message(s, b"\xb1\x01\xa0")
        reply = recv_message(s)
        assert reply[:2] == b"\xb1\x7f" and b"--max-connections" in reply
        s.close()
        held.pop().close()
        deadline = time.time() + 30
        while True:
            s, _ = bolt_socket(srv.bolt)
            send_message(s, b"\xb1\x01\xa0")
            reply = recv_message(s)
            s.close()
            if reply[:2] == b"\xb1\x70":
                break
            assert time.time() < deadline, "a freed connection slot was not reused"
            time.sleep(0.1)
    finally:
        srv.stop()


# ---- HTTP ----

def post(server, body, accept="application/json", auth=(USER, PASSWORD), db="neo4j"):
    req = urllib.request.Request(
        f"http://127.0.0.1:{server.http}/db/{db}/query/v2",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Accept": accept},
    )
    if auth:
        token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req.add_header("Authorization", f"Basic {token}")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_the_query_api_over_http(server, sample):
    q = "MATCH (p:Person) WHERE p.age > $age RETURN p.firstName AS name, p ORDER BY name"
    status, body = post(server, {"statement": q, "parameters": {"age": 30}})
    assert status == 202, body
    want = [row["name"] for row in sample.query(q, {"age": 30})]
    assert body["data"]["fields"] == ["name", "p"]
    assert [row[0] for row in body["data"]["values"]] == want
    node = body["data"]["values"][0][1]
    assert node["labels"] == ["Person"] and node["properties"]["firstName"] == want[0]
    status, body = post(server, {"statement": "RETURN 1 AS i, 2.5 AS f, date('2024-02-29') AS d"},
                        accept="application/vnd.neo4j.query")
    assert status == 202
    assert body["data"]["values"] == [[{"$type": "Integer", "_value": "1"},
                                       {"$type": "Float", "_value": "2.5"},
                                       {"$type": "Date", "_value": "2024-02-29"}]]
    status, body = post(server, {"statement": "RETURN 1 +"})
    assert status == 400 and body["errors"][0]["code"] == "Neo.ClientError.Statement.SyntaxError"
    status, body = post(server, {"statement": "RETURN 1"}, auth=(USER, "wrong"))
    assert status == 401
    status, body = post(server, {"statement": "RETURN 1"}, db="other")
    assert status == 404
    status, body = post(server, {"statement": "CREATE (n)"})
    assert status == 400 and body["errors"][0]["code"] == "Neo.ClientError.Statement.AccessMode"
    metrics = server.metrics()
    assert re.search(r'^lance_csr_queries_total\{protocol="http"\} [1-9]', metrics, re.M)
    assert 'lance_csr_query_duration_seconds_bucket{protocol="bolt",le="+Inf"}' in metrics


# ---- TLS and where the server may listen ----

def tls_server(cli, graph, tmp_path, *extra):
    """A server over TLS with a certificate of a CA made for it (`tmp_path / "ca.pem"`)."""
    import trustme
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    return Server(cli, graph, tmp_path, "--tls-cert", str(tmp_path / "cert.pem"),
                  "--tls-key", str(tmp_path / "key.pem"), *extra)


def test_tls(cli, sample_path, tmp_path):
    srv = tls_server(cli, sample_path, tmp_path)
    try:
        trust = neo4j.TrustCustomCAs(str(tmp_path / "ca.pem"))
        with srv.driver("bolt", encrypted=True, trusted_certificates=trust) as d:
            with d.session() as s:
                assert s.run("RETURN 'secret' AS x").single()["x"] == "secret"
        # HTTP is served over TLS too.
        import ssl
        context = ssl.create_default_context(cafile=str(tmp_path / "ca.pem"))
        url = f"https://127.0.0.1:{srv.http}/metrics"
        with urllib.request.urlopen(url, timeout=30, context=context) as r:
            assert "lance_csr_queries_total" in r.read().decode()
        # A client that does not speak TLS gets nothing it can read as Bolt.
        with srv.driver("bolt", connection_timeout=5) as d:
            with pytest.raises((neo4j.exceptions.ServiceUnavailable,
                                neo4j.exceptions.UnsupportedServerProduct)):
                d.verify_connectivity()
    finally:
        srv.stop()


def test_listening_beyond_loopback_needs_tls_or_consent(cli, sample_path, tmp_path):
    users = tmp_path / "users"
    users.write_text(f"{USER}:{PASSWORD}\n")
    r = subprocess.run([str(cli), "serve", "--graph", str(sample_path), "--bolt", "0.0.0.0:0",
                        "--users", str(users)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--allow-insecure" in r.stderr, r.stderr
    r = subprocess.run([str(cli), "serve", "--graph", str(sample_path), "--bolt", "0.0.0.0:0",
                        "--no-auth", "--allow-insecure"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "loopback" in r.stderr, r.stderr


# ---- a second driver: the neo4j driver of the 4.4 line, which speaks Bolt 4.4 ----

OLD_DRIVER = r'''
import json, sys
import neo4j
assert neo4j.__version__.startswith("4.4"), neo4j.__version__
port, user, password, queries = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])

def plain(v):
    if isinstance(v, neo4j.graph.Node):
        return {"_labels": sorted(v.labels), **{k: plain(x) for k, x in v.items()}}
    if isinstance(v, neo4j.graph.Relationship):
        return {"_type": v.type, **{k: plain(x) for k, x in v.items()}}
    if isinstance(v, neo4j.graph.Path):
        return {"nodes": [plain(n) for n in v.nodes], "relationships": [plain(r) for r in v.relationships]}
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if hasattr(v, "iso_format"):
        return v.iso_format()
    return v

out = {}
with neo4j.GraphDatabase.driver(f"neo4j://127.0.0.1:{port}", auth=(user, password)) as d:
    with d.session() as s:
        for q in queries:
            out[q] = [{k: plain(v) for k, v in r.items()} for r in s.run(q, x=41)]
        version = s.run("RETURN 1 AS one").consume().server.protocol_version
        out["protocol"] = list(version)
        try:
            s.run("CREATE (n)").consume()
            out["write"] = None
        except neo4j.exceptions.ClientError as e:
            out["write"] = e.code
        out["tx"] = s.read_transaction(lambda tx: tx.run("RETURN $x + 1 AS y", x=41).single()["y"])
print(json.dumps(out))
'''


def test_the_4_4_driver_gets_the_same_rows(server, sample, tmp_path):
    where = os.environ.get("NEO4J_44_PATH")
    assert where, "set NEO4J_44_PATH to a folder holding neo4j==4.4.x (scripts/test-python.sh does)"
    queries = [
        "MATCH (p:Person)-[k:KNOWS]->(f) RETURN p, k, f ORDER BY p.firstName, f.firstName",
        "MATCH p = (a:Person)-[:KNOWS*1..2]->(b) RETURN p ORDER BY a.firstName, b.firstName LIMIT 5",
        "RETURN $x AS x, [1, 'a', null] AS l, {k: 2.5} AS m, date('2024-02-29') AS d, "
        "datetime('2024-02-29T10:00:00+01:00') AS dt, localtime('12:00') AS t, "
        "duration('P1M2DT3S') AS du",
    ]
    script = tmp_path / "old_driver.py"
    script.write_text(OLD_DRIVER)
    r = subprocess.run([sys.executable, str(script), str(server.bolt), USER, PASSWORD, json.dumps(queries)],
                       env={**os.environ, "PYTHONPATH": where}, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["protocol"] == [4, 4]
    assert got["write"] == "Neo.ClientError.Statement.AccessMode"
    assert got["tx"] == 42
    for q in queries[:2]:
        want = [{k: canonical(v) for k, v in row.items()} for row in sample.query(q)]
        assert got[q] == json.loads(json.dumps(want)), q
    row = got[queries[2]][0]
    assert row["x"] == 41 and row["l"] == [1, "a", None] and row["m"] == {"k": 2.5}
    assert row["d"] == "2024-02-29" and row["t"].startswith("12:00:00")
    assert row["dt"].startswith("2024-02-29T10:00:00") and row["dt"].endswith("+01:00")
    assert row["du"] == "P1M2DT3S"


def test_search_procedures_over_bolt(cli, tmp_path):
    """Neo4j's vector and full-text procedures, as a Neo4j client sends them."""
    path = lance_csr.generate(tmp_path / "g", scale=0.1, embeddings=4)
    s = Server(cli, path, tmp_path)
    try:
        with s.driver() as d, d.session() as session:
            (pid, v) = session.run(
                "MATCH (p:Person) RETURN p.id, p.embedding ORDER BY p.id LIMIT 1"
            ).single().values()
            rec = session.run(
                "CALL db.index.vector.queryNodes('person_embedding', 3, $v) YIELD node, score "
                "RETURN node, score ORDER BY score DESC",
                v=list(v),
            ).data()
            assert len(rec) == 3 and rec[0]["node"]["id"] == pid
            assert abs(rec[0]["score"] - 1.0) < 1e-5
            n = session.run(
                "CALL db.index.fulltext.queryNodes('post_content', 'lance') YIELD node RETURN count(node) AS n"
            ).single()["n"]
            assert n > 0
            with pytest.raises(neo4j.exceptions.ClientError) as e:
                session.run("CALL db.index.vector.queryNodes('nope', 3, [1.0]) YIELD node RETURN node").consume()
            assert e.value.code == "Neo.ClientError.Procedure.ProcedureCallFailed"
    finally:
        s.stop()
