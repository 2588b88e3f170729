# WITH, RETURN, ORDER BY, SKIP, LIMIT, DISTINCT, UNWIND, UNION.

# ORDER BY with SKIP and LIMIT.
MATCH (p:Person) RETURN p.firstName ORDER BY p.age DESC SKIP 1 LIMIT 2
---- ordered
p.firstName
Bob
Dana

# ORDER BY, SKIP / OFFSET and LIMIT as clauses of their own: the rows so far sorted and cut,
# every variable kept; an aggregate after them follows their order.
MATCH (p:Person) ORDER BY p.age DESC OFFSET 1 LIMIT 3 RETURN collect(p.firstName) AS names, count(*) AS n
---- ordered
names|n
['Bob', 'Dana', 'Ann']|3

MATCH (p:Person)-[:KNOWS]->(f) ORDER BY f.age, p.firstName LIMIT 2 MATCH (f)-[:KNOWS]->(g) ORDER BY p.firstName DESC SKIP 1 RETURN p.firstName AS p, f.firstName AS f, g.firstName AS g
---- rowsort
p|f|g
Ann|Carl|Dana

UNWIND [3, 1, 2] AS x ORDER BY x DESC WITH collect(x) AS xs UNWIND xs AS y SKIP 1 RETURN xs, y
---- ordered
xs|y
[3, 2, 1]|2
[3, 2, 1]|1

# Also where no variable is in scope (a WITH * there is an error).
MATCH (:Person) LIMIT 2 RETURN count(*) AS n
---- ordered
n
2

# A negative count is refused where written.
MATCH (p:Person) LIMIT -1 RETURN p
---- error NegativeIntegerArgument

# DISTINCT.
MATCH (p:Person)-[:KNOWS]->(f:Person) RETURN DISTINCT f.gender ORDER BY f.gender
---- ordered
f.gender
female
male

# A WITH chain with aggregation and a filter on the aggregate.
MATCH (a:Person)-[:KNOWS]->(b:Person) WITH a, count(b) AS deg WHERE deg >= 2 WITH a.firstName AS name ORDER BY name RETURN name
---- ordered
name
Ann
Bob

# WITH * passes everything on.
MATCH (p:Person {id: 2}) WITH * RETURN p.firstName
---- rowsort
p.firstName
Bob

# WITH renames a node; its properties follow it.
MATCH (p:Person {id: 3}) WITH p AS q RETURN q.firstName, q.age
---- rowsort
q.firstName|q.age
Carl|25

# ORDER BY a variable that is not returned.
MATCH (p:Person) WHERE p.gender = 'male' RETURN p.firstName AS n ORDER BY p.age
---- ordered
n
Carl
Bob
Finn

# UNWIND a literal list.
UNWIND [3, 1, 2] AS x RETURN x ORDER BY x DESC
---- ordered
x
3
2
1

# UNWIND of null and of an empty list give no rows.
UNWIND null AS x RETURN x
---- rowsort
x

# UNWIND a collected list.
MATCH (p:Person) WHERE p.age > 50 WITH collect(p.firstName) AS names UNWIND names AS n RETURN n
---- rowsort
n
Finn

# UNION removes duplicates.
MATCH (p:Person) WHERE p.age < 30 RETURN p.firstName AS n UNION MATCH (p:Person) WHERE p.gender = 'female' RETURN p.firstName AS n
---- rowsort
n
Ann
Carl
Dana
Eve

# UNION ALL keeps them.
MATCH (p:Person) WHERE p.age < 30 RETURN p.firstName AS n UNION ALL MATCH (p:Person) WHERE p.gender = 'female' RETURN p.firstName AS n
---- rowsort
n
Ann
Carl
Dana
Eve
Eve

# A query without MATCH.
RETURN 1 + 2 AS x, 'a' + 'b' AS s, [1, 2, 3] AS l, {a: 1} AS m, null AS n
---- rowsort
x|s|l|m|n
3|ab|[1, 2, 3]|{a: 1}|null

# Column names are the expression text.
MATCH (p:Person {id: 1}) RETURN p.age + 1, toUpper(p.firstName)
---- rowsort
p.age + 1|toUpper(p.firstName)
32|ANN

# WITH's WHERE may read variables from before the WITH (no aggregation, DISTINCT, SKIP or
# LIMIT): Eve and Finn like nothing (the others all like something).
MATCH (p:Person) OPTIONAL MATCH (p)-[r:LIKES]->(m) WITH p WHERE r IS NULL RETURN p.firstName AS n ORDER BY n
---- ordered
n
Eve
Finn

# ... and projected names in the same WHERE.
MATCH (a:Person) WITH a.firstName AS name WHERE a.age > 40 AND name <> 'Bob' RETURN name ORDER BY name
---- ordered
name
Finn
