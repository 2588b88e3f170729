// One hop with a relationship filter and a target filter.
MATCH (p:Person {id: 1007})-[k:KNOWS]->(f:Person) WHERE k.creationDate > 1420070400000 AND f.age > 35 RETURN f.firstName
