"""lance_csr: read-only Cypher over property graphs stored as Lance datasets.

Open a graph, query it, and take the result as Arrow, Polars, pandas or rows::

    import lance_csr

    g = lance_csr.Graph.open("/data/snb/graph.toml")
    r = g.query("MATCH (p:Person {id: $id})-[:KNOWS]->(f) RETURN f.firstName AS name",
                {"id": 1000})
    r.to_polars()

Queries release the GIL while they plan and run, so Python threads run them in parallel;
Ctrl-C cancels a running query (KeyboardInterrupt), and ``Graph.interrupt()`` cancels the
graph's running queries from another thread. Errors are ``lance_csr.Error`` subclasses
carrying the openCypher class (``cypher_class``), the error's kind (``kind``), its position
(``line``, ``column``) and a message with a caret under the culprit.
"""

from ._lance_csr import (
    ArgumentError,
    ArithmeticError,
    ConfigError,
    Duration,
    Error,
    ExecutionError,
    Graph,
    InternalError,
    Interrupted,
    LimitError,
    Node,
    Path,
    PreparedQuery,
    Relationship,
    Result,
    ResultStream,
    SemanticError,
    StorageError,
    SyntaxError,
    TypeError,
    __version__,
    generate,
    import_,
    parse_literal,
    tag,
)

__all__ = [
    "ArgumentError",
    "ArithmeticError",
    "ConfigError",
    "Duration",
    "Error",
    "ExecutionError",
    "Graph",
    "InternalError",
    "Interrupted",
    "LimitError",
    "Node",
    "Path",
    "PreparedQuery",
    "Relationship",
    "Result",
    "ResultStream",
    "SemanticError",
    "StorageError",
    "SyntaxError",
    "TypeError",
    "__version__",
    "generate",
    "import_",
    "parse_literal",
    "tag",
]
