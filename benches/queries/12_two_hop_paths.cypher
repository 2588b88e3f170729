// Number of 2-hop KNOWS paths from one person.
MATCH (p:Person {id: 1007})-[:KNOWS]->(:Person)-[:KNOWS]->(f:Person) RETURN count(*) AS n
