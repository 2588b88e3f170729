MATCH (a:Person)-[:KNOWS*1..2]->(b:Person) RETURN a.id, count(*) AS reach, max(b.age) AS oldest ORDER BY reach DESC, a.id LIMIT 10
