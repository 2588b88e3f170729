// Variable length over a type with two tables (Comment->Comment, Comment->Post): the posts
// comments under 6000000700 reply to, within 1..6 hops.
MATCH (c:Comment)-[:REPLY_OF*1..6]->(p:Post) WHERE c.id < 6000000700 RETURN count(*) AS n
