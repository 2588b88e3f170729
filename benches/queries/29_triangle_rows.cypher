// Triangles as rows (not a plain count): each closing node found by intersecting sorted lists.
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(a) RETURN count(DISTINCT c) AS n
