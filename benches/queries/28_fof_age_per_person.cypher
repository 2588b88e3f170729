// Average and greatest age of friends of friends per person, top 10 (values pushed along two hops).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN a.id, avg(c.age) AS m, max(c.age) AS hi ORDER BY m DESC, a.id LIMIT 10
