// Top-10 tags over all post tags.
MATCH (p:Post)-[:HAS_TAG]->(t:Tag) RETURN t.name, count(*) AS n ORDER BY n DESC, t.name LIMIT 10
