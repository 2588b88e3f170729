// Average age per city of people living in a country, over untyped 1..2-hop reachability.
MATCH (p:Person)-[:IS_LOCATED_IN]->(c:City)-[*1..2]->(co:Country {name: 'country_1'}) RETURN c.name, avg(p.age) AS age ORDER BY c.name
