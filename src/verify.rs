//! Random-query equivalence (`lance-csr verify`): generates random valid queries over a graph's
//! schema (patterns with branching and variable length, filters on sampled values, WITH,
//! aggregates, ORDER BY + LIMIT), runs each with every rule on (CSR mode) and with all of them
//! off (the join path), and reports every query whose results differ.
//!
//! Results are compared exactly where the query fixes the order (it orders by every returned
//! column, so ties are identical rows), as multisets otherwise.

use crate::output::value::render_cell;
use crate::session::{Graph, Mode};
use crate::{Params, QueryResult, Result};
use arrow::datatypes::DataType;
use std::collections::BTreeMap;
use std::fmt::Write;

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
    name: String,
    numeric: bool,
    values: Vec<String>,
}

/// What the generator knows of the graph: per label its filterable properties; the
/// relationship tables as (type, from, to, properties).
struct Schema {
    labels: BTreeMap<String, Vec<Prop>>,
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
            let values = sample_values(g, pattern, p).await;
            if !values.is_empty() {
                out.push(Prop {
                    name: p.clone(),
                    numeric,
                    values,
                });
            }
        }
    }
    out
}

async fn schema(g: &Graph) -> Schema {
    let cat = g.catalog();
    let mut labels = BTreeMap::new();
    for (label, info) in &cat.nodes {
        let props = filterable_props(g, &format!("(x:`{label}`)"), &info.props).await;
        labels.insert(label.clone(), props);
    }
    let mut rels = Vec::new();
    for r in &cat.rels {
        let (t, from, to) = (&r.cfg.rel_type, &r.cfg.from, &r.cfg.to);
        let pattern = format!("(:`{from}`)-[x:`{t}`]->(:`{to}`)");
        let props = filterable_props(g, &pattern, &r.props).await;
        rels.push((t.clone(), from.clone(), to.clone(), props));
    }
    Schema { labels, rels }
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
    match rng.below(4) {
        // Grouped aggregates.
        0 => {
            let key = rng.pick(&cols).clone();
            let target = rng.pick(&vars).name.clone();
            let (o, ob) = if with_optional {
                (", count(om) AS o", ", o")
            } else {
                ("", "")
            };
            Some(format!(
                "{q} RETURN {key} AS k, count(*) AS c, count(DISTINCT {target}) AS d{o} ORDER BY k, c, d{ob}"
            ))
        }
        // WITH + aggregate + filter on it.
        1 => {
            let v = rng.pick(&nodes);
            Some(format!(
                "{q} WITH {}, count(*) AS c WHERE c >= 1 RETURN {}.{} AS x, c ORDER BY x, c LIMIT {}",
                v.name,
                v.name,
                rng.pick(&v.props).name,
                1 + rng.below(10)
            ))
        }
        // Rows, ordered by everything, limited.
        2 => {
            let list: Vec<String> = cols
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c} AS c{i}"))
                .collect();
            let order: Vec<String> = (0..cols.len()).map(|i| format!("c{i}")).collect();
            Some(format!(
                "{q} RETURN {} ORDER BY {} LIMIT {}",
                list.join(", "),
                order.join(", "),
                1 + rng.below(20)
            ))
        }
        // DISTINCT rows, unordered.
        _ => Some(format!("{q} RETURN DISTINCT {}", cols.join(", "))),
    }
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
    /// Every query generated, in order.
    pub queries: Vec<String>,
    /// Queries both modes rejected (the generator made a query the subset refuses).
    pub rejected: Vec<(String, String)>,
    pub mismatches: Vec<Mismatch>,
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

fn show(r: &std::result::Result<QueryResult, crate::Error>) -> String {
    match r {
        Ok(r) => format!("{:?}", rows(r)),
        Err(e) => format!("error: {e}"),
    }
}

/// Generates `n` queries from `seed` and compares every rule on against every rule off.
pub async fn run(graph: &Graph, n: usize, seed: u64) -> Result<Report> {
    let on = graph.with_mode(Mode::Csr).await?;
    let off = graph.with_mode(Mode::Join).await?;
    compare(&on, &off, n, seed).await
}

/// Generates `n` queries from `seed` over `on`'s schema and compares `on` against `off`.
pub async fn compare(on: &Graph, off: &Graph, n: usize, seed: u64) -> Result<Report> {
    let schema = schema(on).await;
    let mut rng = Rng(seed);
    let mut report = Report::default();
    let p = Params::new();
    let mut made = 0;
    while made < n {
        let Some(q) = query(&mut rng, &schema) else {
            continue;
        };
        made += 1;
        report.queries.push(q.clone());
        let (a, b) = (on.query(&q, &p).await, off.query(&q, &p).await);
        let same = match (&a, &b) {
            (Err(x), Err(_)) => {
                report.rejected.push((q.clone(), x.to_string()));
                continue;
            }
            (Ok(x), Ok(y)) => {
                report.nonempty += (x.num_rows() > 0) as usize;
                let (mut rx, mut ry) = (rows(x), rows(y));
                if !q.contains(" ORDER BY ") {
                    rx.sort();
                    ry.sort();
                }
                x.columns == y.columns && rx == ry
            }
            _ => false,
        };
        report.compared += 1;
        if !same {
            report.mismatches.push(Mismatch {
                query: q,
                optimized: show(&a),
                unoptimized: show(&b),
            });
        }
    }
    Ok(report)
}

impl Report {
    /// Every mismatch with both results, then a summary line.
    pub fn render(&self) -> String {
        let mut s = String::new();
        for m in &self.mismatches {
            let _ = writeln!(
                s,
                "MISMATCH {}\n  optimized:   {}\n  unoptimized: {}",
                m.query, m.optimized, m.unoptimized
            );
        }
        let _ = writeln!(
            s,
            "{} queries compared ({} with rows), {} mismatches, {} rejected by both modes",
            self.compared,
            self.nonempty,
            self.mismatches.len(),
            self.rejected.len()
        );
        s
    }
}
