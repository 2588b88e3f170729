// Cities of a person's friends.
MATCH (p:Person {id: 1007})-[:KNOWS]->(f:Person)-[:IS_LOCATED_IN]->(c:City) RETURN c.name, count(*) AS n ORDER BY n DESC, c.name
