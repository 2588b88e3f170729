# Aggregates with implicit grouping keys.

# Out-degree ranking.
MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.firstName AS name, count(b) AS deg ORDER BY deg DESC, name
---- ordered
name|deg
Ann|2
Bob|2
Carl|1
Dana|1
Eve|1

# Several aggregates per group.
MATCH (p:Person) RETURN p.gender AS g, count(*) AS n, min(p.age) AS lo, max(p.age) AS hi, sum(p.age) AS total ORDER BY g
---- ordered
g|n|lo|hi|total
female|3|29|37|97
male|3|25|55|122

# avg is a float.
MATCH (p:Person) RETURN avg(p.age) AS a
---- rowsort
a
36.5

# count(DISTINCT ...) per group.
MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City) RETURN c.name AS city, count(DISTINCT p.gender) AS genders, count(p) AS people ORDER BY city
---- ordered
city|genders|people
Berlin|2|3
Lyon|2|3

# count(DISTINCT node).
MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN count(DISTINCT f) AS n
---- rowsort
n
4

# A computed grouping key.
MATCH (p:Person) RETURN p.age / 10 * 10 AS decade, count(*) AS n ORDER BY decade
---- ordered
decade|n
20|2
30|2
40|1
50|1

# ORDER BY an aggregate, then LIMIT.
MATCH (p:Person)<-[:KNOWS]-(x:Person) RETURN p.firstName AS name, count(*) AS fans ORDER BY fans DESC, name LIMIT 3
---- ordered
name|fans
Ann|2
Carl|2
Dana|2

# Aggregates over no rows: count 0, sum 0, collect [], max null.
MATCH (p:Person) WHERE p.age > 100 RETURN count(*) AS c, sum(p.age) AS s, collect(p.firstName) AS l, max(p.age) AS m
---- rowsort
c|s|l|m
0|0|[]|null

# collect skips nulls; an expression around aggregates.
UNWIND [1, null, 2] AS x RETURN size(collect(x)) AS n, count(x) * 10 AS c
---- rowsort
n|c
2|20

# count(DISTINCT) of a missing optional node is 0 (nulls are not counted).
OPTIONAL MATCH (t:Tag {id: -1}) RETURN count(DISTINCT t) AS n, count(t) AS m
---- rowsort
n|m
0|0

# Path counts (factorized in CSR mode): two hops ending at people over 30.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE c.age > 30 RETURN count(*) AS n
---- rowsort
n
7

# collect keeps the order a WITH ... ORDER BY gave the rows (the sort is not dropped as
# unneeded below the aggregation), per group too, and after a LIMIT.
MATCH (p:Person) WITH p.age AS age ORDER BY age WITH collect(age) AS ages RETURN ages
---- ordered
ages
[25, 29, 31, 37, 42, 55]

# Descending, grouped.
MATCH (p:Person) WITH p.gender AS g, p.firstName AS name ORDER BY name DESC WITH g, collect(name) AS names RETURN g, names ORDER BY g
---- ordered
g|names
female|['Eve', 'Dana', 'Ann']
male|['Finn', 'Carl', 'Bob']

# Ordered, then limited.
UNWIND [3, 1, 2, 5, 4] AS x WITH x ORDER BY x DESC LIMIT 3 RETURN collect(x) AS xs
---- ordered
xs
[5, 4, 3]

# The order passes through WITHs that keep rows as they come (a projection, a WHERE, a LIMIT)
# to a later collect, per group too.
MATCH (p:Person)-[:KNOWS]-(f) WITH p, f ORDER BY f.age WITH p, f WHERE f.age > 26 WITH p.firstName AS p, f.age AS a WITH p, collect(a) AS ages RETURN p, ages ORDER BY p
---- ordered
p|ages
Ann|[29, 37, 42]
Bob|[31, 37]
Carl|[31, 37, 42]
Dana|[31, 42]
Eve|[31]

MATCH (p:Person) WITH p ORDER BY p.age DESC WITH p WITH p LIMIT 4 RETURN collect(p.age) AS ages
---- ordered
ages
[55, 42, 37, 31]

# A SKIP / LIMIT without an ORDER BY of its own, after WITHs that keep rows as they come, cuts
# in the order an earlier ORDER BY gave (over enough rows to be split between threads).
UNWIND range(1, 20000) AS x WITH x ORDER BY x DESC WITH x WHERE x % 2 = 0 WITH x SKIP 1 LIMIT 3 RETURN collect(x) AS xs
---- ordered
xs
[19998, 19996, 19994]

UNWIND range(1, 20000) AS x WITH x ORDER BY x DESC WITH x WHERE x % 3 = 0 RETURN x LIMIT 2
---- ordered
x
19998
19995

# collect(DISTINCT ...) after ORDER BY: each value where it first comes.
UNWIND [[1, 'b'], [2, 'a'], [3, 'b'], [4, 'c'], [5, 'a']] AS x WITH x[0] AS k, x[1] AS v ORDER BY k DESC WITH collect(DISTINCT v) AS vs RETURN vs
---- ordered
vs
['a', 'c', 'b']

# Degrees per node (counted from the CSR offsets in CSR mode); nodes without edges have no row.
MATCH (a:Person)-[:KNOWS]->(b) RETURN a.id, count(*) AS d ORDER BY a.id
---- ordered
a.id|d
1|2
2|2
3|1
4|1
5|1

# In-degree per node with a filter on it, count of the far node.
MATCH (a:Person)<-[:KNOWS]-(b:Person) WHERE a.age > 30 RETURN a.firstName, count(b) AS fans ORDER BY a.firstName
---- ordered
a.firstName|fans
Ann|2
Bob|1
Dana|2

# Undirected degree: each edge once from each end.
MATCH (a:Person)-[:KNOWS]-(b:Person) RETURN a.id, count(*) AS d, count(DISTINCT b) AS nd ORDER BY a.id
---- ordered
a.id|d|nd
1|4|4
2|3|3
3|3|3
4|3|3
5|1|1

# Distinct neighbours either way per node.
MATCH (a:Person)-[:KNOWS]-(b:Person) RETURN a.id, count(DISTINCT b) AS nd ORDER BY a.id
---- ordered
a.id|nd
1|4
2|3
3|3
4|3
5|1

# A filter on the far node: counted per node through the passing neighbours.
MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.age > 30 RETURN a.id, count(*) AS d ORDER BY a.id
---- ordered
a.id|d
1|1
2|1
3|1
4|1
5|1

# Grouped by a property that is not the key: per-node counts summed per group.
MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.age > 30 AS old, count(*) AS n ORDER BY old
---- ordered
old|n
false|2
true|5

# Top-k by in-degree with the winners' properties.
MATCH (a:Person)<-[:KNOWS]-(b:Person) RETURN a.id, a.firstName, count(*) AS c ORDER BY c DESC, a.id LIMIT 3
---- ordered
a.id|a.firstName|c
1|Ann|2
3|Carl|2
4|Dana|2

# Two-hop counts per start node.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:IS_LOCATED_IN]->(c:City) RETURN a.id, count(*) AS n ORDER BY a.id
---- ordered
a.id|n
1|2
2|2
3|1
4|1
5|1

# Directed triangles (each counted once per rotation), in total and per node.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN count(*) AS n
---- ordered
n
6

MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN a.firstName, count(*) AS n ORDER BY a.firstName
---- ordered
a.firstName|n
Ann|2
Bob|1
Carl|1
Dana|2

# Undirected triangles: four, each in six orders.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a) RETURN count(*) AS n
---- ordered
n
24

# Triangles with mixed directions and a relationship filter.
MATCH (a:Person)-[:KNOWS]->(b:Person)<-[:KNOWS]-(c:Person)-[:KNOWS]->(a) RETURN count(*) AS n
---- ordered
n
2

MATCH (a:Person)-[k:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) WHERE k.creationDate >= 1577880000000 RETURN count(*) AS n
---- ordered
n
3

# A parameter in a triangle's relationship filter.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[k:KNOWS]->(a) WHERE k.creationDate >= $d RETURN count(*) AS n
-- param d=1577880000000
---- ordered
n
3

# Longer cycles through several tables (no relationship can be walked twice), counted
# without rows: a comment's creator knows the creator of the post it replies to (LSQB's q2).
MATCH (p1:Person)-[:KNOWS]-(p2:Person), (p1)<-[:HAS_CREATOR]-(c:Comment)-[:REPLY_OF]->(m:Post)-[:HAS_CREATOR]->(p2) RETURN count(*) AS n
---- ordered
n
1

# A post's likers who know someone who replied to it: per liker, and likes since 2020 only.
MATCH (p1:Person)-[:LIKES]->(m:Post)<-[:REPLY_OF]-(c:Comment)-[:HAS_CREATOR]->(p2:Person)-[:KNOWS]-(p1) RETURN p1.firstName AS name, count(*) AS n ORDER BY name
---- ordered
name|n
Ann|1
Bob|1

MATCH (p1:Person)-[l:LIKES]->(m:Post)<-[:REPLY_OF]-(c:Comment)-[:HAS_CREATOR]->(p2:Person)-[:KNOWS]-(p1) WHERE l.creationDate >= 1577880000000 RETURN count(*) AS n
---- ordered
n
1

# Five hops: a forum's members who know the creator of a reply to one of its posts (Ann and
# Bob know Carl), with filters on an inner node and on the first.
MATCH (p1:Person)<-[:HAS_MEMBER]-(f:Forum)-[:CONTAINER_OF]->(m:Post)<-[:REPLY_OF]-(c:Comment)-[:HAS_CREATOR]->(p2:Person)-[:KNOWS]-(p1) WHERE f.id = 10 RETURN count(*) AS n
---- ordered
n
2

MATCH (p1:Person)<-[:HAS_MEMBER]-(f:Forum)-[:CONTAINER_OF]->(m:Post)<-[:REPLY_OF]-(c:Comment)-[:HAS_CREATOR]->(p2:Person)-[:KNOWS]-(p1) WHERE p1.age > 35 RETURN count(*) AS n
---- ordered
n
1

# Sums, least, greatest and averages of the far node's property per node (pushed along the
# hop in CSR mode).
MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, sum(b.age) AS s, min(b.age) AS lo, max(b.age) AS hi, avg(b.age) AS m ORDER BY a.id
---- ordered
a.id|s|lo|hi|m
1|67|25|42|33.5
2|62|25|37|31.0
3|37|37|37|37.0
4|31|31|31|31.0
5|31|31|31|31.0

# Over two hops in total.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN sum(c.age) AS s, count(*) AS n, max(c.age) AS hi, min(c.age) AS lo
---- rowsort
s|n|hi|lo
332|10|42|25

# Over two hops, grouped by a property of the start (per-row values summed per group).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.firstName AS name, sum(c.age) AS s, min(c.age) AS lo, avg(c.age) AS m, count(c.age) AS k ORDER BY name
---- ordered
name|s|lo|m|k
Ann|99|25|33.0|3
Bob|68|31|34.0|2
Carl|31|31|31.0|1
Dana|67|25|33.5|2
Eve|67|25|33.5|2

# Per city, over a chain into the city's people and on to whom they know.
MATCH (c:City)<-[:IS_LOCATED_IN]-(a:Person)-[:KNOWS]->(b:Person) RETURN c.name AS city, sum(b.age) AS s, count(*) AS n ORDER BY city
---- ordered
city|s|n
Berlin|160|5
Lyon|68|2

# A star of two arms: the sum over one arm times the other's paths.
MATCH (b:Person)<-[:KNOWS]-(a:Person)-[:IS_LOCATED_IN]->(c:City) WHERE a.age > 30 RETURN sum(b.age) AS s, count(*) AS n
---- rowsort
s|n
160|5

# Values of a filtered far node, none for some starts (no row for them).
MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.age > 40 RETURN a.id, max(b.age) AS hi, sum(b.age) AS s ORDER BY a.id
---- ordered
a.id|hi|s
1|42|42

# No path at all: one row of nulls and zeros.
MATCH (a:Person)-[:KNOWS]->(b:Person) WHERE b.age > 100 RETURN sum(b.age) AS s, min(b.age) AS lo, avg(b.age) AS m, count(*) AS n
---- rowsort
s|lo|m|n
0|null|null|0

# Grouped by a node returned whole: grouped by its key, its properties taken once per group.
MATCH (a:Person)<-[:KNOWS]-(b:Person) RETURN a, count(*) AS n ORDER BY n DESC, a.id LIMIT 2
---- ordered
a|n
(:Person {id: 1, firstName: 'Ann', lastName: 'Smith', gender: 'female', age: 31, birthday: 725824800000, creationDate: 1325419200000, browserUsed: 'Firefox'})|2
(:Person {id: 3, firstName: 'Carl', lastName: 'Garcia', gender: 'male', age: 25, birthday: 915170400000, creationDate: 1420092000000, browserUsed: 'Firefox'})|2

# Grouped by a node of an OPTIONAL MATCH: the group of rows without one is null.
MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) WHERE f.age > 40 WITH f, count(*) AS n RETURN f.firstName AS name, f.age AS age, n ORDER BY n DESC
---- ordered
name|age|n
null|null|5
Bob|42|1

# Over a variable-length hop: paths of each length, counted and valued per start.
MATCH (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN a.id, count(*) AS n, sum(b.age) AS s, max(b.age) AS hi ORDER BY a.id
---- ordered
a.id|n|s|hi
1|5|166|42
2|4|130|37
3|2|68|37
4|3|98|42
5|3|98|42

# Length 0 included: the node itself is an end.
MATCH (a:Person)<-[:KNOWS*0..2]-(b:Person) WHERE b.age > 30 RETURN count(*) AS n, min(b.age) AS lo
---- rowsort
n|lo
16|31

# Two hops exactly, grouped by the node.
MATCH (a:Person)-[:KNOWS*2]->(b:Person) WITH a, count(b) AS n RETURN a.firstName AS name, n ORDER BY name
---- ordered
name|n
Ann|3
Bob|2
Carl|1
Dana|2
Eve|2

# avg() of integers is their exact sum over their count: a running float sum would lose the
# 1 next to 2^53 and answer 0.0, in whichever order the rows came.
UNWIND [9007199254740993, 1, -9007199254740992] AS x RETURN avg(x) AS m
---- rowsort
m
0.6666666666666666

# Percentiles: the nearest rank (a value of the group) and linear interpolation; nulls left out.
UNWIND [30, null, 10, 20, 40] AS x RETURN percentileDisc(x, 0.5) AS d, percentileCont(x, 0.5) AS c, percentileDisc(x, 0.0) AS lo, percentileDisc(x, 1.0) AS hi
---- rowsort
d|c|lo|hi
20|25.0|10|40

# Per group, floats; a group without values has none.
UNWIND [{g: 1, x: 1.5}, {g: 1, x: 2.5}, {g: 2, x: null}] AS r WITH r.g AS g, r.x AS x RETURN g, percentileCont(x, 0.25) AS c, percentileDisc(x, 0.5) AS d ORDER BY g
---- ordered
g|c|d
1|1.75|1.5
2|null|null

# A percentile outside 0..1 is an error of the values.
UNWIND [1, 2] AS x RETURN percentileDisc(x, 1.5) AS p
---- runtime-error NumberOutOfRange

# Standard deviations: of a sample and of a population; fewer values deviate by 0.0.
UNWIND [2, 4, 4, 4, 5, 5, 7, 9] AS x RETURN stDevP(x) AS p, stDev(x) > stDevP(x) AS wider, stDev(1) AS one
---- rowsort
p|wider|one
2.0|true|0.0

# sum / avg of values whose kind only rows tell: integers from reduce, temporal components,
# durations.
UNWIND [[1, 2], [3, 4]] AS xs RETURN sum(reduce(t = 0, x IN xs | t + x)) AS s, avg(reduce(t = 0, x IN xs | t + x)) AS a
---- rowsort
s|a
10|5.0

UNWIND [date('2020-01-01'), date('2022-06-01')] AS d RETURN sum(d.year) AS s, avg(d.year) AS a
---- rowsort
s|a
4042|2021.0

UNWIND [duration('P1D'), duration('PT12H')] AS d RETURN sum(d) AS s, avg(d) AS a
---- rowsort
s|a
P1DT12H|PT18H

UNWIND [1, 'a'] AS x WITH x WHERE x = 2 RETURN sum(x) AS s, avg(x) AS a
---- rowsort
s|a
0|null

# Counted factorized, the paths whose ends meet subtracted (LSQB q6's shape).
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:HAS_INTEREST]->(t:Tag) WHERE a <> c RETURN count(*) AS n
---- ordered
n
26

# Two hops each way but not a third: the paths closed by an edge subtracted (LSQB q9's shape), per root.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:HAS_INTEREST]->(t:Tag) WHERE NOT (a)-[:KNOWS]-(c) AND a <> c RETURN a.firstName AS name, count(*) AS n ORDER BY name
---- ordered
name|n
Eve|2

# Directed, the absent edge one way.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE NOT (a)-[:KNOWS]->(c) RETURN count(*) AS n
---- ordered
n
8

# Both ways with distinct ends.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person) WHERE a <> c RETURN count(*) AS n
---- ordered
n
30

# Undirected over one table: the walks back over an edge subtracted.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person) RETURN count(*) AS n
---- ordered
n
30

# A tree: the messages of the middle node multiply its paths.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person), (b)<-[:HAS_CREATOR]-(m:Message) RETURN a.firstName AS name, count(*) AS n ORDER BY name
---- ordered
name|n
Ann|5
Bob|2
Carl|1
Dana|2
Eve|2

# A node as a grouping key and its property next to an aggregate (the node's columns stand
# for it; it has no column of its own).
MATCH (p:Person)-[:KNOWS]->(f:Person) WITH p, p.age - max(f.age) AS d RETURN p.firstName AS name, d ORDER BY name
---- ordered
name|d
Ann|-11
Bob|5
Carl|-12
Dana|6
Eve|-2

# Patterns of several cycles counted by joining node by node: two triangles sharing the
# edge b -> c (no two of its edges could be one).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (b)-[:KNOWS]->(d:Person)<-[:KNOWS]-(c) RETURN count(*) AS n
---- ordered
n
1

# The same, grouped by a node of the pattern (the root, counted per row).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)<-[:KNOWS]-(a), (b)-[:KNOWS]->(d:Person)<-[:KNOWS]-(c) RETURN b.firstName AS b, count(*) AS n ORDER BY b
---- ordered
b|n
Bob|1

# The same from a filtered node, over three MATCH clauses.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) MATCH (a)-[:KNOWS]->(c) MATCH (b)-[:KNOWS]->(d:Person)<-[:KNOWS]-(c) WHERE d.age > 20 RETURN count(*) AS n
---- ordered
n
1

# Undirected, where a -> c and d -> c could be one edge (a = d): left to the rows.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a), (b)-[:KNOWS]-(d:Person)-[:KNOWS]-(c) RETURN count(*) AS n
---- ordered
n
24

# A cycle of two hops; persons of one city who know each other, per city; three who all
# know each other in one city (as LSQB's q3 over countries).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(a) RETURN count(*) AS n
---- ordered
n
0

MATCH (a:Person)-[:KNOWS]-(b:Person), (a)-[:IS_LOCATED_IN]->(c:City)<-[:IS_LOCATED_IN]-(b) RETURN c.name AS city, count(*) AS n ORDER BY city
---- ordered
city|n
Berlin|4
Lyon|2

MATCH (c:City) MATCH (a:Person)-[:IS_LOCATED_IN]->(c) MATCH (b:Person)-[:IS_LOCATED_IN]->(c) MATCH (d:Person)-[:IS_LOCATED_IN]->(c) MATCH (a)-[:KNOWS]-(b)-[:KNOWS]-(d)-[:KNOWS]-(a) RETURN count(*) AS n
---- ordered
n
0

# count() of an OPTIONAL MATCH's node or relationship alone, in a total: the paths where it
# matched (counted without rows); grouped, a node without a match keeps its row of 0.
MATCH (t:Tag)<-[:HAS_TAG]-(m:Message) OPTIONAL MATCH (m)<-[:LIKES]-(l:Person) RETURN count(l) AS n
---- ordered
n
6

MATCH (p:Person) OPTIONAL MATCH (p)-[r:KNOWS]->(f:Person) RETURN count(r) AS n
---- ordered
n
7

MATCH (t:Tag)<-[:HAS_TAG]-(m:Message) OPTIONAL MATCH (m)<-[r:LIKES]-(l:Person) RETURN count(r) AS n, count(l) AS k
---- ordered
n|k
6|6

MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) RETURN p.firstName AS name, count(f) AS n ORDER BY name
---- ordered
name|n
Ann|2
Bob|2
Carl|1
Dana|1
Eve|1
Finn|0

# Grouped, counted where it matched: beside another optional match (each match of `f`
# once per `m`), per a node reached by a hop, and with persons who like nothing left out.
MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) OPTIONAL MATCH (p)<-[:HAS_CREATOR]-(m) RETURN p.firstName AS n, count(f) AS c ORDER BY n
---- ordered
n|c
Ann|2
Bob|4
Carl|1
Dana|1
Eve|1
Finn|0

MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City) OPTIONAL MATCH (p)-[:KNOWS]->(f) RETURN c.name AS n, count(f) AS c ORDER BY n
---- ordered
n|c
Berlin|5
Lyon|2

MATCH (p:Person)-[:LIKES]->(m) OPTIONAL MATCH (m)<-[:REPLY_OF]-(r) RETURN p.firstName AS n, count(r) AS c ORDER BY n
---- ordered
n|c
Ann|1
Bob|1
Carl|1
Dana|1

# The same, as one label each (counted without rows; the unlabelled forms above branch):
# each friend's posts, Finn (who knows no one) left out; beside another optional match.
MATCH (p:Person)-[:KNOWS]->(q:Person) OPTIONAL MATCH (q)<-[:HAS_CREATOR]-(m:Post) RETURN p.firstName AS n, count(m) AS c ORDER BY n
---- ordered
n|c
Ann|1
Bob|1
Carl|1
Dana|1
Eve|1

MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) OPTIONAL MATCH (p)<-[:HAS_CREATOR]-(m:Post) RETURN p.firstName AS n, count(f) AS c ORDER BY n
---- ordered
n|c
Ann|2
Bob|2
Carl|1
Dana|1
Eve|1
Finn|0

MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) RETURN count(f) AS n, count(*) AS m
---- ordered
n|m
7|8
