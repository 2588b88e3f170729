// The forums a person belongs to, written from the forum side with the key in WHERE.
MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = $id RETURN f.title
