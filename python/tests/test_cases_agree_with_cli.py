"""Every query of tests/cases/*.cypher gives, through Python, the rows the CLI prints as JSON
(`lance-csr shell` with `:format json`), and the same errors; and to_arrow / to_polars /
to_pandas hold the rows iteration gives."""

import datetime
import json
import math
import re
import subprocess

import lance_csr

from conftest import ROOT

MARKER = "__case"


def parse_cases():
    cases = []
    for path in sorted((ROOT / "tests" / "cases").glob("*.cypher")):
        lines = path.read_text().splitlines()
        i = 0
        while i < len(lines):
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith("#")):
                i += 1
            if i >= len(lines):
                break
            start = i + 1
            query, params = [], []
            while i < len(lines) and not lines[i].startswith("----"):
                if lines[i].startswith("-- param "):
                    params.append(lines[i][len("-- param "):].strip())
                elif not lines[i].startswith("#"):
                    query.append(lines[i])
                i += 1
            mode = lines[i].lstrip("-").strip()
            i += 1
            while i < len(lines) and lines[i].strip():
                i += 1
            cases.append(
                {
                    "where": f"{path.name}:{start}",
                    "query": "\n".join(query),
                    "params": params,
                    "error": mode.startswith("error") or mode.startswith("runtime-error"),
                }
            )
    return cases


def run_shell(cli, graph, script):
    """The JSON values the shell printed for `script`, in order."""
    out = subprocess.run(
        [str(cli), "shell", "--graph", str(graph)],
        input=":format json\n" + script,
        capture_output=True,
        text=True,
        timeout=600,
    ).stdout
    values, pos, dec = [], 0, json.JSONDecoder()
    while True:
        while pos < len(out) and out[pos].isspace():
            pos += 1
        if pos >= len(out):
            return values
        # The banner and error reports are text lines; results are JSON arrays.
        if out[pos] != "[" or (pos > 0 and out[pos - 1] != "\n"):
            nl = out.find("\n", pos)
            pos = len(out) if nl < 0 else nl + 1
            continue
        v, pos = dec.raw_decode(out, pos)
        values.append(v)


def cli_results(cli, graph, cases):
    """Per case, the rows the CLI printed (None where it printed none: an error)."""
    script = ""
    for n, c in enumerate(cases):
        for p in c["params"]:
            script += f":param {p}\n"
        script += c["query"] + ";\n" + f"RETURN {n} AS {MARKER};\n"
    values = run_shell(cli, graph, script)
    results, pending = {}, None
    for v in values:
        if isinstance(v, list) and len(v) == 1 and set(v[0]) == {MARKER}:
            results[v[0][MARKER]] = pending
            pending = None
        else:
            pending = v
    assert len(results) == len(cases), f"the shell answered {len(results)} of {len(cases)} cases"
    return [results[n] for n in range(len(cases))]


def cypher_time_text(s):
    """Cypher's text of a date or time as Python's ISO form (zone names and digits past
    microseconds dropped)."""
    s = re.sub(r"\[[^\]]*\]$", "", s)
    s = re.sub(r"(\.\d{6})\d+", r"\1", s)
    return s.replace("Z", "+00:00")


def same_temporal(py, text):
    if isinstance(py, datetime.datetime):
        other = datetime.datetime.fromisoformat(cypher_time_text(text))
        if py.tzinfo is not None:
            return other.tzinfo is not None and py == other and py.utcoffset() == other.utcoffset()
        return py == other
    if isinstance(py, datetime.date):
        return py == datetime.date.fromisoformat(text)
    if isinstance(py, datetime.time):
        other = datetime.time.fromisoformat(cypher_time_text(text))
        return py == other and py.utcoffset() == other.utcoffset()
    if isinstance(py, lance_csr.Duration):
        return str(py) == text
    return False


def as_json(v):
    """A Python result value in the shape of the CLI's JSON."""
    if isinstance(v, lance_csr.Node):
        return {"_labels": list(v.labels), **{k: as_json(x) for k, x in v.properties.items()}}
    if isinstance(v, lance_csr.Relationship):
        return {"_type": v.type, **{k: as_json(x) for k, x in v.properties.items()}}
    if isinstance(v, lance_csr.Path):
        return {
            "nodes": [as_json(n) for n in v.nodes],
            "relationships": [as_json(r) for r in v.relationships],
        }
    if isinstance(v, list):
        return [as_json(x) for x in v]
    if isinstance(v, dict):
        return {k: as_json(x) for k, x in v.items()}
    return v


def cli_json(v):
    """The CLI's JSON with an entity's null properties dropped (a property its label lacks)."""
    if isinstance(v, list):
        return [cli_json(x) for x in v]
    if isinstance(v, dict):
        entity = "_labels" in v or "_type" in v
        return {k: cli_json(x) for k, x in v.items() if not (entity and x is None)}
    return v


def same(py, cli):
    if isinstance(py, (datetime.date, datetime.time, lance_csr.Duration)) and isinstance(cli, str):
        return same_temporal(py, cli)
    if isinstance(py, float) and isinstance(cli, (float, int)):
        return (math.isnan(py) and math.isnan(cli)) or py == cli
    if isinstance(py, bool) or isinstance(cli, bool):
        return type(py) is type(cli) and py == cli
    if isinstance(py, list) and isinstance(cli, list):
        return len(py) == len(cli) and all(same(a, b) for a, b in zip(py, cli))
    if isinstance(py, dict) and isinstance(cli, dict):
        return py.keys() == cli.keys() and all(same(py[k], cli[k]) for k in py)
    return py == cli and type(py) is type(cli)


def key(row):
    return json.dumps(row, sort_keys=True, default=str)


def test_every_case_agrees_with_the_cli(cli, sample_path):
    cases = parse_cases()
    assert len(cases) >= 300, f"only {len(cases)} cases found"
    want = cli_results(cli, sample_path, cases)
    g = lance_csr.Graph.open(sample_path)
    failures, rows_compared = [], 0
    for c, expected in zip(cases, want):
        params = {}
        for p in c["params"]:
            name, _, literal = p.partition("=")
            params[name.strip()] = lance_csr.parse_literal(literal.strip())
        try:
            r = g.query(c["query"], params)
        except lance_csr.Error as e:
            if expected is not None or not c["error"]:
                failures.append(f"{c['where']}: Python raised {type(e).__name__}: {e}")
            continue
        if expected is None:
            failures.append(f"{c['where']}: the CLI failed, Python returned {len(r)} rows")
            continue
        got = [{k: as_json(v) for k, v in row.items()} for row in r]
        expected = cli_json(expected)
        # The CLI's JSON objects have sorted keys: compare rows as multisets of dicts, in
        # the CLI's order where it matches.
        if not (len(got) == len(expected) and all(same(a, b) for a, b in zip(got, expected))):
            unmatched = list(expected)
            for row in got:
                hit = next((i for i, e in enumerate(unmatched) if same(row, e)), None)
                if hit is None:
                    break
                unmatched.pop(hit)
            else:
                if not unmatched:
                    rows_compared += len(got)
                    continue
            failures.append(f"{c['where']}: Python {got[:5]} vs CLI {expected[:5]}")
            continue
        rows_compared += len(got)
        check_frames(c["where"], r, failures)
    assert not failures, "\n".join(failures[:20]) + f"\n({len(failures)} failures)"
    assert rows_compared > 500


def arrow_value(v):
    """A value of `Result.to_arrow().to_pylist()` in the shape rows iteration gives through
    `as_json`: entity structs as the CLI writes them."""
    if isinstance(v, dict):
        keys = list(v)
        if keys and keys[0] == "__label":
            labels = v["__label"].split(":") if v["__label"] else []
            return {
                "_labels": labels,
                **{k: arrow_value(x) for k, x in v.items() if not k.startswith("__") and x is not None},
            }
        if keys and keys[0] == "__type":
            return {
                "_type": v["__type"],
                **{k: arrow_value(x) for k, x in v.items() if not k.startswith("__") and x is not None},
            }
        if keys == ["__nodes", "__relationships"]:
            return {
                "nodes": [arrow_value(n) for n in v["__nodes"]],
                "relationships": [arrow_value(r) for r in v["__relationships"]],
            }
        return {k: arrow_value(x) for k, x in v.items()}
    if isinstance(v, list):
        return [arrow_value(x) for x in v]
    return v


def check_frames(where, r, failures):
    table = r.to_arrow()
    assert table.column_names == r.columns
    assert table.num_rows == len(r)
    rows = [{k: as_json(v) for k, v in row.items()} for row in r]
    # Columns of values of mixed kind (or temporal values computed by the query) reach Arrow
    # as their Cypher text; every other column as the values themselves.
    text = {f.name for f in table.schema if f.metadata and b"lance_csr.cypher_text" in f.metadata}
    for name in table.column_names:
        col = table.column(name).to_pylist()
        for i, v in enumerate(col):
            want = rows[i][name]
            if name in text:
                ok = (v is None) == (want is None) and (v is None or isinstance(v, str))
            else:
                ok = same(arrow_value(v), want)
            if not ok:
                failures.append(f"{where}: to_arrow column {name} row {i}: {v!r} vs {want!r}")
                return
    pl = r.to_polars()
    if pl.columns != r.columns or pl.height != len(r):
        failures.append(f"{where}: to_polars shape {pl.columns} x {pl.height}")
        return
    for i, row in enumerate(pl.iter_rows(named=True)):
        for name in table.column_names:
            if name not in text and not same(arrow_value(row[name]), rows[i][name]):
                failures.append(f"{where}: to_polars column {name} row {i}: {row[name]!r}")
                return
    pd = r.to_pandas()
    if list(pd.columns) != r.columns or len(pd) != len(r):
        failures.append(f"{where}: to_pandas shape {list(pd.columns)} x {len(pd)}")
        return
    for name in table.column_names:
        if name in text:
            continue
        for i, v in enumerate(pd[name].tolist()):
            if not loosely_same(arrow_value(v), rows[i][name]):
                failures.append(f"{where}: to_pandas column {name} row {i}: {v!r}")
                return


def loosely_same(v, want):
    """pandas' value for a cell: nulls of numbers as NaN, integers with nulls as floats,
    lists as numpy arrays."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if want is None:
        return v is None or (isinstance(v, float) and math.isnan(v))
    if isinstance(want, int) and not isinstance(want, bool) and isinstance(v, float):
        return float(want) == v
    if isinstance(want, list) and isinstance(v, list):
        return len(v) == len(want) and all(loosely_same(a, b) for a, b in zip(v, want))
    if isinstance(want, dict) and isinstance(v, dict):
        return all(loosely_same(v.get(k), x) for k, x in want.items())
    if isinstance(want, datetime.datetime) and hasattr(v, "to_pydatetime"):
        v = v.to_pydatetime()
    return same(v, want)
