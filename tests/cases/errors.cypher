# Errors: the kind of error (and that it is raised before execution).

MATCH (p:Persn) RETURN p
---- error UnknownLabel

MATCH (p:Person) RETURN p.nmae
---- error UnknownProperty

MATCH (p:Person)-[:KNOWZ]->(q) RETURN q
---- error UnknownRelationshipType

MATCH (p:Person) RETURN q
---- error UndefinedVariable

MATCH (p:Person) WHERE count(*) > 1 RETURN p
---- error InvalidAggregation

RETURN count(count(*))
---- error NestedAggregation

MATCH (p:Person) WITH p.age RETURN 1
---- error NoExpressionAlias

MATCH (p:Person) RETURN p.age AS a, p.id AS a
---- error ColumnNameConflict

RETURN $missing
---- error MissingParameter

CREATE (n:Person {id: 7})
---- error Unsupported

MATCH (p:Person) RETURN p LIMIT -1
---- error NegativeIntegerArgument

# A parameter's value is checked when rows reach it (openCypher: an ArgumentError at run time).
MATCH (p:Person) RETURN p LIMIT $n
-- param n=-1
---- runtime-error NegativeIntegerArgument

MATCH (p:Person) RETURN p SKIP $n
-- param n=1.5
---- runtime-error InvalidArgumentType

RETURN 1 AS a UNION RETURN 2 AS b
---- error DifferentColumnsInUnion

MATCH (p:Person RETURN p
---- error UnexpectedSyntax

RETURN foo(1)
---- error UnknownFunction

WITH 1 AS x MATCH (x) RETURN x
---- error VariableTypeConflict

RETURN 'a' * 2
---- error InvalidArgumentType

RETURN NOT 1
---- error InvalidArgumentType

MATCH (a:Person)-[:KNOWS*1..100]->(b) RETURN b
---- error InvalidArgumentValue

# Values of mixed kind are computed with row by row: a string has no negation.
UNWIND ['0', 0] AS x RETURN -x
---- runtime-error InvalidArgumentType

# An aggregate runs per group, a comprehension's body per element: not inside one.
MATCH (n:Person) RETURN [x IN [1, 2] | count(*)] AS l
---- error InvalidAggregation

MATCH (n:Person) RETURN reduce(s = 0, x IN [1] | s + sum(x)) AS r
---- error InvalidAggregation

MATCH (n:Person) RETURN size([x IN collect(n.age) WHERE x > 30 | x]) AS k
---- rowsort
k
4
