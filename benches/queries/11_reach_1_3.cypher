// Reachability: distinct persons within 1..3 KNOWS hops (breadth-first on the CSR).
MATCH (p:Person {id: 1007})-[:KNOWS*1..3]->(f:Person) RETURN count(DISTINCT f) AS n
