# Named paths, path values and their functions (sample graph).

# A one-hop path: its length, nodes and relationships.
MATCH p = (a:Person {firstName: 'Ann'})-[:KNOWS]->(b) RETURN b.firstName, length(p), size(nodes(p)), size(relationships(p))
---- rowsort
b.firstName|length(p)|size(nodes(p))|size(relationships(p))
Bob|1|2|1
Carl|1|2|1

# A path value in Cypher's text form (the relationship points the way it was matched).
MATCH p = (a:Person {id: 1})<-[:KNOWS]-(b:Person {id: 5}) RETURN p
---- ordered
p
(:Person {id: 1, firstName: 'Ann', lastName: 'Smith', gender: 'female', age: 31, birthday: 725824800000, creationDate: 1325419200000, browserUsed: 'Firefox'})<-[:KNOWS {creationDate: 1672552800000}]-(:Person {id: 5, firstName: 'Eve', lastName: 'Rossi', gender: 'female', age: 29, birthday: 788940000000, creationDate: 1514764800000, browserUsed: 'Chrome'})

# Nodes in path order, whichever way the hops point.
MATCH p = (a:Person {id: 1})<-[:KNOWS]-(b) RETURN [n IN nodes(p) | n.firstName] AS names
---- rowsort
names
['Ann', 'Dana']
['Ann', 'Eve']

# Variable-length segments: every node of the path, in order.
MATCH p = (a:Person {id: 1})-[:KNOWS*1..2]->(b) RETURN [n IN nodes(p) | n.firstName] AS names, length(p) AS len
---- rowsort
names|len
['Ann', 'Bob']|1
['Ann', 'Bob', 'Carl']|2
['Ann', 'Bob', 'Dana']|2
['Ann', 'Carl']|1
['Ann', 'Carl', 'Dana']|2

# Fixed hops and a segment in one path, undirected.
MATCH p = (e:Person {id: 5})-[:KNOWS]->(a)-[:KNOWS*2..2]-(c:Person {id: 3}) RETURN [n IN nodes(p) | n.id] AS ids
---- rowsort
ids
[5, 1, 2, 3]
[5, 1, 4, 3]

# A zero-length path.
MATCH p = (a:Person {id: 3}) RETURN length(p), [n IN nodes(p) | n.firstName] AS names, relationships(p) AS rels
---- ordered
length(p)|names|rels
0|['Carl']|[]

# Several named paths in one MATCH.
MATCH p = (a:Person {id: 1})-[:KNOWS]->(b), q = (b)-[:KNOWS]->(c) RETURN b.firstName, c.firstName, length(p) + length(q) AS len
---- rowsort
b.firstName|c.firstName|len
Bob|Carl|2
Bob|Dana|2
Carl|Dana|2

# Equality of paths (one MATCH would keep the two relationships apart).
MATCH p = (a:Person {id: 1})-[:KNOWS]->(b) MATCH q = (a)-[:KNOWS]->(c) RETURN b.firstName, c.firstName, p = q AS same
---- rowsort
b.firstName|c.firstName|same
Bob|Bob|true
Bob|Carl|false
Carl|Bob|false
Carl|Carl|true

# Paths through WITH, collected and unwound.
MATCH p = (a:Person {id: 1})-[:KNOWS]->() WITH collect(p) AS ps UNWIND ps AS q RETURN length(q), nodes(q)[1].firstName AS friend
---- rowsort
length(q)|friend
1|Bob
1|Carl

# A path OPTIONAL MATCH did not find is null, and so are its functions.
MATCH (a:Person {id: 6}) OPTIONAL MATCH p = (a)-[:KNOWS]->() RETURN p, length(p), nodes(p), relationships(p)
---- ordered
p|length(p)|nodes(p)|relationships(p)
null|null|null|null

# A path through several labels (a branched pattern).
MATCH p = (a:Person {id: 1})-[:LIKES]->(m) RETURN [n IN nodes(p) | labels(n)] AS labels, length(p)
---- rowsort
labels|length(p)
[['Person'], ['Comment', 'Message']]|1
[['Person'], ['Post', 'Message']]|1

# The relationships of a variable-length pattern as a list.
MATCH (a:Person {id: 1})-[r:KNOWS*2..2]->(b:Person {id: 4}) RETURN size(r), [x IN r | type(x)] AS types
---- rowsort
size(r)|types
2|['KNOWS', 'KNOWS']
2|['KNOWS', 'KNOWS']

# A path's properties are those of its elements.
MATCH p = (a:Person {id: 1})-[:KNOWS]->() RETURN p.firstName
---- error InvalidArgumentType

MATCH p = (a:Person)-[:KNOWS]->(p) RETURN p
---- error VariableTypeConflict

MATCH p = (a:Person), p = (b:Person) RETURN p
---- error VariableAlreadyBound

MATCH (p:Person) MATCH p = (a)-[:KNOWS]->(b) RETURN p
---- error VariableAlreadyBound

# List comprehensions and predicates over a path's nodes and relationships.
MATCH p = (a:Person {id: 1})-[:KNOWS*1..2]->(b) WHERE all(n IN nodes(p) WHERE n.age < 40) RETURN [n IN nodes(p) WHERE n.id > 1 | n.firstName] AS others
---- rowsort
others
['Carl']
['Carl', 'Dana']

MATCH p = (a:Person {id: 1})-[:KNOWS*1..2]->(b) RETURN any(n IN nodes(p) WHERE n.age > 40) AS old, none(r IN relationships(p) WHERE type(r) <> 'KNOWS') AS knows, single(n IN nodes(p) WHERE n.firstName = 'Dana') AS dana, [n IN nodes(p) | n.id] AS ids
---- rowsort
old|knows|dana|ids
false|true|false|[1, 3]
false|true|true|[1, 3, 4]
true|true|false|[1, 2]
true|true|false|[1, 2, 3]
true|true|true|[1, 2, 4]

# List predicates are three-valued; a comprehension reads the row's other columns.
UNWIND [[1, null], [2, 3], [], null] AS xs WITH xs, 1 AS k RETURN all(x IN xs WHERE x > 0) AS a, any(x IN xs WHERE x > 2) AS b, [x IN xs WHERE x > k | x * 10] AS c
---- rowsort
a|b|c
null|null|[]
null|null|null
true|false|[]
true|true|[20, 30]

# properties() of nodes and relationships: a map of the properties they have.
MATCH (t:Tag {id: 300})<-[h:HAS_TAG]-(p:Post {id: 101}) RETURN properties(t) AS t, properties(h) AS h, [x IN collect(t) | properties(x)] AS ts
---- ordered
t|h|ts
{id: 300, name: 'graphs'}|{}|[{id: 300, name: 'graphs'}]

# Nodes and relationships compare as the entities they are, in and out of paths.
MATCH p = (a:Person {id: 1})-[k:KNOWS]->(b) RETURN b.firstName, a IN nodes(p) AS a_in, nodes(p)[1] = b AS b_last, relationships(p)[0] = k AS k_first, nodes(p)[0] = b AS b_first
---- rowsort
b.firstName|a_in|b_last|k_first|b_first
Bob|true|true|true|false
Carl|true|true|true|false

# A comprehension reads the row around it (what does not depend on the element, once).
WITH [3, 1, 2] AS xs RETURN [x IN xs WHERE x > xs[1] | x * size(xs)] AS r, [x IN xs | [y IN xs WHERE y < x]] AS nested
---- ordered
r|nested
[9, 6]|[[1, 2], [], [1]]

# A list of relationships matched again as a variable-length relationship: the same
# relationships in the same order.
MATCH (a:Person {id: 1})-[r1:KNOWS]->()-[r2:KNOWS]->(c) WITH [r1, r2] AS rs MATCH (x:Person)-[rs:KNOWS*]->(y) RETURN x.firstName AS x, y.firstName AS y
---- rowsort
x|y
Ann|Carl
Ann|Dana
Ann|Dana

# Walked the other way, the list's first relationship must touch the first node: none does.
MATCH (a:Person {id: 1})-[r1:KNOWS]->()-[r2:KNOWS]->(c) WITH [r1, r2] AS rs MATCH (x:Person)<-[rs:KNOWS*]-(y) RETURN count(*) AS n
---- ordered
n
0

# A relationship list bound by an earlier MATCH, matched again.
MATCH ()-[rs:KNOWS*2]->() WITH rs MATCH (x:Person)-[rs*]->(y) RETURN count(*) AS n
---- ordered
n
10

# A single relationship is not a relationship list.
MATCH ()-[r:KNOWS]->() WITH r MATCH ()-[r*]->() RETURN count(*)
---- error VariableTypeConflict

# A named path, then a MATCH from one of its nodes over relationships of several tables: the
# path and its nodes are carried through the branches once.
MATCH p = (a:Person {id: 1})-[:KNOWS]->(b) MATCH (a)-->(x) RETURN length(p) AS l, labels(x)[0] AS xl, count(*) AS c ORDER BY xl
---- ordered
l|xl|c
1|City|2
1|Comment|2
1|Person|4
1|Post|2
1|Tag|4

# A property map on a variable-length relationship holds for every relationship of the path
# (a path of length 0 has none).
MATCH (a:Person {id: 1})-[:KNOWS*0..2 {creationDate: 1420092000000}]->(b:Person) RETURN b.firstName AS b
---- rowsort
b
Ann
Bob

MATCH (a:Person {id: 1})-[r:KNOWS*1..3 {creationDate: 1420092000000}]-(b:Person) RETURN b.firstName AS b, size(r) AS n
---- rowsort
b|n
Bob|1
