// People per city (a grouped count over one hop).
MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City) RETURN c.id, c.name, count(p) AS people ORDER BY people DESC, c.id LIMIT 10
