# Expressions and functions.

# Arithmetic: integer division and modulo stay integers, ^ is a float.
RETURN 7 / 2 AS d, 7 % 3 AS m, 2 ^ 3 AS p, -3 + 1 AS n, 1.5 * 2 AS f
---- rowsort
d|m|p|n|f
3|1|8.0|-2|3.0

# CASE.
MATCH (p:Person) RETURN p.firstName AS n, CASE WHEN p.age >= 40 THEN 'senior' ELSE 'junior' END AS g ORDER BY n
---- ordered
n|g
Ann|junior
Bob|senior
Carl|junior
Dana|junior
Eve|junior
Finn|senior

# Simple CASE.
UNWIND [1, 2, 3] AS x RETURN CASE x WHEN 1 THEN 'one' WHEN 2 THEN 'two' END AS w ORDER BY x
---- ordered
w
one
two
null

# Three-valued logic: NOT (null = 1) is null and filters the row out.
UNWIND [1, null, 3] AS x WITH x WHERE NOT (x = 1) RETURN x
---- rowsort
x
3

# null in AND / OR.
RETURN null AND false AS a, null AND true AS b, null OR true AS c, null OR false AS d, true XOR null AS e
---- rowsort
a|b|c|d|e
false|null|true|null|null

# IN with a literal list, IS NULL, IS NOT NULL.
MATCH (p:Person) WHERE p.id IN [1, 3, 99] AND p.firstName IS NOT NULL RETURN p.firstName ORDER BY p.firstName
---- ordered
p.firstName
Ann
Carl

# String functions and predicates.
MATCH (p:Person {id: 4}) RETURN toUpper(p.firstName) AS u, size(p.lastName) AS s, substring(p.firstName, 1, 2) AS sub, p.firstName STARTS WITH 'Da' AS sw, p.lastName CONTAINS 'ü' AS c, p.firstName ENDS WITH 'x' AS ew
---- rowsort
u|s|sub|sw|c|ew
DANA|6|an|true|true|false

# List functions and indexing.
RETURN size([1, 2, 3]) AS s, head([1, 2, 3]) AS h, last([1, 2, 3]) AS l, [1, 2, 3][0] AS i0, [1, 2, 3][-1] AS im, range(1, 4) AS r
---- rowsort
s|h|l|i0|im|r
3|1|3|1|3|[1, 2, 3, 4]

# Conversions.
RETURN toInteger('42') AS i, toFloat('1.5') AS f, toString(7) AS s, toInteger('x') AS bad, abs(-3) AS a
---- rowsort
i|f|s|bad|a
42|1.5|7|null|3

# labels() and id().
MATCH (c:City {name: 'Lyon'}) RETURN labels(c) AS l, id(c) AS i
---- rowsort
l|i
['City', 'Place']|501

# Comparison of different types is false, ordering them is null.
RETURN 1 = 'a' AS eq, 1 <> 'a' AS ne, 1 < 'a' AS lt
---- rowsort
eq|ne|lt
false|true|null

# Slices clamp out-of-range bounds; a null bound gives null.
RETURN [1, 2, 3][-5..5] AS a, [1, 2, 3][1..] AS b, [1, 2, 3][..-1] AS c, [1, 2, 3][null..2] AS d
---- rowsort
a|b|c|d
[1, 2, 3]|[2, 3]|[1, 2]|null

# keys(): the properties an entity has (per row, across labels), a map's keys (null values too).
MATCH (x)-[:HAS_TAG]->(:Tag {id: 300}) RETURN labels(x) AS l, keys(x) AS k
---- rowsort
l|k
['Post', 'Message']|['id', 'content', 'length', 'creationDate', 'language']
['Post', 'Message']|['id', 'content', 'length', 'creationDate', 'language']
['Forum']|['id', 'creationDate', 'title']
['Comment', 'Message']|['id', 'content', 'length', 'creationDate']

RETURN keys({a: 1, b: null}) AS m, keys(null) AS n
---- rowsort
m|n
['a', 'b']|null

# The entity functions of null are null (as of an entity an OPTIONAL MATCH did not find).
OPTIONAL MATCH (n:Person {id: 999}) RETURN labels(n) AS a, labels(null) AS b, type(null) AS c, id(null) AS d, properties(null) AS e
---- rowsort
a|b|c|d|e
null|null|null|null|null

# Nested lists: length, negative indexes and slices count the items, not the values inside
# them.
WITH [[1, 2], [], [3]] AS l RETURN size(l) AS n, l[-2] AS x, l[-2..] AS t, l[..-2] AS h, size(l + [[4]]) AS m, size([[], []] + [[]]) AS e
---- rowsort
n|x|t|h|m|e
3|[]|[[], [3]]|[[1, 2]]|4|3

# A map indexed by null is null; by a string parameter, that key.
-- param k='name'
-- param m='nope'
WITH {name: 'Mats'} AS expr, null AS idx RETURN expr[idx] AS a, expr[null] AS b, expr[$k] AS c, expr[$m] AS d
---- rowsort
a|b|c|d
null|null|Mats|null

# A map indexed by a computed key: the field it names, null where none does; fields of
# different kinds give values of mixed kind.
WITH {a: 1, b: 'x'} AS m UNWIND ['a', 'b', 'c'] AS k RETURN k, m[k] AS v ORDER BY k
---- ordered
k|v
a|1
b|x
c|null

# size() of values of mixed kind: a list's items, a string's characters.
UNWIND ['abc', [1, 2], null] AS x RETURN size(x) AS s
---- rowsort
s
3
2
null

# ... and of anything else, a type error when a row reaches it.
UNWIND [[1], 2] AS x RETURN size(x) AS s
---- runtime-error InvalidArgumentValue

# SKIP and LIMIT take expressions that read no variable.
UNWIND [1, 2, 3, 4] AS x RETURN x ORDER BY x SKIP toInteger(ceil(0.5)) LIMIT 1 + 1
---- ordered
x
2
3

# ... but not one that reads a variable.
UNWIND [1, 2] AS x RETURN x LIMIT x
---- error NonConstantExpression

# reduce folds the body over the list; the accumulator may change kind; a null list is null.
UNWIND [[1, 2, 3], [], [1, 2.5], null] AS xs RETURN reduce(s = 0, x IN xs | s + x) AS r
---- rowsort
r
6
0
3.5
null

MATCH (p:Person) WHERE p.id <= 2 RETURN p.firstName AS n, reduce(acc = '', x IN [1, 2] | acc + p.firstName) AS r ORDER BY n
---- ordered
n|r
Ann|AnnAnn
Bob|BobBob

# Functions DataFusion rewrites before running (coalesce) in a comprehension or reduce body.
RETURN [x IN [1, null] | coalesce(x, 0)] AS l, reduce(t = 0, x IN [1, null, 2] | t + coalesce(x, 10)) AS r
---- rowsort
l|r
[1, 0]|13

# A simple CASE compares as `=` does: a string is not a number, a boolean not an integer.
RETURN CASE '0' WHEN 0 THEN 'zero' ELSE 'other' END AS a, CASE true WHEN -10 THEN 'n' ELSE 'other' END AS b, CASE 1 WHEN 1.0 THEN 'one' END AS c, CASE null WHEN null THEN 'null' ELSE 'else' END AS d
---- rowsort
a|b|c|d
other|other|one|else

# ... also over a value of mixed kind.
UNWIND [1, '1', [1]] AS x RETURN CASE x WHEN 1 THEN 'int' WHEN '1' THEN 'string' WHEN [1] THEN 'list' END AS k
---- rowsort
k
int
list
string

# A list + a list concatenates, also where the right side is only known to be a list per row.
RETURN [[1], [2, 3], [4, 5]] + [5, [6, 7], [8, 9], 10][2] AS l, [5, [6, 7]][0] + [1] AS m, [1] + [5, 'a'][1] AS n
---- rowsort
l|m|n
[[1], [2, 3], [4, 5], 8, 9]|[5, 1]|[1, 'a']

# UNWIND of a value of mixed kind: a list unwinds, anything else is itself, null nothing.
UNWIND [[1, 2], 3, null, 'a'] AS x UNWIND x AS y RETURN y
---- rowsort
y
1
2
3
a

UNWIND [[1, 2], 'abc'] AS x RETURN size(x) AS s
---- rowsort
s
2
3

# round as Neo4j: ties toward positive infinity at precision 0, HALF_UP on the shortest
# decimal form past it, Java's rounding modes.
RETURN round(-1.5) AS a, round(-2.5) AS b, round(2.5) AS c, round(-1.5, 0) AS d, round(-1.55, 1) AS e, round(2.675, 2) AS f, round(-1.5, 0, 'HALF_UP') AS g, round(2.5, 0, 'HALF_EVEN') AS h, round(7) AS i
---- rowsort
a|b|c|d|e|f|g|h|i
-1.0|-2.0|3.0|-1.0|-1.6|2.68|-2.0|2.0|7.0

RETURN round(1.25, 1, 'SIDEWAYS') AS r
---- runtime-error InvalidArgumentValue

RETURN round(1.25, -1) AS r
---- runtime-error InvalidArgumentValue

# toString of a map or a list is a type error, not a cast failure.
RETURN toString({a: 1}) AS s
---- error InvalidArgumentType

RETURN toString([1, 2]) AS s
---- error InvalidArgumentType
