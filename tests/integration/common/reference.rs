//! A reference interpreter for the test suites: evaluates a parsed query directly over the rows
//! of a small in-memory graph, the obvious way (every node, every edge, backtracking), with no
//! DataFusion, binder, planner or rules of the engine involved. Slow and simple on purpose: the
//! random queries of `verify` are checked against it, so bugs the engine's two execution paths
//! share (binding, naming, DataFusion's optimizer, value semantics) show up as mismatches.
//!
//! Semantics are openCypher's, with the engine's documented differences: an undirected pattern
//! matches a self-loop once.
//! Results are rendered like the engine's `output::rows` (top-level strings unquoted).

use arrow::array::{Array, AsArray};
use arrow::datatypes::{DataType, Float64Type, Int32Type, Int64Type};
use cypher::ast::{self, BinaryOp, Direction, ExprKind, Literal, UnaryOp};
use lance_csr_datasets::{Table, TableKind};
use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<V>),
    Map(Vec<(String, V)>),
    Node(usize),
    Rel(usize),
    /// Nodes and relationships, in path order.
    Path(Vec<usize>, Vec<usize>),
}

struct Node {
    /// Its table (what relationship tables name as ends).
    label: String,
    labels: Vec<String>,
    props: Vec<(String, V)>,
}

struct Rel {
    typ: String,
    src: usize,
    dst: usize,
    props: Vec<(String, V)>,
}

/// The graph as plain rows.
pub struct RefGraph {
    nodes: Vec<Node>,
    rels: Vec<Rel>,
}

/// Why a query was not evaluated or failed.
#[derive(Debug, Clone, PartialEq)]
pub enum RefError {
    /// Outside what this interpreter implements: the query is skipped.
    Unsupported(String),
    /// A Cypher error (the engine must fail too).
    Error(String),
}

type R<T> = Result<T, RefError>;

fn unsupported<T>(what: impl Into<String>) -> R<T> {
    Err(RefError::Unsupported(what.into()))
}

fn error<T>(what: impl Into<String>) -> R<T> {
    Err(RefError::Error(what.into()))
}

fn cell(a: &dyn Array, i: usize) -> V {
    if a.is_null(i) {
        return V::Null;
    }
    match a.data_type() {
        DataType::Int64 => V::Int(a.as_primitive::<Int64Type>().value(i)),
        DataType::Int32 => V::Int(a.as_primitive::<Int32Type>().value(i) as i64),
        DataType::Float64 => V::Float(a.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => V::Str(a.as_string::<i32>().value(i).to_string()),
        DataType::Boolean => V::Bool(a.as_boolean().value(i)),
        DataType::List(_) => {
            let items = a.as_list::<i32>().value(i);
            V::List((0..items.len()).map(|k| cell(items.as_ref(), k)).collect())
        }
        other => panic!("reference interpreter: column type {other} not supported"),
    }
}

impl RefGraph {
    /// Nodes and relationships of the generator's tables (edges whose endpoints are missing
    /// are dangling and left out, as the engine leaves them out).
    pub fn new(tables: &[Table]) -> Self {
        let mut nodes = Vec::new();
        let mut index: HashMap<(String, i64), usize> = HashMap::new();
        for t in tables {
            if let TableKind::Node {
                label,
                id,
                extra_labels,
            } = &t.kind
            {
                let b = &t.batch;
                let key = b.column_by_name(id).expect("key column");
                for i in 0..b.num_rows() {
                    let props: Vec<(String, V)> = b
                        .schema()
                        .fields()
                        .iter()
                        .enumerate()
                        .map(|(c, f)| (f.name().clone(), cell(b.column(c).as_ref(), i)))
                        .collect();
                    if let V::Int(k) = cell(key.as_ref(), i) {
                        index.insert((label.clone(), k), nodes.len());
                    }
                    nodes.push(Node {
                        label: label.clone(),
                        labels: std::iter::once(label)
                            .chain(extra_labels)
                            .filter(|l| !l.is_empty())
                            .cloned()
                            .collect(),
                        props,
                    });
                }
            }
        }
        let mut rels = Vec::new();
        for t in tables {
            if let TableKind::Rel { rel_type, from, to } = &t.kind {
                let b = &t.batch;
                let (s, d) = (
                    b.column_by_name("src").unwrap(),
                    b.column_by_name("dst").unwrap(),
                );
                for i in 0..b.num_rows() {
                    let (V::Int(sk), V::Int(dk)) = (cell(s.as_ref(), i), cell(d.as_ref(), i))
                    else {
                        continue;
                    };
                    let (Some(&src), Some(&dst)) =
                        (index.get(&(from.clone(), sk)), index.get(&(to.clone(), dk)))
                    else {
                        continue;
                    };
                    let props = b
                        .schema()
                        .fields()
                        .iter()
                        .enumerate()
                        .filter(|(_, f)| f.name() != "src" && f.name() != "dst")
                        .map(|(c, f)| (f.name().clone(), cell(b.column(c).as_ref(), i)))
                        .collect();
                    rels.push(Rel {
                        typ: rel_type.clone(),
                        src,
                        dst,
                        props,
                    });
                }
            }
        }
        Self { nodes, rels }
    }

    /// Runs a query: the result columns and rows rendered as the engine renders them.
    pub fn query(&self, text: &str) -> R<(Vec<String>, Vec<Vec<String>>)> {
        let q = cypher::parse_query(text).map_err(|e| RefError::Error(e.to_string()))?;
        let (cols, mut rows) = self.single(&q.first)?;
        for (all, sq) in &q.unions {
            let (c2, r2) = self.single(sq)?;
            if c2 != cols {
                return error("UNION of different columns");
            }
            rows.extend(r2);
            if !*all {
                dedup(&mut rows);
            }
        }
        if q.unions.iter().any(|(all, _)| !*all) {
            dedup(&mut rows);
        }
        let rendered = rows
            .iter()
            .map(|r| r.iter().map(|v| self.render(v, false)).collect())
            .collect();
        Ok((cols, rendered))
    }

    fn single(&self, sq: &ast::SingleQuery) -> R<(Vec<String>, Vec<Vec<V>>)> {
        if !matches!(sq.clauses.last(), Some(ast::Clause::Return(_))) {
            return error("query without RETURN");
        }
        self.clauses(vec![Row::default()], sq, None)
    }

    /// The clauses over `rows`: what RETURN returns, or without one (a subquery) a row of
    /// no columns per row left. A subquery's clauses see the `outer` row's variables to their
    /// end: a WITH of its own projects over them.
    fn clauses(
        &self,
        mut rows: Vec<Row>,
        sq: &ast::SingleQuery,
        outer: Option<&Row>,
    ) -> R<(Vec<String>, Vec<Vec<V>>)> {
        for c in &sq.clauses {
            match c {
                ast::Clause::Match(m) => rows = self.match_clause(rows, m)?,
                ast::Clause::Unwind(u) => {
                    let mut out = Vec::new();
                    for r in rows {
                        match self.eval(&u.expr, &r)? {
                            V::Null => {}
                            V::List(xs) => {
                                for x in xs {
                                    out.push(r.with(&u.alias.name, x));
                                }
                            }
                            x => out.push(r.with(&u.alias.name, x)),
                        }
                    }
                    rows = out;
                }
                ast::Clause::With(w) => {
                    let (names, projected) = self.project(rows, &w.projection, false)?;
                    rows = projected
                        .into_iter()
                        .map(|vals| {
                            let mut r = outer.cloned().unwrap_or_default();
                            for (n, v) in names.iter().zip(vals) {
                                r = r.with(n, v);
                            }
                            r
                        })
                        .collect();
                    if let Some(p) = &w.where_ {
                        let mut kept = Vec::new();
                        for r in rows {
                            if self.eval(p, &r)? == V::Bool(true) {
                                kept.push(r);
                            }
                        }
                        rows = kept;
                    }
                }
                ast::Clause::Return(p) => return self.project(rows, p, true),
                // Searches are compared with exact orderings instead (tests/integration/vectors.rs).
                ast::Clause::Call(_) => return error("CALL of a search procedure"),
            }
        }
        Ok((vec![], rows.iter().map(|_| vec![]).collect()))
    }

    /// A pattern expression or subquery, evaluated for `row`.
    fn subquery(&self, e: &ast::Expr, row: &Row) -> R<V> {
        let one = |p: &ast::PathPattern, filter: Option<&ast::Expr>| ast::Match {
            optional: false,
            patterns: vec![p.clone()],
            where_: filter.cloned(),
            unique_within: None,
            span: p.span,
        };
        Ok(match &e.kind {
            ExprKind::PatternPredicate(p) => V::Bool(
                !self
                    .match_clause(vec![row.clone()], &one(p, None))?
                    .is_empty(),
            ),
            ExprKind::PatternComprehension {
                pattern,
                filter,
                map,
            } => {
                let rows =
                    self.match_clause(vec![row.clone()], &one(pattern, filter.as_deref()))?;
                V::List(rows.iter().map(|r| self.eval(map, r)).collect::<R<_>>()?)
            }
            ExprKind::Subquery(kind, q) => {
                let (_, vals) = self.clauses(vec![row.clone()], q, Some(row))?;
                match kind {
                    ast::SubqueryKind::Exists => V::Bool(!vals.is_empty()),
                    ast::SubqueryKind::Count => V::Int(vals.len() as i64),
                    ast::SubqueryKind::Collect => V::List(
                        vals.into_iter()
                            .filter_map(|v| v.into_iter().next())
                            .collect(),
                    ),
                }
            }
            _ => return error("not a subquery"),
        })
    }

    // ---- MATCH ----

    fn match_clause(&self, rows: Vec<Row>, m: &ast::Match) -> R<Vec<Row>> {
        let mut out = Vec::new();
        for r in rows {
            let mut found = Vec::new();
            self.match_paths(&r, &m.patterns, &mut Vec::new(), &mut found)?;
            let mut kept = Vec::new();
            for f in found {
                let ok = match &m.where_ {
                    Some(w) => self.eval(w, &f)? == V::Bool(true),
                    None => true,
                };
                if ok {
                    kept.push(f);
                }
            }
            if kept.is_empty() && m.optional {
                let mut nulls = r.clone();
                for name in pattern_vars(&m.patterns) {
                    if nulls.get(&name).is_none() {
                        nulls = nulls.with(&name, V::Null);
                    }
                }
                out.push(nulls);
            }
            out.extend(kept);
        }
        Ok(out)
    }

    fn match_paths(
        &self,
        row: &Row,
        paths: &[ast::PathPattern],
        used: &mut Vec<usize>,
        out: &mut Vec<Row>,
    ) -> R<()> {
        let Some((p, rest)) = paths.split_first() else {
            out.push(row.clone());
            return Ok(());
        };
        if let Some(name) = &p.name {
            // Every element named (hidden names), the path built from them once matched.
            let mut q = p.clone();
            q.name = None;
            let mut k = 0;
            let mut hide = |v: &mut Option<ast::Ident>| {
                if v.is_none() {
                    k += 1;
                    *v = Some(ast::Ident::new(format!(" path{k}"), name.span));
                }
            };
            hide(&mut q.start.var);
            for (r, n) in &mut q.steps {
                hide(&mut r.var);
                hide(&mut n.var);
            }
            let mut matched = Vec::new();
            self.match_paths(row, std::slice::from_ref(&q), used, &mut matched)?;
            for r in matched {
                let path = self.path_of(&r, &q)?;
                let r = r.with(&name.name, path);
                self.match_paths(&r, rest, used, out)?;
            }
            return Ok(());
        }
        if let Some((kind, _)) = &p.shortest {
            return self.shortest_paths(row, p, kind, rest, used, out);
        }
        for n in self.node_candidates(row, &p.start)? {
            let r = bind(row, &p.start.var, V::Node(n));
            self.match_steps(&r, n, &p.steps, used, &mut |r2, used| {
                self.match_paths(r2, rest, used, out)
            })?;
        }
        Ok(())
    }

    /// `shortestPath` / `allShortestPaths` of one variable-length hop: a breadth-first search
    /// from each start, then one (any) or every path of the least length to each end.
    fn shortest_paths(
        &self,
        row: &Row,
        p: &ast::PathPattern,
        kind: &ast::Shortest,
        rest: &[ast::PathPattern],
        used: &mut Vec<usize>,
        out: &mut Vec<Row>,
    ) -> R<()> {
        let [(r, end)] = p.steps.as_slice() else {
            return unsupported("a shortest path of several hops");
        };
        let Some((lo, hi)) = r.length else {
            return unsupported("a shortest path of a fixed-length hop");
        };
        if matches!(kind, ast::Shortest::K(_)) {
            return unsupported("SHORTEST k");
        }
        let lo = lo.unwrap_or(1) as usize;
        let hi = hi.map_or(usize::MAX, |h| h as usize);
        for start in self.node_candidates(row, &p.start)? {
            // Least distance of every node reached, and the edges into it on a shortest walk.
            let mut dist: HashMap<usize, usize> = HashMap::from([(start, 0)]);
            let mut preds: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
            let mut frontier = vec![start];
            let mut depth = 0;
            while !frontier.is_empty() && depth < hi {
                depth += 1;
                let mut next = Vec::new();
                for &at in &frontier {
                    for (e, far) in self.edges_from(at, r) {
                        if !self.props_ok(row, &self.rels[e].props, &r.props)? {
                            continue;
                        }
                        match dist.get(&far) {
                            None => {
                                dist.insert(far, depth);
                                preds.insert(far, vec![(e, at)]);
                                next.push(far);
                            }
                            Some(&d) if d == depth => preds.entry(far).or_default().push((e, at)),
                            Some(_) => {}
                        }
                    }
                }
                frontier = next;
            }
            let mut ends: Vec<(&usize, &usize)> = dist.iter().collect();
            ends.sort();
            for (&m, &d) in ends {
                if d < lo || !self.node_ok(row, m, end)? {
                    continue;
                }
                let mut walks: Vec<Vec<usize>> = Vec::new();
                let all = matches!(kind, ast::Shortest::All);
                self.walks_back(m, start, &preds, &mut Vec::new(), &mut walks, all);
                for mut w in walks {
                    w.reverse();
                    let list = V::List(w.iter().map(|&e| V::Rel(e)).collect());
                    let r2 = bind(&bind(row, &p.start.var, V::Node(start)), &r.var, list);
                    let r2 = bind(&r2, &end.var, V::Node(m));
                    self.match_paths(&r2, rest, used, out)?;
                }
            }
        }
        Ok(())
    }

    /// The shortest walks from `to` back to `start` over `preds` (edges, last first): every
    /// one, or the first found.
    fn walks_back(
        &self,
        to: usize,
        start: usize,
        preds: &HashMap<usize, Vec<(usize, usize)>>,
        walk: &mut Vec<usize>,
        out: &mut Vec<Vec<usize>>,
        all: bool,
    ) {
        if to == start {
            out.push(walk.clone());
            return;
        }
        for &(e, from) in preds.get(&to).map(Vec::as_slice).unwrap_or(&[]) {
            if !all && !out.is_empty() {
                return;
            }
            walk.push(e);
            self.walks_back(from, start, preds, walk, out, all);
            walk.pop();
        }
    }

    /// The path a match of `p` (every element named) bound in `row`.
    fn path_of(&self, row: &Row, p: &ast::PathPattern) -> R<V> {
        let get = |v: &Option<ast::Ident>| row.get(&v.as_ref().expect("named").name).cloned();
        let Some(V::Node(mut at)) = get(&p.start.var) else {
            return error("path without its start");
        };
        let (mut nodes, mut rels) = (vec![at], vec![]);
        for (r, _) in &p.steps {
            let es = match get(&r.var) {
                Some(V::Rel(e)) => vec![e],
                Some(V::List(xs)) => xs
                    .iter()
                    .map(|x| match x {
                        V::Rel(e) => Ok(*e),
                        _ => error("a relationship list of non-relationships"),
                    })
                    .collect::<R<Vec<_>>>()?,
                _ => return error("path without its relationship"),
            };
            for e in es {
                let rel = &self.rels[e];
                at = if rel.src == at { rel.dst } else { rel.src };
                nodes.push(at);
                rels.push(e);
            }
        }
        Ok(V::Path(nodes, rels))
    }

    fn node_ok(&self, row: &Row, n: usize, pat: &ast::NodePattern) -> R<bool> {
        let node = &self.nodes[n];
        if !pat.labels_match(&node.labels) {
            return Ok(false);
        }
        if let Some(V::Node(b)) = pat.var.as_ref().and_then(|v| row.get(&v.name)) {
            if *b != n {
                return Ok(false);
            }
        }
        if let Some(V::Null) = pat.var.as_ref().and_then(|v| row.get(&v.name)) {
            return Ok(false);
        }
        self.props_ok(row, &node.props, &pat.props)
    }

    fn props_ok(&self, row: &Row, props: &[(String, V)], map: &Option<ast::Expr>) -> R<bool> {
        let Some(m) = map else { return Ok(true) };
        let ExprKind::Map(entries) = &m.kind else {
            return unsupported("property map parameter");
        };
        for (k, e) in entries {
            let have = props
                .iter()
                .find(|(p, _)| p == &k.name)
                .map(|(_, v)| v.clone())
                .unwrap_or(V::Null);
            if equals(&have, &self.eval(e, row)?) != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn node_candidates(&self, row: &Row, pat: &ast::NodePattern) -> R<Vec<usize>> {
        let mut out = Vec::new();
        for n in 0..self.nodes.len() {
            if self.node_ok(row, n, pat)? {
                out.push(n);
            }
        }
        Ok(out)
    }

    /// The edges a relationship pattern can take from node `at`: (edge, far node).
    fn edges_from(&self, at: usize, r: &ast::RelPattern) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for (k, e) in self.rels.iter().enumerate() {
            if !r.types.is_empty() && !r.types.iter().any(|t| t.name == e.typ) {
                continue;
            }
            let out_ok =
                e.src == at && matches!(r.direction, Direction::Outgoing | Direction::Both);
            let in_ok = e.dst == at && matches!(r.direction, Direction::Incoming | Direction::Both);
            if out_ok {
                out.push((k, e.dst));
            } else if in_ok {
                out.push((k, e.src));
            }
        }
        out
    }

    fn match_steps(
        &self,
        row: &Row,
        at: usize,
        steps: &[(ast::RelPattern, ast::NodePattern)],
        used: &mut Vec<usize>,
        k: &mut dyn FnMut(&Row, &mut Vec<usize>) -> R<()>,
    ) -> R<()> {
        let Some(((r, n), rest)) = steps.split_first() else {
            return k(row, used);
        };
        if r.var.as_ref().is_some_and(|v| row.get(&v.name).is_some()) {
            return unsupported("a relationship variable bound before");
        }
        match r.length {
            None => {
                for (e, far) in self.edges_from(at, r) {
                    if used.contains(&e) || !self.props_ok(row, &self.rels[e].props, &r.props)? {
                        continue;
                    }
                    if !self.node_ok(row, far, n)? {
                        continue;
                    }
                    let r2 = bind(&bind(row, &r.var, V::Rel(e)), &n.var, V::Node(far));
                    used.push(e);
                    self.match_steps(&r2, far, rest, used, k)?;
                    used.pop();
                }
            }
            Some((lo, hi)) => {
                let lo = lo.unwrap_or(1) as usize;
                let hi = hi.map(|h| h as usize).unwrap_or(15);
                let mut path = Vec::new();
                self.var_length(row, at, r, n, rest, (lo, hi), &mut path, used, k)?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn var_length(
        &self,
        row: &Row,
        at: usize,
        r: &ast::RelPattern,
        n: &ast::NodePattern,
        rest: &[(ast::RelPattern, ast::NodePattern)],
        (lo, hi): (usize, usize),
        path: &mut Vec<usize>,
        used: &mut Vec<usize>,
        k: &mut dyn FnMut(&Row, &mut Vec<usize>) -> R<()>,
    ) -> R<()> {
        if path.len() >= lo && self.node_ok(row, at, n)? {
            let list = V::List(path.iter().map(|&e| V::Rel(e)).collect());
            let r2 = bind(&bind(row, &r.var, list), &n.var, V::Node(at));
            self.match_steps(&r2, at, rest, used, k)?;
        }
        if path.len() == hi {
            return Ok(());
        }
        for (e, far) in self.edges_from(at, r) {
            if used.contains(&e) || !self.props_ok(row, &self.rels[e].props, &r.props)? {
                continue;
            }
            used.push(e);
            path.push(e);
            self.var_length(row, far, r, n, rest, (lo, hi), path, used, k)?;
            path.pop();
            used.pop();
        }
        Ok(())
    }

    // ---- WITH / RETURN ----

    fn project(
        &self,
        rows: Vec<Row>,
        p: &ast::Projection,
        is_return: bool,
    ) -> R<(Vec<String>, Vec<Vec<V>>)> {
        let mut items: Vec<(ast::Expr, String)> = Vec::new();
        if p.star {
            let mut names: Vec<String> = rows
                .first()
                .map(|r| r.0.iter().map(|(n, _)| n.clone()).collect())
                .unwrap_or_default();
            names.sort();
            names.dedup();
            for n in names {
                items.push((ast::Expr::new(ExprKind::Variable(n.clone()), p.span), n));
            }
        }
        for it in &p.items {
            let name = match (&it.alias, &it.expr.kind) {
                (Some(a), _) => a.name.clone(),
                (None, ExprKind::Variable(v)) if !is_return => v.clone(),
                (None, _) => it.text.0.clone(),
            };
            items.push((it.expr.clone(), name));
        }
        let names: Vec<String> = items.iter().map(|(_, n)| n.clone()).collect();
        let aggregating = items.iter().any(|(e, _)| has_aggregate(e));
        // (projected values, row to evaluate ORDER BY in)
        let mut out: Vec<(Vec<V>, Row)> = Vec::new();
        if aggregating {
            let keys: Vec<usize> = (0..items.len())
                .filter(|&i| !has_aggregate(&items[i].0))
                .collect();
            let mut groups: Vec<(Vec<V>, Vec<Row>)> = Vec::new();
            let mut index: HashMap<String, usize> = HashMap::new();
            for r in rows {
                let kv = keys
                    .iter()
                    .map(|&i| self.eval(&items[i].0, &r))
                    .collect::<R<Vec<_>>>()?;
                let id = group_key(&kv);
                match index.get(&id) {
                    Some(&g) => groups[g].1.push(r),
                    None => {
                        index.insert(id, groups.len());
                        groups.push((kv, vec![r]));
                    }
                }
            }
            if groups.is_empty() && keys.is_empty() {
                groups.push((vec![], vec![]));
            }
            for (kv, members) in groups {
                let first = members.first().cloned().unwrap_or_default();
                let mut vals = Vec::new();
                let mut ki = 0;
                for (e, _) in &items {
                    if has_aggregate(e) {
                        vals.push(self.eval_agg(e, &members, &first)?);
                    } else {
                        vals.push(kv[ki].clone());
                        ki += 1;
                    }
                }
                let ctx = Row(names.iter().cloned().zip(vals.clone()).collect());
                out.push((vals, ctx));
            }
        } else {
            for r in rows {
                let vals = items
                    .iter()
                    .map(|(e, _)| self.eval(e, &r))
                    .collect::<R<Vec<_>>>()?;
                let mut ctx = if p.distinct {
                    Row::default()
                } else {
                    r.clone()
                };
                for (n, v) in names.iter().zip(&vals) {
                    ctx = ctx.with(n, v.clone());
                }
                out.push((vals, ctx));
            }
        }
        if p.distinct {
            let mut seen = std::collections::HashSet::new();
            out.retain(|(v, _)| seen.insert(group_key(v)));
        }
        if !p.order_by.is_empty() {
            let mut keyed = Vec::new();
            for (vals, ctx) in out {
                let mut ks = Vec::new();
                for s in &p.order_by {
                    // An ORDER BY item that is a projected expression reads its column.
                    let v = match items.iter().position(|(e, _)| e == &s.expr) {
                        Some(i) => vals[i].clone(),
                        None if has_aggregate(&s.expr) => {
                            return unsupported("aggregate in ORDER BY")
                        }
                        None => self.eval(&s.expr, &ctx)?,
                    };
                    ks.push(v);
                }
                keyed.push((ks, vals, ctx));
            }
            keyed.sort_by(|a, b| {
                for (i, s) in p.order_by.iter().enumerate() {
                    let o = orderability(&a.0[i], &b.0[i]);
                    let o = if s.descending { o.reverse() } else { o };
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            });
            out = keyed.into_iter().map(|(_, v, c)| (v, c)).collect();
        }
        let skip = match &p.skip {
            Some(e) => self.count_arg(e)?,
            None => 0,
        };
        let limit = match &p.limit {
            Some(e) => self.count_arg(e)?,
            None => usize::MAX,
        };
        let vals = out
            .into_iter()
            .skip(skip)
            .take(limit)
            .map(|(v, _)| v)
            .collect();
        Ok((names, vals))
    }

    fn count_arg(&self, e: &ast::Expr) -> R<usize> {
        match self.eval(e, &Row::default())? {
            V::Int(i) if i >= 0 => Ok(i as usize),
            _ => error("SKIP/LIMIT must be a non-negative integer"),
        }
    }

    /// An expression containing aggregates, over a group's rows; other sub-expressions are
    /// evaluated on the group's first row (they are grouping keys).
    fn eval_agg(&self, e: &ast::Expr, rows: &[Row], first: &Row) -> R<V> {
        match &e.kind {
            ExprKind::CountStar => Ok(V::Int(rows.len() as i64)),
            ExprKind::Function {
                name,
                distinct,
                args,
            } if is_aggregate(name) => {
                let mut vals = Vec::new();
                for r in rows {
                    let v = self.eval(&args[0], r)?;
                    if v != V::Null {
                        vals.push(v);
                    }
                }
                if *distinct {
                    let mut seen = std::collections::HashSet::new();
                    vals.retain(|v| seen.insert(group_key(std::slice::from_ref(v))));
                }
                aggregate(&name.to_lowercase(), vals)
            }
            _ if !has_aggregate(e) => self.eval(e, first),
            ExprKind::Binary(op, l, r) => {
                let (a, b) = (
                    self.eval_agg(l, rows, first)?,
                    self.eval_agg(r, rows, first)?,
                );
                binary(*op, a, b)
            }
            ExprKind::Chain(head, rest) => {
                let mut acc = self.eval_agg(head, rows, first)?;
                for (op, x) in rest {
                    acc = binary(*op, acc, self.eval_agg(x, rows, first)?)?;
                }
                Ok(acc)
            }
            ExprKind::Unary(UnaryOp::Neg, x) => negate(self.eval_agg(x, rows, first)?),
            ExprKind::Function { name, args, .. } => {
                let vals = args
                    .iter()
                    .map(|a| self.eval_agg(a, rows, first))
                    .collect::<R<Vec<_>>>()?;
                self.function(name, vals)
            }
            _ => unsupported("this expression around an aggregate"),
        }
    }

    // ---- expressions ----

    fn eval(&self, e: &ast::Expr, row: &Row) -> R<V> {
        Ok(match &e.kind {
            ExprKind::PatternPredicate(_)
            | ExprKind::PatternComprehension { .. }
            | ExprKind::Subquery(..) => self.subquery(e, row)?,
            ExprKind::Literal(l) => match l {
                Literal::Integer(i) => V::Int(*i),
                Literal::Float(f) => V::Float(*f),
                Literal::String(s) => V::Str(s.clone()),
                Literal::Bool(b) => V::Bool(*b),
                Literal::Null => V::Null,
            },
            ExprKind::Param(_) => return unsupported("parameters"),
            ExprKind::Variable(v) => match row.get(v) {
                Some(x) => x.clone(),
                None => return error(format!("variable `{v}` not defined")),
            },
            ExprKind::Property(t, k) => match self.eval(t, row)? {
                V::Null => V::Null,
                V::Node(n) => prop(&self.nodes[n].props, &k.name),
                V::Rel(r) => prop(&self.rels[r].props, &k.name),
                V::Map(m) => prop(&m, &k.name),
                _ => return error("property of a non-entity"),
            },
            ExprKind::List(xs) => {
                let xs = xs
                    .iter()
                    .map(|x| self.eval(x, row))
                    .collect::<R<Vec<_>>>()?;
                // The engine holds a list of integers and floats as floats (README, known
                // differences).
                if xs.iter().any(|x| matches!(x, V::Int(_)))
                    && xs.iter().any(|x| matches!(x, V::Float(_)))
                {
                    return unsupported("a list mixing integers and floats");
                }
                V::List(xs)
            }
            ExprKind::Map(kv) => V::Map(
                kv.iter()
                    .map(|(k, v)| Ok((k.name.clone(), self.eval(v, row)?)))
                    .collect::<R<_>>()?,
            ),
            ExprKind::Unary(op, x) => {
                let v = self.eval(x, row)?;
                match op {
                    UnaryOp::Not => match v {
                        V::Null => V::Null,
                        V::Bool(b) => V::Bool(!b),
                        _ => return error("NOT of a non-boolean"),
                    },
                    UnaryOp::Neg => negate(v)?,
                    UnaryOp::Pos => v,
                }
            }
            ExprKind::Binary(op, l, r) => {
                let a = self.eval(l, row)?;
                let b = self.eval(r, row)?;
                binary(*op, a, b)?
            }
            ExprKind::Chain(first, rest) => {
                let mut acc = self.eval(first, row)?;
                for (op, x) in rest {
                    acc = binary(*op, acc, self.eval(x, row)?)?;
                }
                acc
            }
            ExprKind::IsNull { expr, negated } => {
                let isnull = self.eval(expr, row)? == V::Null;
                V::Bool(isnull != *negated)
            }
            ExprKind::HasLabels(x, labels) => match self.eval(x, row)? {
                V::Null => V::Null,
                V::Node(n) => V::Bool(labels.matches(&self.nodes[n].labels)),
                _ => return error("label predicate on a non-node"),
            },
            ExprKind::CountStar => return error("count(*) outside a projection"),
            ExprKind::Function { name, args, .. } => {
                if is_aggregate(name) {
                    return error("aggregate outside a projection");
                }
                let vals = args
                    .iter()
                    .map(|a| self.eval(a, row))
                    .collect::<R<Vec<_>>>()?;
                self.function(name, vals)?
            }
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                let op = operand.as_ref().map(|o| self.eval(o, row)).transpose()?;
                for (w, t) in whens {
                    let hit = match &op {
                        Some(o) => equals(o, &self.eval(w, row)?) == Some(true),
                        None => self.eval(w, row)? == V::Bool(true),
                    };
                    if hit {
                        return self.eval(t, row);
                    }
                }
                match else_ {
                    Some(x) => self.eval(x, row)?,
                    None => V::Null,
                }
            }
            ExprKind::Index(t, i) => match (self.eval(t, row)?, self.eval(i, row)?) {
                (V::Null, _) | (_, V::Null) => V::Null,
                (V::List(xs), V::Int(i)) => {
                    let len = xs.len() as i64;
                    let j = if i < 0 { len.checked_add(i) } else { Some(i) };
                    match j {
                        Some(j) if (0..len).contains(&j) => xs[j as usize].clone(),
                        _ => V::Null,
                    }
                }
                (V::Map(m), V::Str(k)) => prop(&m, &k),
                _ => return error("bad index"),
            },
            ExprKind::Slice(..) => return unsupported("slices"),
            ExprKind::ListComprehension {
                var,
                list,
                filter,
                map,
            } => {
                let xs = match self.eval(list, row)? {
                    V::Null => return Ok(V::Null),
                    V::List(xs) => xs,
                    _ => return error("comprehension over a non-list"),
                };
                let mut out = Vec::new();
                for x in xs {
                    let r = row.with(&var.name, x.clone());
                    if let Some(f) = filter {
                        if self.eval(f, &r)? != V::Bool(true) {
                            continue;
                        }
                    }
                    out.push(match map {
                        Some(m) => self.eval(m, &r)?,
                        None => x,
                    });
                }
                V::List(out)
            }
            ExprKind::Reduce {
                acc,
                init,
                var,
                list,
                body,
            } => {
                let mut value = self.eval(init, row)?;
                let xs = match self.eval(list, row)? {
                    V::Null => return Ok(V::Null),
                    V::List(xs) => xs,
                    _ => return error("reduce over a non-list"),
                };
                for x in xs {
                    let r = row.with(&acc.name, value).with(&var.name, x);
                    value = self.eval(body, &r)?;
                }
                value
            }
            ExprKind::Quantifier {
                kind,
                var,
                list,
                pred,
            } => {
                let xs = match self.eval(list, row)? {
                    V::Null => return Ok(V::Null),
                    V::List(xs) => xs,
                    _ => return error("list predicate over a non-list"),
                };
                let (mut t, mut f, mut n) = (0, 0, 0);
                for x in xs {
                    match self.eval(pred, &row.with(&var.name, x))? {
                        V::Bool(true) => t += 1,
                        V::Bool(false) => f += 1,
                        V::Null => n += 1,
                        _ => return error("list predicate of a non-boolean"),
                    }
                }
                let v = match kind {
                    ast::Quantifier::All => (f == 0).then_some(n == 0).map(|_| true),
                    ast::Quantifier::Any => (t == 0).then_some(n == 0).map(|_| false),
                    ast::Quantifier::None => (t == 0).then_some(n == 0).map(|_| true),
                    ast::Quantifier::Single => (t <= 1).then_some(n == 0).map(|_| t == 1),
                };
                // Decided by a false (all), a true (any, none) or two trues (single).
                let v = match kind {
                    ast::Quantifier::All if f > 0 => Some(false),
                    ast::Quantifier::Any if t > 0 => Some(true),
                    ast::Quantifier::None if t > 0 => Some(false),
                    ast::Quantifier::Single if t > 1 => Some(false),
                    _ if n > 0 => None,
                    _ => v,
                };
                v.map_or(V::Null, V::Bool)
            }
        })
    }

    fn function(&self, name: &str, a: Vec<V>) -> R<V> {
        let lname = name.to_lowercase();
        let one = |a: &[V]| -> R<V> {
            if a.len() != 1 {
                return error(format!("{name}() takes one argument"));
            }
            Ok(a[0].clone())
        };
        Ok(match lname.as_str() {
            "id" => match one(&a)? {
                V::Null => V::Null,
                _ => return unsupported("id()"),
            },
            "labels" => match one(&a)? {
                V::Null => V::Null,
                V::Node(n) => V::List(
                    self.nodes[n]
                        .labels
                        .iter()
                        .map(|l| V::Str(l.clone()))
                        .collect(),
                ),
                _ => return error("labels() of a non-node"),
            },
            "type" => match one(&a)? {
                V::Null => V::Null,
                V::Rel(r) => V::Str(self.rels[r].typ.clone()),
                _ => return error("type() of a non-relationship"),
            },
            "nodes" => match one(&a)? {
                V::Null => V::Null,
                V::Path(ns, _) => V::List(ns.into_iter().map(V::Node).collect()),
                _ => return error("nodes() of a non-path"),
            },
            "relationships" => match one(&a)? {
                V::Null => V::Null,
                V::Path(_, rs) => V::List(rs.into_iter().map(V::Rel).collect()),
                _ => return error("relationships() of a non-path"),
            },
            "length" if matches!(a.first(), Some(V::Path(..))) => match one(&a)? {
                V::Path(_, rs) => V::Int(rs.len() as i64),
                _ => V::Null,
            },
            "size" | "length" => match one(&a)? {
                V::Null => V::Null,
                V::List(xs) => V::Int(xs.len() as i64),
                V::Str(s) => V::Int(s.chars().count() as i64),
                _ => return error("size() of a non-list"),
            },
            "coalesce" => a.into_iter().find(|v| *v != V::Null).unwrap_or(V::Null),
            "abs" => match one(&a)? {
                V::Int(i) => V::Int(i.checked_abs().ok_or(RefError::Error("overflow".into()))?),
                V::Float(f) => V::Float(f.abs()),
                V::Null => V::Null,
                _ => return error("abs() of a non-number"),
            },
            "tostring" => match one(&a)? {
                V::Null => V::Null,
                V::Int(i) => V::Str(i.to_string()),
                V::Float(f) => V::Str(lance_csr::fmt_float(f)),
                V::Bool(b) => V::Str(b.to_string()),
                V::Str(s) => V::Str(s),
                _ => return error("toString() of this value"),
            },
            "tointeger" => match one(&a)? {
                V::Null => V::Null,
                V::Int(i) => V::Int(i),
                V::Float(f) => float_to_int(f),
                // An integer literal exactly (null past 64 bits), else a float, truncated.
                V::Str(s) => {
                    let t = s.trim();
                    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
                    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
                        t.parse::<i64>().map_or(V::Null, V::Int)
                    } else {
                        match t.parse::<f64>() {
                            Ok(f) if !t.to_lowercase().contains("inf") => float_to_int(f),
                            _ => V::Null,
                        }
                    }
                }
                _ => return error("toInteger() of this value"),
            },
            "head" => match one(&a)? {
                V::Null => V::Null,
                V::List(xs) => xs.into_iter().next().unwrap_or(V::Null),
                _ => return error("head() of a non-list"),
            },
            "vector.similarity.cosine" => match (a.first(), a.get(1)) {
                (Some(V::List(x)), Some(V::List(y))) if x.len() == y.len() => {
                    let nums = |v: &[V]| -> R<Vec<f64>> {
                        v.iter()
                            .map(|e| num(e).ok_or(RefError::Error("a vector of numbers".into())))
                            .collect()
                    };
                    let (x, y) = (nums(x)?, nums(y)?);
                    // Norms by hypot (no square leaves f64's range), then the unit vectors' dot.
                    let norm = |v: &[f64]| v.iter().fold(0.0f64, |n, e| n.hypot(*e));
                    let (nx, ny) = (norm(&x), norm(&y));
                    if nx == 0.0 || ny == 0.0 {
                        V::Null
                    } else {
                        let c: f64 = x.iter().zip(&y).map(|(a, b)| (a / nx) * (b / ny)).sum();
                        V::Float((1.0 + c.clamp(-1.0, 1.0)) / 2.0)
                    }
                }
                (Some(V::Null), _) | (_, Some(V::Null)) => V::Null,
                _ => return error("vector.similarity.cosine of non-vectors"),
            },
            "round" => {
                let x = match a.first() {
                    Some(V::Int(i)) => *i as f64,
                    Some(V::Float(f)) => *f,
                    Some(V::Null) => return Ok(V::Null),
                    _ => return error("round() of a non-number"),
                };
                let p = match a.get(1) {
                    None => 0,
                    Some(V::Int(p)) if *p >= 0 => *p,
                    Some(V::Null) => return Ok(V::Null),
                    _ => return error("round(): a bad precision"),
                };
                let mode = match a.get(2) {
                    None => None,
                    Some(V::Str(m)) => Some(m.to_uppercase()),
                    Some(V::Null) => return Ok(V::Null),
                    _ => return error("round(): a bad mode"),
                };
                V::Float(round_decimal(x, p, mode.as_deref())?)
            }
            "floor" => match one(&a)? {
                V::Null => V::Null,
                V::Int(i) => V::Float(i as f64),
                V::Float(f) => V::Float(f.floor()),
                _ => return error("floor() of a non-number"),
            },
            "tofloat" => match one(&a)? {
                V::Null => V::Null,
                V::Int(i) => V::Float(i as f64),
                V::Float(f) => V::Float(f),
                V::Str(s) => s.trim().parse::<f64>().map_or(V::Null, V::Float),
                _ => return error("toFloat() of this value"),
            },
            "startnode" | "endnode" => match one(&a)? {
                V::Null => V::Null,
                V::Rel(r) if lname == "startnode" => V::Node(self.rels[r].src),
                V::Rel(r) => V::Node(self.rels[r].dst),
                _ => return error("startNode() / endNode() of a non-relationship"),
            },
            // Only `datetime({epochMillis: ms})`, as the map of its UTC components (enough to
            // read them; rendering one is not compared).
            "datetime" => match one(&a)? {
                V::Map(m) if m.len() == 1 && m[0].0 == "epochMillis" => match &m[0].1 {
                    V::Null => V::Null,
                    V::Int(ms) => {
                        use chrono::{Datelike, Timelike};
                        let Some(t) = chrono::DateTime::from_timestamp_millis(*ms) else {
                            return error("datetime out of range");
                        };
                        let c = |k: &str, v: i64| (k.to_string(), V::Int(v));
                        V::Map(vec![
                            c("year", t.year() as i64),
                            c("month", t.month() as i64),
                            c("day", t.day() as i64),
                            c("hour", t.hour() as i64),
                            c("minute", t.minute() as i64),
                            c("second", t.second() as i64),
                        ])
                    }
                    _ => return error("epochMillis of a non-integer"),
                },
                _ => return unsupported("datetime() other than {epochMillis: ..}"),
            },
            _ => return unsupported(format!("function {name}")),
        })
    }

    // ---- rendering ----

    fn render(&self, v: &V, quote: bool) -> String {
        match v {
            V::Null => "null".into(),
            V::Bool(b) => b.to_string(),
            V::Int(i) => i.to_string(),
            V::Float(f) => lance_csr::fmt_float(*f),
            V::Str(s) if quote => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            V::Str(s) => s.clone(),
            V::List(xs) => format!(
                "[{}]",
                xs.iter()
                    .map(|x| self.render(x, true))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            V::Map(m) => format!("{{{}}}", self.render_props(m, false)),
            V::Node(n) => {
                let node = &self.nodes[*n];
                let p = self.render_props(&node.props, true);
                let labels: String = node.labels.iter().map(|l| format!(":{l}")).collect();
                if p.is_empty() {
                    format!("({labels})")
                } else if labels.is_empty() {
                    format!("({{{p}}})")
                } else {
                    format!("({labels} {{{p}}})")
                }
            }
            V::Rel(r) => {
                let rel = &self.rels[*r];
                let p = self.render_props(&rel.props, true);
                if p.is_empty() {
                    format!("[:{}]", rel.typ)
                } else {
                    format!("[:{} {{{p}}}]", rel.typ)
                }
            }
            V::Path(ns, rs) => {
                let mut out = self.render(&V::Node(ns[0]), true);
                for (k, &e) in rs.iter().enumerate() {
                    let r = self.render(&V::Rel(e), true);
                    if self.rels[e].src == ns[k] {
                        out.push_str(&format!("-{r}->"));
                    } else {
                        out.push_str(&format!("<-{r}-"));
                    }
                    out.push_str(&self.render(&V::Node(ns[k + 1]), true));
                }
                out
            }
        }
    }

    fn render_props(&self, props: &[(String, V)], skip_nulls: bool) -> String {
        props
            .iter()
            .filter(|(_, v)| !(skip_nulls && *v == V::Null))
            .map(|(k, v)| format!("{}: {}", cypher::fmt_ident(k), self.render(v, true)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Variables in scope, in binding order.
#[derive(Debug, Clone, Default)]
struct Row(Vec<(String, V)>);

impl Row {
    fn get(&self, name: &str) -> Option<&V> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    fn with(&self, name: &str, v: V) -> Row {
        let mut r = self.clone();
        match r.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = v,
            None => r.0.push((name.to_string(), v)),
        }
        r
    }
}

fn bind(row: &Row, var: &Option<ast::Ident>, v: V) -> Row {
    match var {
        Some(name) => row.with(&name.name, v),
        None => row.clone(),
    }
}

fn pattern_vars(paths: &[ast::PathPattern]) -> Vec<String> {
    let mut out = Vec::new();
    for p in paths {
        out.extend(p.name.as_ref().map(|v| v.name.clone()));
        out.extend(p.start.var.as_ref().map(|v| v.name.clone()));
        for (r, n) in &p.steps {
            out.extend(r.var.as_ref().map(|v| v.name.clone()));
            out.extend(n.var.as_ref().map(|v| v.name.clone()));
        }
    }
    out
}

fn prop(props: &[(String, V)], k: &str) -> V {
    props
        .iter()
        .find(|(p, _)| p == k)
        .map(|(_, v)| v.clone())
        .unwrap_or(V::Null)
}

fn is_aggregate(name: &str) -> bool {
    ast::AGGREGATES.contains(&name.to_lowercase().as_str())
}

fn has_aggregate(e: &ast::Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        match &x.kind {
            ExprKind::CountStar => found = true,
            ExprKind::Function { name, .. } if is_aggregate(name) => found = true,
            _ => {}
        }
        !found
    });
    found
}

/// Grouping / DISTINCT identity of values (null equals null here, as in grouping; numbers
/// by value, so `1` and `1.0` are one, inside lists and maps too).
fn group_key(vals: &[V]) -> String {
    fn by_value(v: &V) -> V {
        match v {
            V::Float(x) if x.fract() == 0.0 && x.abs() < 9.2e18 => V::Int(*x as i64),
            V::List(xs) => V::List(xs.iter().map(by_value).collect()),
            V::Map(kv) => V::Map(kv.iter().map(|(k, x)| (k.clone(), by_value(x))).collect()),
            other => other.clone(),
        }
    }
    let vals: Vec<V> = vals.iter().map(by_value).collect();
    format!("{vals:?}")
}

fn dedup(rows: &mut Vec<Vec<V>>) {
    let mut seen = std::collections::HashSet::new();
    rows.retain(|r| seen.insert(group_key(r)));
}

fn aggregate(name: &str, vals: Vec<V>) -> R<V> {
    Ok(match name {
        "count" => V::Int(vals.len() as i64),
        "collect" => V::List(vals),
        "sum" => {
            let mut int: i64 = 0;
            let mut float: Option<f64> = None;
            for v in vals {
                match v {
                    V::Int(i) => {
                        int = int
                            .checked_add(i)
                            .ok_or(RefError::Error("integer overflow in sum".into()))?
                    }
                    V::Float(f) => *float.get_or_insert(0.0) += f,
                    _ => return error("sum() of a non-number"),
                }
            }
            match float {
                Some(f) => V::Float(f + int as f64),
                None => V::Int(int),
            }
        }
        "avg" => {
            if vals.is_empty() {
                return Ok(V::Null);
            }
            let mut s = 0.0;
            for v in &vals {
                match v {
                    V::Int(i) => s += *i as f64,
                    V::Float(f) => s += f,
                    _ => return error("avg() of a non-number"),
                }
            }
            V::Float(s / vals.len() as f64)
        }
        "min" | "max" => {
            let mut best: Option<V> = None;
            for v in vals {
                best = Some(match best {
                    None => v,
                    Some(b) => {
                        let o = orderability(&v, &b);
                        if (name == "min") == (o == Ordering::Less) {
                            v
                        } else {
                            b
                        }
                    }
                });
            }
            best.unwrap_or(V::Null)
        }
        _ => return unsupported(name.to_string()),
    })
}

fn negate(v: V) -> R<V> {
    Ok(match v {
        V::Null => V::Null,
        V::Int(i) => V::Int(
            i.checked_neg()
                .ok_or(RefError::Error("integer overflow".into()))?,
        ),
        V::Float(f) => V::Float(-f),
        _ => return error("negation of a non-number"),
    })
}

fn num(v: &V) -> Option<f64> {
    match v {
        V::Int(i) => Some(*i as f64),
        V::Float(f) => Some(*f),
        _ => None,
    }
}

fn binary(op: BinaryOp, a: V, b: V) -> R<V> {
    use BinaryOp::*;
    let truth = |v: &V| -> R<Option<bool>> {
        match v {
            V::Null => Ok(None),
            V::Bool(x) => Ok(Some(*x)),
            _ => error("boolean operator on a non-boolean"),
        }
    };
    let b3 = |x: Option<bool>| x.map(V::Bool).unwrap_or(V::Null);
    Ok(match op {
        And => {
            let (x, y) = (truth(&a)?, truth(&b)?);
            b3(match (x, y) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            })
        }
        Or => {
            let (x, y) = (truth(&a)?, truth(&b)?);
            b3(match (x, y) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            })
        }
        Xor => {
            let (x, y) = (truth(&a)?, truth(&b)?);
            b3(x.zip(y).map(|(x, y)| x != y))
        }
        Eq => b3(equals(&a, &b)),
        Neq => b3(equals(&a, &b).map(|x| !x)),
        Lt | Le | Gt | Ge => b3(compare(&a, &b).map(|o| match o {
            None => false,
            Some(o) => match op {
                Lt => o == Ordering::Less,
                Le => o != Ordering::Greater,
                Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            },
        })),
        In => match b {
            V::Null => V::Null,
            V::List(xs) => {
                let mut unknown = false;
                for x in &xs {
                    match equals(&a, x) {
                        Some(true) => return Ok(V::Bool(true)),
                        None => unknown = true,
                        Some(false) => {}
                    }
                }
                b3(if unknown { None } else { Some(false) })
            }
            _ => return error("IN of a non-list"),
        },
        StartsWith | EndsWith | Contains => match (&a, &b) {
            (V::Str(x), V::Str(y)) => V::Bool(match op {
                StartsWith => x.starts_with(y.as_str()),
                EndsWith => x.ends_with(y.as_str()),
                _ => x.contains(y.as_str()),
            }),
            _ => V::Null,
        },
        Add | Sub | Mul | Div | Mod | Pow => {
            if a == V::Null || b == V::Null {
                return Ok(V::Null);
            }
            match (op, &a, &b) {
                // A list on either side makes `+` a list operation (`'a' + [1]` is a list).
                (Add, V::List(x), V::List(y)) => V::List(x.iter().chain(y).cloned().collect()),
                (Add, V::List(x), y) => V::List(x.iter().cloned().chain([y.clone()]).collect()),
                (Add, x, V::List(y)) => {
                    V::List([x.clone()].into_iter().chain(y.iter().cloned()).collect())
                }
                (Add, V::Str(x), y) => V::Str(format!("{x}{}", to_text(y)?)),
                (Add, x, V::Str(y)) => V::Str(format!("{}{y}", to_text(x)?)),
                (Pow, _, _) => match (num(&a), num(&b)) {
                    (Some(x), Some(y)) => V::Float(x.powf(y)),
                    _ => return error("^ of non-numbers"),
                },
                (_, V::Int(x), V::Int(y)) => {
                    let overflow = || RefError::Error("integer overflow".into());
                    V::Int(match op {
                        Add => x.checked_add(*y).ok_or_else(overflow)?,
                        Sub => x.checked_sub(*y).ok_or_else(overflow)?,
                        Mul => x.checked_mul(*y).ok_or_else(overflow)?,
                        Div if *y == 0 => return error("division by zero"),
                        Div => x.checked_div(*y).ok_or_else(overflow)?,
                        Mod if *y == 0 => return error("division by zero"),
                        _ => x.checked_rem(*y).ok_or_else(overflow)?,
                    })
                }
                _ => match (num(&a), num(&b)) {
                    (Some(x), Some(y)) => V::Float(match op {
                        Add => x + y,
                        Sub => x - y,
                        Mul => x * y,
                        Div => x / y,
                        _ => x % y,
                    }),
                    _ => return error("arithmetic on non-numbers"),
                },
            }
        }
        RegexMatch => return unsupported("=~"),
    })
}

fn to_text(v: &V) -> R<String> {
    Ok(match v {
        V::Int(i) => i.to_string(),
        V::Float(f) => lance_csr::fmt_float(*f),
        V::Bool(b) => b.to_string(),
        V::Str(s) => s.clone(),
        _ => return error("string concatenation with this value"),
    })
}

/// Cypher equality: null if it depends on a null, false across kinds.
pub fn equals(a: &V, b: &V) -> Option<bool> {
    match (a, b) {
        (V::Null, _) | (_, V::Null) => None,
        (V::Int(x), V::Int(y)) => Some(x == y),
        (V::Int(_) | V::Float(_), V::Int(_) | V::Float(_)) => Some(num(a) == num(b)),
        (V::List(xs), V::List(ys)) => {
            if xs.len() != ys.len() {
                return Some(false);
            }
            let mut unknown = false;
            for (x, y) in xs.iter().zip(ys) {
                match equals(x, y) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    _ => {}
                }
            }
            if unknown {
                None
            } else {
                Some(true)
            }
        }
        (V::Map(xs), V::Map(ys)) => {
            let kx: BTreeMap<&String, &V> = xs.iter().map(|(k, v)| (k, v)).collect();
            let ky: BTreeMap<&String, &V> = ys.iter().map(|(k, v)| (k, v)).collect();
            if kx.keys().ne(ky.keys()) {
                return Some(false);
            }
            equals(
                &V::List(kx.values().map(|v| (*v).clone()).collect()),
                &V::List(ky.values().map(|v| (*v).clone()).collect()),
            )
        }
        _ => Some(std::mem::discriminant(a) == std::mem::discriminant(b) && a == b),
    }
}

/// Ordering comparison: `None` = null, `Some(None)` = false for every operator (NaN).
fn compare(a: &V, b: &V) -> Option<Option<Ordering>> {
    match (a, b) {
        (V::Null, _) | (_, V::Null) => None,
        (V::Int(x), V::Int(y)) => Some(Some(x.cmp(y))),
        (V::Int(_) | V::Float(_), V::Int(_) | V::Float(_)) => Some(num(a)?.partial_cmp(&num(b)?)),
        (V::Str(x), V::Str(y)) => Some(Some(x.cmp(y))),
        (V::Bool(x), V::Bool(y)) => Some(Some(x.cmp(y))),
        (V::List(xs), V::List(ys)) => {
            for (x, y) in xs.iter().zip(ys) {
                match compare(x, y)? {
                    Some(Ordering::Equal) => {}
                    other => return Some(other),
                }
            }
            Some(Some(xs.len().cmp(&ys.len())))
        }
        _ => None,
    }
}

/// A float truncated to an integer; null outside the 64-bit range or not a number.
fn float_to_int(f: f64) -> V {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f.is_finite() && (-TWO_63..TWO_63).contains(&f) {
        V::Int(f.trunc() as i64)
    } else {
        V::Null
    }
}

/// ORDER BY's total order: kinds first (map, node, relationship, list, string, boolean,
/// number, null last), then values.
fn orderability(a: &V, b: &V) -> Ordering {
    fn rank(v: &V) -> u8 {
        match v {
            V::Map(_) => 0,
            V::Node(_) => 1,
            V::Rel(_) => 2,
            V::List(_) => 3,
            V::Path(..) => 4,
            V::Str(_) => 5,
            V::Bool(_) => 6,
            V::Int(_) | V::Float(_) => 7,
            V::Null => 8,
        }
    }
    match rank(a).cmp(&rank(b)) {
        Ordering::Equal => {}
        o => return o,
    }
    match (a, b) {
        (V::Node(x), V::Node(y)) | (V::Rel(x), V::Rel(y)) => x.cmp(y),
        (V::Int(x), V::Int(y)) => x.cmp(y),
        (V::Int(_) | V::Float(_), _) => {
            let (x, y) = (num(a).unwrap(), num(b).unwrap());
            match (x.is_nan(), y.is_nan()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => x.partial_cmp(&y).unwrap(),
            }
        }
        (V::Str(x), V::Str(y)) => x.cmp(y),
        (V::Bool(x), V::Bool(y)) => x.cmp(y),
        (V::List(xs), V::List(ys)) => {
            for (x, y) in xs.iter().zip(ys) {
                match orderability(x, y) {
                    Ordering::Equal => {}
                    o => return o,
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => Ordering::Equal,
    }
}

/// Neo4j's `round`, on the decimal digits Rust's `Display` writes (the shortest that read
/// back): precision 0 without a mode takes ties up; otherwise the digit after the last kept
/// one decides, by Java's rounding mode (HALF_UP by default).
fn round_decimal(x: f64, p: i64, mode: Option<&str>) -> R<f64> {
    if !x.is_finite() {
        return Ok(x);
    }
    if p == 0 && mode.is_none() {
        let f = x.floor();
        let r = if x - f >= 0.5 { f + 1.0 } else { f };
        return Ok(if r == 0.0 { 0.0 } else { r });
    }
    let text = format!("{}", x.abs());
    let (int, frac) = text.split_once('.').unwrap_or((&text, ""));
    let p = p as usize;
    if frac.len() <= p {
        return Ok(x);
    }
    let kept = format!("{int}{}", &frac[..p]);
    let dropped = &frac[p..];
    let first = dropped.as_bytes()[0] - b'0';
    let rest = dropped[1..].bytes().any(|d| d != b'0');
    let any = first != 0 || rest;
    let last_odd = (kept.as_bytes()[kept.len() - 1] - b'0') % 2 == 1;
    let neg = x < 0.0;
    let up = match mode.unwrap_or("HALF_UP") {
        "HALF_UP" => first >= 5,
        "HALF_DOWN" => first > 5 || (first == 5 && rest),
        "HALF_EVEN" => first > 5 || (first == 5 && (rest || last_odd)),
        "UP" => any,
        "DOWN" => false,
        "CEILING" => any && !neg,
        "FLOOR" => any && neg,
        "UNNECESSARY" if any => return error("rounding necessary"),
        "UNNECESSARY" => false,
        _ => return error("unknown rounding mode"),
    };
    // The kept digits plus one in the last place, as decimal text.
    let mut digits: Vec<u8> = kept.bytes().collect();
    if up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let digits = String::from_utf8(digits).expect("digits");
    let (i, f) = digits.split_at(digits.len() - p);
    let v: f64 = format!("{}.{}0", if i.is_empty() { "0" } else { i }, f)
        .parse()
        .expect("a number");
    Ok(if v == 0.0 {
        0.0
    } else if neg {
        -v
    } else {
        v
    })
}
