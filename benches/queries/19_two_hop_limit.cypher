// LIMIT without ORDER BY: the expansions stop once ten two-hop paths are out.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.id, c.id LIMIT 10
