"""Graph.open(..., as_of=...) reads the graph as it was, as pylance reads the same versions."""

import datetime
import time

import lance
import pyarrow as pa
import pytest

import lance_csr

PERSONS = "MATCH (p:Person) RETURN p.id AS id ORDER BY id"
KNOWS = "MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id AS a, b.id AS b ORDER BY a, b"


def appended_twice(tmp_path):
    """A generated graph whose person and KNOWS datasets got two appends (with pylance):
    the graph, the tag of its first state and a time between the appends."""
    path = lance_csr.generate(tmp_path / "g", sample=True)
    base = path.parent if path.name == "graph.toml" else path
    persons, knows = str(base / "person.lance"), str(base / "person_knows_person.lance")
    tag_with_pylance(path, "first")
    tagged = lance_csr.tag(path, "first-too")
    assert tagged and all(version == 1 for _, version in tagged)
    for i in range(2):
        # A new person, and a KNOWS relationship from an existing one to it.
        p = lance.dataset(persons).to_table(limit=1)
        new_id = p["id"][0].as_py() + 100 + i
        p = p.set_column(p.schema.get_field_index("id"), "id", pa.array([new_id], p.schema.field("id").type))
        lance.write_dataset(p, persons, mode="append")
        k = lance.dataset(knows).to_table(limit=1)
        k = k.set_column(k.schema.get_field_index("dst"), "dst", pa.array([new_id], k.schema.field("dst").type))
        lance.write_dataset(k, knows, mode="append")
        if i == 0:
            time.sleep(0.05)
            between = datetime.datetime.now(datetime.timezone.utc)
            time.sleep(0.05)
    return path, persons, knows, between


def tag_with_pylance(path, name):
    """Tags every dataset of the graph through pylance (what `lance-csr tag` does): tags
    Lance writes are what `as_of` reads."""
    base = path.parent if path.name == "graph.toml" else path
    for dataset in base.glob("*.lance"):
        ds = lance.dataset(str(dataset))
        ds.tags.create(name, ds.version)


def ids(ds, column="id"):
    return sorted(ds.to_table(columns=[column])[column].to_pylist())


def test_each_version_answers_as_pylance_reads_it(tmp_path):
    path, persons, knows, between = appended_twice(tmp_path)
    for version in (1, 2, 3):
        g = lance_csr.Graph.open(path, as_of=version)
        got = [r[0] for r in g.query(PERSONS).rows()]
        assert got == ids(lance.dataset(persons, version=version)), version
        want = lance.dataset(knows, version=version).to_table()
        pairs = sorted(zip(want["src"].to_pylist(), want["dst"].to_pylist()))
        got = [tuple(r) for r in g.query(KNOWS).rows()]
        assert got == pairs, version
        g.close()
    first = lance.dataset(persons, version="first")
    for as_of in ("first", "first-too", between, between.isoformat()):
        g = lance_csr.Graph.open(path, as_of=as_of)
        n = len(g.query(PERSONS).rows())
        tagged = as_of in ("first", "first-too")
        want = ids(first) if tagged else ids(lance.dataset(persons, version=2))
        assert n == len(want), as_of
        g.close()


def test_a_state_the_graph_never_had_is_a_clear_error(tmp_path):
    path, *_ = appended_twice(tmp_path)
    with pytest.raises(lance_csr.StorageError, match="has no version 9"):
        lance_csr.Graph.open(path, as_of=9)
    with pytest.raises(lance_csr.StorageError, match='has no tag "nope"'):
        lance_csr.Graph.open(path, as_of="nope")
    with pytest.raises(lance_csr.StorageError, match="no version committed at or before"):
        lance_csr.Graph.open(path, as_of=datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc))
    with pytest.raises(TypeError):
        lance_csr.Graph.open(path, as_of=True)


def test_a_version_cleaned_up_is_a_clear_error(tmp_path):
    path, persons, knows, _ = appended_twice(tmp_path)
    lance_csr.Graph.open(path, as_of=1).close()
    for d in (persons, knows):
        ds = lance.dataset(d)
        for t in ("first", "first-too"):
            ds.tags.delete(t)  # a tagged version is never cleaned up
        ds.cleanup_old_versions(older_than=datetime.timedelta(0), delete_unverified=True)
    with pytest.raises(lance_csr.StorageError, match="has no version 1 .*cleaned up"):
        lance_csr.Graph.open(path, as_of=1)
    # The newest state still reads.
    g = lance_csr.Graph.open(path, as_of=3)
    assert [r[0] for r in g.query(PERSONS).rows()] == ids(lance.dataset(persons))
    g.close()


def test_generated_embeddings_answer_vector_queries(tmp_path):
    path = lance_csr.generate(tmp_path / "g", scale=0.05, embeddings=8)
    g = lance_csr.Graph.open(path)
    (dim,) = g.query("MATCH (p:Post) RETURN size(p.embedding) AS d LIMIT 1").rows()[0]
    assert dim == 8
    rows = g.query(
        "MATCH (q:Person) WITH q ORDER BY q.id LIMIT 1 "
        "MATCH (p:Person) WHERE p <> q "
        "RETURN vector.similarity.cosine(p.embedding, q.embedding) AS s ORDER BY s DESC LIMIT 3"
    ).rows()
    scores = [s for (s,) in rows]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    g.close()
    with pytest.raises(lance_csr.Error, match="1 to 4096"):
        lance_csr.generate(tmp_path / "h", scale=0.05, embeddings=0)


def test_search_procedures_from_python(tmp_path):
    """generate(embeddings=...) declares and builds the search indexes; CALL searches them."""
    path = lance_csr.generate(tmp_path / "g", scale=0.2, embeddings=8)
    g = lance_csr.Graph.open(path)
    (pid, vector) = g.query("MATCH (p:Person) RETURN p.id, p.embedding ORDER BY p.id LIMIT 1").rows()[0]
    assert len(vector) == 8
    rows = g.query(
        "CALL db.index.vector.queryNodes('person_embedding', 5, $v) YIELD node, score "
        "RETURN node.id AS id, score ORDER BY score DESC",
        {"v": list(vector)},
    ).rows()
    # The vector's own node is nearest, with similarity 1.
    assert rows[0][0] == pid and abs(rows[0][1] - 1.0) < 1e-5
    assert len(rows) == 5 and all(0.0 <= s <= 1.0 for _, s in rows)
    # A node value, its friends expanded on the CSR.
    node = g.query(
        "CALL db.index.vector.queryNodes('person_embedding', 1, $v) YIELD node RETURN node",
        {"v": list(vector)},
    ).rows()[0][0]
    assert node.labels == ["Person"] and node.properties["id"] == pid
    texts = g.query("MATCH (p:Post) RETURN p.id, p.content").rows()
    want = sorted(i for i, t in texts if "lance" in t.split() and "graph" in t.split())
    got = g.query(
        "CALL db.index.fulltext.queryNodes('post_content', 'lance AND graph') YIELD node "
        "RETURN node.id ORDER BY node.id"
    ).rows()
    assert [i for (i,) in got] == want and want
    with pytest.raises(lance_csr.Error, match="has 2 dimensions"):
        g.query("CALL db.index.vector.queryNodes('person_embedding', 5, [1.0, 2.0]) YIELD node RETURN node")
    g.close()


def test_tables_declare_their_search_indexes(tmp_path):
    """from_tables takes graph.toml's [[indexes]] as dicts: pyarrow tables are searched
    exactly, a Lance dataset written by pylance through Lance."""
    import math

    import lance
    import pyarrow as pa

    angles = [i * 0.03 for i in range(50)]
    vectors = pa.FixedSizeListArray.from_arrays(
        pa.array([x for a in angles for x in (math.cos(a), math.sin(a))], pa.float32()), 2
    )
    docs = pa.table({"id": pa.array(range(50), pa.int64()), "v": vectors})
    schema = {
        "nodes": {"Doc": {"table": "docs", "id": "id"}},
        "indexes": [{"name": "doc_v", "kind": "vector", "table": "Doc", "column": "v"}],
    }
    q = "CALL db.index.vector.queryNodes('doc_v', 3, $v) YIELD node, score RETURN node.id ORDER BY score DESC"
    v = [math.cos(0.31), math.sin(0.31)]
    lance.write_dataset(docs, tmp_path / "docs.lance")
    for tables in ({"docs": docs}, {"docs": lance.dataset(tmp_path / "docs.lance")}):
        g = lance_csr.Graph.from_tables(tables, schema)
        assert [i for (i,) in g.query(q, {"v": v}).rows()] == [10, 11, 9]
        g.close()
    bad = dict(schema, indexes=[{"name": "x", "kind": "nearest", "table": "Doc", "column": "v"}])
    with pytest.raises(lance_csr.Error, match="unknown variant"):
        lance_csr.Graph.from_tables({"docs": docs}, bad)
