// Variable length over two types: what a person reaches within two KNOWS/LIKES hops.
MATCH (p:Person {id: 1007})-[:KNOWS|LIKES*1..2]->(x) RETURN labels(x) AS l, count(*) AS n
