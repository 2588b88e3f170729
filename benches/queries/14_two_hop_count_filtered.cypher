// 2-hop paths through people over 70 (re-rooted at the middle node, counted as a star).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) WHERE b.age > 70 RETURN count(*) AS n
