# Cases on the sample graph (datasets/src/sample.rs documents it). Format: query lines, then
# `---- ordered` / `---- rowsort` / `---- error Kind`, the column header and rows joined by `|`,
# then a blank line. `-- param name=literal` lines give parameters.

# Every person, in key order.
MATCH (p:Person) RETURN p.firstName ORDER BY p.id
---- ordered
p.firstName
Ann
Bob
Carl
Dana
Eve
Finn

# Outgoing hop with a property map on the start node.
MATCH (a:Person {firstName: 'Ann'})-[:KNOWS]->(f:Person) RETURN f.firstName AS friend
---- rowsort
friend
Bob
Carl

# Incoming hop.
MATCH (a:Person {firstName: 'Ann'})<-[:KNOWS]-(b:Person) RETURN b.firstName
---- rowsort
b.firstName
Dana
Eve

# Undirected hop matches both directions.
MATCH (a:Person {id: 1})-[:KNOWS]-(b:Person) RETURN b.firstName
---- rowsort
b.firstName
Bob
Carl
Dana
Eve

# Unlabeled endpoints get their label from the relationship table.
MATCH (a:Person {id: 4})-[:KNOWS]->(b) RETURN b.firstName
---- rowsort
b.firstName
Ann

# Two hops: each KNOWS edge times the out-degree of its target.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*) AS paths
---- rowsort
paths
10

# Relationship uniqueness: an undirected 2-hop never walks back over the same edge.
MATCH (a:Person {id: 1})-[r1:KNOWS]-(b)-[r2:KNOWS]-(c) RETURN count(*) AS paths
---- rowsort
paths
6

# A cycle closes on a bound variable.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN a.firstName, b.firstName, c.firstName
---- rowsort
a.firstName|b.firstName|c.firstName
Ann|Bob|Dana
Ann|Carl|Dana
Bob|Dana|Ann
Carl|Dana|Ann
Dana|Ann|Bob
Dana|Ann|Carl

# Two patterns sharing a variable.
MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City), (q:Person)-[:IS_LOCATED_IN]->(c) WHERE p.id < q.id AND p.gender = q.gender RETURN p.firstName, q.firstName, c.name
---- rowsort
p.firstName|q.firstName|c.name
Ann|Eve|Berlin
Carl|Finn|Lyon

# Disconnected patterns are a cross product.
MATCH (t:Tag), (c:Country) RETURN count(*) AS n
---- rowsort
n
4

# Relationship tables of one type between different labels.
MATCH (c:Comment)-[:REPLY_OF]->(p:Post) RETURN c.id, p.id
---- rowsort
c.id|p.id
200|100
202|102

# A longer chain over several labels.
MATCH (c:Comment)-[:REPLY_OF]->(c2:Comment)-[:REPLY_OF]->(post:Post)<-[:CONTAINER_OF]-(f:Forum) RETURN c.id, f.title
---- rowsort
c.id|f.title
201|Graph Lovers

# Relationship property filter and type().
MATCH (:Person {id: 5})-[k:KNOWS]->(x:Person) RETURN type(k), k.creationDate > 0, x.firstName
---- rowsort
type(k)|k.creationDate > 0|x.firstName
KNOWS|true|Ann

# Whole nodes as values.
MATCH (t:Tag {id: 300}) RETURN t
---- rowsort
t
(:Tag {id: 300, name: 'graphs'})

# Whole relationships as values.
MATCH (:Tag {id: 301})-[h:HAS_TYPE]->(:TagClass) RETURN h
---- rowsort
h
[:HAS_TYPE]

# RETURN * lists variables by name.
MATCH (t:Tag {id: 301})-[:HAS_TYPE]->(c:TagClass) RETURN *
---- rowsort
c|t
(:TagClass {id: 401, name: 'Technology'})|(:Tag {id: 301, name: 'rust'})

# Parameters.
-- param minAge=40
MATCH (p:Person) WHERE p.age > $minAge RETURN p.firstName
---- rowsort
p.firstName
Bob
Finn

# String parameter in a property map.
-- param name='Dana'
MATCH (p:Person {firstName: $name})-[:KNOWS]->(f) RETURN f.firstName
---- rowsort
f.firstName
Ann

# A tag hierarchy walk.
MATCH (t:Tag)-[:HAS_TYPE]->(tc:TagClass)-[:IS_SUBCLASS_OF]->(sup:TagClass) RETURN t.name, sup.name
---- rowsort
t.name|sup.name
rust|Science

# Two MATCH clauses in a row.
MATCH (f:Forum {id: 11}) MATCH (f)-[:HAS_MEMBER]->(p:Person) RETURN p.firstName
---- rowsort
p.firstName
Dana
Eve

# Variable length: one row per path, relationships not repeated within a path.
MATCH (a:Person {id: 1})-[r:KNOWS*1..3]->(b:Person) RETURN b.firstName, size(r) AS len ORDER BY len, b.firstName
---- ordered
b.firstName|len
Bob|1
Carl|1
Carl|2
Dana|2
Dana|2
Ann|3
Ann|3
Dana|3

# A zero-length path is the start node itself.
MATCH (a:Person {id: 4})-[:KNOWS*0..1]->(b) RETURN b.firstName
---- rowsort
b.firstName
Ann
Dana

# Unbounded, up a tag-class hierarchy.
MATCH (t:TagClass {id: 401})-[:IS_SUBCLASS_OF*]->(s) RETURN s.name
---- rowsort
s.name
Science

# Paths that close on the start node.
MATCH (a:Person {id: 1})-[:KNOWS*2..3]->(a) RETURN count(*) AS cycles
---- rowsort
cycles
2

# Undirected, from a node without relationships.
MATCH (a:Person {id: 6})-[:KNOWS*1..2]-(b) RETURN count(*) AS n
---- rowsort
n
0

# Distinct ends of a variable-length pattern (breadth-first in CSR mode).
MATCH (a:Person {id: 1})-[:KNOWS*1..3]->(b:Person) RETURN count(DISTINCT b) AS n
---- rowsort
n
4

MATCH (a:Person {id: 1})-[:KNOWS*1..2]->(b:Person) RETURN DISTINCT b.firstName ORDER BY b.firstName
---- ordered
b.firstName
Bob
Carl
Dana

# Over one table of a type with two (Comment->Comment, Comment->Post): paths ending at a
# Comment can only use the first.
MATCH (c:Comment {id: 201})-[:REPLY_OF*1..3]->(x:Comment) RETURN x.id
---- rowsort
x.id
200

# A relationship bound by an earlier clause matched again: exactly that relationship.
MATCH ()-[r:KNOWS]->() WITH r MATCH (a)-[r]->(b) RETURN count(*) AS n
---- rowsort
n
7

# ...with the same endpoints.
MATCH (x)-[r:KNOWS]->(y) WITH x, r, y MATCH (a)-[r]->(b) RETURN count(*) AS n, sum(CASE WHEN a = x AND b = y THEN 1 ELSE 0 END) AS same
---- rowsort
n|same
7|7

# Written the other way round, its ends swap; undirected, it matches both ways.
MATCH (x)-[r:KNOWS]->(y) WITH x, r, y MATCH (a)<-[r]-(b) MATCH (c)-[r]-(d) RETURN count(*) AS n, sum(CASE WHEN a = y AND b = x THEN 1 ELSE 0 END) AS swapped
---- rowsort
n|swapped
14|14

# Another type never matches it; a null one (an OPTIONAL MATCH miss) matches nothing.
MATCH ()-[r:KNOWS]->() WITH r MATCH ()-[r:LIKES]->() RETURN count(*) AS n
---- rowsort
n
0

OPTIONAL MATCH (:Person {id: 999})-[r:KNOWS]->() WITH r MATCH ()-[r]->() RETURN count(*) AS n
---- rowsort
n
0

# In an OPTIONAL MATCH that fails, the row stays with nulls.
MATCH ()-[r:KNOWS]->() WITH r LIMIT 1 OPTIONAL MATCH (c:City)-[r]->() RETURN c
---- rowsort
c
null

# A bound relationship list is not re-matched as a single relationship.
MATCH ()-[r:KNOWS*2]->() WITH r MATCH ()-[r]->() RETURN count(*) AS n
---- error VariableTypeConflict

# A filter (with a parameter) on the end node of a variable-length hop.
MATCH (a:Person {id: 1})-[:KNOWS*1..2]->(b:Person) WHERE b.age > $age RETURN b.firstName AS n ORDER BY n
-- param age=30
---- ordered
n
Bob
Dana
Dana

# Cyclic patterns as rows (CSR mode: the closing node found by intersecting sorted neighbour
# lists). Directed triangles, each in its three rotations.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN a.id, b.id, c.id ORDER BY a.id, b.id
---- ordered
a.id|b.id|c.id
1|2|4
1|3|4
2|4|1
3|4|1
4|1|2
4|1|3

# A directed 4-cycle, in its four rotations.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN a.id, b.id, c.id, d.id ORDER BY a.id
---- ordered
a.id|b.id|c.id|d.id
1|2|3|4
2|3|4|1
3|4|1|2
4|1|2|3

# A diamond: two ways of two hops from a to d.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(d:Person), (a)-[:KNOWS]->(c:Person)-[:KNOWS]->(d) RETURN a.id, b.id, c.id, d.id ORDER BY b.id
---- ordered
a.id|b.id|c.id|d.id
1|2|3|4
1|3|2|4

# A closing relationship's properties and a filter on the node found.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[k:KNOWS]->(a) WHERE c.age > 30 RETURN a.firstName, c.firstName, k.creationDate >= 1451606400000 AS late ORDER BY a.firstName
---- ordered
a.firstName|c.firstName|late
Ann|Dana|true
Ann|Dana|true
Bob|Ann|false
Carl|Ann|true
Dana|Bob|true

# A relationship's id is unique across relationship tables (each table numbers its own rows).
MATCH ()-[r]->() RETURN count(*) = count(DISTINCT id(r)) AS unique
---- rowsort
unique
true

# Cycles counted by the intersection (no row per match): directed 4-cycles, one per start.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) RETURN count(*) AS n
---- rowsort
n
4

# Undirected 4-cycles per start: Ann, Bob, Carl and Dana know each other both ways round.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(d:Person)-[:KNOWS]-(a) RETURN a.firstName AS name, count(*) AS n ORDER BY name
---- ordered
name|n
Ann|6
Bob|6
Carl|6
Dana|6

# A counted diamond with a filter on a middle node; its two middle nodes differ.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(d:Person), (a)-[:KNOWS]->(c:Person)-[:KNOWS]->(d) WHERE b.age > 30 RETURN count(*) AS n
---- rowsort
n
1

# No cycle at all: zero, not null.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) WHERE a.age > 100 RETURN count(*) AS n
---- rowsort
n
0

# A 4-clique: its last node is in three bound nodes' lists at once. Ann, Bob, Carl and Dana
# all know each other one way or the other: every order of the four.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a), (a)-[:KNOWS]-(d:Person)-[:KNOWS]-(b), (c)-[:KNOWS]-(d) RETURN a.id, b.id, c.id, d.id ORDER BY a.id, b.id, c.id, d.id LIMIT 7
---- ordered
a.id|b.id|c.id|d.id
1|2|3|4
1|2|4|3
1|3|2|4
1|3|4|2
1|4|2|3
1|4|3|2
2|1|3|4

# Counted, with a filter on the last node.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a), (a)-[:KNOWS]-(d:Person)-[:KNOWS]-(b), (c)-[:KNOWS]-(d) WHERE d.age > 30 RETURN count(*) AS n
---- rowsort
n
18

# A node taken from a list (or null) matches again where it stands in a pattern.
MATCH (a:Person)-[:KNOWS]->(b) WITH a, collect(b) AS bs UNWIND bs AS b2 MATCH (a)-[:KNOWS]->(b2) RETURN a.firstName AS a, b2.firstName AS b ORDER BY a, b
---- ordered
a|b
Ann|Bob
Ann|Carl
Bob|Carl
Bob|Dana
Carl|Dana
Dana|Ann
Eve|Ann

MATCH (a:Person {firstName: 'Ann'})-[:KNOWS]->(b) WITH collect(b) AS fs UNWIND fs AS f MATCH (f)<-[:HAS_CREATOR]-(m) RETURN f.firstName AS f, count(m) AS c ORDER BY f
---- ordered
f|c
Bob|2
Carl|1

WITH null AS a OPTIONAL MATCH p = (a)-[r]->() RETURN nodes(p) AS n, r
---- rowsort
n|r
null|null

# A value that cannot be a node cannot stand for one.
WITH 1 AS n MATCH (n) RETURN n
---- error VariableTypeConflict

MATCH (n:Person) WITH [n] AS users MATCH (users)-->(m) RETURN m
---- error VariableTypeConflict

# A relationship taken from a path (a value) matched again: exactly that relationship.
MATCH p = (a:Person {firstName: 'Ann'})-[:KNOWS*2]->(b) UNWIND relationships(p) AS r MATCH (x)-[r]->(y) RETURN x.firstName AS x, y.firstName AS y
---- rowsort
x|y
Ann|Bob
Ann|Bob
Ann|Carl
Bob|Carl
Bob|Dana
Carl|Dana

# startNode / endNode of a path's relationships.
MATCH p = (:Person {firstName: 'Ann'})-[:KNOWS]->(:Person)-[:KNOWS]->(:Person {firstName: 'Dana'}) RETURN [r IN relationships(p) | startNode(r).firstName + '>' + endNode(r).firstName] AS hops ORDER BY hops
---- ordered
hops
['Ann>Bob', 'Bob>Dana']
['Ann>Carl', 'Carl>Dana']

# A value that cannot be a relationship can't be matched as one.
WITH 1 AS r MATCH ()-[r]-() RETURN r
---- error VariableTypeConflict

# An OPTIONAL MATCH reading a path: each path its own (paths starting at one node included).
MATCH p = (a:Person {firstName: 'Ann'})-[:KNOWS]->(b) OPTIONAL MATCH (c:Person) WHERE c = last(nodes(p)) RETURN b.firstName AS b, c.firstName AS c
---- rowsort
b|c
Bob|Bob
Carl|Carl

# A node IN a list of nodes and node = node value compare identities, three-valued: a null
# element makes a miss null, an empty list is false even for null.
MATCH (a:Person {firstName:'Ann'})-[:KNOWS]->(b) WITH collect(b) + [null] AS bs, collect(b)[0] AS first MATCH (c:Person) OPTIONAL MATCH (c)-[:KNOWS]->(d:Person {firstName: 'Ann'}) RETURN c.firstName AS c, c IN bs AS i, d IN [] AS e, d IN bs AS n, c = first AS f ORDER BY c
---- ordered
c|i|e|n|f
Ann|null|false|null|false
Bob|true|false|null|true
Carl|true|false|null|false
Dana|null|false|null|false
Eve|null|false|null|false
Finn|null|false|null|false

# Consecutive MATCHes are planned as one pattern, but a relationship of one may be a
# relationship of the other (uniqueness holds within each clause only): a's out-degree
# squared, summed.
MATCH (a:Person)-[:KNOWS]->(b) MATCH (a)-[:KNOWS]->(c) RETURN count(*) AS n
---- rowsort
n
11

# Within one clause the two relationships differ.
MATCH (a:Person)-[:KNOWS]->(b), (a)-[:KNOWS]->(c) RETURN count(*) AS n
---- rowsort
n
4

# Two persons of one city who know each other, the city matched first: each
# IS_LOCATED_IN relationship may serve both clauses.
MATCH (c:City) MATCH (p1:Person)-[:IS_LOCATED_IN]->(c) MATCH (p2:Person)-[:IS_LOCATED_IN]->(c) MATCH (p1)-[:KNOWS]-(p2) RETURN count(*) AS n
---- rowsort
n
6

# Uniqueness inside a clause holds after merging: the second clause's two KNOWS differ.
MATCH (x:Person) MATCH (x)-[:KNOWS]-(y)-[:KNOWS]-(z) RETURN count(*) AS n
---- rowsort
n
30

# The relationships the merge names stay out of RETURN *.
MATCH (a:Person {id: 1}) MATCH (a)-[:KNOWS]->(b) RETURN * ORDER BY b.id
---- ordered
a|b
(:Person {id: 1, firstName: 'Ann', lastName: 'Smith', gender: 'female', age: 31, birthday: 725824800000, creationDate: 1325419200000, browserUsed: 'Firefox'})|(:Person {id: 2, firstName: 'Bob', lastName: 'Jones', gender: 'male', age: 42, birthday: 378691200000, creationDate: 1356976800000, browserUsed: 'Chrome'})
(:Person {id: 1, firstName: 'Ann', lastName: 'Smith', gender: 'female', age: 31, birthday: 725824800000, creationDate: 1325419200000, browserUsed: 'Firefox'})|(:Person {id: 3, firstName: 'Carl', lastName: 'Garcia', gender: 'male', age: 25, birthday: 915170400000, creationDate: 1420092000000, browserUsed: 'Firefox'})
