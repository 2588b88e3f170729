// Top-10 out-degree over all KNOWS edges.
MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.id, count(*) AS deg ORDER BY deg DESC, a.id LIMIT 10
