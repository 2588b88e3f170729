// Distinct friends of friends.
MATCH (p:Person {id: 1007})-[:KNOWS]->(:Person)-[:KNOWS]->(fof:Person) RETURN count(DISTINCT fof) AS n
