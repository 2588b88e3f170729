# openCypher value and aggregation semantics that both execution paths share (binding, naming,
# DataFusion's rewrites, value rules): each case once gave a wrong answer or an internal error.

# A grouping key over no rows: no groups, so no rows (a global aggregate gives one row).
MATCH (p:Person) WHERE p.id = -1 RETURN 'x' AS k, count(*) AS c
---- rowsort
k|c

UNWIND [] AS x RETURN 1 AS k, count(*) AS c
---- rowsort
k|c

MATCH (a:Person)-[:IS_LOCATED_IN]->(c:City) WHERE a.id = -1 RETURN labels(c) AS l, count(*) AS n
---- rowsort
l|n

MATCH (p:Person) WHERE p.id = -1 RETURN count(*) AS c
---- rowsort
c
0

# A hop with no table for its labels, inside a chain, a cycle and an OPTIONAL MATCH.
MATCH (p:Person)-[:KNOWS]->(q:Person)-[:HAS_TAG]->(t:Tag) RETURN count(*) AS n
---- rowsort
n
0

MATCH (p:Person {id: 1})-[:KNOWS]->(q:Person)-[:HAS_TAG]->(t:Tag) RETURN count(*) AS n
---- rowsort
n
0

MATCH (a:Person)-[:IS_LOCATED_IN]->(c:City)<-[:KNOWS]-(a) RETURN count(*) AS n
---- rowsort
n
0

MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(q:Person)-[:HAS_TAG]->(t:Tag) RETURN count(*) AS c, count(t) AS n
---- rowsort
c|n
6|0

# A key at the far end of a variable-length hop (re-rooted there).
MATCH (n0:Person)-[:KNOWS*1..2]-(n1:Person {id: 1}) RETURN count(*) AS c
---- rowsort
c
10

MATCH (n0:Person)-[:KNOWS*1..2]->(n1:Person {id: 3}) RETURN n0.firstName AS n ORDER BY n
---- ordered
n
Ann
Ann
Bob
Dana
Eve

# A property the inferred label lacks is null; one no written label has is an error.
MATCH (f:Forum)-[:HAS_MODERATOR]->(p) RETURN count(p.content) AS n, count(*) AS c
---- rowsort
n|c
0|2

MATCH (f:Forum)-[:HAS_MODERATOR]->(p) RETURN p.content AS x, p.firstName AS y
---- rowsort
x|y
null|Ann
null|Dana

MATCH (c:Comment:Forum)-[:HAS_MODERATOR]->(p) RETURN count(c.content) AS n
---- rowsort
n
0

MATCH (f:Forum)-[:HAS_MODERATOR]->(p {content: 'x'}) RETURN count(*) AS n
---- rowsort
n
0

MATCH (c:Comment:Forum) RETURN c.nmae
---- error UnknownProperty

MATCH (p:Person {nmae: 'Ann'}) RETURN p.id
---- error UnknownProperty

# User names that look like the planner's internal column names, or need quoting.
MATCH (p:Person) WITH p, 1 AS p__firstName RETURN p__firstName AS v, p.firstName AS n ORDER BY n LIMIT 2
---- ordered
v|n
1|Ann
1|Bob

UNWIND [7] AS __anon1 MATCH (a:Person {id: 1})-[:KNOWS]->() RETURN DISTINCT __anon1 AS x
---- rowsort
x
7

MATCH (`__agg0`:Person) RETURN count(`__agg0`) AS `__agg0`
---- rowsort
__agg0
6

UNWIND [1, 2] AS `a b` RETURN `a b` + 1 AS `x.y` ORDER BY `x.y`
---- ordered
x.y
2
3

MATCH (`ünï`:Person {id: 1})-[`r#1`:KNOWS]->(`x__#src`) RETURN `ünï`.firstName AS a, `x__#src`.firstName AS b ORDER BY b
---- ordered
a|b
Ann|Bob
Ann|Carl

UNWIND [1] AS `a b` WITH `a b` RETURN *
---- rowsort
a b
1

# A name re-bound along a WITH chain: every step counts.
UNWIND [1, 2, 3] AS x WITH x + 1 AS x WITH x + 1 AS x RETURN collect(x) AS c
---- rowsort
c
[3, 4, 5]

UNWIND [1, 2, 3] AS x WITH x * 2 AS x WITH x * 2 AS x RETURN sum(x) AS s
---- rowsort
s
24

# The same step two levels apart, under the same name or alternating names.
UNWIND [1, 2, 3] AS x WITH x * 2 AS x WITH -x AS x WITH x * 2 AS x WITH -x AS x RETURN sum(x) AS s
---- rowsort
s
24

UNWIND [1, 2, 3] AS x WITH -x AS y WITH y + 1 AS x WITH -x AS y WITH y + 1 AS x RETURN collect(x) AS c
---- rowsort
c
[1, 2, 3]

# Integer overflow is an error, not a wrapped value.
RETURN 9223372036854775807 + 1 AS x
---- runtime-error IntegerOverflow

RETURN 4611686018427387904 * 2 AS x
---- runtime-error IntegerOverflow

RETURN -9223372036854775807 - 2 AS x
---- runtime-error IntegerOverflow

UNWIND [9223372036854775807, 1] AS x RETURN sum(x) AS s
---- runtime-error IntegerOverflow

UNWIND [9223372036854775807, -1] AS x RETURN sum(x) AS s, x - 1 AS y
---- rowsort
s|y
-1|-2
9223372036854775807|9223372036854775806

UNWIND [9223372036854775807, -1] AS x RETURN sum(x) AS s
---- rowsort
s
9223372036854775806

# Negative lengths and starts are errors; an index out of range is null.
RETURN substring('abc', -1, 2) AS s
---- runtime-error NegativeIntegerArgument

RETURN left('abc', -1) AS s
---- runtime-error NegativeIntegerArgument

RETURN substring('abc', 1) AS s, substring('abc', 0, 2) AS t, left('abc', 2) AS l, right('abc', 2) AS r
---- rowsort
s|t|l|r
bc|ab|ab|bc

RETURN [1, 2, 3][9223372036854775807] AS x, [1, 2, 3][-1] AS y, [1, 2, 3][-4] AS z, [1, 2, 3][3] AS w
---- rowsort
x|y|z|w
null|3|null|null

# Lists with null inside compare and test membership three-valued.
RETURN [1, 2] >= [1, null] AS a, [1, 2] = [1, null] AS b, [1, 2] = [3, null] AS c, [1] < [1, null] AS d, [2, null] > [1, 5] AS e
---- rowsort
a|b|c|d|e
null|null|false|true|true

RETURN [1, 2, null] IN [1, [1, 2, null]] AS a, [1, 2] IN [[1, 2]] AS b, [1, 2] IN [[null, 'foo']] AS c
---- rowsort
a|b|c
null|true|false

WITH [1, null] AS l RETURN 2 IN l AS a, 1 IN l AS b, null IN [] AS c
---- rowsort
a|b|c
null|true|false

WITH [[1, 2], [1, null]] AS l UNWIND l AS x RETURN x IN [[1, 2]] AS a, x = [1, 2] AS b
---- rowsort
a|b
null|null
true|true

WITH [[1, 2, null]] AS l RETURN [1, 2, null] IN l AS a, [1, 3, null] IN l AS b
---- rowsort
a|b
null|false

# The conversion functions take exactly Cypher's forms.
RETURN toBoolean(' tru ') AS a, toBoolean('TRUE') AS b, toBoolean(' false ') AS c, toBoolean('yes') AS d
---- rowsort
a|b|c|d
null|true|false|null

RETURN toInteger('4.9') AS a, toInteger('x') AS b, toInteger(' 42 ') AS c, toFloat('1e3') AS d, toFloat('inf') AS e
---- rowsort
a|b|c|d|e
4|null|42|1000.0|null

# Argument types and aggregation rules checked before running.
RETURN range(1, true) AS r
---- runtime-error InvalidArgumentType

RETURN range(2, 8, 0) AS r
---- runtime-error NumberOutOfRange

RETURN [1, 2][true] AS r
---- error InvalidArgumentType

MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.age + b.age AS s, count(*) AS c ORDER BY a.age + b.age + count(*)
---- error AmbiguousAggregationExpression

MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.age AS s, count(*) AS c ORDER BY a.age + count(*) DESC, s LIMIT 2
---- ordered
s|c
42|2
37|1

# Functions check their arguments' kinds when a row evaluates them.
RETURN toUpper(1) AS a
---- runtime-error InvalidArgumentType

RETURN reverse(1) AS a
---- runtime-error InvalidArgumentType

RETURN sqrt('a') AS a
---- runtime-error InvalidArgumentType

RETURN head(1) AS a
---- runtime-error InvalidArgumentType

MATCH (p:Person) WHERE p.id = -1 RETURN split(p.age, ',') AS a
---- rowsort
a

RETURN abs(-9223372036854775807 - 1) AS a
---- runtime-error IntegerOverflow

RETURN abs(-3) AS a, abs(2.5) AS b, abs(null) AS c
---- rowsort
a|b|c
3|2.5|null

# Entities collected and unwound keep their properties.
MATCH (row:City) WITH collect(row) AS rows UNWIND rows AS node RETURN node.name AS n ORDER BY n
---- ordered
n
Berlin
Lyon

# count() of a variable-length pattern's relationships counts the paths.
MATCH (a:Person {id: 5})-[r:KNOWS*1..2]->(b:Person) RETURN count(r) AS n
---- rowsort
n
3

MATCH (n:Person $p) RETURN n
---- error InvalidParameterUse

# Equality and ordering across kinds, with null and NaN (openCypher's comparability rules).
RETURN 1 = 1.0 AS a, 1 <> 'a' AS b, 'a' < 1 AS c, null = null AS d, [1, null] = [1, null] AS e
---- rowsort
a|b|c|d|e
true|true|null|null|null

WITH 0.0 / 0.0 AS n RETURN n = n AS a, n <> n AS b, n > 1 AS c, [n] = [n] AS d, n IN [n] AS e
---- rowsort
a|b|c|d|e
false|true|false|false|false

RETURN [1, 2] < [1, 2, 3] AS a, [] < [1] AS b, ['a'] < [1] AS c, [[1, 2]] > [[1, 1, 5]] AS d
---- rowsort
a|b|c|d
true|true|null|true

RETURN {a: 1} = {a: 1} AS a, {a: null} = {a: null} AS b, {a: 1} = {b: 1} AS c, {a: 1, b: 2} = {b: 2, a: 1} AS d
---- rowsort
a|b|c|d
true|null|false|true

RETURN 1 IN null AS a, null IN [1] AS b, null IN [] AS c, [] IN [[]] AS d
---- rowsort
a|b|c|d
null|null|false|true

WITH 0.0 / 0.0 AS n RETURN n IN [1.0, n] AS a, n IN [1.0, null] AS b, 1.0 IN [n, 1] AS c
---- rowsort
a|b|c
false|null|true

# Lists mixing kinds hold values of mixed kind: printed as written, ordered as ORDER BY
# orders values of different kinds (lists < strings < booleans < numbers < null), compared
# and tested for membership with three-valued logic.
RETURN [1, 'a', null, [2, 'b'], {k: true}, 2.5] AS l
---- rowsort
l
[1, 'a', null, [2, 'b'], {k: true}, 2.5]

UNWIND [[], ['a'], ['a', 1], [1], [1, 'a'], [1, null], [null, 1], [null, 2]] AS x RETURN x ORDER BY x DESC
---- ordered
x
[null, 2]
[null, 1]
[1, null]
[1, 'a']
[1]
['a', 1]
['a']
[]

UNWIND [true, 'b', null, [1], 2, 1.5, -9223372036854775808, 'a'] AS x RETURN x ORDER BY x
---- ordered
x
[1]
a
b
true
-9223372036854775808
1.5
2
null

UNWIND [1, 'a', null, [1, 2], 0.2, 'b'] AS x RETURN min(x) AS lo, max(x) AS hi, count(DISTINCT x) AS n, collect(x) AS c
---- rowsort
lo|hi|n|c
[1, 2]|1|5|[1, 'a', [1, 2], 0.2, 'b']

RETURN [1, 'a'] >= [1, null] AS a, [1, 'a'] = [1, 'a'] AS b, [1, 2] IN [1, [1, '2']] AS c, [[1, 2], 3] IN [1, [[1, 2], 3]] AS d
---- rowsort
a|b|c|d
null|true|false|true

UNWIND [1, 'a', 2.5, null] AS x RETURN x, x = 1 AS eq, x < 2 AS lt, x IN [2.5, 'a'] AS inl, toInteger(x) AS i
---- rowsort
x|eq|lt|inl|i
1|true|true|false|1
a|false|null|true|null
2.5|false|false|true|2
null|null|null|null|null

RETURN [1] + (2 IN [3]) + 4 AS a, ['x'] + [1, 2] AS b, 1 + ['x'] AS c
---- rowsort
a|b|c
[1, false, 4]|['x', 1, 2]|[1, 'x']

WITH [1, 'ab', true, null] AS ops UNWIND ops AS a UNWIND ops AS b WITH a CONTAINS b AS v RETURN v, count(*) AS n
---- rowsort
v|n
true|1
null|15

UNWIND [1, 'a'] AS x RETURN x + 1 AS y
---- rowsort
y
2
a1

# A string among the numbers summed: a type error, as in Neo4j.
UNWIND [1, 'a'] AS x RETURN sum(x)
---- runtime-error InvalidArgumentType

WITH [123, true] AS x RETURN x.num
---- error InvalidArgumentType

# IN over a literal list whose items mix kinds: compared value by value.
RETURN null IN [[null, 1], 'b'] AS m, 1 IN [[1], 'b', 1] AS a, 'b' IN [[1], 'b'] AS c, 3 IN [[3], 'x'] AS d
---- rowsort
m|a|c|d
null|true|true|false

# Aggregates over a hop no relationship table serves: no rows, so sum 0, count 0, the
# others null (and `collect` []), as over any empty input.
MATCH (a:Forum)-[:KNOWS]->(b) RETURN sum(b.id) AS s, count(b) AS c, avg(b.id) AS a, min(b.id) AS mn, collect(b.id) AS l
---- rowsort
s|c|a|mn|l
0|0|null|null|[]

UNWIND [] AS x RETURN sum(null) AS s, max(null) AS m
---- rowsort
s|m
0|null

# Two comprehensions over one list with other predicates are other values.
WITH [1, 2, 3] AS xs RETURN sum(size([y IN xs WHERE y > 1])) AS n, sum(size([y IN xs WHERE y > 2])) AS m
---- rowsort
n|m
2|1

# Quantifiers over the empty list and over nulls: the element's type is the null type.
RETURN all(x IN [] WHERE x = 1) AS a, any(x IN [] WHERE x = 1) AS b, none(x IN [] WHERE x = 1) AS c, single(x IN [null] WHERE x = 1) AS d, size([x IN [] WHERE x > 0 | x + 1]) AS e
---- rowsort
a|b|c|d|e
true|false|true|null|0

# toInteger past the 64-bit range is null; the smallest integer itself is one.
RETURN toInteger('-9223372036854775809') AS a, toInteger('9223372036854775808') AS b, toInteger(1e19) AS c, toInteger(-9223372036854775808.0) AS d, toInteger('-9223372036854775808') AS e, toInteger(' 12 ') AS f
---- rowsort
a|b|c|d|e|f
null|null|null|-9223372036854775808|-9223372036854775808|12

# NaN is above every number, whatever its sign bit (0.0 / 0.0 sets it on x86).
UNWIND [1.0, 0.0 / 0.0, -1.0, 1.0 / 0.0] AS x RETURN x ORDER BY x
---- ordered
x
-1.0
1.0
Infinity
NaN

UNWIND [1.0, 0.0 / 0.0, -1.0] AS x RETURN x ORDER BY x DESC
---- ordered
x
NaN
1.0
-1.0

UNWIND [0.0 / 0.0, 1.0, -2.5] AS x RETURN min(x) AS mn, max(x) AS mx
---- rowsort
mn|mx
-2.5|NaN

# Long chains of one operator (query builders write them): more than eight operands are
# folded by one function (arithmetic left to right, overflow included) or a balanced tree.
UNWIND [1, 2] AS a RETURN a + a + a + a + a + a + a + a + a + a AS s, a * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 * 2 AS p, 100 - a - a - a - a - a - a - a - a - a AS d, 'x' + a + a + a + a + a + a + a + a + 1.5 AS t
---- rowsort
s|p|d|t
10|512|91|x111111111.5
20|1024|82|x222222221.5

WITH 9223372036854775807 AS m RETURN m + 1 - 1 - 0 - 0 - 0 - 0 - 0 - 0 - 0 - 0 AS x
---- runtime-error IntegerOverflow

UNWIND [1, 5, 9, null] AS a RETURN a, a = 1 OR a = 2 OR a = 3 OR a = 4 OR a = 5 OR a = 6 OR a = 7 OR a = 8 OR a = 9 OR a = 10 AS o, a <> 1 AND a <> 2 AND a <> 3 AND a <> 4 AND a <> 5 AND a <> 6 AND a <> 7 AND a <> 8 AND a <> 9 AS n ORDER BY a
---- ordered
a|o|n
1|true|false
5|true|false
9|true|false
null|null|null

RETURN 1 < 2 < 3 < 4 < 5 < 6 < 7 < 8 < 9 < 10 AS up, 1 < 2 < 3 < 4 < 5 < 6 < 7 < 8 < 9 < 1 AS down
---- rowsort
up|down
true|false

# Integers and floats in one list (or CASE) keep their kinds.
RETURN [1, 1.5][0] AS a, [1, 1.5] AS l, CASE WHEN true THEN 1 ELSE 1.5 END AS c, [2, 0.5][0] + 1 AS s
---- ordered
a|l|c|s
1|[1, 1.5]|1|3

# type(), labels() and properties() of values of mixed kind are decided per row.
MATCH (a:Person {id: 1})-[r:KNOWS]->(b) WITH [r, b, 1] AS l RETURN DISTINCT type(l[0]) AS t, labels(l[1]) AS ls
---- ordered
t|ls
KNOWS|['Person']

UNWIND [1, 'a'] AS x RETURN type(x) AS t
---- runtime-error InvalidArgumentValue

# DISTINCT, grouping and count(DISTINCT) compare values of mixed kind by value: 1 and 1.0
# are one (as in Neo4j), inside lists too; a string is not a number.
UNWIND [1, 1.0, '1', [1], [1.0], 2] AS x RETURN count(DISTINCT x) AS n
---- rowsort
n
4

UNWIND [2, 2.0, '2', 2.5, [2], [2.0]] AS x WITH DISTINCT x RETURN count(*) AS n
---- rowsort
n
4

UNWIND [2, 2.0, '2', 2.5, [2], [2.0]] AS x WITH x, count(*) AS c RETURN c, count(*) AS groups ORDER BY c
---- ordered
c|groups
1|2
2|2

UNWIND [2, 2.0, '2', 2.5, [2], [2.0], null] AS x RETURN size(collect(DISTINCT x)) AS n
---- rowsort
n
4

RETURN [1, 'a'][0] AS x UNION RETURN [1.0, 'a'][0] AS x UNION RETURN ['1', 2][0] AS x
---- rowsort
x
1
1
