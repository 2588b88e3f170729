// Number of 2-hop KNOWS paths in the whole graph (factorized on the CSR path).
MATCH (a:Person)-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person) RETURN count(*) AS n
