// Length of a shortest KNOWS path between two persons, either direction, unbounded
// (params: pairs_scale100.csv).
MATCH (a:Person {id: $a}), (b:Person {id: $b}) MATCH p = shortestPath((a)-[:KNOWS*]-(b)) RETURN length(p)
