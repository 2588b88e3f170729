"""The server against callers that stall, flood or guess: each phase of a connection has a
deadline, unauthenticated connections cannot lock out the rest, queries cannot starve the
acceptor, failed logins are rate-limited, and what clients are shown prints cleanly."""

import json
import os
import re
import socket
import struct
import subprocess
import threading
import time
import urllib.request

import neo4j
import pytest

from test_server import (PASSWORD, USER, Server, bolt_socket, hello_logon, pack_str, post,
                         recv_message, send_message, tls_server)

V5_4 = b"\x00\x00\x04\x05" + b"\x00" * 12
# Three persons of every kind: a billion rows for a generated network, and no operator in
# the plan gets far before its time limit.
CUBE = ("MATCH (a:Person), (b:Person), (c:Person) WHERE a.id + b.id <> c.id "
        "RETURN count(*) AS n")
ENDLESS = ("MATCH (a:Person)-[:KNOWS]-(b)-[:KNOWS]-(c)-[:KNOWS]-(d)-[:KNOWS]-(e) "
           "RETURN a.id AS a, e.id AS e")


def hello_only(port):
    """A Bolt 5.4 client that says HELLO and never LOGON."""
    s, v = bolt_socket(port, V5_4)
    assert v == b"\x00\x00\x04\x05"
    send_message(s, b"\xb1\x01\xa1" + pack_str("user_agent") + pack_str("stall/1"))
    assert recv_message(s)[:2] == b"\xb1\x70"
    return s


def silent(port):
    """A TCP connection that never sends a byte (a port scanner, a TLS client stalled)."""
    return socket.create_connection(("127.0.0.1", port), timeout=30)


def slow_http_headers(port):
    """An HTTP request whose headers never end."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(b"POST /db/neo4j/query/v2 HTTP/1.1\r\nHost: x\r\n")
    return s


def answers(srv, query="RETURN 1 AS x"):
    """The driver's answer and how long it took, from a fresh driver (a new connection)."""
    started = time.time()
    with srv.driver("bolt", max_connection_pool_size=1, connection_timeout=30) as d:
        records, _, _ = d.execute_query(query)
    return records[0][0], time.time() - started


def closed_by_server(s, within):
    """Whether the server closes `s` within `within` seconds (what it sent is drained)."""
    s.settimeout(within)
    deadline = time.time() + within
    try:
        while time.time() < deadline:
            if not s.recv(1 << 20):
                return True
    except (ConnectionError, socket.timeout, OSError) as e:
        return not isinstance(e, socket.timeout)
    return False


def test_stalled_unauthenticated_clients_do_not_lock_out_a_driver(cli, sample_path, tmp_path):
    srv = Server(cli, sample_path, tmp_path, "--max-connections", "8")
    held = []
    try:
        # Eight of each kind, more than every slot; each newcomer takes the slot of the
        # oldest that has not authenticated.
        for _ in range(8):
            held += [hello_only(srv.bolt), silent(srv.bolt), slow_http_headers(srv.http)]
        x, took = answers(srv)
        assert x == 1
        print(f"a driver's answer among 24 stalled clients: {took * 1000:.0f} ms")
        assert took < 10, f"{took:.1f} s"
        # The HELLO-only clients that lost their slots were told why.
        told = 0
        for s in held[:3 * 8:3]:
            s.settimeout(5)
            try:
                reply = recv_message(s)
                told += reply[:2] == b"\xb1\x7f" and b"authenticate" in reply
            except (ConnectionError, OSError):
                pass
        assert told >= 1
        assert srv.metric('lance_csr_connections_closed_total{reason="evicted"}') >= 16
    finally:
        for s in held:
            s.close()
        srv.stop()


def test_authentication_has_a_deadline(cli, sample_path, tmp_path):
    srv = Server(cli, sample_path, tmp_path, "--auth-timeout", "1s")
    try:
        s = hello_only(srv.bolt)
        reply = recv_message(s)
        assert reply[:2] == b"\xb1\x7f" and b"did not authenticate in time" in reply
        assert closed_by_server(s, 10)
        assert closed_by_server(silent(srv.bolt), 10)
        # HTTP: headers that never end, and a body that comes a byte at a time.
        assert closed_by_server(slow_http_headers(srv.http), 10)
        s = socket.create_connection(("127.0.0.1", srv.http), timeout=30)
        # An HTTP connection counts as open as a Bolt one does (the scrape is one more).
        time.sleep(0.2)
        assert srv.metric("lance_csr_connections_open") >= 2
        token = __import__("base64").b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        s.sendall(("POST /db/neo4j/query/v2 HTTP/1.1\r\nHost: x\r\n"
                   f"Authorization: Basic {token}\r\nContent-Type: application/json\r\n"
                   "Content-Length: 1000\r\n\r\n").encode())
        started = time.time()
        reply = b""
        s.settimeout(1)
        while time.time() - started < 20 and b"\r\n\r\n" not in reply:
            try:
                s.sendall(b" ")
                reply += s.recv(65536)
            except socket.timeout:
                pass
            except (ConnectionError, OSError):
                break
        assert reply.startswith(b"HTTP/1.1 408"), reply[:200]
        assert time.time() - started < 15
    finally:
        srv.stop()


def test_an_unread_result_is_dropped_after_the_idle_timeout(cli, social_path, tmp_path):
    srv = Server(cli, social_path, tmp_path, "--idle-timeout", "2s", "--max-connections", "4")
    try:
        # Four clients take every slot, ask for a stream of millions of rows, read none.
        held = []
        for _ in range(4):
            s, _ = bolt_socket(srv.bolt, V5_4)
            hello_logon(s)
            send_message(s, b"\xb2\x10" + pack_str(ENDLESS) + b"\xa0")
            send_message(s, b"\xb1\x3f\xa1" + pack_str("n") + b"\xff")  # PULL n=-1
            held.append(s)
        # Read nothing until the server has given up on them (reading earlier would let
        # their writes go on).
        time.sleep(8)
        for s in held:
            assert closed_by_server(s, 30)
        x, _ = answers(srv)
        assert x == 1
        # At most the driver's connection closing and the scrape itself (HTTP counts too).
        assert srv.metric("lance_csr_connections_open") <= 2
        assert srv.metric('lance_csr_connections_closed_total{reason="idle"}') >= 4
        # Its queries stopped: the server's CPU is idle again.
        before = cpu_seconds(srv)
        time.sleep(1)
        assert cpu_seconds(srv) - before < 0.5
        s, _ = bolt_socket(srv.bolt, V5_4)
        hello_logon(s)
        send_message(s, b"\xb2\x10" + pack_str(ENDLESS) + b"\xa0")
        send_message(s, b"\xb1\x3f\xa1" + pack_str("n") + b"\x05")
        # One that pulls a few rows and stays silent with its result open.
        assert recv_message(s)[:2] == b"\xb1\x70"
        assert closed_by_server(s, 30)
    finally:
        srv.stop()


def cpu_seconds(srv):
    with open(f"/proc/{srv.proc.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_queries_that_compute_for_long_do_not_stop_the_acceptor(cli, social_path, tmp_path):
    srv = Server(cli, social_path, tmp_path, "--timeout", "4s")
    errors = []

    def run():
        try:
            answers(srv, CUBE)
            errors.append(None)
        except neo4j.exceptions.Neo4jError as e:
            errors.append(e)

    try:
        threads = [threading.Thread(target=run) for _ in range(8)]
        started = time.time()
        for t in threads:
            t.start()
        time.sleep(1)
        # The acceptor and the protocol answer at once: a new connection says HELLO and
        # LOGON while eight queries hold the query threads.
        t0 = time.time()
        s, v = bolt_socket(srv.bolt, V5_4)
        hello_logon(s)
        s.close()
        print(f"HELLO and LOGON among eight long queries: {(time.time() - t0) * 1000:.0f} ms")
        assert time.time() - t0 < 5
        for t in threads:
            t.join(60)
        took = time.time() - started
        assert len(errors) == 8 and all(e is not None for e in errors), errors
        assert all("time limit" in e.message for e in errors), errors[0].message
        print(f"eight queries stopped at their time limit after {took:.1f} s")
        assert took < 30
        x, _ = answers(srv)
        assert x == 1
    finally:
        srv.stop()


def test_failed_logins_are_rate_limited(cli, sample_path, tmp_path):
    srv = Server(cli, sample_path, tmp_path)
    try:
        for _ in range(3):
            with pytest.raises(neo4j.exceptions.AuthError):
                with srv.driver("bolt", auth=(USER, "wrong")) as d:
                    d.verify_connectivity()
        with pytest.raises(neo4j.exceptions.Neo4jError) as e:
            with srv.driver("bolt") as d:
                d.verify_connectivity()
        assert e.value.code == "Neo.ClientError.Security.AuthenticationRateLimit"
        # Over HTTP too: the user is locked.
        code = http_status(srv, (USER, PASSWORD))
        assert code == 401
        assert srv.metric('lance_csr_logins_refused_total{reason="wrong"}') >= 3
        assert srv.metric('lance_csr_logins_refused_total{reason="locked"}') >= 2
        time.sleep(5.5)
        x, _ = answers(srv)
        assert x == 1
    finally:
        srv.stop()


def http_status(srv, auth):
    token = __import__("base64").b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{srv.http}/db/neo4j/query/v2",
        data=json.dumps({"statement": "RETURN 1"}).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Basic {token}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def test_hashed_passwords_and_the_users_files_mode(cli, sample_path, tmp_path):
    users = tmp_path / "users"
    done = subprocess.run([str(cli), "passwd", "ann", "--users", str(users)],
                          input="correct horse\n", text=True, capture_output=True)
    assert done.returncode == 0, done.stderr
    line = users.read_text().strip()
    assert line.startswith("ann:$argon2id$"), line
    assert "correct horse" not in users.read_text()
    assert os.stat(users).st_mode & 0o777 == 0o600
    # Printed, not written.
    done = subprocess.run([str(cli), "passwd", "bob"], input="pw\n", text=True,
                          capture_output=True)
    assert done.returncode == 0 and done.stdout.startswith("bob:$argon2id$"), done
    srv = Server(cli, sample_path, tmp_path, "--users", str(users), users=users)
    try:
        with srv.driver("bolt", auth=("ann", "correct horse")) as d:
            assert d.execute_query("RETURN 2 AS x").records[0]["x"] == 2
        with pytest.raises(neo4j.exceptions.AuthError):
            with srv.driver("bolt", auth=("ann", "correct")) as d:
                d.verify_connectivity()
    finally:
        srv.stop()
    os.chmod(users, 0o666)
    done = subprocess.run([str(cli), "serve", "--graph", str(sample_path), "--bolt",
                           "127.0.0.1:0", "--users", str(users)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "may be written by others" in done.stderr, done.stderr


def test_the_first_run_after_logon_may_be_larger_than_a_greeting(server_no_limit):
    srv = server_no_limit
    s, _ = bolt_socket(srv.bolt, V5_4)
    ids = list(range(30_000))
    # HELLO, LOGON, RUN (a list parameter of 30,000 ids: over 64 KiB), PULL, in one write.
    ints = b"".join(b"\xca" + struct.pack(">i", i) for i in ids)
    run = (b"\xb3\x10" + pack_str("UNWIND $ids AS i RETURN count(i) AS n") + b"\xa1"
           + pack_str("ids") + b"\xd6" + struct.pack(">I", len(ids)) + ints + b"\xa0")
    auth = (b"\xb1\x6a\xa3" + pack_str("scheme") + pack_str("basic") + pack_str("principal")
            + pack_str(USER) + pack_str("credentials") + pack_str(PASSWORD))
    hello = b"\xb1\x01\xa1" + pack_str("user_agent") + pack_str("raw/1")
    for m in [hello, auth, run, b"\xb1\x3f\xa1" + pack_str("n") + b"\xff"]:
        send_message(s, m)
    replies = [recv_message(s) for _ in range(5)]
    assert [r[:2] for r in replies] == [b"\xb1\x70"] * 3 + [b"\xb1\x71", b"\xb1\x70"], replies
    assert replies[3] == b"\xb1\x71\x91\xc9" + struct.pack(">h", 30_000)
    s.close()


@pytest.fixture(scope="module")
def server_no_limit(cli, sample_path, tmp_path_factory):
    s = Server(cli, sample_path, tmp_path_factory.mktemp("hostile"))
    yield s
    s.stop()


def test_what_clients_are_shown_is_printable(server_no_limit):
    srv = server_no_limit
    with urllib.request.urlopen(f"http://127.0.0.1:{srv.http}/", timeout=30) as r:
        about = json.load(r)
    assert about["bolt_direct"] == f"bolt://127.0.0.1:{srv.bolt}", about
    with srv.driver("bolt") as d:
        records = d.execute_query("MATCH p = (a)-[r]->(b) RETURN a, r, b, p LIMIT 5").records
    assert records
    for rec in records:
        ids = [rec["a"].element_id, rec["r"].element_id, rec["b"].element_id,
               rec["r"].start_node.element_id, rec["p"].nodes[0].element_id]
        for i in ids:
            assert not re.search(r"[\x00-\x1f\x7f]", i), repr(i)
        assert rec["r"].start_node.element_id == rec["a"].element_id
        assert rec["p"].nodes[0].element_id == rec["a"].element_id


def test_tls_handshakes_that_never_finish_do_not_lock_out_a_driver(cli, sample_path, tmp_path):
    srv = tls_server(cli, sample_path, tmp_path, "--max-connections", "8")
    held = []
    try:
        # Sixteen connections that send half a ClientHello and stop.
        for _ in range(16):
            s = silent(srv.bolt)
            s.sendall(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")
            held.append(s)
        trust = neo4j.TrustCustomCAs(str(tmp_path / "ca.pem"))
        started = time.time()
        with srv.driver("bolt", encrypted=True, trusted_certificates=trust,
                        connection_timeout=30) as d:
            assert d.execute_query("RETURN 7 AS x").records[0]["x"] == 7
        took = time.time() - started
        print(f"a TLS driver's answer among 16 stalled handshakes: {took * 1000:.0f} ms")
        assert took < 10
    finally:
        for s in held:
            s.close()
        srv.stop()


def peak_kib(srv):
    with open(f"/proc/{srv.proc.pid}/status") as f:
        return int(re.search(r"VmHWM:\s+(\d+)", f.read()).group(1))


def test_a_million_integers_as_a_parameter_stay_inside_the_memory_limit(cli, sample_path,
                                                                        tmp_path):
    # Decoded into one Arrow list (8 bytes an integer), never into a value per element
    # (a decoded message and the engine's values held 64 + 32 bytes each: +330 MiB).
    srv = Server(cli, sample_path, tmp_path, "--memory-limit", "256MB")
    try:
        n = 1_000_000
        xs = list(range(n))
        with srv.driver() as d:
            assert d.execute_query("RETURN 1 AS x").records[0]["x"] == 1
            before = peak_kib(srv)
            for q in ["UNWIND $xs AS x RETURN count(x) AS c, sum(x) AS s",
                      "RETURN size($xs) AS c, reduce(s = 0, x IN $xs | s + x) AS s"]:
                r = d.execute_query(q, xs=xs).records[0]
                assert (r["c"], r["s"]) == (n, n * (n - 1) // 2), q
            # Not one kind: values, the same answers.
            mixed = xs[:5000] + ["x"]
            r = d.execute_query("RETURN size($xs) AS c, $xs[-1] AS last", xs=mixed).records[0]
            assert (r["c"], r["last"]) == (5001, "x")
        bolt_mib = (peak_kib(srv) - before) / 1024
        status, body = post(srv, {"statement": "UNWIND $xs AS x RETURN count(x) AS c",
                                  "parameters": {"xs": xs}})
        assert (status, body["data"]["values"]) == (202, [[n]]), body
        http_mib = (peak_kib(srv) - before) / 1024
        print(f"a million integers: the server's peak grew by {bolt_mib:.0f} MiB over Bolt, "
              f"{http_mib:.0f} MiB with HTTP")
        assert bolt_mib < 100, f"the server's peak grew by {bolt_mib:.0f} MiB"
        # The JSON document is parsed whole first (32 bytes a number).
        assert http_mib < 200, f"the server's peak grew by {http_mib:.0f} MiB"
    finally:
        srv.stop()


def run_message(query, packed_param):
    return (b"\xb3\x10" + pack_str(query) + b"\xa1" + pack_str("p") + packed_param + b"\xa0")


PULL_ALL = b"\xb1\x3f\xa1" + pack_str("n") + b"\xc9\xff\xff"


def test_what_a_message_decodes_to_counts_against_the_memory_limit(cli, sample_path, tmp_path):
    # A byte on the wire can be a value of 100 bytes decoded: 15 MiB of empty lists took a
    # server under --memory-limit 256MB to 6.7 GB; a list of 200,000 values of mixed kinds
    # took 30 s and 490 MB to plan (a literal per element).
    srv = Server(cli, sample_path, tmp_path, "--memory-limit", "256MB")
    try:
        s, _ = bolt_socket(srv.bolt)
        hello_logon(s)
        before = peak_kib(srv)
        n = 15 << 20
        empties = b"\xd6" + struct.pack(">I", n) + b"\x90" * n
        send_message(s, run_message("RETURN size($p) AS n", empties))
        reply = recv_message(s)
        assert reply[:2] == b"\xb1\x7f" and b"MemoryPoolOutOfMemoryError" in reply, reply[:200]
        assert b"decodes to more than" in reply
        # Refused after a failure: ignored, as every message until RESET.
        send_message(s, run_message("RETURN size($p) AS n", empties))
        assert recv_message(s)[:2] == b"\xb0\x7e"
        # The connection goes on.
        send_message(s, b"\xb0\x0f")
        assert recv_message(s)[:2] == b"\xb1\x70"
        send_message(s, run_message("RETURN $p AS n", b"\x07"))
        send_message(s, PULL_ALL)
        assert [recv_message(s)[:2] for _ in range(3)] == [b"\xb1\x70", b"\xb1\x71", b"\xb1\x70"]
        s.close()
        refused_mib = (peak_kib(srv) - before) / 1024
        mixed = [i if i % 2 else f"s{i}" for i in range(200_000)]
        pairs = [[i, i % 5] for i in range(100_000)]
        started = time.time()
        with srv.driver() as d:
            r = d.execute_query("RETURN size($m) AS a, $m[1] AS b, $m[2] AS c", m=mixed)
            assert list(r.records[0].values()) == [200_000, 1, "s2"]
            r = d.execute_query("UNWIND $p AS x RETURN sum(x[1]) AS s", p=pairs)
            assert r.records[0]["s"] == 200_000
        took = time.time() - started
        # HTTP: decoded as it is read, never into a JSON tree first.
        status, body = post(srv, {"statement": "RETURN size($p) AS n",
                                  "parameters": {"p": [[]] * 3_500_000}})
        assert status == 413 and "decodes to more than" in body["errors"][0]["message"], body
        grown = (peak_kib(srv) - before) / 1024
        print(f"15 MiB of empty lists refused at +{refused_mib:.0f} MiB; 200,000 mixed values "
              f"and 100,000 pairs in {took:.1f} s; the server's peak grew by {grown:.0f} MiB")
        # Under the limit plus a margin (6.7 GB before).
        assert refused_mib < 256 and grown < 256 + 64
        assert took < 20
    finally:
        srv.stop()


def test_pipelined_large_messages_wait_for_room_under_the_memory_limit(cli, sample_path,
                                                                        tmp_path):
    # Four clients pipelining 15 MiB RUN messages took the server to 1.7 GB: now their
    # messages and parameters take room under the limit, and they wait for it.
    srv = Server(cli, sample_path, tmp_path, "--memory-limit", "256MB")
    try:
        before = peak_kib(srv)
        big = b"\xd2" + struct.pack(">I", 15 << 20) + b"a" * (15 << 20)
        messages = [run_message("RETURN size($p) AS n", big), PULL_ALL] * 8
        answers = []

        def client():
            s, _ = bolt_socket(srv.bolt)
            hello_logon(s)
            sender = threading.Thread(target=lambda: [send_message(s, m) for m in messages])
            sender.start()
            got = [recv_message(s) for _ in range(8 * 3)]
            sender.join()
            s.close()
            answers.append(got)

        clients = [threading.Thread(target=client) for _ in range(4)]
        for c in clients:
            c.start()
        for c in clients:
            c.join(timeout=240)
        assert len(answers) == 4
        record = b"\xb1\x71\x91\xca" + struct.pack(">i", 15 << 20)
        for got in answers:
            assert got.count(record) == 8, [g[:60] for g in got if g[:2] != b"\xb1\x70"][:3]
        grown = (peak_kib(srv) - before) / 1024
        print(f"4 clients x 8 pipelined 15 MiB messages: the server's peak grew by {grown:.0f} MiB")
        # The limit (every byte read counts against it), and a margin for the engine's own.
        assert grown < 256 + 160
        assert answers_within(srv, 5)
    finally:
        srv.stop()


def test_a_message_takes_room_as_it_is_read_and_must_come_in_time(cli, sample_path, tmp_path):
    # A message's bytes were held outside the memory limit while it was read (up to 16 MiB a
    # connection), and a Bolt message could come as slowly as its client liked.
    srv = Server(cli, sample_path, tmp_path, "--memory-limit", "64MB", "--auth-timeout", "2s",
                 "--min-body-rate", "4MB")
    try:
        n = 10 << 20
        big = run_message("RETURN size($p) AS n", b"\xd2" + struct.pack(">I", n) + b"a" * n)
        # All but the last chunk, and no end marker.
        head = b"".join(struct.pack(">H", 65535) + big[i:i + 65535]
                        for i in range(0, len(big) - 65535, 65535))
        stalled = []
        for _ in range(2):
            s, _ = bolt_socket(srv.bolt)
            hello_logon(s)
            s.sendall(head)
            stalled.append(s)
        deadline = time.time() + 10
        while srv.metric("lance_csr_message_bytes") < 2 * n:
            assert time.time() < deadline, srv.metric("lance_csr_message_bytes")
            time.sleep(0.05)
        # Others are answered meanwhile.
        assert answers_within(srv, 5)
        # The rest did not come at 4MB a second after the 2 s of grace: both are closed and
        # their bytes let go.
        for s in stalled:
            assert closed_by_server(s, 30)
            s.close()
        assert srv.metric('lance_csr_connections_closed_total{reason="slow_body"}') == 2
        assert srv.metric("lance_csr_message_bytes") == 0
        # Sent in time, a message is answered. This one's query takes most of the room for
        # the copies of its string, which its bytes' room and it together would not fit:
        # its bytes let go of theirs rather than wait for room that never comes (30 s).
        m = int(4.9 * (1 << 20))
        s, _ = bolt_socket(srv.bolt)
        hello_logon(s)
        started = time.time()
        send_message(s, run_message("RETURN size($p) AS n", b"\xd2" + struct.pack(">I", m)
                                    + b"a" * m))
        send_message(s, PULL_ALL)
        assert recv_message(s)[:2] == b"\xb1\x70"
        assert recv_message(s) == b"\xb1\x71\x91\xca" + struct.pack(">i", m)
        assert time.time() - started < 20
        # An open result keeps what its parameters decoded to (planning's copies let go),
        # outside a transaction too, until it is pulled to its end.
        assert recv_message(s)[:2] == b"\xb1\x70"
        send_message(s, run_message("UNWIND [1, 2] AS x RETURN x, size($p) AS n",
                                    b"\xd2" + struct.pack(">I", m) + b"a" * m))
        assert recv_message(s)[:2] == b"\xb1\x70"
        held = srv.metric("lance_csr_message_bytes")
        assert m <= held < 3 * m, held
        send_message(s, PULL_ALL)
        assert [recv_message(s)[:2] for _ in range(3)] == [b"\xb1\x71", b"\xb1\x71", b"\xb1\x70"]
        assert srv.metric("lance_csr_message_bytes") == 0
        s.close()
    finally:
        srv.stop()


def answers_within(srv, seconds):
    value, took = answers(srv)
    return value == 1 and took < seconds
