# Vector similarity and distance over lists of numbers.

# Neo4j's similarities: cosine as (1 + cos) / 2, Euclidean as 1 / (1 + d^2).
RETURN vector.similarity.cosine([1, 0], [0, 1]) AS c, vector.similarity.cosine([1.0, 2.0], [2.0, 4.0]) AS same, vector.similarity.euclidean([1, 0], [0, 1]) AS e
---- rowsort
c|same|e
0.5|1.0|0.3333333333333333

# Lance's distances: l2 squared (the default), cosine 1 - cos, dot 1 - a.b.
RETURN vector_distance([1, 2], [3, 4]) AS l2, vector_distance([1, 0], [0, 1], 'cosine') AS cos, vector_distance([1, 0], [1, 0], 'dot') AS dot
---- rowsort
l2|cos|dot
8.0|1.0|0.0

# A null vector gives null; so does a zero vector's cosine.
RETURN vector_distance(null, [1, 2]) AS a, vector.similarity.cosine([0, 0], [1, 2]) AS b
---- rowsort
a|b
null|null

# Nearest first, by a distance computed per row.
UNWIND [[0, 3], [1, 1], [4, 0]] AS v RETURN v, vector_distance(v, [1, 0]) AS d ORDER BY d
---- ordered
v|d
[1, 1]|1.0
[4, 0]|9.0
[0, 3]|10.0

# Vectors of different dimensions are an error.
RETURN vector_distance([1, 2], [1, 2, 3]) AS d
---- runtime-error InvalidArgumentValue

# So is a metric the function does not know.
RETURN vector_distance([1, 2], [1, 2], 'manhattan') AS d
---- runtime-error InvalidArgumentValue

# And a vector that is not a list.
RETURN vector.similarity.cosine('a', [1]) AS d
---- runtime-error InvalidArgumentType

# Only the direction counts for cosine, however small or large the numbers (squares of 1e-200
# or 1e200 leave f64's range).
RETURN vector.similarity.cosine([1e-200, 1e-200], [0.5, 0.5]) AS tiny, vector.similarity.cosine([1e200, 1e200], [0.5, 0.5]) AS huge, vector_distance([4611686018427387904, 4611686018427387904], [0.5, 0.5], 'cosine') AS big
---- rowsort
tiny|huge|big
1.0|1.0|0.0
