// KNOWS edges per gender of the source (per-node counts summed per group).
MATCH (a:Person)-[:KNOWS]->(b:Person) RETURN a.gender, count(*) AS n ORDER BY a.gender
