// Branching over labels: the posts and comments a person likes (one branch per label).
MATCH (p:Person {id: 1007})-[:LIKES]->(m:Post:Comment) RETURN labels(m) AS l, count(*) AS n
