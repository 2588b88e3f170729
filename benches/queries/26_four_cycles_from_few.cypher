// Directed KNOWS 4-cycles through the first 100 persons (a cycle the intersection rule does not take).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) WHERE a.id < 1100 RETURN count(*) AS n
