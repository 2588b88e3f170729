// One hop from a person.
MATCH (p:Person {id: 1007})-[:KNOWS]->(f:Person) RETURN f.firstName, f.age
