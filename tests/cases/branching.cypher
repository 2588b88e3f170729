# Branching: several labels on a node, several types on a relationship, unlabeled nodes and
# untyped relationships become one branch per label / table combination the configuration
# allows (UNION ALL). Expected rows checked against the per-label queries written out by hand.

# `(m:Post|Comment)` means either label: Ann likes one post and one comment.
MATCH (a:Person {firstName: 'Ann'})-[:LIKES]->(m:Post|Comment) RETURN labels(m) AS l, m.content AS c ORDER BY c
---- ordered
l|c
['Post', 'Message']|borrow checker tips
['Comment', 'Message']|thanks

# An unlabeled node is any label: every node of the graph.
MATCH (n) RETURN count(*) AS c
---- rowsort
c
22

# Untyped relationship to an unlabeled node: every relationship out of Ann, with its type and
# the label of its other end.
MATCH (p:Person {firstName: 'Ann'})-[r]->(x) RETURN type(r) AS t, labels(x) AS l, count(*) AS n ORDER BY t, l
---- ordered
t|l|n
HAS_INTEREST|['Tag']|2
IS_LOCATED_IN|['City', 'Place']|1
KNOWS|['Person']|2
LIKES|['Comment', 'Message']|1
LIKES|['Post', 'Message']|1

# Alternation, undirected: REPLY_OF only reaches posts from comments, HAS_CREATOR goes to persons.
MATCH (m:Post)-[r:HAS_CREATOR|REPLY_OF]-(x) RETURN m.id AS post, type(r) AS t, labels(x) AS l, count(*) AS c ORDER BY post, t, l
---- ordered
post|t|l|c
100|HAS_CREATOR|['Person']|1
100|REPLY_OF|['Comment', 'Message']|1
101|HAS_CREATOR|['Person']|1
102|HAS_CREATOR|['Person']|1
102|REPLY_OF|['Comment', 'Message']|1

# A type with several tables (HAS_TAG from Post, Comment and Forum) and a filter on the end.
MATCH (x)-[r:HAS_TAG]->(t:Tag {name: 'rust'}) RETURN labels(x) AS l, count(*) AS c ORDER BY l
---- ordered
l|c
['Forum']|1
['Post', 'Message']|2

# A property only some labels have: null on the others, so WHERE keeps only those that match.
MATCH (n) WHERE n.name STARTS WITH 'r' RETURN labels(n) AS l, n.name AS name
---- rowsort
l|name
['Tag']|rust

# Identity across labels: distinct nodes and relationships count (label, key) and (table, edge)
# pairs; edge row ids repeat between the two LIKES tables.
MATCH (a)-[r:LIKES]->(b) WHERE r.creationDate > 0 RETURN count(DISTINCT b) AS n, count(DISTINCT r) AS rs, count(r) AS k
---- rowsort
n|rs|k
4|5|5

# Rows an OPTIONAL MATCH missed count no several-label entity (6 persons, 2 like nothing).
MATCH (p:Person) OPTIONAL MATCH (p)-[:LIKES]->(m) RETURN count(DISTINCT m) AS n, count(m) AS k, count(*) AS c
---- rowsort
n|k|c
4|5|7

# A several-label variable carried by WITH and matched again: each branch continues with one label.
MATCH (a:Person)-[:LIKES]->(m) WITH m MATCH (m)-[:HAS_CREATOR]->(p:Person) RETURN labels(m) AS l, m.id AS id, p.firstName AS creator ORDER BY id, creator
---- ordered
l|id|creator
['Post', 'Message']|100|Ann
['Post', 'Message']|100|Ann
['Post', 'Message']|102|Dana
['Comment', 'Message']|200|Carl
['Comment', 'Message']|202|Eve

# Aggregating over a several-label variable, then filtering.
MATCH (x)-[:HAS_TAG]->(t) WITH x, count(t) AS tags WHERE tags > 1 RETURN labels(x) AS l, x.id AS id, tags
---- rowsort
l|id|tags
['Post', 'Message']|100|2

# OPTIONAL MATCH with branches.
MATCH (a:Person {firstName: 'Ann'}) OPTIONAL MATCH (a)-[r]->(x:Message) RETURN a.firstName AS n, type(r) AS t, x.id AS id ORDER BY id
---- ordered
n|t|id
Ann|LIKES|102
Ann|LIKES|202

# A node and a several-label node compare by label and key.
MATCH (a:Person {firstName: 'Ann'})-[:LIKES]->(m), (p:Post {id: 102}) RETURN m = p AS same, labels(m) AS l ORDER BY l
---- ordered
same|l
false|['Comment', 'Message']
true|['Post', 'Message']

# Variable length over a type with two tables (REPLY_OF: Comment->Comment, Comment->Post):
# one traversal walks both; the end branches per label. Checked against the one-hop edges.
MATCH (c:Comment {id: 201})-[r:REPLY_OF*1..3]->(x) RETURN labels(x) AS l, x.id AS id, size(r) AS n ORDER BY n, id
---- ordered
l|id|n
['Comment', 'Message']|200|1
['Post', 'Message']|100|2

# Several types on a variable-length relationship: the sums of the fixed-length patterns
# (one hop: Comment 1, Person 2, Post 1; two hops via KNOWS: Person 3, Post 2).
MATCH (p:Person {id: 1})-[:KNOWS|LIKES*1..2]->(x) RETURN labels(x) AS l, count(*) AS n ORDER BY l
---- ordered
l|n
['Comment', 'Message']|1
['Person']|5
['Post', 'Message']|3

# A several-label variable in a pattern no label of it can match: no rows (not an error).
MATCH (x)-[:HAS_TAG]->(t:Tag) WITH x MATCH (x)-[:KNOWS]->(n {firstName: 'Bob'}) RETURN count(*) AS c
---- rowsort
c
0

# A property map key no candidate label has: the label was not written, so the property is
# null (openCypher) and nothing matches. With a written label it is a typo (errors.cypher).
MATCH (n {nmae: 'rust'}) RETURN count(n) AS c
---- rowsort
c
0

MATCH (n:Person:Tag {nmae: 'rust'}) RETURN n
---- error UnknownProperty

# A pattern that would need too many branches asks for labels.
MATCH (a)--(b)--(c) RETURN count(*)
---- error AmbiguousPattern
