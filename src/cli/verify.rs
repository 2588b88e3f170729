//! Random-query equivalence (`lance-csr verify`): generates random valid queries over a graph's
//! schema (patterns with branching and variable length, filters on sampled values, WITH,
//! aggregates, ORDER BY + LIMIT), runs each with every rule on (CSR mode) and with all of them
//! off (the join path), and reports every query whose results differ.
//!
//! Results are compared exactly where the query fixes the order (it orders by every returned
//! column, so ties are identical rows), as multisets otherwise.
//!
//! The plan cache is checked too: the rules-off graph plans every query anew, and each query
//! runs once more with its literals turned into parameters ([`parameterize`]), through a plan
//! the cache kept from a run with other values.

use arrow::datatypes::DataType;
use lance_csr::render_cell;
use lance_csr::{Graph, Mode};
use lance_csr::{Params, QueryResult, Result};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which queries to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shapes {
    /// Every shape: patterns, WITH chains, aggregates, paths and the special cases.
    All,
    /// Counts and values over the whole graph only: per node and in total over one hop,
    /// two hops and a variable-length hop, triangles, 4-cycles and diamonds, cycles of four
    /// and five hops through several labels.
    WholeGraph,
    /// Every shape a cluster answers as one process does: all but a MATCH after a part that
    /// can differ between evaluations (a collected list, a LIMIT, a sum), which a cluster
    /// evaluates once per reader.
    Cluster,
}

/// A deterministic generator (SplitMix64): the same seed gives the same queries.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// A property that can be filtered on, with values seen in the data (as Cypher literals).
#[derive(Debug, Clone)]
struct Prop {
    /// The name as written in a query.
    name: String,
    numeric: bool,
    integer: bool,
    values: Vec<String>,
}

/// What the generator knows of the graph: per label its filterable properties; the
/// relationship tables as (type, from, to, properties).
struct Schema {
    labels: BTreeMap<String, Vec<Prop>>,
    /// Every label of each node table (by its name) and of the graph.
    label_sets: BTreeMap<String, Vec<String>>,
    all_labels: Vec<String>,
    rels: Vec<(String, String, String, Vec<Prop>)>,
}

fn literal(a: &dyn arrow::array::Array, i: usize) -> Option<String> {
    if a.is_null(i) {
        return None;
    }
    Some(render_cell(a, i, true))
}

/// Up to 8 distinct values of a column, read from the data.
async fn sample_values(g: &Graph, pattern: &str, prop: &str) -> Vec<String> {
    let q = format!(
        "MATCH {pattern} WHERE x.{prop} IS NOT NULL RETURN DISTINCT x.{prop} AS v ORDER BY v LIMIT 8"
    );
    let Ok(r) = g.query(&q, &Params::new()).await else {
        return vec![];
    };
    let mut out = Vec::new();
    for b in &r.batches {
        for i in 0..b.num_rows() {
            out.extend(literal(b.column(0).as_ref(), i));
        }
    }
    out
}

fn filterable(t: &DataType) -> Option<bool> {
    match t {
        t if t.is_integer() => Some(true),
        DataType::Float32 | DataType::Float64 => Some(true),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Some(false),
        _ => None,
    }
}

/// The properties among `props` that can be filtered on, with values sampled from the
/// entities `pattern` (binding `x`) matches.
async fn filterable_props(g: &Graph, pattern: &str, props: &[(String, DataType)]) -> Vec<Prop> {
    let mut out = Vec::new();
    for (p, t) in props {
        if let Some(numeric) = filterable(t) {
            // As written in a query (quoted where the name needs it).
            let name = cypher::fmt_ident(p);
            let values = sample_values(g, pattern, &name).await;
            if !values.is_empty() {
                out.push(Prop {
                    name,
                    numeric,
                    integer: t.is_integer(),
                    values,
                });
            }
        }
    }
    out
}

async fn schema(g: &Graph) -> Schema {
    let schema = g.schema();
    let mut labels = BTreeMap::new();
    let mut label_sets = BTreeMap::new();
    for (label, info) in &schema.labels {
        let props = filterable_props(g, &format!("(x:`{label}`)"), &info.properties).await;
        labels.insert(label.clone(), props);
        label_sets.insert(label.clone(), info.labels.clone());
    }
    let mut all_labels: Vec<String> = label_sets.values().flatten().cloned().collect();
    all_labels.sort();
    all_labels.dedup();
    let mut rels = Vec::new();
    for r in &schema.relationships {
        let (t, from, to) = (&r.rel_type, &r.from, &r.to);
        let pattern = format!("(:`{from}`)-[x:`{t}`]->(:`{to}`)");
        let props = filterable_props(g, &pattern, &r.properties).await;
        rels.push((t.clone(), from.clone(), to.clone(), props));
    }
    Schema {
        labels,
        label_sets,
        all_labels,
        rels,
    }
}

/// A label expression that `table`'s nodes satisfy (and maybe other tables' nodes): a label
/// it shares with other tables, an alternative, a negation or the wildcard.
fn label_expression(rng: &mut Rng, s: &Schema, table: &str) -> String {
    let own = s.label_sets.get(table).cloned().unwrap_or_default();
    let other = rng.pick(&s.all_labels).clone();
    let shared: Vec<&String> = own.iter().filter(|l| l.as_str() != table).collect();
    match rng.below(4) {
        0 if !shared.is_empty() => format!(":`{}`", rng.pick(&shared)),
        1 if !own.contains(&other) => format!(":`{table}`&!`{other}`"),
        2 => format!(":`{table}`|`{other}`"),
        _ if !own.is_empty() => ":%".to_string(),
        _ => format!(":`{table}`"),
    }
}

/// A variable of the generated pattern: its name, whether it is a relationship, and the
/// properties it can be filtered on.
struct Var {
    name: String,
    rel: bool,
    props: Vec<Prop>,
}

fn predicate(rng: &mut Rng, var: &str, p: &Prop) -> String {
    let v = rng.pick(&p.values).clone();
    if rng.below(8) == 0 {
        // A list of several kinds (a value of another kind never matches: a number, a
        // string, a map, a list), which the parameterized run makes a long list parameter,
        // or a map's entry holding one; one in four is itself written long (a literal list
        // past the length a parameter is held compactly at).
        let w = rng.pick(&p.values).clone();
        let other = if p.numeric { "'x'" } else { "0" };
        let mut items = vec![v, other.to_string(), w];
        if rng.below(2) == 0 {
            let u = rng.pick(&p.values).clone();
            items.insert(1, format!("{{k: {u}}}"));
            items.push(format!("[{u}, {other}]"));
        }
        if rng.below(4) == 0 {
            let n = items.len();
            items = (0..lance_csr::COMPACT_LIST_ITEMS + 1)
                .map(|i| items[i % n].clone())
                .collect();
        }
        return format!("{var}.{} IN [{}]", p.name, items.join(", "));
    }
    if p.numeric {
        let op = *rng.pick(&["<", "<=", ">", ">=", "=", "<>"]);
        format!("{var}.{} {op} {v}", p.name)
    } else {
        match rng.below(3) {
            0 => format!("{var}.{} = {v}", p.name),
            1 => format!("{var}.{} <> {v}", p.name),
            _ => format!("{var}.{} IS NOT NULL", p.name),
        }
    }
}

/// One random query over the schema.
fn query(rng: &mut Rng, s: &Schema) -> Option<String> {
    let (t, from, to, rprops) = rng.pick(&s.rels).clone();
    let mut vars = vec![Var {
        name: "a".into(),
        rel: false,
        props: s.labels.get(&from).cloned().unwrap_or_default(),
    }];
    // The first hop, maybe walked backwards, maybe with the far label left out (branching)
    // or the type left out.
    let mut pattern = format!("(a:`{from}`)");
    let hops = 1 + rng.below(2);
    let mut current = to.clone();
    let mut hop_t = (t, rprops);
    for h in 0..hops {
        let rv = format!("r{h}");
        let nv = format!("n{h}");
        let var_length = h == 0 && rng.chance(15);
        let typ = if rng.chance(15) && !var_length {
            String::new()
        } else {
            format!(":`{}`", hop_t.0)
        };
        let len = if var_length { "*1..2" } else { "" };
        let far_label = if rng.chance(30) && !var_length {
            String::new()
        } else if rng.chance(20) && !s.all_labels.is_empty() {
            label_expression(rng, s, &current)
        } else {
            format!(":`{current}`")
        };
        let rel_var = if var_length {
            String::new()
        } else {
            rv.clone()
        };
        pattern.push_str(&format!("-[{rel_var}{typ}{len}]->({nv}{far_label})"));
        if !var_length {
            vars.push(Var {
                name: rv,
                rel: true,
                props: if typ.is_empty() {
                    vec![]
                } else {
                    hop_t.1.clone()
                },
            });
        }
        vars.push(Var {
            name: nv,
            rel: false,
            props: if far_label.is_empty() {
                vec![]
            } else {
                s.labels.get(&current).cloned().unwrap_or_default()
            },
        });
        // The next hop leaves from the current label.
        let next: Vec<_> = s.rels.iter().filter(|r| r.1 == current).collect();
        if next.is_empty() {
            break;
        }
        let r = rng.pick(&next);
        hop_t = (r.0.clone(), r.3.clone());
        current = r.2.clone();
    }
    let mut conds = Vec::new();
    for _ in 0..rng.below(3) {
        let v = &vars[rng.below(vars.len())];
        if !v.props.is_empty() {
            let p = rng.pick(&v.props).clone();
            conds.push(predicate(rng, &v.name, &p));
        }
    }
    // Sometimes a pattern predicate or subquery from the first node.
    let out_of_a: Vec<_> = s.rels.iter().filter(|r| r.1 == from).collect();
    let into_a: Vec<_> = s.rels.iter().filter(|r| r.2 == from).collect();
    if rng.chance(25) && !out_of_a.is_empty() {
        let r = rng.pick(&out_of_a);
        let not = if rng.chance(40) { "NOT " } else { "" };
        let far = s.labels.get(&r.2).cloned().unwrap_or_default();
        conds.push(match rng.below(6) {
            0 => format!("{not}(a)-[:`{}`]->()", r.0),
            // Read per element of a list.
            5 if rng.chance(50) => format!(
                "size([x IN [a, n0] WHERE {not}(x)-[:`{}`]->() | x]) >= {}",
                r.0,
                rng.below(2)
            ),
            // ... of a list a pattern comprehension makes.
            5 => {
                let on: Vec<_> = s.rels.iter().filter(|q| q.1 == r.2).collect();
                let test = match on.is_empty() {
                    true => format!("(x)<-[:`{}`]-(a)", r.0),
                    false => format!("(x)-[:`{}`]->()", rng.pick(&on).0),
                };
                format!(
                    "size([x IN [(a)-[:`{}`]->(t) | t] WHERE {not}{test}]) >= {}",
                    r.0,
                    rng.below(3)
                )
            }
            1 => match into_a.is_empty() {
                true => format!("{not}(a)-[:`{}`]->(:`{}`)", r.0, r.2),
                false => format!("{not}(a)<-[:`{}`]-()", rng.pick(&into_a).0),
            },
            // Between two bound nodes (a CSR probe where one table matches), either way or
            // both, tested or counted.
            2 => {
                let (l, r) = *rng.pick(&[("-", "->"), ("<-", "-"), ("-", "-")]);
                let rel = match t_first(&pattern) {
                    t0 if t0.is_empty() => String::new(),
                    t0 => format!("[:`{t0}`]"),
                };
                match rng.chance(30) {
                    true => format!("COUNT {{ (a){l}{rel}{r}(n0) }} > {}", rng.below(2)),
                    false => format!("{not}(a){l}{rel}{r}(n0)"),
                }
            }
            3 => format!("COUNT {{ (a)-[:`{}`]->() }} > {}", r.0, rng.below(3)),
            _ => match far.is_empty() {
                true => format!("{not}EXISTS {{ (a)-[:`{}`]->() }}", r.0),
                false => {
                    let p = rng.pick(&far).clone();
                    format!(
                        "{not}EXISTS {{ MATCH (a)-[:`{}`]->(z:`{}`) WHERE {} }}",
                        r.0,
                        r.2,
                        predicate(rng, "z", &p)
                    )
                }
            },
        });
    }
    let mut q = format!("MATCH {pattern}");
    if !conds.is_empty() {
        let joiner = if rng.chance(20) { " OR " } else { " AND " };
        q.push_str(&format!(" WHERE {}", conds.join(joiner)));
    }
    // Sometimes an OPTIONAL MATCH from the first node, counted below.
    let optional = s.rels.iter().filter(|r| r.1 == from).collect::<Vec<_>>();
    let with_optional = !optional.is_empty() && rng.chance(20);
    if with_optional {
        let r = rng.pick(&optional);
        q.push_str(&format!(" OPTIONAL MATCH (a)-[:`{}`]->(om)", r.0));
    }
    // Node variables and a property of each to return.
    let nodes: Vec<&Var> = vars
        .iter()
        .filter(|v| !v.rel && !v.props.is_empty())
        .collect();
    let cols: Vec<String> = nodes
        .iter()
        .map(|v| format!("{}.{}", v.name, rng.pick(&v.props).name))
        .collect();
    if cols.is_empty() {
        return Some(format!("{q} RETURN count(*) AS c"));
    }
    match rng.below(5) {
        // Ordered, then collected: the list keeps the order (ties are equal values).
        4 => {
            let key = rng.pick(&cols).clone();
            let desc = if rng.chance(50) { " DESC" } else { "" };
            let limit = if rng.chance(50) {
                format!(" LIMIT {}", 1 + rng.below(10))
            } else {
                String::new()
            };
            let distinct = if rng.chance(30) { "DISTINCT " } else { "" };
            // ... maybe through WITHs that keep the order (a projection, a WHERE, a LIMIT).
            let through = match rng.below(4) {
                0 => " WITH v".to_string(),
                1 => " WITH v WHERE v IS NOT NULL WITH v AS v".to_string(),
                2 => format!(" WITH v LIMIT {}", 1 + rng.below(10)),
                _ => String::new(),
            };
            Some(format!(
                "{q} WITH {key} AS v ORDER BY v{desc}{limit}{through} WITH collect({distinct}v) AS vs RETURN vs"
            ))
        }
        // Grouped aggregates.
        0 => {
            let key = rng.pick(&cols).clone();
            let target = rng.pick(&vars).name.clone();
            let (o, ob) = if with_optional {
                (", count(om) AS o", ", o")
            } else {
                ("", "")
            };
            // A value aggregate too, over a node's numeric property.
            let valued: Vec<&&Var> = nodes
                .iter()
                .filter(|v| v.props.iter().any(|p| p.numeric))
                .collect();
            let (o, ob) = match valued.is_empty() || rng.chance(50) {
                true => (o.to_string(), ob.to_string()),
                false => {
                    let v = *rng.pick(&valued);
                    let agg = value_aggregate(rng, &v.name, &v.props)?;
                    (format!("{o}, {agg} AS s"), format!("{ob}, s"))
                }
            };
            Some(format!(
                "{q} RETURN {key} AS k, count(*) AS c, count(DISTINCT {target}) AS d{o} ORDER BY k, c, d{ob}"
            ))
        }
        // WITH + aggregate + filter on it; the node key read next to the aggregate half of
        // the time (a node key has columns, not a column of its own).
        1 => {
            let v = rng.pick(&nodes);
            let c = match rng.chance(50) {
                true => format!(
                    "count(*) + CASE WHEN {}.{} IS NULL THEN 0 ELSE 1 END",
                    v.name,
                    rng.pick(&v.props).name
                ),
                false => "count(*)".to_string(),
            };
            Some(format!(
                "{q} WITH {}, {c} AS c WHERE c >= 1 RETURN {}.{} AS x, c ORDER BY x, c LIMIT {}",
                v.name,
                v.name,
                rng.pick(&v.props).name,
                1 + rng.below(10)
            ))
        }
        // Rows, ordered by everything, limited; maybe with a count or list per row.
        2 => {
            let mut cols = cols;
            if !out_of_a.is_empty() && rng.chance(40) {
                let r = rng.pick(&out_of_a);
                let far = s.labels.get(&r.2).cloned().unwrap_or_default();
                cols.push(match far.iter().find(|p| p.integer) {
                    Some(p) if rng.chance(50) => format!(
                        "reduce(t = 0, x IN [(a)-[:`{}`]->(z:`{}`) | z.{}] | t + coalesce(x, 0))",
                        r.0, r.2, p.name
                    ),
                    // Its MATCH first, or after a WITH of its own (the outer `a` still
                    // seen).
                    // ... and its rows maybe cut per `a` (by a SKIP and LIMIT of a WITH,
                    // of its RETURN or of their own).
                    // A list per `a` of one aggregate row.
                    _ if rng.chance(15) => format!(
                        "COLLECT {{ MATCH (a)-[:`{}`]->(z) RETURN count(z) * 10 + count(DISTINCT z) }}",
                        r.0
                    ),
                    _ => {
                        let cut = format!(" SKIP {} LIMIT {}", rng.below(3), rng.below(4));
                        format!(
                            "COUNT {{ {}MATCH (a)-[:`{}`]->(z){} }}",
                            rng.pick(&["", "", "WITH * ", "WITH 1 AS one "]),
                            r.0,
                            // ... or aggregated per `a` (one row where nothing matched,
                            // which a WHERE may keep), or deduplicated.
                            match rng.below(9) {
                                0 => format!(" WITH z ORDER BY id(z){cut}"),
                                1 => format!(" RETURN z{cut}"),
                                2 => format!(" ORDER BY id(z) DESC{cut}"),
                                3 => format!(
                                    " WITH count(z) AS n WHERE n {} {} RETURN n",
                                    rng.pick(&["<", ">="]),
                                    rng.below(3)
                                ),
                                4 => format!(
                                    " WITH a, count(*) AS n, sum(id(z)) AS s WHERE n + s >= {} RETURN s",
                                    rng.below(3)
                                ),
                                5 => " RETURN DISTINCT id(z) % 2 AS m".to_string(),
                                _ => String::new(),
                            }
                        )
                    }
                });
            }
            let list: Vec<String> = cols
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c} AS c{i}"))
                .collect();
            let order: Vec<String> = (0..cols.len()).map(|i| format!("c{i}")).collect();
            let limit = 1 + rng.below(20);
            if rng.chance(25) {
                // The same rows cut by ORDER BY and LIMIT clauses of their own.
                return Some(format!(
                    "{q} ORDER BY {} LIMIT {limit} RETURN {} ORDER BY {}",
                    cols.join(", "),
                    list.join(", "),
                    order.join(", ")
                ));
            }
            Some(format!(
                "{q} RETURN {} ORDER BY {} LIMIT {limit}",
                list.join(", "),
                order.join(", "),
            ))
        }
        // DISTINCT rows, unordered.
        _ => Some(format!("{q} RETURN DISTINCT {}", cols.join(", "))),
    }
}

/// The type of the first hop of a generated pattern (`(a:`L`)-[r0:`T`...`).
fn t_first(pattern: &str) -> String {
    pattern
        .split("]-")
        .next()
        .and_then(|h| h.split(":`").nth(2))
        .and_then(|t| t.split('`').next())
        .unwrap_or("")
        .to_string()
}

/// Variable names that look like the engine's internal column names, or need quoting.
const HOSTILE_NAMES: &[&str] = &[
    "`a__id`",
    "`__anon1`",
    "`__anonr2`",
    "`__agg0`",
    "`__ret0`",
    "`x__#src`",
    "`a.b`",
    "`two words`",
    "`ünï`",
    "`#key`",
    "`_`",
];

/// Shapes aimed at defect classes both execution paths could share (binding, naming,
/// DataFusion's rewrites, value semantics): constant grouping keys over no rows, hops no
/// table can satisfy inside chains and cycles, a key at the far end of a variable-length hop,
/// properties an inferred label lacks, hostile variable names, names re-bound along WITH
/// chains, and integers near the 64-bit limits.
fn special(rng: &mut Rng, s: &Schema) -> Option<String> {
    let (t, from, to, _) = rng.pick(&s.rels).clone();
    let from_props = s.labels.get(&from).cloned().unwrap_or_default();
    let to_props = s.labels.get(&to).cloned().unwrap_or_default();
    let any_prop = |rng: &mut Rng, props: &[Prop]| -> Option<Prop> {
        (!props.is_empty()).then(|| rng.pick(props).clone())
    };
    Some(match rng.below(18) {
        12 => whole_graph(rng, s, (&t, &from, &to), &from_props, &to_props)?,
        // Relationship values taken from a collected list or a path (their tables known
        // only at run time): their end nodes whole, by property, by label.
        17 => {
            let p = any_prop(rng, &from_props)?;
            let q = any_prop(rng, &to_props)?;
            let (rel, source) = match rng.below(3) {
                0 => (
                    format!("[r:`{t}`]"),
                    "collect(r) AS rs UNWIND rs AS r".to_string(),
                ),
                1 => (
                    "[r]".to_string(),
                    "collect(r) AS rs UNWIND rs AS r".to_string(),
                ),
                _ => (
                    format!("[:`{t}`]"),
                    "collect(p) AS ps UNWIND ps AS p UNWIND relationships(p) AS r".to_string(),
                ),
            };
            // DISTINCT of entity values is compared by their encoding, not as scalars.
            let source = if rng.chance(30) {
                source.replacen("collect(", "collect(DISTINCT ", 1)
            } else {
                source
            };
            let pattern = format!("(a:`{from}`)-{rel}->(b:`{to}`)");
            if rng.chance(40) {
                // An end node taken in one clause and again in the next: each clause's
                // plan reads the one before it.
                return Some(format!(
                    "MATCH p = {pattern} WITH {source} WITH r, startNode(r) AS s0 RETURN s0.{p} AS s, endNode(r).{q} AS e, labels(s0) AS l, startNode(r) = s0 AS same",
                    p = p.name,
                    q = q.name
                ));
            }
            format!(
                "MATCH p = {pattern} WITH {source} RETURN startNode(r).{p} AS s, endNode(r).{q} AS e, labels(endNode(r)) AS l, startNode(r) = endNode(r) AS loop",
                p = p.name,
                q = q.name
            )
        }
        16 => after_aggregate(rng, (&t, &from, &to), &from_props, &to_props)?,
        13 => value_classes(rng)?,
        // Aggregates over a hop whose type has no table between those labels (no rows):
        // sum 0, count 0, the others null, collect [].
        14 => {
            let (t2, _, _, _) = rng.pick(&s.rels).clone();
            let numbers: Vec<Prop> = from_props.iter().filter(|p| p.integer).cloned().collect();
            let p = (!numbers.is_empty()).then(|| rng.pick(&numbers).clone())?;
            let opt = if rng.chance(30) { "OPTIONAL " } else { "" };
            format!(
                "MATCH (x:`{to}`) {opt}MATCH (x)-[:`{t2}`]->(c:`{from}`)-[:`{t}`]->(x) RETURN sum(c.{p}) AS s, count(c.{p}) AS n, avg(c.{p}) AS a, min(c.{p}) AS lo, collect(c.{p}) AS l",
                p = p.name
            )
        }
        // Long chains of one operator over a node's values (more than eight operands are one
        // function of all of them).
        15 => {
            let numeric: Vec<Prop> = from_props.iter().filter(|p| p.integer).cloned().collect();
            let p = (!numeric.is_empty()).then(|| rng.pick(&numeric).clone())?;
            let n = 9 + rng.below(12);
            let terms = |rng: &mut Rng, op: &[&str]| -> String {
                let mut e = format!("a.{}", p.name);
                for _ in 1..n {
                    e.push_str(&format!(" {} ", rng.pick(op)));
                    e.push_str(&if rng.chance(70) {
                        format!("a.{}", p.name)
                    } else {
                        (1 + rng.below(3)).to_string()
                    });
                }
                e
            };
            let ors: Vec<String> = (0..n)
                .map(|_| format!("a.{} = {}", p.name, rng.pick(&p.values)))
                .collect();
            match rng.below(3) {
                0 => format!(
                    "MATCH (a:`{from}`) RETURN {} AS s ORDER BY s",
                    terms(rng, &["+", "-"])
                ),
                1 => format!(
                    "MATCH (a:`{from}`) RETURN {} AS s ORDER BY s",
                    terms(rng, &["*", "%", "*"])
                ),
                _ => format!(
                    "MATCH (a:`{from}`) WHERE {} RETURN count(*) AS c",
                    ors.join(if rng.chance(70) { " OR " } else { " AND " })
                ),
            }
        }
        // A constant grouping key over no rows: no groups, no rows.
        0 => {
            let key = *rng.pick(&["'x'", "1", "null", "[1, 2]", "labels(a)"]);
            let p = any_prop(rng, &from_props)?.name;
            let empty = if rng.chance(50) {
                format!("a.{p} <> a.{p}")
            } else {
                format!("a.{p} IS NULL AND a.{p} IS NOT NULL")
            };
            match rng.below(3) {
                0 => format!("MATCH (a:`{from}`) WHERE {empty} RETURN {key} AS k, count(*) AS c"),
                1 => format!(
                    "MATCH (a:`{from}`)-[:`{t}`]->(b:`{to}`) WHERE {empty} RETURN {key} AS k, labels(b) AS l, count(*) AS c"
                ),
                _ => format!("UNWIND [] AS x RETURN {} AS k, count(*) AS c", if key == "labels(a)" { "2" } else { key }),
            }
        }
        // A chain or cycle with a hop whose type has no table between those labels.
        1 => {
            let (t2, _, _, _) = rng.pick(&s.rels).clone();
            let fits = s.rels.iter().any(|r| r.0 == t2 && r.1 == to);
            let opt = if rng.chance(30) { "OPTIONAL " } else { "" };
            let q = match rng.below(3) {
                0 => format!("MATCH (a:`{from}`)-[:`{t}`]->(b:`{to}`)-[:`{t2}`]->(c) RETURN count(*) AS n"),
                1 => format!("MATCH (a:`{from}`)-[:`{t}`]->(b:`{to}`)<-[:`{t2}`]-(a) RETURN count(*) AS n"),
                _ => format!(
                    "MATCH (a:`{from}`) {opt}MATCH (a)-[:`{t}`]->(b:`{to}`)-[:`{t2}`]->(c:`{from}`) RETURN count(*) AS n, count(c) AS m"
                ),
            };
            let _ = fits;
            q
        }
        // A key (or another filter) at the far end of a variable-length hop.
        2 => {
            let p = any_prop(rng, &to_props)?;
            let v = rng.pick(&p.values).clone();
            let dir = if rng.chance(50) { "-" } else { "->" };
            let hi = 1 + rng.below(2);
            format!(
                "MATCH (a:`{from}`)-[:`{t}`*1..{hi}]{dir}(b:`{to}` {{{}: {v}}}) RETURN count(*) AS n, count(DISTINCT a) AS d",
                p.name
            )
        }
        // Properties of a node whose label was inferred (some labels lack them: null).
        3 => {
            let others: Vec<&Prop> = s.labels.values().flatten().collect();
            let p = (*rng.pick(&others)).clone();
            format!(
                "MATCH (a:`{from}`)-[:`{t}`]->(b) RETURN count(b.{}) AS n, count(*) AS c",
                p.name
            )
        }
        // A relationship bound by an earlier clause matched again: the same direction, the
        // other, undirected, optional, or from a branched first match.
        9 => {
            let p = any_prop(rng, &from_props)?;
            let first = if rng.chance(30) {
                format!("MATCH (a:`{from}`)-[r]->(b)")
            } else {
                format!("MATCH (a:`{from}`)-[r:`{t}`]->(b:`{to}`)")
            };
            let limit = if rng.chance(50) {
                format!(" ORDER BY a.{}, id(r) LIMIT {}", p.name, 1 + rng.below(5))
            } else {
                String::new()
            };
            let again = *rng.pick(&[
                "MATCH (x)-[r]->(y)",
                "MATCH (x)<-[r]-(y)",
                "MATCH (x)-[r]-(y)",
                "OPTIONAL MATCH (x)<-[r]-(y)",
            ]);
            format!(
                "{first} WITH a, r{limit} {again} RETURN a.{} AS v, x = a AS same, count(*) AS c ORDER BY v, same, c",
                p.name
            )
        }
        // Named paths: fixed and variable-length, branched, optional, through WITH,
        // collected and unwound, compared, and their functions.
        10 | 11 => named_path(rng, s, (&t, &from, &to), &to_props)?,
        // Hostile variable names, as nodes, relationships and projected values.
        4 => {
            let v = *rng.pick(HOSTILE_NAMES);
            let w = *rng.pick(HOSTILE_NAMES);
            let p = any_prop(rng, &from_props)?;
            match rng.below(4) {
                0 => format!(
                    "MATCH ({v}:`{from}`)-[:`{t}`]->(b) RETURN {v}.{} AS x, count(*) AS c ORDER BY x, c",
                    p.name
                ),
                1 => format!("UNWIND [1, 2] AS {v} MATCH (a:`{from}`)-[:`{t}`]->() RETURN DISTINCT {v} AS x ORDER BY x"),
                2 => format!(
                    "MATCH (a:`{from}`) WITH a, 1 AS {v} RETURN a.{} AS x, {v} AS y ORDER BY x, y",
                    p.name
                ),
                _ => format!(
                    "MATCH ({v}:`{from}`)-[{}:`{t}`]->(b) WITH {v}, count(*) AS {} RETURN {v}.{} AS x, {} AS c ORDER BY x, c",
                    if w == v { "`r`" } else { w },
                    if w == v { "`cnt`" } else { w },
                    p.name,
                    if w == v { "`cnt`" } else { w },
                ),
            }
        }
        // A name re-bound along a WITH chain.
        5 => {
            // The same name every step, or two names in turn (`WITH -x AS y WITH -y AS x`):
            // equal-looking steps two levels apart.
            let ops = ["{v} + 1", "{v} * 2", "{v} - 3", "-{v}"];
            let names = if rng.chance(50) {
                ["x", "x"]
            } else {
                ["x", "y"]
            };
            let steps = 2 + rng.below(3);
            let mut q = String::from("UNWIND [1, 2, 3] AS x");
            for k in 0..steps {
                let (from, to) = (names[k % 2], names[(k + 1) % 2]);
                q.push_str(&format!(
                    " WITH {} AS {to}",
                    rng.pick(&ops).replace("{v}", from)
                ));
            }
            let last = names[steps % 2];
            q.push_str(&format!(
                " RETURN sum({last}) AS s, min({last}) AS m, count(*) AS c"
            ));
            q
        }
        // Integers near the 64-bit limits (an overflow is an error).
        6 => {
            let big = *rng.pick(&[
                "9223372036854775807",
                "-9223372036854775807",
                "4611686018427387904",
            ]);
            match rng.below(3) {
                0 => format!("RETURN {big} + {} AS x", rng.below(3)),
                1 => format!("UNWIND [{big}, {}] AS x RETURN sum(x) AS s", rng.below(3)),
                _ => format!("RETURN {big} * {} AS x", 1 + rng.below(2)),
            }
        }
        // Lists mixing kinds: ordered, compared, aggregated and tested for membership.
        7 => {
            let items = [
                "1",
                "-2",
                "2.5",
                "'a'",
                "'b'",
                "''",
                "true",
                "false",
                "null",
                "[]",
                "[1, 'a']",
                "[1]",
                "['a']",
                "[null, 1]",
                "[1, null]",
                "9223372036854775807",
            ];
            let list: Vec<&str> = (0..2 + rng.below(5)).map(|_| *rng.pick(&items)).collect();
            let list = format!("[{}]", list.join(", "));
            let other = *rng.pick(&items);
            // Nested lists (of one item type): length, indexes and slices count items, not
            // the leaves inside them.
            let nested = |rng: &mut Rng| {
                let inner: Vec<String> = (0..rng.below(4))
                    .map(|_| {
                        let n = rng.below(3);
                        let xs: Vec<String> = (0..n).map(|_| rng.below(9).to_string()).collect();
                        format!("[{}]", xs.join(", "))
                    })
                    .collect();
                format!("[{}]", inner.join(", "))
            };
            if rng.chance(30) {
                let (a, b) = (nested(rng), nested(rng));
                let i = rng.below(7) as i64 - 3;
                return Some(format!(
                    "WITH {a} AS l RETURN size(l) AS n, l[{i}] AS x, l[{i}..] AS t, l[..{i}] AS h, size(l + {b}) AS m, last(l) AS z"
                ));
            }
            match rng.below(4) {
                0 => format!("UNWIND {list} AS x RETURN x ORDER BY x{}", if rng.chance(50) { " DESC" } else { "" }),
                1 => format!("UNWIND {list} AS x RETURN min(x) AS lo, max(x) AS hi, count(DISTINCT x) AS n"),
                2 => format!(
                    "UNWIND {list} AS x RETURN x, x = {other} AS eq, x < {other} AS lt, x >= {other} AS ge, x IN [{other}, 1] AS m ORDER BY x"
                ),
                _ => format!("RETURN {list} = [{other}, 1] AS eq, {list} < [{other}] AS lt, {other} IN {list} AS m"),
            }
        }
        // A grouped count keyed by a property of the far node, with an empty-group filter.
        _ => {
            let p = any_prop(rng, &to_props)?;
            format!(
                "MATCH (a:`{from}`)-[:`{t}`]->(b:`{to}`) WITH b.{} AS k, count(*) AS c WHERE c > 0 RETURN k, c ORDER BY k, c",
                p.name
            )
        }
    })
}

/// Values that need care: NaN (with either sign) in ORDER BY and min / max, quantifiers and
/// comprehensions over empty lists and nulls, two comprehensions over one list in one
/// aggregation, `toInteger` near and past the 64-bit range, lists too big for the memory
/// limit, integers and floats in one list, reduce.
fn value_classes(rng: &mut Rng) -> Option<String> {
    let floats = [
        "0.0 / 0.0",
        "-(0.0 / 0.0)",
        "1.0",
        "-2.5",
        "1.0 / 0.0",
        "-1.0 / 0.0",
        "null",
        "0.0",
    ];
    let pick_list = |rng: &mut Rng, items: &[&str]| -> String {
        let xs: Vec<&str> = (0..1 + rng.below(5)).map(|_| *rng.pick(items)).collect();
        format!("[{}]", xs.join(", "))
    };
    Some(match rng.below(10) {
        // Values of mixed kind where DataFusion's coercion or a static type would decide:
        // simple CASE, `+` of a list and a list held in a mixed value, UNWIND of one, and
        // COLLECT keeping its subquery's order.
        9 => {
            let items = [
                "1", "'1'", "1.0", "true", "[1]", "null", "[1, 2]", "'a'", "-10", "[]",
            ];
            let list = pick_list(rng, &items);
            match rng.below(7) {
                // DISTINCT, grouping and count(DISTINCT) compare numbers by value.
                6 => {
                    let nums = ["1", "1.0", "2", "2.0", "'1'", "[1]", "[1.0]", "null"];
                    let xs = pick_list(rng, &nums);
                    match rng.below(3) {
                        0 => format!("UNWIND {xs} AS x WITH DISTINCT x RETURN count(*) AS n"),
                        1 => format!("UNWIND {xs} AS x RETURN count(DISTINCT x) AS n"),
                        _ => format!(
                            "UNWIND {xs} AS x WITH x, count(*) AS c RETURN c, count(*) AS g ORDER BY c"
                        ),
                    }
                }
                // Cosine takes the direction however small or large the numbers.
                4 => {
                    let xs = ["1e-200", "1e200", "3", "-2", "0.5", "0", "4611686018427387904"];
                    let v = |rng: &mut Rng| format!("[{}, {}]", rng.pick(&xs), rng.pick(&xs));
                    format!(
                        "RETURN vector.similarity.cosine({}, {}) AS s",
                        v(rng),
                        v(rng)
                    )
                }
                // toString of a value it cannot write: a type error.
                5 => format!(
                    "RETURN toString({}) AS s",
                    rng.pick(&["{a: 1}", "[1, 2]", "[]"])
                ),
                0 => format!(
                    "UNWIND {list} AS x RETURN x, CASE x WHEN {} THEN 'a' WHEN {} THEN 'b' ELSE 'c' END AS k",
                    rng.pick(&items),
                    rng.pick(&items)
                ),
                1 => format!(
                    "WITH {list} AS xs UNWIND range(0, size(xs) - 1) AS i RETURN i, {} + xs[i] AS l, xs[i] + {} AS r",
                    rng.pick(&["[0]", "[[0], 'z']", "[]"]),
                    rng.pick(&["[9]", "['y', [8]]", "[]"])
                ),
                2 => format!("UNWIND {list} AS x UNWIND x AS y RETURN y"),
                _ => format!(
                    "RETURN COLLECT {{ UNWIND {} AS y RETURN y ORDER BY y{} }} AS c",
                    pick_list(rng, &["3", "1", "2", "null", "5", "-4"]),
                    if rng.chance(50) { " DESC" } else { "" }
                ),
            }
        }
        // round: ties, the shortest decimal form, precisions and Java's rounding modes.
        8 => {
            let xs = pick_list(
                rng,
                &[
                    "-1.5",
                    "-2.5",
                    "2.5",
                    "2.675",
                    "-1.55",
                    "0.125",
                    "1.005",
                    "-0.4",
                    "7",
                    "1234.5678",
                    "0.0005",
                    "-9.95",
                    "null",
                ],
            );
            let p = rng.below(4);
            let mode = *rng.pick(&[
                "HALF_UP",
                "HALF_DOWN",
                "HALF_EVEN",
                "UP",
                "DOWN",
                "CEILING",
                "FLOOR",
            ]);
            format!(
                "UNWIND {xs} AS x RETURN x, round(x) AS a, round(x, {p}) AS b, round(x, {p}, '{mode}') AS c"
            )
        }
        // reduce: the accumulator's kind may change (an integer plus a float), nulls, and a
        // body reading the row.
        7 => {
            let list = pick_list(rng, &["1", "2", "-3", "0.5", "null"]);
            let init = *rng.pick(&["0", "0.5", "null", "k"]);
            let body = *rng.pick(&[
                "acc + x",
                "acc * 2 + x",
                "CASE WHEN x IS NULL THEN acc ELSE acc + x * k END",
                "x",
            ]);
            format!("UNWIND [1, 2] AS k RETURN k, reduce(acc = {init}, x IN {list} | {body}) AS r")
        }
        // Integers and floats side by side keep their kinds: in a list, indexed, through
        // CASE, in arithmetic.
        6 => {
            let items = ["1", "1.5", "-2", "0.25", "null", "3", "2.0"];
            let k = rng.below(5) as i64 - 2;
            format!(
                "WITH {} AS xs UNWIND xs AS x RETURN x, xs[{k}] AS at, CASE WHEN x > 0 THEN x ELSE {} END AS c, x + xs[0] AS s, xs",
                pick_list(rng, &items),
                rng.pick(&["0", "0.5", "null"])
            )
        }
        0 => format!(
            "UNWIND {} AS x RETURN x ORDER BY x{}",
            pick_list(rng, &floats),
            if rng.chance(50) { " DESC" } else { "" }
        ),
        1 => format!(
            "UNWIND {} AS x RETURN min(x) AS lo, max(x) AS hi, count(x) AS n",
            pick_list(rng, &floats)
        ),
        2 => {
            let list = *rng.pick(&["[]", "[null]", "[1, null]", "[2, 3]", "[null, null, 1]"]);
            let p = *rng.pick(&["x = 1", "x > 1", "x IS NULL", "x <> 2"]);
            format!(
                "WITH {list} AS xs RETURN all(x IN xs WHERE {p}) AS a, any(x IN xs WHERE {p}) AS b, none(x IN xs WHERE {p}) AS c, single(x IN xs WHERE {p}) AS d, size([x IN xs WHERE {p}]) AS e"
            )
        }
        3 => {
            let (k1, k2) = (rng.below(4), rng.below(4));
            format!(
                "UNWIND [[1, 2, 3], [], [null, 5]] AS xs RETURN sum(size([y IN xs WHERE y > {k1}])) AS n, sum(size([y IN xs WHERE y > {k2}])) AS m, count(*) AS c"
            )
        }
        4 => {
            let values = [
                "'9223372036854775807'",
                "'-9223372036854775809'",
                "'9223372036854775808'",
                "' 12 '",
                "'1.5'",
                "'1e3'",
                "'x'",
                "1e19",
                "-9223372036854775808.0",
                "9.3e18",
                "-2.9",
                "'-9223372036854775808'",
            ];
            format!(
                "RETURN toInteger({}) AS a, toInteger({}) AS b",
                rng.pick(&values),
                rng.pick(&values)
            )
        }
        // Under the memory limit of the graph (half the machine's memory without one): an
        // error in both modes, never an abort.
        _ => format!(
            "RETURN size(range(1, {})) AS n",
            *rng.pick(&["100", "1000000", "100000000000000", "9223372036854775806"])
        ),
    })
}

/// A query over a named path from a `from` node over `t` (to a `to` node).
/// An aggregate of a property of `var` (sum / avg of integers, least / greatest / non-null
/// count of numbers), or `None` when it has no numeric property.
fn value_aggregate(rng: &mut Rng, var: &str, props: &[Prop]) -> Option<String> {
    let numeric: Vec<&Prop> = props.iter().filter(|p| p.numeric).collect();
    let p = *rng.pick(&numeric);
    let aggs: &[&str] = match p.integer {
        true => &["sum", "avg", "min", "max", "count"],
        false => &["min", "max", "count"],
    };
    // Sometimes over an expression: an identity the optimizer folds away, or arithmetic.
    let arg = match rng.below(8) {
        0 => format!("{var}.{} + 0", p.name),
        1 => format!("1 * {var}.{}", p.name),
        2 => format!("{var}.{} - 1", p.name),
        _ => format!("{var}.{}", p.name),
    };
    Some(format!("{}({arg})", rng.pick(aggs)))
}

/// A relationship type between nodes of one label, picked at random: the label, every type
/// between its nodes, the picked type and three hops (the first of the picked type, each walked
/// a random way).
#[allow(clippy::type_complexity)]
fn within_label(rng: &mut Rng, s: &Schema) -> Option<(String, Vec<String>, String, [String; 3])> {
    let within: Vec<&(String, String, String, Vec<Prop>)> =
        s.rels.iter().filter(|x| x.1 == x.2).collect();
    if within.is_empty() {
        return None;
    }
    let (t1, lab, _, _) = (*rng.pick(&within)).clone();
    let same: Vec<String> = (within.into_iter())
        .filter(|x| x.1 == lab)
        .map(|x| x.0.clone())
        .collect();
    let (t2, t3) = (rng.pick(&same).clone(), rng.pick(&same).clone());
    let hops = [any_way(rng, &t1), any_way(rng, &t2), any_way(rng, &t3)];
    Some((lab, same, t1, hops))
}

/// The walks of three hops from a label back to it through two others: (label, second
/// node's label, third's, the hops as written), each hop walked the way its type goes.
fn rounds_of_three(s: &Schema) -> Vec<(String, String, String, [String; 3])> {
    // (from label, to label, the hop as written) for each type, walked each way it goes.
    let mut ways = Vec::new();
    for (t, from, to, _) in &s.rels {
        ways.push((from, to, format!("-[:`{t}`]->")));
        ways.push((to, from, format!("<-[:`{t}`]-")));
    }
    let mut out = Vec::new();
    for (lab, m, h1) in &ways {
        for (_, n, h2) in ways.iter().filter(|w| w.0 == *m) {
            for (_, _, h3) in ways.iter().filter(|w| w.0 == *n && w.1 == *lab) {
                let hops = [h1.clone(), h2.clone(), h3.clone()];
                out.push((lab.to_string(), m.to_string(), n.to_string(), hops));
            }
        }
    }
    out
}

/// A walk of `len` hops from a label back to it, found at random: the labels of its nodes
/// from the first and the hops as written, each walked the way its type goes.
fn round(rng: &mut Rng, s: &Schema, len: usize) -> Option<(Vec<String>, Vec<String>)> {
    let mut ways = Vec::new();
    for (t, from, to, _) in &s.rels {
        ways.push((from.clone(), to.clone(), format!("-[:`{t}`]->")));
        ways.push((to.clone(), from.clone(), format!("<-[:`{t}`]-")));
    }
    if ways.is_empty() {
        return None;
    }
    for _ in 0..50 {
        let first = rng.pick(&ways).clone();
        let (mut labels, mut hops) = (vec![first.0.clone(), first.1.clone()], vec![first.2]);
        while hops.len() < len {
            let at = labels.last().expect("a label").clone();
            let last = hops.len() + 1 == len;
            let next: Vec<_> = (ways.iter())
                .filter(|w| w.0 == at && (!last || w.1 == labels[0]))
                .collect();
            if next.is_empty() {
                break;
            }
            let w = rng.pick(&next);
            hops.push(w.2.clone());
            labels.push(w.1.clone());
        }
        if hops.len() == len {
            labels.pop();
            return Some((labels, hops));
        }
    }
    None
}

/// A hop as written (`-[:T]->`, `<-[:T]-`) walked either way (`-[:T]-`).
fn either_way(hop: &str) -> String {
    format!("-{}-", hop.trim_matches(['<', '-', '>']))
}

/// A hop of type `t`, walked out, in or either way at random.
fn any_way(rng: &mut Rng, t: &str) -> String {
    let (l, r) = hop_ends(rng);
    format!("{l}[:`{t}`]{r}")
}

/// The two ends of a hop walked out, in or either way, at random.
fn hop_ends(rng: &mut Rng) -> (&'static str, &'static str) {
    match *rng.pick(&["->", "<-", "-"]) {
        "->" => ("-", "->"),
        "<-" => ("<-", "-"),
        _ => ("-", "-"),
    }
}

/// The hops out of `b`, a node of label `to`, either side of their types.
fn hops_around(s: &Schema, to: &str) -> Vec<String> {
    (s.rels.iter())
        .filter_map(|(t, f, to2, _)| match (f == to, to2 == to) {
            (true, _) => Some(format!("(b)-[:`{t}`]->(:`{to2}`)")),
            (false, true) => Some(format!("(b)<-[:`{t}`]-(:`{f}`)")),
            _ => None,
        })
        .collect()
}

/// Counts over the whole graph: per node (degrees, with filters at either end, distinct far
/// nodes, sums, averages and extremes of the far node's properties, summed per property),
/// counts and values over a variable-length hop within one label, triangles, 4-cycles,
/// diamonds and 4-cliques (any directions, one label's types), counted or as rows; cycles of
/// four and five hops through several labels.
/// A round's hops after the first, from `b` through each label's node (`node(i)`) back onto
/// `(a)`, as pattern text.
fn back_to_a(hops: &[String], node: impl Fn(usize) -> String) -> String {
    let len = hops.len();
    (1..len)
        .map(|i| match i + 1 < len {
            true => format!("{}{}", hops[i], node(i + 1)),
            false => format!("{}(a)", hops[i]),
        })
        .collect()
}

/// `pattern`'s paths counted in total, or sometimes per a property of `a` (of `label`),
/// returned as `alias`.
fn total_or_per_a(rng: &mut Rng, s: &Schema, label: &str, pattern: String, alias: &str) -> String {
    match s.labels.get(label).and_then(|ps| ps.first()) {
        Some(p) if rng.chance(30) => format!(
            "{pattern} RETURN a.{} AS {alias}, count(*) AS n ORDER BY {alias}, n",
            p.name
        ),
        _ => format!("{pattern} RETURN count(*) AS n"),
    }
}

fn whole_graph(
    rng: &mut Rng,
    s: &Schema,
    (t, from, to): (&str, &str, &str),
    from_props: &[Prop],
    to_props: &[Prop],
) -> Option<String> {
    let (l, r) = hop_ends(rng);
    let filter = |rng: &mut Rng, var: &str, props: &[Prop]| -> String {
        if props.is_empty() || !rng.chance(40) {
            return String::new();
        }
        let p = rng.pick(props).clone();
        format!(" WHERE {}", predicate(rng, var, &p))
    };
    if from_props.is_empty() {
        return None;
    }
    let pa = rng.pick(from_props).name.clone();
    Some(match rng.below(12) {
        // Two cycles sharing hops (counted by joining node by node): a round of three or four
        // hops through labels, and a second way from `a` to `c` through a node `x` of `b`'s
        // label over `b`'s hops (LSQB's q3: three persons of one country who know each
        // other); some of their edges could be one, which leaves the count to the rows.
        11 => {
            let len = 3 + rng.below(2);
            let (labels, mut hops) = round(rng, s, len)?;
            if rng.chance(30) {
                hops[1] = either_way(&hops[1]);
            }
            let node = |i: usize| format!("({}:`{}`)", ["a", "b", "c", "d"][i], labels[i]);
            let path = back_to_a(&hops, node);
            let other = format!("(a){}(x:`{}`){}(c)", hops[0], labels[1], hops[1]);
            let pattern = match rng.chance(50) {
                true => format!("MATCH {}{}{}{path}, {other}", node(0), hops[0], node(1)),
                false => format!(
                    "MATCH {}{}{}{path} MATCH {other}",
                    node(0),
                    hops[0],
                    node(1)
                ),
            };
            let props = s.labels.get(&labels[1]).cloned().unwrap_or_default();
            let w = filter(rng, "x", &props);
            total_or_per_a(rng, s, &labels[0], format!("{pattern}{w}"), "y")
        }
        // A cycle of four or five hops through labels (LSQB's q2: a KNOWS edge closed by a
        // comment's reply to a post), maybe with a filter inside, written as one path or as
        // its first hop apart; counted in total or per `a`.
        10 => {
            let len = 4 + rng.below(2);
            let (labels, mut hops) = round(rng, s, len)?;
            for h in &mut hops {
                if rng.chance(20) {
                    *h = either_way(h);
                }
            }
            let node = |i: usize| format!("({}:`{}`)", ["a", "b", "c", "d", "e"][i], labels[i]);
            let rest = back_to_a(&hops, node);
            let pattern = match rng.chance(50) {
                true => format!("MATCH {}{}{}{rest}", node(0), hops[0], node(1)),
                false => format!("MATCH {}{}{}, (b){rest}", node(0), hops[0], node(1)),
            };
            let props = s.labels.get(&labels[2]).cloned().unwrap_or_default();
            let w = filter(rng, "c", &props);
            total_or_per_a(rng, s, &labels[0], format!("{pattern}{w}"), "x")
        }
        // Three hops from a label back to it through others, their ends required to differ
        // (counted as the paths less the triangles they would close), maybe also with an
        // absent edge that implies it (`NOT (c)-[:T]->(a)` where `(c)-[:T]->(d)`).
        9 => {
            let rounds = rounds_of_three(s);
            if rounds.is_empty() {
                return None;
            }
            let (lab, m, n, mut hops) = rng.pick(&rounds).clone();
            // Some hops walked either way.
            for h in &mut hops {
                if rng.chance(25) {
                    *h = either_way(h);
                }
            }
            let [h1, h2, h3] = hops;
            let mut conds = vec!["a <> d".to_string()];
            if rng.chance(40) {
                let absent = match rng.chance(30) {
                    true => either_way(&h3),
                    false => h3.clone(),
                };
                conds.push(format!("NOT (c){absent}(a)"));
            }
            let pattern = format!(
                "MATCH (a:`{lab}`){h1}(b:`{m}`){h2}(c:`{n}`){h3}(d:`{lab}`) WHERE {}",
                conds.join(" AND ")
            );
            match s.labels.get(&lab).and_then(|ps| ps.first()) {
                Some(p) if rng.chance(30) => format!(
                    "{pattern} RETURN a.{} AS x, count(*) AS n ORDER BY x, n",
                    p.name
                ),
                _ => format!("{pattern} RETURN count(*) AS n"),
            }
        }
        // Hops out of `b` each its own OPTIONAL MATCH (a missing one counts once), counted
        // in total, per `a`, or with how many of the optional nodes there are.
        8 => {
            let around = hops_around(s, to);
            if around.is_empty() {
                return None;
            }
            // `b` maybe of a union of labels: its branches each counted.
            let labels: Vec<&String> = s.labels.keys().filter(|x| *x != to).collect();
            let b_labels = match labels.is_empty() || !rng.chance(30) {
                true => format!("`{to}`"),
                false => format!("`{to}`|`{}`", rng.pick(&labels)),
            };
            // ... or `b` itself optional (null where `a` has none), the hops out of it too.
            let mut q = match rng.chance(15) {
                true => {
                    format!("MATCH (a:`{from}`) OPTIONAL MATCH (a){l}[:`{t}`]{r}(b:{b_labels})")
                }
                false => format!("MATCH (a:`{from}`){l}[:`{t}`]{r}(b:{b_labels})"),
            };
            let n = 1 + rng.below(2);
            for i in 0..n {
                // The optional node named, to be counted.
                let hop = rng.pick(&around).replacen("(:", &format!("(o{i}:"), 1);
                q.push_str(&format!(" OPTIONAL MATCH {hop}"));
            }
            // One out of `a` too; or one out of an optional node (whose missing rows a
            // count must not count once).
            let around_a = hops_around(s, from);
            if !around_a.is_empty() && rng.chance(30) {
                let hop = rng.pick(&around_a).replacen("(:", "(oa:", 1);
                q.push_str(&format!(
                    " OPTIONAL MATCH {}",
                    hop.replacen("(b)", "(a)", 1)
                ));
            }
            if rng.chance(15) {
                q.push_str(" OPTIONAL MATCH (o0)-->(oz)");
            }
            match rng.below(6) {
                0 => format!("{q} RETURN count(*) AS n"),
                1 => format!("{q} RETURN a.{pa} AS x, count(*) AS n ORDER BY x, n"),
                // A filter on the optional node above it (rows of nulls included).
                2 => format!("{q} WITH a, o0 WHERE o0 IS NULL RETURN count(*) AS n"),
                // The optional node counted alone: where it matched (per `a`, a node without
                // a match keeps its row of 0).
                3 => format!("{q} RETURN count(o0) AS c"),
                4 => format!("{q} RETURN a.{pa} AS x, count(o0) AS c ORDER BY x, c"),
                _ => format!("{q} RETURN count(o0) AS c, count(*) AS n"),
            }
        }
        // Nodes of one label attached to one node of another and adjacent among themselves
        // (a path or a triangle), each part its own MATCH, in any order: the clauses are one
        // join problem, their relationships unique within each clause only.
        7 => {
            let (lab, _, _, [h1, h2, h3]) = within_label(rng, s)?;
            let (ta, _, shared, _) = s.rels.iter().find(|x| x.1 == lab && x.2 != lab).cloned()?;
            let n = 2 + rng.below(2);
            let mut clauses = vec![format!("MATCH (x:`{shared}`)")];
            clauses.extend((0..n).map(|i| format!("MATCH (p{i}:`{lab}`)-[:`{ta}`]->(x)")));
            clauses.push(match n {
                2 => format!("MATCH (p0){h1}(p1)"),
                _ => format!("MATCH (p0){h1}(p1){h2}(p2){h3}(p0)"),
            });
            for i in (1..clauses.len()).rev() {
                let j = rng.below(i + 1);
                clauses.swap(i, j);
            }
            let clauses = clauses.join(" ");
            match s.labels.get(&shared).and_then(|ps| ps.first()) {
                Some(p) if rng.chance(40) => format!(
                    "{clauses} RETURN x.{} AS x, count(*) AS n ORDER BY x, n",
                    p.name
                ),
                _ => format!("{clauses} RETURN count(*) AS n"),
            }
        }
        // A tree: hops out of `b` (either side of their types) besides the one into it,
        // maybe one more from a node reached, counted in total or per `a`.
        6 => {
            let around = hops_around(s, to);
            if around.is_empty() {
                return None;
            }
            let mut parts = vec![format!("(a:`{from}`){l}[:`{t}`]{r}(b:`{to}`)")];
            for _ in 0..1 + rng.below(3) {
                parts.push(rng.pick(&around).clone());
            }
            let w = filter(rng, "b", to_props);
            let pattern = format!("MATCH {}{w}", parts.join(", "));
            match rng.chance(50) {
                true => format!("{pattern} RETURN a.{pa} AS x, count(*) AS n ORDER BY x, n"),
                false => format!("{pattern} RETURN count(*) AS n"),
            }
        }
        // A chain within a label whose ends two hops apart must differ or not be adjacent
        // (counted by subtracting the excluded paths), then maybe a hop out of the label.
        5 => {
            let (lab, _, _, [h1, h2, h3]) = within_label(rng, s)?;
            let out = match s.rels.iter().find(|x| x.1 == lab && x.2 != lab) {
                Some((t, _, to, _)) if rng.chance(50) => format!("-[:`{t}`]->(d:`{to}`)"),
                _ => String::new(),
            };
            let mut conds = Vec::new();
            if rng.chance(60) {
                conds.push("a <> c".to_string());
            }
            if rng.chance(50) {
                conds.push(format!("NOT (a){h3}(c)"));
            }
            let props = s.labels.get(&lab).cloned().unwrap_or_default();
            if rng.chance(30) {
                if let Some(p) = props.first() {
                    conds.push(predicate(rng, "b", p));
                }
            }
            let w = match conds.is_empty() {
                true => String::new(),
                false => format!(" WHERE {}", conds.join(" AND ")),
            };
            let pattern = format!("MATCH (a:`{lab}`){h1}(b:`{lab}`){h2}(c:`{lab}`){out}{w}");
            match props.first() {
                Some(p) if rng.chance(40) => format!(
                    "{pattern} RETURN a.{} AS x, count(*) AS n ORDER BY x, n",
                    p.name
                ),
                _ => format!("{pattern} RETURN count(*) AS n"),
            }
        }
        0 => {
            let w = if rng.chance(50) {
                filter(rng, "a", from_props)
            } else {
                filter(rng, "b", to_props)
            };
            let mut count = rng
                .pick(&["count(*)", "count(b)", "count(DISTINCT b)"])
                .to_string();
            if to_props.iter().any(|p| p.numeric) && rng.chance(50) {
                count = value_aggregate(rng, "b", to_props)?;
            }
            format!(
                "MATCH (a:`{from}`){l}[:`{t}`]{r}(b:`{to}`){w} WITH a, {count} AS c RETURN a.{pa} AS x, c ORDER BY x, c"
            )
        }
        1 => {
            let w = filter(rng, "a", from_props);
            format!(
                "MATCH (a:`{from}`){l}[:`{t}`]{r}(b:`{to}`){w} RETURN a.{pa} AS x, count(*) AS c ORDER BY c DESC, x LIMIT {}",
                1 + rng.below(5)
            )
        }
        2 => {
            let (t2, _, to2, _) = s.rels.iter().find(|x| x.1 == to).cloned()?;
            let c_props = s.labels.get(&to2).cloned().unwrap_or_default();
            let value = match c_props.iter().any(|p| p.numeric) && rng.chance(60) {
                true => format!(", {} AS v", value_aggregate(rng, "c", &c_props)?),
                false => String::new(),
            };
            format!(
                "MATCH (a:`{from}`)-[:`{t}`]->(b:`{to}`)-[:`{t2}`]->(c:`{to2}`) RETURN a.{pa} AS x, count(*) AS c{value} ORDER BY x, c"
            )
        }
        // Counts and values over a variable-length hop within one label.
        3 if from == to => {
            let hi = 1 + rng.below(3);
            let lo = rng.below(3).min(hi);
            let w = filter(rng, "b", to_props);
            let agg = match to_props.iter().any(|p| p.numeric) && rng.chance(50) {
                true => value_aggregate(rng, "b", to_props)?,
                false => rng.pick(&["count(*)", "count(b)"]).to_string(),
            };
            let hop = format!("MATCH (a:`{from}`){l}[:`{t}`*{lo}..{hi}]{r}(b:`{to}`){w}");
            match rng.below(3) {
                0 => format!("{hop} WITH a, {agg} AS c RETURN a.{pa} AS x, c ORDER BY x, c"),
                1 => format!("{hop} RETURN a.{pa} AS x, {agg} AS c ORDER BY x, c"),
                _ => format!("{hop} RETURN {agg} AS c"),
            }
        }
        _ => {
            // A triangle over types between one label.
            let (lab, same, t1, [h1, h2, h3]) = within_label(rng, s)?;
            let props = s.labels.get(&lab).cloned().unwrap_or_default();
            let w = filter(rng, "b", &props);
            let t4 = rng.pick(&same).clone();
            let h4 = any_way(rng, &t4);
            let (h5, h6) = (any_way(rng, &t4), any_way(rng, &t1));
            let cycle = match rng.below(4) {
                // A 4-clique: its last node adjacent to three bound ones.
                3 => format!(
                    "MATCH (a:`{lab}`){h1}(b:`{lab}`){h2}(c:`{lab}`){h3}(a), (a){h4}(d:`{lab}`){h5}(b), (c){h6}(d){w}"
                ),
                0 => format!("MATCH (a:`{lab}`){h1}(b:`{lab}`){h2}(c:`{lab}`){h3}(a){w}"),
                1 => format!(
                    "MATCH (a:`{lab}`){h1}(b:`{lab}`){h2}(c:`{lab}`){h3}(d:`{lab}`){h4}(a){w}"
                ),
                // A diamond: two two-hop ways from a to c.
                _ => format!(
                    "MATCH (a:`{lab}`){h1}(b:`{lab}`){h2}(c:`{lab}`), (a){h3}(d:`{lab}`){h4}(c){w}"
                ),
            };
            match (rng.below(3), props.first()) {
                (0, Some(p)) => format!(
                    "{cycle} RETURN a.{} AS x, count(*) AS c ORDER BY x, c",
                    p.name
                ),
                // The rows themselves (a node of the cycle found by intersection).
                (1, Some(p)) => {
                    let v = |x: &str| format!("{x}.{}", p.name);
                    format!("{cycle} RETURN {}, {}, {} AS z", v("a"), v("b"), v("c"))
                }
                _ => format!("{cycle} RETURN count(*) AS n"),
            }
        }
    })
}

fn named_path(
    rng: &mut Rng,
    s: &Schema,
    (t, from, to): (&str, &str, &str),
    to_props: &[Prop],
) -> Option<String> {
    let p = (!to_props.is_empty()).then(|| rng.pick(to_props).clone());
    // The second hop leaves `to` when some table does.
    let next: Vec<_> = s.rels.iter().filter(|r| r.1 == to).collect();
    let second = (!next.is_empty() && rng.chance(50)).then(|| {
        let r = rng.pick(&next);
        let dir = *rng.pick(&["->", "-"]);
        format!("-[:`{}`]{dir}(c)", r.0)
    });
    let (lo, hi) = (rng.below(2), 1 + rng.below(2));
    let hop = match rng.below(4) {
        0 => format!("-[:`{t}`*{lo}..{hi}]->"),
        1 => format!("<-[:`{t}`]-"),
        2 => "-[]->".to_string(),
        _ => format!("-[r:`{t}`]->"),
    };
    let (near, far) = if hop.starts_with("<-") {
        (format!("(b:`{to}`)"), format!("(a:`{from}`)"))
    } else {
        (format!("(a:`{from}`)"), "(b)".to_string())
    };
    let path = format!("p = {near}{hop}{far}{}", second.unwrap_or_default());
    let ids = |v: &str| match &p {
        Some(p) => format!("[n IN nodes({v}) | n.{}]", p.name),
        None => format!("[n IN nodes({v}) | labels(n)]"),
    };
    Some(match rng.below(6) {
        0 => format!(
            "MATCH {path} RETURN length(p) AS l, {} AS v, [x IN relationships(p) | type(x)] AS ts ORDER BY l, v, ts",
            ids("p")
        ),
        // Whole paths of one label (a node of another label would show its properties in
        // the order the path's nodes share).
        1 if from == to && !path.contains("(c)") => format!("MATCH {path} RETURN p"),
        1 => format!("MATCH {path} RETURN {} AS v, size(relationships(p)) AS n", ids("p")),
        // Optional: a far node with a given value (some start nodes have none).
        2 => {
            let filter = match &p {
                Some(p) => format!(" {{{}: {}}}", p.name, rng.pick(&p.values)),
                None => String::new(),
            };
            format!(
                "MATCH (a:`{from}`) OPTIONAL MATCH p = (a)-[:`{t}`*1..{hi}]->(b:`{to}`{filter}) RETURN p IS NULL AS none, length(p) AS l, {} AS v, count(*) AS c ORDER BY none, l, v, c",
                ids("p")
            )
        }
        3 => format!(
            "MATCH {path} WITH p, a, length(p) AS l WHERE l > 0 RETURN l, size(nodes(p)) AS n, a IN nodes(p) AS has_a, nodes(p)[0] = a AS from_a, count(*) AS c ORDER BY l, n, has_a, from_a, c"
        ),
        4 => format!(
            "MATCH {path} WITH collect(p) AS ps UNWIND ps AS q RETURN length(q) AS l, {} AS v ORDER BY l, v",
            ids("q")
        ),
        _ => format!(
            "MATCH {path} MATCH q = {near}{hop}{far} RETURN p = q AS same, count(*) AS c ORDER BY same, c"
        ),
    })
}

/// Generates `n` queries from `seed` over `graph`'s schema (the queries `run` compares).
pub async fn generate(graph: &Graph, n: usize, seed: u64, shapes: Shapes) -> Vec<String> {
    let schema = schema(graph).await;
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    while out.len() < n {
        let q = match shapes {
            Shapes::All => next_query(&mut rng, &schema),
            Shapes::WholeGraph => whole_graph_query(&mut rng, &schema),
            Shapes::Cluster => next_query(&mut rng, &schema).filter(|q| !one_process_only(q)),
        };
        out.extend(q);
    }
    out
}

fn whole_graph_query(rng: &mut Rng, s: &Schema) -> Option<String> {
    // Half of them over a table within one label (variable-length hops and cycles need one).
    let within: Vec<_> = s.rels.iter().filter(|r| r.1 == r.2).collect();
    let (t, from, to, _) = match within.is_empty() || rng.chance(50) {
        true => rng.pick(&s.rels).clone(),
        false => (*rng.pick(&within)).clone(),
    };
    let from_props = s.labels.get(&from).cloned().unwrap_or_default();
    let to_props = s.labels.get(&to).cloned().unwrap_or_default();
    let q = whole_graph(rng, s, (&t, &from, &to), &from_props, &to_props)?;
    Some(match rng.chance(30) {
        true => consecutive_matches(&q),
        false => q,
    })
}

/// `q` with the comma-separated patterns of its first MATCH written as consecutive MATCH
/// clauses (its WHERE on the last): the same rows but for relationship uniqueness, which
/// then holds within each clause only.
fn consecutive_matches(q: &str) -> String {
    let Some(start) = q.find("MATCH ") else {
        return q.to_string();
    };
    let mut out = q[..start].to_string();
    let mut depth = 0i32;
    let rest = &q[start..];
    for (i, c) in rest.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        let ends = [" WHERE ", " RETURN ", " WITH "];
        if depth == 0 && ends.iter().any(|k| rest[i..].starts_with(k)) {
            // The patterns end here: the rest as it is.
            out.push_str(&rest[i..]);
            break;
        }
        match depth == 0 && c == ',' && rest[i + 1..].starts_with(" (") {
            true => out.push_str(" MATCH"),
            false => out.push(c),
        }
    }
    out
}

fn next_query(rng: &mut Rng, s: &Schema) -> Option<String> {
    if rng.chance(25) {
        special(rng, s)
    } else {
        query(rng, s)
    }
}

/// A MATCH or OPTIONAL MATCH after a part of the query whose rows or values come out in a
/// different order or selection each time it runs (a collected list, a float sum, the first
/// rows in an order with ties broken by id, distinct rows): a plan that evaluates that part
/// twice and matches the evaluations must still give one answer.
fn after_aggregate(
    rng: &mut Rng,
    (t, from, to): (&str, &str, &str),
    from_props: &[Prop],
    to_props: &[Prop],
) -> Option<String> {
    let p = (!from_props.is_empty()).then(|| rng.pick(from_props).name.clone())?;
    let q = to_props.iter().find(|p| p.integer).map(|p| p.name.clone());
    let opt = if rng.chance(70) { "OPTIONAL " } else { "" };
    let dir = if rng.chance(50) { "-" } else { "->" };
    Some(match rng.below(7) {
        0 => format!(
            "MATCH (a:`{from}`)-[:`{t}`*1..2]{dir}(b) WITH DISTINCT a WITH collect(a.{p}) AS vs {opt}MATCH (x:`{from}`) WHERE x.{p} IN vs RETURN count(x) AS n, size(vs) AS s"
        ),
        // A collected list read only by size, membership and as pattern nodes holds only
        // identities; read for a property, it holds whole records.
        1 => {
            let k = match rng.below(4) {
                0 => String::new(),
                1 => format!(", size([y IN bs WHERE (y)<-[:`{t}`]-(a)]) AS k"),
                // A quantifier over pattern nodes (its predicate computed per element).
                2 => format!(
                    ", {}(y IN bs WHERE (y)<-[:`{t}`]-(a)) AS k",
                    rng.pick(&["any", "all", "none", "single"])
                ),
                _ => match to_props.first() {
                    Some(r) => format!(", size([y IN bs WHERE y.{} IS NOT NULL]) AS k", r.name),
                    None => String::new(),
                },
            };
            format!(
                "MATCH (a:`{from}`)-[:`{t}`]{dir}(b:`{to}`) WITH a, collect({}b) AS bs {opt}MATCH (a)-[:`{t}`]->(c:`{to}`) WHERE c IN bs RETURN a.{p} AS v, size(bs) AS s{k}, count(c) AS n ORDER BY v, s{}, n",
                if rng.chance(50) { "DISTINCT " } else { "" },
                if k.is_empty() { "" } else { ", k" }
            )
        }
        2 => format!(
            "MATCH (a:`{from}`) WITH a ORDER BY a.{p}, id(a) LIMIT {} {opt}MATCH (a)-[:`{t}`]{dir}(b) RETURN a.{p} AS v, count(b) AS n ORDER BY v, n",
            1 + rng.below(8)
        ),
        3 => {
            let q = q?;
            format!(
                "MATCH (a:`{from}`)-[:`{t}`]->(b:`{to}`) WITH a, sum(toFloat(b.{q})) / 3.0 AS f {opt}MATCH (a)-[:`{t}`]->(c:`{to}`) WHERE toFloat(c.{q}) <= f RETURN a.{p} AS v, count(c) AS n ORDER BY v, n"
            )
        }
        // An ORDER BY under WITH over rows of every table an unlabeled end may be (a union),
        // then grouped: the sort DataFusion drops must not take the grouping's repartition.
        4 => {
            let r = (!to_props.is_empty()).then(|| rng.pick(to_props).name.clone())?;
            format!(
                "MATCH (a:`{from}`)-[:`{t}`]{dir}(b) WITH b ORDER BY b.{r}{} RETURN b.{r} AS v, count(*) AS n ORDER BY v, n",
                if rng.chance(50) { " DESC" } else { "" }
            )
        }
        // A node grouping key read next to an aggregate: it has columns, not a column of
        // its own (under WITH, or returned itself).
        5 => {
            let item = format!("count(b) + CASE WHEN a.{p} IS NULL THEN 0 ELSE 1 END");
            if rng.chance(50) {
                format!(
                    "MATCH (a:`{from}`)-[:`{t}`]{dir}(b:`{to}`) WITH a, {item} AS d RETURN a.{p} AS v, d ORDER BY v, d"
                )
            } else {
                format!(
                    "MATCH (a:`{from}`)-[:`{t}`]{dir}(b:`{to}`) RETURN a, a.{p} AS v, {item} AS d ORDER BY v, d"
                )
            }
        }
        // Unlabeled: the second MATCH branches over every table the type has.
        _ => format!(
            "MATCH (a:`{from}`) WITH a ORDER BY a.{p}, id(a) LIMIT {} {opt}MATCH (a)-[r]{dir}(b) RETURN a.{p} AS v, type(r) AS t, count(b) AS n ORDER BY v, t, n",
            1 + rng.below(8)
        ),
    })
}

/// Whether a plan of `q` may read a part of it twice: an OPTIONAL MATCH, a MATCH after a
/// WITH (its branches read what came before), a pattern expression or subquery.
pub fn reads_twice(q: &str) -> bool {
    // A pattern expression or subquery runs over the rows of its input, then joins back.
    let subquery = [" { ", "[(", " (a)-", " (a)<-"]
        .iter()
        .any(|w| q.contains(w));
    subquery
        || q.contains("OPTIONAL MATCH")
        || q.split(" WITH ").skip(1).any(|rest| rest.contains("MATCH"))
}

/// Whether `q` reads twice a part whose rows or values can differ between evaluations: one
/// process evaluates such a part once for its readers, a cluster once per reader.
fn one_process_only(q: &str) -> bool {
    reads_twice(q)
        && ["collect(", " LIMIT ", "sum(", "rand("]
            .iter()
            .any(|w| q.contains(w))
}

/// One query whose results differ between the modes.
#[derive(Debug, Clone)]
pub struct Mismatch {
    pub query: String,
    pub optimized: String,
    pub unoptimized: String,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Queries run in both modes with results compared.
    pub compared: usize,
    /// Of those, how many returned rows (a check that the queries are not all trivial).
    pub nonempty: usize,
    /// Of those, how many also ran with parameters through a cached plan.
    pub parameterized: usize,
    /// Every query generated, in order.
    pub queries: Vec<String>,
    /// Queries both modes rejected (the generator made a query the subset refuses).
    pub rejected: Vec<(String, String)>,
    pub mismatches: Vec<Mismatch>,
    /// Queries that ran past the time limit in either mode (not compared).
    pub timed_out: Vec<String>,
    /// Vector searches compared with the exact ordering: (searches, recall@10 over them).
    pub searches: Option<(usize, f64)>,
    /// Full-text searches checked against the same search unlimited and unnested.
    pub text_searches: usize,
}

fn rows(r: &QueryResult) -> Vec<String> {
    let mut out = Vec::new();
    for b in &r.batches {
        for i in 0..b.num_rows() {
            let cells: Vec<String> = (0..b.num_columns())
                .map(|c| render_cell(b.column(c).as_ref(), i, true))
                .collect();
            out.push(cells.join(" | "));
        }
    }
    out
}

/// Rendered rows that are equal, but for floats that differ in their last digits: a float
/// sum's rounding depends on the order its values come in, which differs between plans.
fn rows_agree(a: &[String], b: &[String]) -> bool {
    let close = |x: &str, y: &str| {
        let float = |v: &str| {
            let ok = v.contains(['.', 'e', 'E']) && !v.starts_with('\'');
            ok.then(|| v.parse::<f64>().ok()).flatten()
        };
        match (float(x), float(y)) {
            (Some(p), Some(q)) => (p - q).abs() <= 1e-12 * p.abs().max(q.abs()),
            _ => false,
        }
    };
    let same_row = |x: &String, y: &String| {
        let (cx, cy): (Vec<&str>, Vec<&str>) = (x.split(" | ").collect(), y.split(" | ").collect());
        cx.len() == cy.len() && cx.iter().zip(&cy).all(|(p, q)| p == q || close(p, q))
    };
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y || same_row(x, y))
}

/// Whether `x` and `y` hold the same rows ([`rows_agree`]), in the same order when `ordered`.
fn same_rows(x: &QueryResult, y: &QueryResult, ordered: bool) -> bool {
    let (mut rx, mut ry) = (rows(x), rows(y));
    if !ordered {
        rx.sort();
        ry.sort();
    }
    rows_agree(&rx, &ry)
}

fn show(r: &std::result::Result<QueryResult, lance_csr::Error>) -> String {
    match r {
        Ok(r) => format!("{:?}", rows(r)),
        Err(e) => format!("error: {e}"),
    }
}

/// Generates `n` queries from `seed` and compares every rule on (plan cache on) against
/// every rule off (no plan cache).
/// `progress` hears of each query as it starts and ends (the CLI prints a line now and then).
pub async fn run(
    graph: &Graph,
    n: usize,
    seed: u64,
    shapes: Shapes,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report> {
    let on = graph.with_mode(Mode::Csr).await?;
    let off = graph
        .with_options(
            graph
                .options()
                .clone()
                .with_mode(Mode::Join)
                .with_plan_cache(false),
        )
        .await?;
    let mut report = compare(&on, &off, n, seed, shapes, progress).await?;
    vector_searches(&on, &off, seed, &mut report).await?;
    text_searches(&on, seed, &mut report).await?;
    Ok(report)
}

/// `q` with each number and string literal a parameter (`$v1`, `$v2`, ...), except the
/// bounds of variable-length patterns, which must be literals, and each list of them a
/// property is tested against (`a.x IN [1, 2]`) one long list parameter (its items repeated
/// to the length the engine holds compactly: membership is the same), every second one as
/// the entry of a map parameter (`a.x IN $v2.items`, a map held whole): the query, the
/// literals' values, and other values of the same kinds. `None` when `q` has no such literal.
pub fn parameterize(q: &str) -> Option<(String, Params, Params)> {
    use cypher::token::Token;
    let tokens = cypher::token::tokenize(q).ok()?;
    let (mut out, mut last) = (String::new(), 0);
    let (mut values, mut others) = (Params::new(), Params::new());
    let (mut skip_to, mut lists) = (0, 0);
    for (i, t) in tokens.iter().enumerate() {
        if i < skip_to {
            continue;
        }
        if let Some((end, items)) = property_in_list(&tokens, i) {
            let long = |items: &[lance_csr::Value]| {
                let n = lance_csr::COMPACT_LIST_ITEMS.div_ceil(items.len()) * items.len();
                lance_csr::Value::List(items.iter().cycle().take(n).cloned().collect())
            };
            let other: Vec<lance_csr::Value> = items.iter().map(other_value).collect();
            let name = format!("v{}", values.len() + 1);
            out.push_str(&q[last..t.span.start.offset]);
            out.push('$');
            out.push_str(&name);
            lists += 1;
            let (value, other) = if lists % 2 == 0 {
                out.push_str(".items");
                let map = |xs: &[lance_csr::Value]| {
                    lance_csr::Value::Map(vec![
                        ("items".to_string(), long(xs)),
                        ("n".to_string(), lance_csr::Value::Int(xs.len() as i64)),
                    ])
                };
                (map(&items), map(&other))
            } else {
                (long(&items), long(&other))
            };
            last = tokens[end].span.end.offset;
            values.insert(name.clone(), value);
            others.insert(name, other);
            skip_to = end + 1;
            continue;
        }
        let before = |k: usize| i.checked_sub(k).map(|j| &tokens[j].token);
        // `*2`, `*1..3`, `*..3`: a variable-length bound.
        let bound = matches!(before(1), Some(Token::Star))
            || (matches!(before(1), Some(Token::DotDot))
                && (matches!(before(2), Some(Token::Star))
                    || matches!(
                        (before(2), before(3)),
                        (Some(Token::Integer(_)), Some(Token::Star))
                    )));
        let (value, other) = match &t.token {
            _ if bound => continue,
            Token::Integer(x) => (lance_csr::param(*x), lance_csr::param(x.wrapping_add(1))),
            Token::Float(x) => (lance_csr::param(*x), lance_csr::param(x + 0.5)),
            Token::Str(x) => (
                lance_csr::param(x.as_str()),
                lance_csr::param(format!("{x}~")),
            ),
            _ => continue,
        };
        let name = format!("v{}", values.len() + 1);
        out.push_str(&q[last..t.span.start.offset]);
        out.push('$');
        out.push_str(&name);
        last = t.span.end.offset;
        values.insert(name.clone(), value);
        others.insert(name, other);
    }
    if values.is_empty() {
        return None;
    }
    out.push_str(&q[last..]);
    Some((out, values, others))
}

/// At `tokens[i]`, the list of a `a.x IN [1, 'b', {k: 2.5}, [3]]` (numbers, strings, and
/// lists and maps of them): the index of its `]` and its items.
fn property_in_list(
    tokens: &[cypher::token::SpannedToken],
    i: usize,
) -> Option<(usize, Vec<lance_csr::Value>)> {
    use cypher::token::Token;
    let at = |k: usize| tokens.get(k).map(|t| &t.token);
    let is_in =
        matches!(at(i.checked_sub(1)?), Some(Token::Word(w)) if w.eq_ignore_ascii_case("IN"));
    let property = matches!(at(i.checked_sub(2)?), Some(Token::Word(_)))
        && matches!(at(i.checked_sub(3)?), Some(Token::Dot));
    if !(matches!(at(i), Some(Token::LBracket)) && is_in && property) {
        return None;
    }
    match written_value(tokens, i)? {
        (lance_csr::Value::List(items), end) if !items.is_empty() => Some((end - 1, items)),
        _ => None,
    }
}

/// The value written at `tokens[i]` (numbers, negative ones too, strings, and lists and maps
/// of them) and the index past it.
fn written_value(
    tokens: &[cypher::token::SpannedToken],
    i: usize,
) -> Option<(lance_csr::Value, usize)> {
    use cypher::token::Token;
    use lance_csr::Value;
    let at = |k: usize| tokens.get(k).map(|t| &t.token);
    let (close, mut j) = match at(i)? {
        Token::Integer(x) => return Some((Value::Int(*x), i + 1)),
        Token::Float(x) => return Some((Value::Float(*x), i + 1)),
        Token::Str(x) => return Some((Value::Str(x.clone()), i + 1)),
        Token::Minus => {
            return match written_value(tokens, i + 1)? {
                (Value::Int(x), next) => Some((Value::Int(x.checked_neg()?), next)),
                (Value::Float(x), next) => Some((Value::Float(-x), next)),
                _ => None,
            }
        }
        Token::LBracket => (Token::RBracket, i + 1),
        Token::LBrace => (Token::RBrace, i + 1),
        _ => return None,
    };
    let (mut items, mut entries) = (Vec::new(), Vec::new());
    if at(j)? != &close {
        loop {
            if close == Token::RBrace {
                let Some(Token::Word(k)) = at(j) else {
                    return None;
                };
                if at(j + 1)? != &Token::Colon {
                    return None;
                }
                let (v, next) = written_value(tokens, j + 2)?;
                entries.push((k.clone(), v));
                j = next;
            } else {
                let (v, next) = written_value(tokens, j)?;
                items.push(v);
                j = next;
            }
            match at(j)? {
                Token::Comma => j += 1,
                t if t == &close => break,
                _ => return None,
            }
        }
    }
    let value = if close == Token::RBrace {
        Value::Map(entries)
    } else {
        Value::List(items)
    };
    Some((value, j + 1))
}

/// Another value of `v`'s kind.
fn other_value(v: &lance_csr::Value) -> lance_csr::Value {
    use lance_csr::Value;
    match v {
        Value::Int(x) => Value::Int(x.wrapping_add(1)),
        Value::Float(x) => Value::Float(x + 0.5),
        Value::Str(x) => Value::Str(format!("{x}~")),
        other => other.clone(),
    }
}

/// `q`'s results on `g` (with parameters `given`) as a query with more parameters, run
/// through a plan `g`'s cache kept from a run with other values; `None` when `q` has no
/// literal to turn into a parameter.
pub async fn run_parameterized(
    g: &Graph,
    q: &str,
    given: &Params,
) -> Option<(String, lance_csr::Result<QueryResult>)> {
    let (pq, mut values, mut others) = parameterize(q)?;
    if values.keys().any(|k| given.contains_key(k)) {
        return None;
    }
    values.extend(given.clone());
    others.extend(given.clone());
    // Other values may fail (a division by zero, say); the plan is kept all the same.
    let _ = g.query(&pq, &others).await;
    let r = g.query(&pq, &values).await;
    Some((format!("{pq}  with {}", show_params(&values)), r))
}

fn show_params(p: &Params) -> String {
    let items: Vec<String> = p.iter().map(|(k, v)| format!("${k} = {v}")).collect();
    items.join(", ")
}

/// Progress of a long run on stderr: a line every 100 queries, and each query still running
/// after [`Watch::SLOW`], printed while it runs (so a run that stalls says on what).
pub struct Watch {
    total: usize,
    started: Instant,
    /// The query running: since when, its text, whether it was printed.
    running: Arc<Mutex<Running>>,
}

type Running = Option<(Instant, String, bool)>;

impl Watch {
    pub const SLOW: Duration = Duration::from_secs(10);

    /// Starts watching (a thread that ends with the `Watch`) a run of `total` queries.
    pub fn start(total: usize) -> Self {
        let running: Arc<Mutex<Running>> = Arc::default();
        let weak = Arc::downgrade(&running);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let Some(running) = weak.upgrade() else {
                return;
            };
            let mut running = running.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((since, q, printed)) = running.as_mut() {
                if !*printed && since.elapsed() >= Self::SLOW {
                    eprintln!("  still running after {:.0?}: {q}", since.elapsed());
                    *printed = true;
                }
            }
        });
        Self {
            total,
            started: Instant::now(),
            running,
        }
    }

    pub fn see(&self, p: Progress) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        match p {
            Progress::Running(q) => {
                *running = Some((Instant::now(), q.to_string(), false));
            }
            Progress::Done(r) => {
                if let Some((since, _, true)) = running.take() {
                    eprintln!("  ... done after {:.1?}", since.elapsed());
                }
                let done = r.queries.len();
                if done % 100 == 0 && done < self.total {
                    eprintln!(
                        "  {done}/{} queries, {} mismatches, {} past the time limit, {:.0?}",
                        self.total,
                        r.mismatches.len(),
                        r.timed_out.len(),
                        self.started.elapsed()
                    );
                }
            }
        }
    }
}

/// What a run tells its caller as it goes.
pub enum Progress<'a> {
    /// This query starts.
    Running(&'a str),
    /// A query is done; what was found so far.
    Done(&'a Report),
}

/// Generates `n` queries from `seed` over `on`'s schema and compares `on` against `off`,
/// telling `progress` of each query as it starts and ends.
pub async fn compare(
    on: &Graph,
    off: &Graph,
    n: usize,
    seed: u64,
    shapes: Shapes,
    progress: &mut dyn FnMut(Progress),
) -> Result<Report> {
    let mut report = Report::default();
    for q in generate(on, n, seed, shapes).await {
        progress(Progress::Running(&q));
        compare_one(on, off, q, &mut report).await;
        progress(Progress::Done(&report));
    }
    Ok(report)
}

/// Runs `q` on both graphs (and again from the plan cache, and with parameters) and records
/// what it finds in `report`.
fn timed_out<T>(r: &Result<T>) -> bool {
    matches!(
        r,
        Err(lance_csr::Error::Limit(lance_csr::LimitKind::Time, _))
    )
}

async fn compare_one(on: &Graph, off: &Graph, q: String, report: &mut Report) {
    let p = Params::new();
    report.queries.push(q.clone());
    let (a, b) = (on.query(&q, &p).await, off.query(&q, &p).await);
    if timed_out(&a) || timed_out(&b) {
        report.timed_out.push(q);
        return;
    }
    let same = match (&a, &b) {
        // Both fail at run time with the same Cypher error (an overflow, say): agreed.
        (Err(x @ lance_csr::Error::Runtime(_)), Err(y)) => x.kind_name() == y.kind_name(),
        // An internal error (or a plan missing a column it bound) is a bug in both modes.
        (Err(x), Err(y)) if x.is_bug() || y.is_bug() => false,
        (Err(x), Err(_)) => {
            report.rejected.push((q.clone(), x.to_string()));
            return;
        }
        (Ok(x), Ok(y)) => {
            report.nonempty += (x.num_rows() > 0) as usize;
            x.columns == y.columns && same_rows(x, y, q.contains(" ORDER BY "))
        }
        _ => false,
    };
    report.compared += 1;
    // A query that reads a part twice (an OPTIONAL MATCH, a MATCH after WITH) runs again,
    // from the plan cache: it has one answer, however often it runs.
    if reads_twice(&q) && !on.options().no_plan_cache {
        let again = on.query(&q, &p).await;
        if timed_out(&again) {
            report.timed_out.push(q);
            return;
        }
        let repeats = match (&a, &again) {
            (Ok(x), Ok(y)) => same_rows(x, y, false),
            (Err(x), Err(y)) => x.kind_name() == y.kind_name(),
            _ => false,
        };
        if same && !repeats {
            report.mismatches.push(Mismatch {
                query: format!("{q}  -- run twice, the runs differ"),
                optimized: show(&again),
                unoptimized: show(&a),
            });
            return;
        }
    }
    if !same {
        report.mismatches.push(Mismatch {
            query: q.clone(),
            optimized: show(&a),
            unoptimized: show(&b),
        });
        return;
    }
    // The same query with parameters, through a cached plan: the same rows.
    let Ok(expected) = &b else { return };
    if let Some((pq, c)) = run_parameterized(on, &q, &p).await {
        if timed_out(&c) {
            report.timed_out.push(pq);
            return;
        }
        report.parameterized += 1;
        let agree = c
            .as_ref()
            .is_ok_and(|c| same_rows(c, expected, q.contains(" ORDER BY ")));
        if !agree {
            report.mismatches.push(Mismatch {
                query: pq,
                optimized: show(&c),
                unoptimized: show(&b),
            });
        }
    }
}

impl Report {
    /// Every mismatch with both results, every query both modes rejected with its error, then
    /// a summary line.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for (q, e) in &self.rejected {
            let _ = writeln!(s, "REJECTED {q}\n  {e}");
        }
        for q in &self.timed_out {
            let _ = writeln!(s, "TIMED OUT {q}");
        }
        for m in &self.mismatches {
            let _ = writeln!(
                s,
                "MISMATCH {}\n  optimized:   {}\n  unoptimized: {}",
                m.query, m.optimized, m.unoptimized
            );
        }
        let _ = writeln!(
            s,
            "{} queries compared ({} with rows, {} also with parameters through a cached plan), {} mismatches, {} rejected by both modes, {} past the time limit",
            self.compared,
            self.nonempty,
            self.parameterized,
            self.mismatches.len(),
            self.rejected.len(),
            self.timed_out.len()
        );
        if let Some((n, recall)) = self.searches {
            let _ = writeln!(
                s,
                "{n} vector searches + expansions compared with the exact ordering: recall@10 \
                 {recall:.3}, the rows of the nodes both found identical"
            );
        }
        if self.text_searches > 0 {
            let _ = writeln!(
                s,
                "{} full-text searches compared with the same search without its limit or \
                 parentheses",
                self.text_searches
            );
        }
        s
    }
}

/// For each full-text index over nodes: a word of a stored text searched with a limit (none,
/// one, more than it finds, a huge one, zero) and inside parentheses nested up to the most a
/// query may nest (and one more, an error). Each must find the nodes the plain search finds,
/// as many as the limit lets.
async fn text_searches(g: &Graph, seed: u64, report: &mut Report) -> Result<()> {
    use std::collections::BTreeSet;
    let schema = g.schema();
    let mut rng = Rng(seed ^ 0x7E47);
    for x in &g.config().indexes {
        let Some(label) = schema.labels.get(&x.table) else {
            continue;
        };
        if x.kind != lance_csr::IndexKind::Fulltext || label.rows == 0 {
            continue;
        }
        let (name, key) = (&label.labels[0], &label.key);
        for _ in 0..10 {
            let skip = rng.below(label.rows);
            let q = format!(
                "MATCH (n:`{name}`) RETURN n.`{}` SKIP {skip} LIMIT 1",
                x.column
            );
            let text = lance_csr::rows(&g.query(&q, &Params::new()).await?)
                .first()
                .map(|r| r[0].clone())
                .unwrap_or_default();
            let words: Vec<&str> = (text.split(|c: char| !c.is_alphanumeric()))
                .filter(|w| !w.is_empty() && !["AND", "OR", "NOT"].contains(w))
                .collect();
            if words.is_empty() {
                continue;
            }
            let word = words[rng.below(words.len())];
            let search = |query: String, options: &str| {
                format!(
                    "CALL db.index.fulltext.queryNodes('{}', $q{options}) YIELD node RETURN node.`{key}`",
                    x.name
                )
                .replace("$q", &format!("'{}'", query.replace('\'', "\\'")))
            };
            let ids = |r: &QueryResult| -> BTreeSet<String> {
                lance_csr::rows(r)
                    .into_iter()
                    .map(|r| r[0].clone())
                    .collect()
            };
            let plain = search(word.to_string(), "");
            let all = ids(&g.query(&plain, &Params::new()).await?);
            let depth = 1 + rng.below(64);
            let nested = format!("{}{word}{}", "(".repeat(depth), ")".repeat(depth));
            let limit = [0, 1, all.len() + 5, 1 << 40][rng.below(4)];
            let mut fail = |what: String, got: String| {
                report.mismatches.push(Mismatch {
                    query: what,
                    optimized: got,
                    unoptimized: format!("{} nodes: {all:?}", all.len()),
                })
            };
            let limited = search(word.to_string(), &format!(", {{limit: {limit}}}"));
            match g.query(&limited, &Params::new()).await {
                Ok(r) if ids(&r).is_subset(&all) && ids(&r).len() == all.len().min(limit) => {}
                r => fail(limited, format!("{:?}", r.map(|r| ids(&r)))),
            }
            let inner = search(nested, "");
            match g.query(&inner, &Params::new()).await {
                Ok(r) if ids(&r) == all => {}
                r => fail(inner, format!("{:?}", r.map(|r| ids(&r)))),
            }
            let too_deep = format!("{}{word}{}", "(".repeat(65), ")".repeat(65));
            if g.query(&search(too_deep.clone(), ""), &Params::new())
                .await
                .is_ok()
            {
                fail(too_deep, "answered; 64 parentheses are the most".into());
            }
            report.text_searches += 1;
        }
    }
    Ok(())
}

/// For each vector index the graph declares: searches for the `k` nodes nearest a stored
/// vector (mostly ten; sometimes one, or more than the table has), through the index (`on`)
/// and by the exact ordering (`off`), each expanded one hop. Both must find as many nodes, and
/// the nodes both found the same rows; the recall@10 is what the index loses.
async fn vector_searches(on: &Graph, off: &Graph, seed: u64, report: &mut Report) -> Result<()> {
    use std::collections::BTreeSet;
    let schema = on.schema();
    let mut rng = Rng(seed ^ 0x005E_A5C4);
    let (mut found, mut wanted, mut searches) = (0usize, 0usize, 0usize);
    for x in &on.config().indexes {
        let Some(label) = schema.labels.get(&x.table) else {
            continue;
        };
        // A relationship type leaving the table, for the expansion.
        let rel = schema.relationships.iter().find(|r| r.from == x.table);
        let (Some(rel), lance_csr::IndexKind::Vector) = (rel, x.kind) else {
            continue;
        };
        let similarity = match x.metric() {
            lance_csr::VectorMetric::Cosine => "vector.similarity.cosine",
            lance_csr::VectorMetric::Euclidean => "vector.similarity.euclidean",
            // A metric this check does not know yet.
            _ => continue,
        };
        let (name, key, column) = (&label.labels[0], &label.key, &x.column);
        let far_key = schema.labels.get(&rel.to).map_or("id", |l| l.key.as_str());
        // Optional: a node without such a relationship is a row too, so one query per plan
        // gives both the nodes found and their expansion.
        let expand = format!(
            "OPTIONAL MATCH (node)-[:`{}`]->(f) RETURN node.`{key}` AS n, f.`{far_key}` AS f",
            rel.rel_type
        );
        for _ in 0..20.min(label.rows) {
            // Mostly ten nodes (the recall is of those); sometimes one, or more than the
            // table has.
            let k = match rng.below(5) {
                0 => 1,
                1 => label.rows + 1 + rng.below(1000),
                _ => 10,
            };
            let near = format!(
                "MATCH (node:`{name}`) WITH node ORDER BY {similarity}(node.`{column}`, $v) DESC LIMIT {k}"
            );
            let search = format!(
                "CALL db.index.vector.queryNodes('{}', {k}, $v) YIELD node",
                x.name
            );
            let skip = rng.below(label.rows);
            let q = format!("MATCH (n:`{name}`) RETURN n.`{column}` SKIP {skip} LIMIT 1");
            let r = on.query(&q, &Params::new()).await?;
            let Some(b) = r.batches.iter().find(|b| b.num_rows() > 0) else {
                continue;
            };
            let v @ lance_csr::Value::List(_) = lance_csr::value_at(b.column(0).as_ref(), 0) else {
                continue;
            };
            let mut p = Params::new();
            p.insert("v".into(), v);
            let (ann, full) = (format!("{search} {expand}"), format!("{near} {expand}"));
            let (ann_rows, full_rows) = (on.query(&ann, &p).await?, off.query(&full, &p).await?);
            let ids = |r: &QueryResult| -> BTreeSet<String> {
                lance_csr::rows(r)
                    .into_iter()
                    .map(|r| r[0].clone())
                    .collect()
            };
            let (by_index, exact) = (ids(&ann_rows), ids(&full_rows));
            let both: BTreeSet<&String> = by_index.intersection(&exact).collect();
            if k == 10 {
                found += both.len();
                wanted += exact.len();
            }
            searches += 1;
            if by_index.len() != exact.len() {
                report.mismatches.push(Mismatch {
                    query: format!("{search} (k = {k}) vs {near}"),
                    optimized: format!("{} nodes", by_index.len()),
                    unoptimized: format!("{} nodes", exact.len()),
                });
            }
            // The rows of the nodes both found.
            let kept = |r: &QueryResult| -> Vec<String> {
                let mut rows: Vec<String> = (lance_csr::rows(r).into_iter())
                    .filter(|r| both.contains(&r[0]))
                    .map(|r| r.join(" | "))
                    .collect();
                rows.sort();
                rows
            };
            let (a, b) = (kept(&ann_rows), kept(&full_rows));
            if a != b {
                report.mismatches.push(Mismatch {
                    query: format!("{ann}  vs  {full}  ($v: the {column} of {name} row {skip})"),
                    optimized: format!("{a:?}"),
                    unoptimized: format!("{b:?}"),
                });
            }
        }
    }
    if searches > 0 {
        report.searches = Some((searches, found as f64 / wanted.max(1) as f64));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A schema of `labels` (each with an integer `id`) and relationship types (type, from,
    /// to).
    fn schema_of(labels: &[&str], rels: &[(&str, &str, &str)]) -> Schema {
        let id = Prop {
            name: "id".into(),
            numeric: true,
            integer: true,
            values: vec!["1".into(), "2".into()],
        };
        Schema {
            labels: (labels.iter())
                .map(|l| (l.to_string(), vec![id.clone()]))
                .collect(),
            label_sets: BTreeMap::new(),
            all_labels: labels.iter().map(|l| l.to_string()).collect(),
            rels: (rels.iter())
                .map(|(t, from, to)| (t.to_string(), from.to_string(), to.to_string(), vec![]))
                .collect(),
        }
    }

    /// Whole-graph queries include two cycles sharing hops, through several labels, written
    /// as one MATCH or two, in total or grouped.
    #[test]
    fn whole_graph_queries_join_cycles_sharing_hops() {
        let s = schema_of(
            &["Person", "City"],
            &[
                ("KNOWS", "Person", "Person"),
                ("IS_LOCATED_IN", "Person", "City"),
            ],
        );
        let mut rng = Rng(11);
        let joined: Vec<String> = (0..3000)
            .filter_map(|_| whole_graph_query(&mut rng, &s))
            .filter(|q| q.contains("(x:`"))
            .collect();
        // Both forms, through both labels, grouped and not.
        for want in [
            "), (a)",
            " MATCH (a)",
            ":`City`",
            ":`Person`",
            "AS y",
            "(c) RETURN",
        ] {
            assert!(
                joined.iter().any(|q| q.contains(want)),
                "{want}: {joined:?}"
            );
        }
    }

    /// Whole-graph queries include cycles of four and five hops through several labels,
    /// closed back onto their first node.
    #[test]
    fn whole_graph_queries_close_long_cycles_through_labels() {
        let labels = ["Person", "Comment", "Post"];
        let s = schema_of(
            &labels,
            &[
                ("KNOWS", "Person", "Person"),
                ("HAS_CREATOR", "Comment", "Person"),
                ("HAS_CREATOR", "Post", "Person"),
                ("REPLY_OF", "Comment", "Post"),
            ],
        );
        let mut rng = Rng(5);
        let cycles: Vec<String> = (0..2000)
            .filter_map(|_| whole_graph_query(&mut rng, &s))
            // Closed onto a bare `(a)` in the pattern, not in a `NOT (c)-[:T]->(a)`.
            .filter(|q| q.contains("(a) ") && !q.contains("NOT ("))
            .filter(|q| q.contains("(d:`"))
            .collect();
        let through_labels = |q: &&String| {
            labels
                .iter()
                .filter(|l| q.contains(&format!(":`{l}`)")))
                .count()
                >= 2
        };
        let four = cycles
            .iter()
            .filter(|q| !q.contains("(e:`"))
            .filter(through_labels)
            .count();
        let five = cycles
            .iter()
            .filter(|q| q.contains("(e:`"))
            .filter(through_labels)
            .count();
        assert!(four > 0 && five > 0, "{cycles:#?}");
    }

    #[test]
    fn a_matchs_patterns_become_consecutive_matches() {
        assert_eq!(
            consecutive_matches(
                "MATCH (a:`P`)-[:`K`]-(b), (b)-[:`K`]->(c {x: 1, y: 2}) WHERE a.x IN [1, 2] \
                 RETURN a, count(*)"
            ),
            "MATCH (a:`P`)-[:`K`]-(b) MATCH (b)-[:`K`]->(c {x: 1, y: 2}) WHERE a.x IN [1, 2] \
             RETURN a, count(*)"
        );
        assert_eq!(consecutive_matches("RETURN 1, (2)"), "RETURN 1, (2)");
    }

    /// A property tested against a list of literals gets one long list parameter with the
    /// same members; a comprehension's list keeps its length (its literals each a parameter).
    #[test]
    fn a_property_in_a_literal_list_becomes_a_long_list_parameter() {
        use lance_csr::Value;
        let q = "MATCH (a:P) WHERE a.x IN [1, 'b', 2.5] AND [y IN [3] | y] = [3] RETURN a";
        let (pq, values, others) = parameterize(q).unwrap();
        assert_eq!(
            pq,
            "MATCH (a:P) WHERE a.x IN $v1 AND [y IN [$v2] | y] = [$v3] RETURN a"
        );
        let Some(Value::List(xs)) = values.get("v1") else {
            panic!("{values:?}")
        };
        assert!(xs.len() >= lance_csr::COMPACT_LIST_ITEMS && xs.len() % 3 == 0);
        assert_eq!(
            xs[..3],
            [Value::Int(1), Value::Str("b".into()), Value::Float(2.5)]
        );
        assert!(xs.chunks(3).all(|c| c == &xs[..3]));
        let Some(Value::List(ys)) = others.get("v1") else {
            panic!("{others:?}")
        };
        assert_eq!(ys[0], Value::Int(2));
        assert_eq!(values.get("v2"), Some(&Value::Int(3)));
        // The second such list: a map's entry.
        let q = "MATCH (a:P) WHERE a.x IN [1] OR a.y IN ['c', 'd'] RETURN a";
        let (pq, values, _) = parameterize(q).unwrap();
        assert_eq!(
            pq,
            "MATCH (a:P) WHERE a.x IN $v1 OR a.y IN $v2.items RETURN a"
        );
        let Some(Value::Map(entries)) = values.get("v2") else {
            panic!("{values:?}")
        };
        assert!(
            matches!(&entries[0].1, Value::List(xs) if xs[..2] == [Value::Str("c".into()), Value::Str("d".into())])
        );
        // Negative numbers and nulls are left as written.
        let (pq, _, _) = parameterize("MATCH (a) WHERE a.x IN [-1, null] RETURN a").unwrap();
        assert_eq!(pq, "MATCH (a) WHERE a.x IN [-$v1, null] RETURN a");
    }
}
