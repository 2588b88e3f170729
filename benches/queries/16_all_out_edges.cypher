// Untyped relationship to an unlabeled node: every relationship out of a person, by type.
MATCH (p:Person {id: 1007})-[r]->(x) RETURN type(r) AS t, count(*) AS n
