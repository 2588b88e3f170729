// KNOWS 4-cliques (either direction) through the first 100 persons: the last node is in three bound nodes' lists at once.
MATCH (a:Person)-[:KNOWS]-(b:Person)-[:KNOWS]-(c:Person)-[:KNOWS]-(a), (a)-[:KNOWS]-(d:Person)-[:KNOWS]-(b), (c)-[:KNOWS]-(d) WHERE a.id < 1100 RETURN count(*) AS n
