# Pattern expressions and subqueries: each runs per row of its input, from the variables it
# reads, and gives whether it matches, how often, or the list of its values.

# A pattern predicate.
MATCH (p:Person) WHERE (p)-[:KNOWS]->() RETURN p.firstName AS n ORDER BY n
---- ordered
n
Ann
Bob
Carl
Dana
Eve

MATCH (p:Person) WHERE NOT (p)-[:KNOWS]->() RETURN p.firstName AS n ORDER BY n
---- ordered
n
Finn

# Between two bound nodes, either direction.
MATCH (a:Person), (b:Person) WHERE (a)-[:KNOWS]-(b) AND a.firstName < b.firstName RETURN a.firstName AS a, b.firstName AS b ORDER BY a, b
---- ordered
a|b
Ann|Bob
Ann|Carl
Ann|Dana
Ann|Eve
Bob|Carl
Bob|Dana
Carl|Dana

# The old function form.
MATCH (p:Person) WHERE exists((p)<-[:KNOWS]-(:Person {firstName: 'Eve'})) RETURN p.firstName AS n
---- rowsort
n
Ann

# Pattern comprehensions: no match gives [].
MATCH (p:Person) RETURN p.firstName AS n, size([(p)-[:KNOWS]->(f) | f.firstName]) AS k, [(p)-[:KNOWS]->(f) WHERE f.firstName = 'Carl' | f.firstName] AS c ORDER BY n
---- ordered
n|k|c
Ann|2|['Carl']
Bob|2|['Carl']
Carl|1|[]
Dana|1|[]
Eve|1|[]
Finn|0|[]

# A named path in a pattern comprehension.
MATCH (p:Person {firstName: 'Ann'}) RETURN [q = (p)-[:KNOWS]->(:Person {firstName: 'Bob'}) | length(q)] AS ls
---- rowsort
ls
[1]

# A comprehension as a WITH item, filtered after.
MATCH (p:Person) WITH p.firstName AS n, [(p)-[:KNOWS]->(f) | f] AS fs WHERE size(fs) > 1 RETURN n ORDER BY n
---- ordered
n
Ann
Bob

# COUNT { }: 0 without a match.
MATCH (p:Person) RETURN p.firstName AS n, COUNT { (p)<-[:KNOWS]-() } AS followers ORDER BY n
---- ordered
n|followers
Ann|2
Bob|1
Carl|2
Dana|2
Eve|0
Finn|0

# In ORDER BY, and before a LIMIT.
MATCH (p:Person) RETURN p.firstName AS n ORDER BY COUNT { (p)-[:KNOWS]-() } DESC, n LIMIT 3
---- ordered
n
Ann
Bob
Carl

MATCH (p:Person) WITH p, COUNT { (p)-[:KNOWS]-() } AS d ORDER BY d DESC, p.firstName LIMIT 2 RETURN p.firstName AS n, d
---- ordered
n|d
Ann|4
Bob|3

# EXISTS with clauses: the WITH aggregates per outer row.
MATCH (p:Person) WHERE EXISTS { MATCH (p)-[:KNOWS]-(f) WITH p, count(f) AS c WHERE c >= 3 RETURN c } RETURN p.firstName AS n ORDER BY n
---- ordered
n
Ann
Bob
Carl
Dana

# Nested: pattern predicates inside the subquery's WHERE.
MATCH (p:Person) WHERE EXISTS { MATCH (p)-[:KNOWS]->(f) WHERE NOT (f)-[:KNOWS]->(p) AND (f)-[:KNOWS]->() } RETURN p.firstName AS n ORDER BY n
---- ordered
n
Ann
Bob
Carl
Dana
Eve

# COLLECT { }, and a subquery reading a value variable (per input row).
MATCH (p:Person {firstName: 'Eve'}) RETURN COLLECT { MATCH (p)-[:KNOWS]->(f) RETURN f.firstName } AS fs
---- rowsort
fs
['Ann']

UNWIND [1, 2] AS x MATCH (p:Person {id: x}) RETURN x, COUNT { MATCH (p)-[:KNOWS]->(f) WHERE f.id > x } AS c ORDER BY x
---- ordered
x|c
1|2
2|2

# Uncorrelated.
RETURN COUNT { MATCH (p:Person) } AS n
---- rowsort
n
6

# In an OPTIONAL MATCH's WHERE: decides which matches there are, not which rows.
MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f) WHERE (f)-[:KNOWS]->(:Person {firstName: 'Dana'}) RETURN p.firstName AS p, f.firstName AS f ORDER BY p, f
---- ordered
p|f
Ann|Bob
Ann|Carl
Bob|Carl
Carl|null
Dana|null
Eve|null
Finn|null

# A pattern predicate introduces no variables, and is no value.
MATCH (p:Person) WHERE (p)-[:KNOWS]->(x) RETURN p
---- error UndefinedVariable

MATCH (p:Person) RETURN (p)-[:KNOWS]->()
---- error UnexpectedSyntax

RETURN COLLECT { MATCH (p:Person) RETURN p.firstName, p.id } AS x
---- error InvalidArgumentType

# startNode / endNode: the relationship's own direction, whichever way it was matched.
MATCH (a:Person {firstName: 'Ann'})-[k:KNOWS]-(b) RETURN b.firstName AS b, startNode(k).firstName AS s, endNode(k).firstName AS e ORDER BY b
---- ordered
b|s|e
Bob|Ann|Bob
Carl|Ann|Carl
Dana|Dana|Ann
Eve|Eve|Ann

MATCH (a:Person {firstName: 'Finn'}) OPTIONAL MATCH (a)-[k:KNOWS]-() RETURN startNode(k) AS s, endNode(null) AS e
---- rowsort
s|e
null|null

# A pattern predicate or subquery reading a list comprehension's variable: per element, the
# list's order kept.
MATCH (p:Person {firstName: 'Ann'})-[:KNOWS]->(f) WITH p, collect(f) AS fs RETURN size([x IN fs WHERE (x)-[:KNOWS]->(:Person {firstName: 'Carl'})]) AS n, size(fs) AS total
---- rowsort
n|total
1|2

WITH [3, 1, 99, 2] AS ids RETURN [i IN ids WHERE EXISTS { MATCH (q:Person {id: i}) } | i * 10] AS l, [i IN [] WHERE (i)-->() | i] AS e, [i IN null WHERE (i)-->() | i] AS n
---- rowsort
l|e|n
[30, 10, 20]|[]|null

MATCH (a:Person) WHERE a.firstName IN ['Ann', 'Finn'] RETURN a.firstName AS a, [x IN [a] | COUNT { (x)-[:KNOWS]-() }] AS d ORDER BY a
---- ordered
a|d
Ann|[4]
Finn|[0]

# A quantifier whose predicate reads its variable in a pattern: decided per element as the
# comprehensions above; a null for some element leaves an undecided answer null.
MATCH (p:Person {firstName: 'Ann'})-[:KNOWS]->(f) WITH p, collect(f) AS fs RETURN any(x IN fs WHERE (x)-[:KNOWS]->(:Person {firstName: 'Carl'})) AS a, all(x IN fs WHERE (x)-[:KNOWS]->(:Person {firstName: 'Carl'})) AS b, single(x IN fs WHERE (x)-[:KNOWS]->(:Person {firstName: 'Carl'})) AS s, none(x IN fs WHERE (x)-[:KNOWS]->(:Person {firstName: 'Carl'})) AS n
---- rowsort
a|b|s|n
true|false|true|false

MATCH (a:Person {firstName: 'Ann'}) UNWIND [[1, 2], [1, null], [null], [], null, [2, 3]] AS xs RETURN xs, any(x IN xs WHERE (a)-[:KNOWS]->() AND x > 1) AS a, all(x IN xs WHERE (a)-[:KNOWS]->() AND x > 1) AS b, single(x IN xs WHERE (a)-[:KNOWS]->() AND x > 1) AS s, none(x IN xs WHERE (a)-[:KNOWS]->() AND x > 1) AS n
---- rowsort
xs|a|b|s|n
[1, 2]|true|false|true|false
[1, null]|null|false|null|null
[null]|null|null|null|null
[]|false|true|false|true
null|null|null|null|null
[2, 3]|true|true|false|false

# startNode / endNode of relationship values of several tables and labels: whole nodes.
MATCH (m:Message)-[c:HAS_CREATOR]->(:Person {firstName: 'Ann'}) WITH collect(c) AS cs UNWIND cs AS c WITH c, startNode(c) AS m RETURN labels(m) AS l, m.id = startNode(c).id AS same, endNode(c).firstName AS e, [(m)-[:HAS_CREATOR]->(x) | x.firstName] AS again ORDER BY m.id
---- ordered
l|same|e|again
['Post', 'Message']|true|Ann|['Ann']

# Nodes of different labels in one list (values of mixed kind), matched again by identity in
# a pattern predicate and after UNWIND: persons are liked by no one.
MATCH (p:Person)<-[:HAS_CREATOR]-(m) RETURN p.firstName AS n, m.id AS m, [x IN [p, m] WHERE (x)<-[:LIKES]-() | x.id] AS k ORDER BY n, m
---- ordered
n|m|k
Ann|100|[100]
Bob|101|[]
Bob|201|[]
Carl|200|[200]
Dana|102|[102]
Eve|202|[202]

MATCH (p:Person)<-[:HAS_CREATOR]-(m) WITH [p, m] AS xs UNWIND xs AS x MATCH (x)<-[:LIKES]-(q) RETURN x.id AS x, q.firstName AS q ORDER BY x, q
---- ordered
x|q
100|Bob
100|Carl
102|Ann
200|Dana
202|Ann

# COLLECT keeps its subquery's order: a RETURN ... ORDER BY, or a WITH ... ORDER BY before it.
RETURN COLLECT { UNWIND ['b', 'c', 'a'] AS y RETURN y ORDER BY y } AS a, COLLECT { UNWIND ['b', 'c', 'a'] AS y WITH y ORDER BY y DESC RETURN y } AS b, COLLECT { UNWIND [2, 3, 1] AS y RETURN y * 10 AS z ORDER BY z DESC } AS c
---- rowsort
a|b|c
['a', 'b', 'c']|['c', 'b', 'a']|[30, 20, 10]

# ... per outer row, ordered by a property the RETURN does not show.
MATCH (p:Person) WHERE p.firstName IN ['Ann', 'Dana'] RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f:Person) RETURN f.firstName ORDER BY f.age DESC, f.firstName } AS fs ORDER BY p
---- ordered
p|fs
Ann|['Bob', 'Dana', 'Eve', 'Carl']
Dana|['Bob', 'Ann', 'Carl']

# SKIP and LIMIT in a subquery cut the rows of each outer row (in its ORDER BY's order), in a
# WITH, a RETURN or a clause of their own; a WHERE of the WITH filters after the cut.
MATCH (p:Person) RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f) RETURN f.firstName ORDER BY f.age DESC SKIP 1 LIMIT 2 } AS next, COUNT { MATCH (p)-[:KNOWS]-(f) RETURN f LIMIT 2 } AS two, COLLECT { MATCH (p)-[:KNOWS]-(f) ORDER BY f.age LIMIT 1 RETURN f.firstName } AS youngest, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.firstName LIMIT 2 WHERE f.age > 30 RETURN f.firstName } AS cut ORDER BY p
---- ordered
p|next|two|youngest|cut
Ann|['Dana', 'Eve']|2|['Carl']|['Bob']
Bob|['Ann', 'Carl']|2|['Carl']|['Ann']
Carl|['Dana', 'Ann']|2|['Ann']|['Ann', 'Bob']
Dana|['Ann', 'Carl']|2|['Carl']|['Ann', 'Bob']
Eve|[]|1|['Ann']|['Ann']
Finn|[]|0|[]|[]

# A cut without an ORDER BY of its own keeps the order an earlier one gave; the order passes
# through a WHERE after a cut to a later WITH; a later DISTINCT or aggregate does not group by it.
MATCH (p:Person) RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.age LIMIT 2 WHERE f.age > 30 WITH f RETURN f.firstName } AS c, COUNT { MATCH (p)-[:KNOWS]-(f) ORDER BY f.age LIMIT 3 WITH DISTINCT f.gender AS g RETURN g } AS g, COLLECT { MATCH (p)-[:KNOWS]-(f) ORDER BY f.age RETURN f.firstName LIMIT 1 } AS youngest, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.age DESC WITH f SKIP 1 LIMIT 1 RETURN f.firstName } AS second ORDER BY p
---- ordered
p|c|g|youngest|second
Ann|[]|2|['Carl']|['Dana']
Bob|['Ann']|2|['Carl']|['Ann']
Carl|['Ann', 'Dana']|2|['Ann']|['Dana']
Dana|['Ann']|2|['Carl']|['Ann']
Eve|['Ann']|1|['Ann']|[]
Finn|[]|0|[]|[]

# An aggregating WITH gives one row for every outer row, Finn's too (no friends: `[0]`).
MATCH (p:Person) RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.age LIMIT 2 WITH count(*) AS n RETURN n } AS n, COLLECT { UNWIND ['b', 'c', 'a'] AS y WITH y ORDER BY y WITH collect(y) AS ys RETURN ys } AS ys ORDER BY p
---- ordered
p|n|ys
Ann|[2]|[['a', 'b', 'c']]
Bob|[2]|[['a', 'b', 'c']]
Carl|[2]|[['a', 'b', 'c']]
Dana|[2]|[['a', 'b', 'c']]
Eve|[1]|[['a', 'b', 'c']]
Finn|[0]|[['a', 'b', 'c']]

# Inside a subquery too: the order passes through WITHs that keep rows as they come, to a
# collect, a cut or the COLLECT's list.
MATCH (p:Person) RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.age WITH f WITH collect(f.age) AS ages RETURN ages } AS b, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.age DESC WITH f WHERE f.age > 0 WITH f.age AS a RETURN a } AS c, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH f ORDER BY f.age DESC WITH f WITH f LIMIT 2 RETURN f.age } AS d ORDER BY p
---- ordered
p|b|c|d
Ann|[[25, 29, 37, 42]]|[42, 37, 29, 25]|[42, 37]
Bob|[[25, 31, 37]]|[37, 31, 25]|[37, 31]
Carl|[[31, 37, 42]]|[42, 37, 31]|[42, 37]
Dana|[[25, 31, 42]]|[42, 31, 25]|[42, 31]
Eve|[[31]]|[31]|[31]
Finn|[[]]|[]|[]

# An aggregate over no rows of an outer row, as the subquery run for that row alone gives it:
# one row (count 0, sum 0, collect [], avg null), which a WHERE after it may keep; with a
# grouping key, even one read from an outer variable, no rows make no group.
MATCH (p:Person) RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH sum(f.age) AS s, collect(f.firstName) AS fs, avg(f.age) AS a, count(DISTINCT f.gender) AS g RETURN [s, size(fs), a, g] } AS agg, COUNT { MATCH (p)-[:KNOWS]-(f) WITH count(f) AS n WHERE n = 0 RETURN n } AS none, COLLECT { MATCH (p)-[:KNOWS]-(f) WITH p, p.age AS a, count(*) AS k RETURN k + a } AS ka, COUNT { MATCH (p)-[:KNOWS]-(f) WITH f.gender AS g, count(*) AS k RETURN g } AS groups ORDER BY p
---- ordered
p|agg|none|ka|groups
Ann|[[133, 4, 33.25, 2]]|0|[35]|2
Bob|[[93, 3, 31.0, 2]]|0|[45]|2
Carl|[[110, 3, 36.666666666666664, 2]]|0|[28]|2
Dana|[[98, 3, 32.666666666666664, 2]]|0|[40]|2
Eve|[[31, 1, 31.0, 1]]|0|[30]|1
Finn|[[0, 0, null, 0]]|1|[]|0

# The same in WHERE, and a count(*) of no rows in a subquery inside a subquery.
MATCH (p:Person) WHERE EXISTS { MATCH (p)-[:KNOWS]-(f) WITH count(f) AS n WHERE n = 0 RETURN n } RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]->(f) WITH count(*) AS c RETURN c + COUNT { MATCH (p)<-[:KNOWS]-(x) WITH count(*) AS k WHERE k = 0 RETURN k } } AS c
---- ordered
p|c
Finn|[1]

# An aggregating or DISTINCT RETURN: its rows are those of a WITH of its items.
MATCH (p:Person) RETURN p.firstName AS p, COLLECT { MATCH (p)-[:KNOWS]-(f) RETURN count(f) } AS r, COUNT { MATCH (p)-[:KNOWS]-(f) RETURN DISTINCT f.gender } AS g, COLLECT { MATCH (p)-[:KNOWS]-(f) RETURN DISTINCT f.gender ORDER BY f.gender DESC } AS gs, EXISTS { MATCH (p)-[:KNOWS]-(f) RETURN max(f.age) AS m } AS e, COUNT { MATCH (p)-[:KNOWS]-(f) RETURN f.gender AS g, count(*) AS k ORDER BY k DESC LIMIT 1 } AS top, COLLECT { MATCH (p)-[:KNOWS]-(f) RETURN DISTINCT f.gender ORDER BY f.gender LIMIT 1 } AS first ORDER BY p
---- ordered
p|r|g|gs|e|top|first
Ann|[4]|2|['male', 'female']|true|1|['female']
Bob|[3]|2|['male', 'female']|true|1|['female']
Carl|[3]|2|['male', 'female']|true|1|['female']
Dana|[3]|2|['male', 'female']|true|1|['female']
Eve|[1]|1|['female']|true|1|['female']
Finn|[0]|0|[]|true|0|[]

# Uncorrelated cuts: one for every row.
MATCH (p:Person) WHERE EXISTS { MATCH (:Person)-[:KNOWS]->() LIMIT 1 } RETURN count(*) AS n, sum(COUNT { MATCH (:Person)-[:KNOWS]->() SKIP 6 }) AS s
---- ordered
n|s
6|6

# EXISTS with a SKIP: whether more rows than it skips (a SKIP is not ignored).
MATCH (p:Person) WHERE EXISTS { MATCH (p)-[:KNOWS]-(f) RETURN f SKIP 3 } RETURN p.firstName AS p
---- rowsort
p
Ann

# SKIP and LIMIT of a parameter, per outer row; of a wrong value, an error of the values.
-- param s=1
-- param l=1
MATCH (p:Person) WHERE p.id <= 2 RETURN p.id AS id, COLLECT { MATCH (p)-[:KNOWS]-(f) RETURN f.id ORDER BY f.id SKIP $s LIMIT $l } AS fs ORDER BY id
---- ordered
id|fs
1|[3]
2|[3]

-- param l=-1
MATCH (p:Person) RETURN COUNT { MATCH (p)-[:KNOWS]-(f) RETURN f LIMIT $l } AS c
---- runtime-error NegativeIntegerArgument

# A comprehension whose filter is a pattern keeps the list's own elements, in the list's order
# (gathered by position, not collected as values).
MATCH (p:Person) WITH p ORDER BY p.id DESC WITH collect(p) AS ps RETURN [n IN [x IN ps WHERE (x)-[:KNOWS]->(:Person {firstName: 'Ann'})] | n.firstName] AS kept, size([x IN ps WHERE (x)-[:KNOWS]->()]) AS k, [x IN ps WHERE (x)-[:KNOWS]->(:Person {firstName: 'Nobody'})] AS none
---- rowsort
kept|k|none
['Eve', 'Dana']|5|[]

UNWIND [[1, 2, 3], null, []] AS xs RETURN xs, [x IN xs WHERE EXISTS { MATCH (p:Person {id: x}) }] AS kept
---- rowsort
xs|kept
[1, 2, 3]|[1, 2, 3]
[]|[]
null|null

# A subquery sees the outer variables after a WITH of its own, as after WITH *.
MATCH (p:Person) WHERE COUNT { WITH 40 AS age MATCH (p)-[:KNOWS]->(d) WHERE d.age > age } = 1 RETURN p.firstName AS n ORDER BY n
---- ordered
n
Ann

MATCH (p:Person) RETURN p.firstName AS n, EXISTS { WITH * MATCH (p)-[:KNOWS]->(d) RETURN d } AS e, COUNT { WITH 'x' AS one MATCH (p)-[:KNOWS]->(d) RETURN d } AS c, COLLECT { WITH * MATCH (p)-[:KNOWS]->(d) RETURN d.firstName AS f ORDER BY f DESC } AS l ORDER BY n
---- ordered
n|e|c|l
Ann|true|2|['Carl', 'Bob']
Bob|true|2|['Dana', 'Carl']
Carl|true|1|['Dana']
Dana|true|1|['Ann']
Eve|true|1|['Ann']
Finn|false|0|[]

# Reading an outer value and an outer node after its own WITH (and after WITH DISTINCT, whose
# WHERE sees the outer node too).
UNWIND [35, 30] AS k MATCH (p:Person) RETURN k, p.firstName AS n, COUNT { WITH * MATCH (p)-[:KNOWS]->(d) WHERE d.age > k } AS c, COLLECT { WITH k AS lim MATCH (p)-[:KNOWS]->(d) WHERE d.age > lim RETURN d.firstName AS f ORDER BY f } AS l ORDER BY k, n
---- ordered
k|n|c|l
30|Ann|1|['Bob']
30|Bob|1|['Dana']
30|Carl|1|['Dana']
30|Dana|1|['Ann']
30|Eve|1|['Ann']
30|Finn|0|[]
35|Ann|1|['Bob']
35|Bob|1|['Dana']
35|Carl|1|['Dana']
35|Dana|0|[]
35|Eve|0|[]
35|Finn|0|[]

MATCH (p:Person) WHERE COUNT { MATCH (p)-[:KNOWS]->(d) WITH DISTINCT d WHERE d.age > p.age } > 0 RETURN p.firstName AS n ORDER BY n
---- ordered
n
Ann
Carl
Eve

# A comprehension over a list a pattern comprehension or a subquery makes, its filter a pattern
# or a subquery over the list's elements.
MATCH (p:Person) RETURN p.firstName AS f, [x IN [(p)-[:KNOWS]->(t) | t] WHERE (x)-[:KNOWS]->() | x.firstName] AS l, size([x IN [(p)-[:KNOWS]->(t) | t] WHERE NOT (x)-[:KNOWS]->()]) AS n, [x IN COLLECT { MATCH (p)-[:KNOWS]-(t) RETURN t ORDER BY t.age } WHERE COUNT { (x)-[:KNOWS]-() } > 2 | x.firstName] AS busy ORDER BY f
---- ordered
f|l|n|busy
Ann|['Bob', 'Carl']|0|['Carl', 'Dana', 'Bob']
Bob|['Carl', 'Dana']|0|['Carl', 'Ann', 'Dana']
Carl|['Dana']|0|['Ann', 'Dana', 'Bob']
Dana|['Ann']|0|['Carl', 'Ann', 'Bob']
Eve|['Ann']|0|['Ann']
Finn|[]|0|[]

# A subquery may not declare a name the enclosing query has (in an UNWIND, a WITH or its
# RETURN); passing it on as itself is no declaration.
MATCH (p:Person) RETURN COLLECT { MATCH (p)-[:KNOWS]->(x) RETURN x.age AS p } AS c
---- error VariableAlreadyBound

MATCH (p:Person) RETURN COUNT { MATCH (q:Person) UNWIND [1] AS p RETURN q } AS c
---- error VariableAlreadyBound

WITH 1 AS k RETURN COUNT { UNWIND [1, 2] AS x WITH x AS k RETURN k } AS c
---- error VariableAlreadyBound

MATCH (p:Person {id: 1}) RETURN COUNT { MATCH (p)-[:KNOWS]->(x) WITH p AS p, x AS y WITH * RETURN p AS p } AS c
---- rowsort
c
2
