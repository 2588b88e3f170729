// A person's friends, with a relationship filter and a friend filter.
MATCH (p:Person {id: $id})-[k:KNOWS]->(f:Person) WHERE k.creationDate > 1420070400000 AND f.age > 35 RETURN f.firstName
