// A person's 3-hop KNOWS paths as node lists (params: pairs_scale100.csv, `$a`).
MATCH p = (a:Person {id: $a})-[:KNOWS]->(b:Person)-[:KNOWS]->(c:Person)-[:KNOWS]->(d:Person) RETURN nodes(p) LIMIT 100
