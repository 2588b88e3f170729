// Grouped by a whole node that is not the pattern's start: grouped by its key, properties taken for the winners.
MATCH (f:Person)-[:KNOWS]->(p:Person)-[:KNOWS]->(q:Person) WHERE f.age > 60 WITH p, count(*) AS n ORDER BY n DESC, p.id LIMIT 3 RETURN p, n
