// The city of the most-known person: a top-1 by in-degree joined to a second hop.
MATCH (f:Person)-[:KNOWS]->(p:Person) WITH p, count(f) AS n ORDER BY n DESC, p.id LIMIT 1 MATCH (p)-[:IS_LOCATED_IN]->(c:City) RETURN p.id, n, c.name
