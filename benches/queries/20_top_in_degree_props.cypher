// Top-10 in-degree with the winners' properties (degrees from the CSR offsets).
MATCH (a:Person)<-[:KNOWS]-(b:Person) RETURN a.id, a.firstName, a.lastName, count(*) AS fans ORDER BY fans DESC, a.id LIMIT 10
