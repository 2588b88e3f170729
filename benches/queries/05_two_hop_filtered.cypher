// Two hops with a target filter at the end.
MATCH (p:Person {id: 1007})-[:KNOWS]->(:Person)-[:KNOWS]->(fof:Person) WHERE fof.age < 30 AND fof.gender = 'female' RETURN count(*) AS n
