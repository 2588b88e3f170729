# OPTIONAL MATCH keeps rows without a match, with nulls.

# Finn knows nobody.
MATCH (p:Person) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) RETURN p.firstName AS p, f.firstName AS f ORDER BY p, f
---- ordered
p|f
Ann|Bob
Ann|Carl
Bob|Carl
Bob|Dana
Carl|Dana
Dana|Ann
Eve|Ann
Finn|null

# The WHERE of an OPTIONAL MATCH filters the match, not the rows.
MATCH (p:Person) OPTIONAL MATCH (p)-[k:KNOWS]->(f:Person) WHERE f.age > 40 RETURN p.firstName AS p, f.firstName AS f ORDER BY p
---- ordered
p|f
Ann|Bob
Bob|null
Carl|null
Dana|null
Eve|null
Finn|null

# IS NULL on a missing node.
MATCH (p:Person) OPTIONAL MATCH (p)<-[:HAS_MODERATOR]-(f:Forum) WITH p, f WHERE f IS NULL RETURN count(*) AS n
---- rowsort
n
4

# coalesce over an optional value.
MATCH (p:Person {id: 6}) OPTIONAL MATCH (p)-[:KNOWS]->(f:Person) RETURN coalesce(f.firstName, 'nobody') AS name, f
---- rowsort
name|f
nobody|null

# One optional hop from a node bound with several labels: every row once, with nulls where
# the message has no like.
MATCH (m:Message) OPTIONAL MATCH (m)<-[:LIKES]-(l:Person) RETURN m.id, l.id ORDER BY m.id, l.id
---- ordered
m.id|l.id
100|2
100|3
101|null
102|1
200|4
201|null
202|1

# Optional hops one after the other, counted: a missing match counts once.
MATCH (m:Message) OPTIONAL MATCH (m)<-[:LIKES]-(l:Person) OPTIONAL MATCH (m)-[:HAS_TAG]->(t:Tag) RETURN count(*) AS n, count(l) AS likes, count(t) AS tags
---- rowsort
n|likes|tags
9|7|7
