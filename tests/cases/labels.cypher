# Label expressions and several labels per node. In the sample, posts and comments also carry
# `Message`, cities and countries `Place` (LDBC's hierarchy); `:A:B` means both labels, `:A|B`
# either, `:!A` not, `:%` any label.

# A label several tables carry matches the nodes of each.
MATCH (m:Message) RETURN labels(m) AS l, count(*) AS n ORDER BY l
---- ordered
l|n
['Comment', 'Message']|3
['Post', 'Message']|3

# `:A:B` (and `:A&B`) needs both labels: no node is a post and a comment.
MATCH (m:Post:Comment) RETURN count(*) AS n
---- ordered
n
0

# ... and a property map on such a node is no typo: there is nothing to match.
MATCH (m:Post:Comment {id: 100}) RETURN m.id AS id
---- ordered
id

MATCH (p:Person)-[:LIKES]->(m:Post:Comment {id: 100}) RETURN count(*) AS n
---- ordered
n
0

MATCH (m:Post:Message), (x:Message&Comment) RETURN count(DISTINCT m) AS posts, count(DISTINCT x) AS comments
---- ordered
posts|comments
3|3

# Negation and the wildcard.
MATCH (m:Message&!Post) RETURN m.id AS id ORDER BY id
---- ordered
id
200
201
202

MATCH (n:%) RETURN count(*) AS n
---- ordered
n
22

MATCH (n:!Person&!Message&!Place) RETURN labels(n) AS l, count(*) AS n ORDER BY l
---- ordered
l|n
['Forum']|2
['Tag']|2
['TagClass']|2

MATCH (n:(City|Country)&Place) RETURN n.name AS name ORDER BY name
---- ordered
name
Berlin
France
Germany
Lyon

# A property map looked up across the tables of a union label.
MATCH (p:Place {name: 'Lyon'}) RETURN labels(p) AS l, p.id AS id
---- ordered
l|id
['City', 'Place']|501

# A hop from a union label: HAS_CREATOR has a table from posts and one from comments.
MATCH (m:Message)-[:HAS_CREATOR]->(p:Person {firstName: 'Bob'}) RETURN m.id AS id ORDER BY id
---- ordered
id
101
201

# Label tests in expressions.
MATCH (a:Person {firstName: 'Ann'})-[:LIKES]->(m) RETURN m.id AS id, m:Message AS msg, m:Post|Comment AS either, m:Post&Comment AS both, m:!Post AS notPost ORDER BY id
---- ordered
id|msg|either|both|notPost
102|true|true|false|false
202|true|true|false|true

MATCH (n) WHERE n:Place RETURN count(*) AS n
---- ordered
n
4

# In a comprehension's WHERE a top-level `|` starts the projection; in parentheses it is an
# alternative.
MATCH (a:Person {firstName: 'Ann'}) RETURN [(a)-[:LIKES]->(m) WHERE m:Post | m.id] AS posts, size([(a)-[:LIKES]->(m) WHERE m:(Post|Comment) | m.id]) AS both
---- ordered
posts|both
[102]|2

# A node renders with every label.
MATCH (m:Post {id: 101}) RETURN m
---- ordered
m
(:Post:Message {id: 101, content: 'hello graphs', length: 12, language: 'en', creationDate: 1577880000000})

# A label no table carries is an error in strict mode.
MATCH (m:Post|Nope) RETURN m
---- error UnknownLabel

# A variable-length hop whose shortest length no table serves still reaches a table with
# several labels at its longer lengths.
MATCH (a:Forum)-[:HAS_TAG*1..2]-(b:Post) RETURN count(*) AS n
---- ordered
n
4

# An ORDER BY under WITH before an aggregate over a label several tables carry: DataFusion's
# sort removal took the aggregate's repartition away (a planning error, or a key counted in
# two groups).
MATCH (m:Message) WITH m ORDER BY m.id RETURN m.language AS b, count(*) AS c ORDER BY b
---- ordered
b|c
de|1
en|2
null|3

MATCH (p:Person)<-[:HAS_CREATOR]-(m:Message) WITH m ORDER BY m.id DESC RETURN m.language AS b, count(*) AS c ORDER BY b
---- ordered
b|c
de|1
en|2
null|3
