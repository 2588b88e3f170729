// Directed KNOWS 4-cycles through the first 100 persons: the last node by intersecting two sorted lists, counted without a row per cycle.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person)-[:KNOWS]->(a) WHERE a.id < 1100 RETURN count(*) AS n
