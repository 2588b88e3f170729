"""Type stubs of lance_csr's native module."""

import datetime
import os
import pathlib
from typing import Any, Iterator, Mapping, Optional, Sequence, Union

import pyarrow

__version__: str

#: What a query parameter may be: nested lists and dicts (string keys) of these too.
ParamValue = Union[
    None,
    bool,
    int,
    float,
    str,
    Sequence[Any],
    Mapping[str, Any],
    datetime.date,
    datetime.time,
    datetime.datetime,
    datetime.timedelta,
    "Duration",
]

class Error(Exception):
    """Base class of every error lance_csr raises.

    ``cypher_class``: openCypher's class (``SyntaxError``, ``TypeError``, ...; ``Error`` for
    failures outside the language); ``kind``: the error's kind (``UndefinedVariable``, ...);
    ``line`` / ``column``: where in the query (1-based), when the error points at it. The
    message shows the query's line with a caret under the culprit.
    """

    cypher_class: str
    kind: str
    line: Optional[int]
    column: Optional[int]

class SyntaxError(Error):
    """The query text does not parse."""

class SemanticError(Error):
    """The query parses but breaks Cypher's rules or names what the graph does not have."""

class TypeError(Error):
    """A value of the wrong type, found while planning or running the query."""

class ArgumentError(Error):
    """A function got an argument it cannot take."""

class ArithmeticError(Error):
    """Division by zero or an integer overflow."""

class LimitError(Error):
    """The query ran past its time or memory limit."""

class StorageError(Error):
    """A dataset, index or file could not be read or written."""

class ConfigError(Error):
    """The graph's configuration is wrong."""

class ExecutionError(Error):
    """The query failed while running."""

class InternalError(Error):
    """A bug in lance_csr: please report it with the query."""

class Interrupted(Error):
    """The query was cancelled by ``Graph.interrupt()``."""

class Node:
    """A node. ``node["name"]`` reads a property (KeyError when absent); ``node.get(k)``
    gives None instead."""

    labels: list[str]
    properties: dict[str, Any]
    #: The node's identity where the engine gives one (nodes inside paths), else None.
    element_id: Optional[str]
    def __getitem__(self, key: str) -> Any: ...
    def get(self, key: str, default: Any = None) -> Any: ...
    def __contains__(self, key: str) -> bool: ...

class Relationship:
    """A relationship. Its ``element_id`` and its ends' ids are given inside paths."""

    type: str
    properties: dict[str, Any]
    element_id: Optional[str]
    start_element_id: Optional[str]
    end_element_id: Optional[str]
    def __getitem__(self, key: str) -> Any: ...
    def get(self, key: str, default: Any = None) -> Any: ...
    def __contains__(self, key: str) -> bool: ...

class Path:
    """A path: ``len(path)`` relationships between ``len(path) + 1`` nodes."""

    nodes: list[Node]
    relationships: list[Relationship]
    @property
    def start_node(self) -> Node: ...
    @property
    def end_node(self) -> Node: ...
    def __len__(self) -> int: ...

class Duration:
    """A Cypher duration: months, days, seconds and nanoseconds apart (a month and a day have
    no fixed length). ``str(d)`` is Cypher's ISO 8601 text (``P1M2DT3.5S``)."""

    months: int
    days: int
    seconds: int
    nanoseconds: int
    def __init__(self, months: int = 0, days: int = 0, seconds: int = 0, nanoseconds: int = 0) -> None: ...

class Result:
    """The rows of a query. Iterating gives each row as a dict (column -> value): numbers,
    strings, lists, dicts, ``Node``, ``Relationship``, ``Path``, ``datetime`` values (to the
    microsecond) and ``Duration``."""

    @property
    def columns(self) -> list[str]: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[dict[str, Any]]: ...
    def rows(self) -> list[tuple[Any, ...]]:
        """Every row as a tuple, in column order."""
    def to_arrow(self) -> pyarrow.Table:
        """The rows as Arrow, without copying. Nodes, relationships and paths are structs
        (``__label`` / ``__type`` first; ``__nid``, ``__rid``, ``__start``, ``__end`` identify
        them; a path is ``{__nodes, __relationships}``); a column of values of mixed kind (and
        temporal values computed by the query) holds their Cypher text, marked by the field
        metadata ``lance_csr.cypher_text``."""
    def to_polars(self) -> Any:
        """The rows as a ``polars.DataFrame`` (needs polars)."""
    def to_pandas(self) -> Any:
        """The rows as a ``pandas.DataFrame`` (needs pandas)."""

class ResultStream:
    """A query's result as it is computed. Iterating yields ``pyarrow.RecordBatch``es;
    ``pyarrow.RecordBatchReader.from_stream(s)``, ``polars.DataFrame(s)`` and DuckDB read it
    through ``__arrow_c_stream__``. Closing it (or leaving a ``with`` block) stops the query."""

    @property
    def columns(self) -> list[str]: ...
    @property
    def schema(self) -> pyarrow.Schema: ...
    def __iter__(self) -> Iterator[pyarrow.RecordBatch]: ...
    def __next__(self) -> pyarrow.RecordBatch: ...
    def read_all(self) -> pyarrow.Table: ...
    def close(self) -> None: ...
    def __enter__(self) -> "ResultStream": ...
    def __exit__(self, *args: Any) -> None: ...
    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...

class PreparedQuery:
    """A query planned once per kind of parameters; threads may share one."""

    @property
    def text(self) -> str: ...
    def query(self, params: Optional[Mapping[str, ParamValue]] = None) -> Result: ...
    def query_stream(self, params: Optional[Mapping[str, ParamValue]] = None) -> ResultStream: ...

class Graph:
    """A property graph to query with Cypher. Queries release the GIL; Ctrl-C cancels the
    running one (KeyboardInterrupt). Use as a context manager to close it."""

    @staticmethod
    def open(
        path: Union[str, os.PathLike[str]],
        *,
        mode: str = "csr",
        timeout: Optional[float] = None,
        memory_limit: Optional[int] = None,
        deferred_indexes: bool = False,
        target_partitions: Optional[int] = None,
        as_of: Optional[Union[int, str, datetime.datetime]] = None,
        refresh_interval: Optional[float] = 1.0,
    ) -> "Graph":
        """Opens the graph a graph.toml describes (or the folder holding it). ``mode``:
        ``"csr"`` (hops on CSR indexes, built when missing) or ``"join"``; ``timeout`` in
        seconds and ``memory_limit`` in bytes apply to each query; ``deferred_indexes`` reads
        each index file only when a plan first needs it. ``as_of`` reads the graph as it was:
        a version number (every dataset at that version, or its latest where it is older), a
        tag (``lance-csr tag``), or a time (a datetime or an ISO 8601 string: each dataset's
        latest version committed then). Every ``refresh_interval`` seconds (None: never) the
        graph reads its datasets' new versions (appends, deletes, compactions by any
        writer), as ``refresh()`` does; queries running meanwhile finish on the state they
        started on, and one whose files a writer removed runs again on the latest before it
        hands out rows."""
    @staticmethod
    def sample(*, mode: str = "csr") -> "Graph":
        """The documentation's small sample social network, in memory."""
    @staticmethod
    def from_tables(
        tables: Mapping[str, Any],
        schema: Mapping[str, Any],
        *,
        mode: str = "csr",
        timeout: Optional[float] = None,
        memory_limit: Optional[int] = None,
        target_partitions: Optional[int] = None,
        refresh_interval: Optional[float] = 1.0,
    ) -> "Graph":
        """A graph over pyarrow tables (anything with ``__arrow_c_stream__``) and
        ``lance.LanceDataset``s (read by the engine from their folders)::

            {"nodes": {"Person": {"table": "person", "id": "id", "labels": ["Person"]}},
             "relationships": [{"type": "KNOWS", "table": "knows", "from": "Person",
                                "to": "Person", "src": "src", "dst": "dst"}],
             "indexes": [{"name": "person_embedding", "kind": "vector",
                          "table": "Person", "column": "embedding"}]}

        ``indexes`` are graph.toml's ``[[indexes]]`` (vector or full-text), searched by
        ``CALL db.index.vector.queryNodes`` and the like: a table in memory exactly (vectors
        only), a Lance dataset through Lance and its own indexes. A graph whose tables are
        all Lance datasets follows their new versions as ``open``'s does.
        """
    def query(self, query: str, params: Optional[Mapping[str, ParamValue]] = None) -> Result: ...
    def query_stream(
        self, query: str, params: Optional[Mapping[str, ParamValue]] = None
    ) -> ResultStream: ...
    def prepare(self, query: str) -> PreparedQuery: ...
    def explain(
        self, query: str, params: Optional[Mapping[str, ParamValue]] = None, analyze: bool = False
    ) -> str: ...
    def refresh(self) -> int:
        """Reads the datasets' latest versions now (queries running meanwhile finish on the
        state they started on); returns how many index structures were rebuilt. Raises
        what stops it (a graph following its datasets keeps the state before then). 0 too
        when the background refresh got there first."""
    def schema(self) -> dict[str, Any]:
        """``{"labels": {name: {labels, key, rows, properties}}, "relationships": [{type,
        from, to, rows, properties}]}``; property types as Arrow type names."""
    def interrupt(self) -> None:
        """Cancels this graph's running queries (from any thread)."""
    def close(self) -> None: ...
    @property
    def closed(self) -> bool: ...
    def __enter__(self) -> "Graph": ...
    def __exit__(self, *args: Any) -> None: ...

def import_(
    out: Union[str, os.PathLike[str]],
    nodes: Sequence[str],
    rels: Sequence[str] = (),
    *,
    overwrite: bool = False,
    index: bool = True,
) -> pathlib.Path:
    """As ``lance-csr import``: node specs ``"Person=persons.csv"``, relationship specs
    ``"KNOWS:Person:Person:src:dst=knows.csv"``; returns the graph.toml's path."""

def generate(
    out: Union[str, os.PathLike[str]],
    *,
    scale: float = 1.0,
    seed: int = 42,
    sample: bool = False,
    ldbc: bool = False,
    index: bool = True,
    embeddings: Optional[int] = None,
) -> pathlib.Path:
    """As ``lance-csr generate`` (``sample=True``: the documentation's sample graph;
    ``embeddings=DIM``: an ``embedding`` vector property on persons and posts)."""

def tag(path: Union[str, os.PathLike[str]], name: str) -> list[tuple[str, int]]:
    """As ``lance-csr tag``: every dataset of the graph tagged ``name`` at its current
    version (``Graph.open(path, as_of=name)`` then reads the graph as it is now); each
    dataset with the version tagged."""

def parse_literal(text: str) -> Any:
    """The Python value a Cypher literal writes (``"[1, 'a']"``)."""
