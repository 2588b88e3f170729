// Every shortest KNOWS path between two persons (params: pairs_scale100.csv).
MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = allShortestPaths((a)-[:KNOWS*]-(b)) RETURN count(p)
