// Directed KNOWS triangles (each counted once per rotation): intersections of sorted lists.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN count(*) AS n
