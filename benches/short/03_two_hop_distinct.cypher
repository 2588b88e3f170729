// How many distinct friends of friends.
MATCH (p:Person {id: $id})-[:KNOWS]->(:Person)-[:KNOWS]->(fof:Person) RETURN count(DISTINCT fof) AS n
