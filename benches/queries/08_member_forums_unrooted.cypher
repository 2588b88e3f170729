// Forums a person belongs to, written from the forum side (re-rooting is still to come).
MATCH (f:Forum)-[:HAS_MEMBER]->(p:Person) WHERE p.id = 1007 RETURN f.title
