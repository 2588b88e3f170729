# Temporal values: construction, components, arithmetic, comparison, ordering.

# From strings and maps; rendered as Neo4j does.
RETURN date('2015-W30-2') AS d, localtime('214032.142') AS t, datetime({year: 1984, month: 10, day: 11, hour: 12, timezone: 'Europe/Stockholm'}) AS dt, duration({months: 0.75}) AS dur
---- ordered
d|t|dt|dur
2015-07-21|21:40:32.142|1984-10-11T12:00+01:00[Europe/Stockholm]|P22DT19H51M49.5S

# Per row: a datetime from each person's birthday (epoch milliseconds), its components.
MATCH (p:Person) WITH p.firstName AS name, datetime({epochMillis: p.birthday}) AS b RETURN name, b.year AS y, b.month AS m, b.dayOfWeek AS dow ORDER BY b LIMIT 3
---- ordered
name|y|m|dow
Finn|1968|12|2
Bob|1982|1|5
Dana|1987|1|4

# Durations between rows' dates; a date plus a duration; comparison across rows.
MATCH (p:Person) WITH p, date(datetime({epochMillis: p.birthday})) AS d WHERE d < date('1990-01-01') RETURN p.firstName AS name, toString(d + duration('P1M')) AS next, duration.inDays(d, date('2000-01-01')).days AS days ORDER BY name
---- ordered
name|next|days
Bob|1982-02-01|6574
Dana|1987-02-01|4748
Finn|1969-01-31|11323

# Lists and collect of temporal values keep their kind; ORDER BY sorts zoned values by instant.
UNWIND [datetime('2020-01-01T10:00+02:00'), datetime('2020-01-01T09:00Z'), datetime('2020-01-01T08:30Z')] AS t RETURN collect(toString(t)) AS ts ORDER BY ts
---- ordered
ts
['2020-01-01T10:00+02:00', '2020-01-01T09:00Z', '2020-01-01T08:30Z']

UNWIND [datetime('2020-01-01T10:00+02:00'), datetime('2020-01-01T09:00Z'), datetime('2020-01-01T08:30Z')] AS t RETURN t ORDER BY t
---- ordered
t
2020-01-01T10:00+02:00
2020-01-01T08:30Z
2020-01-01T09:00Z

# Truncation, then components set.
RETURN datetime.truncate('week', datetime('2017-10-11T12:31:14.645876123+01:00'), {dayOfWeek: 2}) AS w, date.truncate('millennium', date('2017-10-11')) AS m
---- ordered
w|m
2017-10-10T00:00+01:00|2000-01-01

# A duration has no order: < is null; equality compares months, days and seconds.
RETURN duration('PT1M') < duration('PT2M') AS lt, duration('PT60S') = duration('PT1M') AS eq
---- ordered
lt|eq
null|true

# Text that is not a date is an ArgumentError when a row evaluates it.
RETURN date('2015-13-01') AS d
---- runtime-error InvalidArgumentValue
