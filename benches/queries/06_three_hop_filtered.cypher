// Three hops, filtered at the end.
MATCH (p:Person {id: 1007})-[:KNOWS]->(:Person)-[:KNOWS]->(:Person)-[:KNOWS]->(c:Person) WHERE c.browserUsed = 'Opera' RETURN count(*) AS n
