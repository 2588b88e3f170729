// 2-hop KNOWS paths with filters at both ends, counted.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE a.age < 30 AND c.age > 50 RETURN count(*) AS n
