// Point lookup by key.
MATCH (p:Person {id: 1007}) RETURN p.firstName, p.lastName, p.age
