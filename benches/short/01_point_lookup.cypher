// A person by key.
MATCH (p:Person {id: $id}) RETURN p.firstName, p.lastName, p.age
