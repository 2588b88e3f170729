//! A MATCH clause as the planner lowers it ([`MatchPlan`]): the clause split where its parts
//! are lowered apart, each part prepared (`prepare_match`). [`run`] prepares every MATCH the
//! binder bound, with what the binder had bound before it.
//!
//! ```text
//! MATCH (a)-[:KNOWS]->(b) WHERE exists((b)-->()) AND a.id = 1
//!   ThenFilter: MATCH (a)-[:KNOWS]->(b) WHERE a.id = 1, then exists((b)-->()) per row
//! UNWIND friends AS f MATCH (f)-->(x)
//!   ValueNodes [__vnode1 = f]: MATCH (__vnode1)-->(x) WHERE __vnode1 = f
//! MATCH (c:City), p = shortestPath((a:Person {id: 1})-[:KNOWS*]-(b)) WHERE all(n IN nodes(p) WHERE n.age > 3)
//!   Shortest: MATCH (c:City); MATCH (a:Person {id: 1}); search (a)-[:KNOWS*]-(b), filtered
//! ```

use super::{prepare_match, MatchContext, Names, PreparedMatch};
use crate::binder::query::BoundQuery;
use crate::binder::{Binder, BoundVar};
use crate::catalog::Catalog;
use crate::error::Result;
use crate::functions::value::Value;
use crate::sem_err;
use cypher::ast::{self, ExprKind, Shortest};
use std::collections::BTreeSet;

/// How one MATCH is lowered.
#[derive(Debug, Clone)]
pub(crate) enum MatchPlan {
    /// An ordinary MATCH: the clause as given to its rewrites, and what they made of it.
    Prepared {
        clause: ast::Match,
        prepared: PreparedMatch,
    },
    /// A WHERE holding pattern expressions or subqueries: the MATCH with the conjuncts that
    /// hold none, then `pred`, per matched row.
    ThenFilter {
        plain: Box<MatchPlan>,
        pred: ast::Expr,
    },
    /// Node positions holding value variables (`UNWIND friends AS f MATCH (f)-->()`): each a
    /// fresh node equal to the value (`then` has the equalities). (fresh, value variable).
    ValueNodes {
        nodes: Vec<(String, ast::Ident)>,
        then: Box<MatchPlan>,
    },
    /// Shortest-path patterns: the rest of the MATCH first, then each path's search, then
    /// what the searches leave of the WHERE.
    Shortest {
        rest: Option<Box<MatchPlan>>,
        paths: Vec<ShortestSearch>,
        where_: Option<ast::Expr>,
    },
}

/// One shortest-path pattern: its ends matched alone first (the start, and the end where
/// the pattern picks it by its properties; each unless bound before), then the search.
#[derive(Debug, Clone)]
pub(crate) struct ShortestSearch {
    pub ends: Vec<MatchPlan>,
    pub mode: Shortest,
    pub filters: SearchFilters,
    pub search: Box<MatchPlan>,
}

/// `all(x IN nodes(p) WHERE ...)` and `all(x IN relationships(p) WHERE ...)` of a shortest
/// path `p`, whose predicates read nothing but `x`: applied during the search (a path is
/// searched only through nodes and relationships that pass).
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchFilters {
    pub nodes: Vec<(ast::Ident, ast::Expr)>,
    pub rels: Vec<(ast::Ident, ast::Expr)>,
}

/// What preparing MATCHes needs beyond each one's scope.
pub(crate) struct RewriteOptions<'a> {
    /// Schema-less semantics (see [`Binder::lenient`]).
    pub lenient: bool,
    /// Re-rooting is switched on.
    pub reroot: bool,
    /// What the CSR indexes cover (`None`: they are not used; shortest paths search them).
    pub traversable: Option<super::unroll::Traversable<'a>>,
    /// The most hops an unrolled variable-length hop may take.
    pub max_var_length: u64,
    /// The labels whose key index looks a node up (a node standing for a value is looked
    /// up by the key it names).
    pub lookup_labels: super::KeyLookups<'a>,
}

/// A bound query with each of its MATCHes prepared (in the binder's order).
#[derive(Debug)]
pub(crate) struct Rewritten {
    pub bound: BoundQuery,
    pub matches: Vec<MatchPlan>,
    /// The internal names the rewrites gave (the planner continues the numbering).
    pub names: Names,
}

/// Prepares every MATCH of `bound`.
pub(crate) fn run(
    catalog: &Catalog,
    options: &RewriteOptions<'_>,
    bound: BoundQuery,
) -> Result<Rewritten> {
    let integer_params: BTreeSet<String> = (bound.params.iter())
        .filter(|(_, slot)| matches!(Value::from_literal(&slot.literal), Some(Value::Int(_))))
        .map(|(k, _)| k.clone())
        .collect();
    let mut names = Names::default();
    let mut matches = Vec::new();
    for m in &bound.matches {
        let mut walk = Walk {
            catalog,
            options,
            integer_params: &integer_params,
            grouped_by: m.grouped_by.as_deref(),
            scope: m.scope.clone(),
            looked_up: BTreeSet::new(),
            names,
        };
        matches.push(walk.plan(&m.clause, options.reroot, None)?);
        names = walk.names;
    }
    Ok(Rewritten {
        bound,
        matches,
        names,
    })
}

/// Preparing the parts of one MATCH, in the order the planner lowers them.
struct Walk<'a> {
    catalog: &'a Catalog,
    options: &'a RewriteOptions<'a>,
    integer_params: &'a BTreeSet<String>,
    grouped_by: Option<&'a str>,
    /// What is bound before the part being prepared.
    scope: Vec<(String, BoundVar)>,
    /// Fresh nodes standing for values.
    looked_up: BTreeSet<String>,
    names: Names,
}

impl Walk<'_> {
    fn fresh(&mut self, what: &str) -> String {
        self.names.fresh(what)
    }

    fn bound(&self, v: &str) -> Option<&BoundVar> {
        self.scope.iter().find(|(n, _)| n == v).map(|(_, b)| b)
    }

    /// `m`, re-rooted where `reroot` allows; `shortest`: it is that search.
    fn plan(
        &mut self,
        m: &ast::Match,
        reroot: bool,
        shortest: Option<Shortest>,
    ) -> Result<MatchPlan> {
        if let Some(w) = m.where_.as_ref().filter(|w| w.contains_subquery()) {
            let (later, now): (Vec<ast::Expr>, Vec<ast::Expr>) = (w.conjuncts().into_iter())
                .cloned()
                .partition(|c| c.contains_subquery());
            let plain = ast::Match {
                where_: ast::Expr::associative(ast::BinaryOp::And, now),
                ..m.clone()
            };
            return Ok(MatchPlan::ThenFilter {
                plain: Box::new(self.plan(&plain, reroot, shortest)?),
                pred: ast::Expr::associative(ast::BinaryOp::And, later).expect("a conjunct"),
            });
        }
        if let Some((m, nodes)) = self.value_nodes(m) {
            return Ok(MatchPlan::ValueNodes {
                nodes,
                then: Box::new(self.plan(&m, reroot, shortest)?),
            });
        }
        if shortest.is_none() && m.patterns.iter().any(|p| p.shortest.is_some()) {
            return self.shortest_match(m);
        }
        let lookup_labels = &self.options.lookup_labels;
        let cx = MatchContext {
            catalog: self.catalog,
            lenient: self.options.lenient,
            scope: &self.scope,
            integer_params: self.integer_params,
            reroot,
            shortest: shortest.is_some(),
            grouped_by: self.grouped_by,
            looked_up: &self.looked_up,
            lookup_labels,
            names: self.names,
            traversable: self.options.traversable,
            max_var_length: self.options.max_var_length,
        };
        let prepared = prepare_match(&cx, m)?;
        self.names = prepared.names_given();
        // What the clauses after it see.
        let scope = &self.scope;
        let lookup = |v: &str| scope.iter().find(|(n, _)| n == v).map(|(_, b)| b.clone());
        let binder = Binder {
            catalog: self.catalog,
            lenient: self.options.lenient,
            bound: &lookup,
        };
        let mut matched = binder.matched(&prepared.graph);
        for p in &prepared.paths {
            matched.push((p.name.clone(), BoundVar::Path));
        }
        self.scope.extend(matched);
        Ok(MatchPlan::Prepared {
            clause: m.clone(),
            prepared,
        })
    }

    /// `m` with each node position that holds a value variable a fresh node equal to it;
    /// `None` where none does.
    fn value_nodes(&mut self, m: &ast::Match) -> Option<(ast::Match, Vec<(String, ast::Ident)>)> {
        let mut out = m.clone();
        let mut nodes = Vec::new();
        let mut equalities = Vec::new();
        for p in &mut out.patterns {
            for n in p.nodes_mut() {
                let Some(v) = n.var.clone() else { continue };
                if self.bound(&v.name) != Some(&BoundVar::Value) {
                    continue;
                }
                let fresh = self.fresh("vnode");
                self.looked_up.insert(fresh.clone());
                n.var = Some(ast::Ident::new(fresh.clone(), v.span));
                let var = |name: &str| ast::Expr::new(ExprKind::Variable(name.into()), v.span);
                equalities.push(ast::Expr::new(
                    ExprKind::Binary(
                        ast::BinaryOp::Eq,
                        Box::new(var(&fresh)),
                        Box::new(var(&v.name)),
                    ),
                    v.span,
                ));
                nodes.push((fresh, v));
            }
        }
        if nodes.is_empty() {
            return None;
        }
        equalities.extend(out.where_.take());
        out.where_ = ast::Expr::associative(ast::BinaryOp::And, equalities);
        Some((out, nodes))
    }

    /// A MATCH with shortest-path patterns.
    fn shortest_match(&mut self, m: &ast::Match) -> Result<MatchPlan> {
        let (shortest, rest): (Vec<_>, Vec<_>) =
            (m.patterns.iter().cloned()).partition(|p| p.shortest.is_some());
        let rest = match rest.is_empty() {
            true => None,
            false => {
                let m = ast::Match {
                    optional: false,
                    patterns: rest,
                    where_: None,
                    unique_within: m.unique_within.clone(),
                    span: m.span,
                };
                Some(Box::new(self.plan(&m, self.options.reroot, None)?))
            }
        };
        let mut conjuncts: Vec<ast::Expr> = (m.where_.iter())
            .flat_map(|w| w.conjuncts().into_iter().cloned())
            .collect();
        let mut paths = Vec::new();
        for p in shortest {
            let filters = match &p.name {
                Some(name) => search_filters(&mut conjuncts, &name.name),
                None => SearchFilters::default(),
            };
            paths.push(self.shortest_path(p, filters)?);
        }
        Ok(MatchPlan::Shortest {
            rest,
            paths,
            where_: ast::Expr::associative(ast::BinaryOp::And, conjuncts),
        })
    }

    fn shortest_path(
        &mut self,
        mut p: ast::PathPattern,
        filters: SearchFilters,
    ) -> Result<ShortestSearch> {
        let (mode, _) = p.shortest.take().expect("a shortest path");
        if p.steps.len() != 1 {
            return sem_err!(
                Unsupported,
                p.span,
                "unsupported: a shortest path of more than one relationship pattern (write `(a)-[:T*]-(b)`)"
            );
        }
        let rel = &mut p.steps[0].0;
        let (lo, hi) = rel.length.unwrap_or((Some(1), Some(1)));
        rel.length = Some((lo, hi));
        if !matches!(mode, Shortest::K(_)) && lo.unwrap_or(1) > 1 {
            return sem_err!(
                InvalidArgumentValue,
                rel.span,
                "a shortest path's minimum length is 0 or 1"
            );
        }
        if self.options.traversable.is_none() {
            return sem_err!(
                Unsupported,
                p.span,
                "unsupported: shortest paths search the CSR indexes, which the join mode does not use (run in csr mode, with the indexes built)"
            );
        }
        // Every node named: the start is matched first, alone (each row one search).
        for n in p.nodes_mut() {
            if n.var.is_none() {
                n.var = Some(ast::Ident::new(self.fresh("sn"), n.span));
            }
        }
        // The start alone, and an end the pattern picks by its properties: the search then
        // runs between two nodes (bidirectional, and its paths countable without building
        // them), not to every node before a filter.
        let end = &p.steps[0].1;
        let end_first = end.props.is_some();
        let mut ends = Vec::new();
        let mut matched = [false, false];
        for (i, n) in std::iter::once(&p.start)
            .chain(end_first.then_some(end))
            .enumerate()
        {
            let name = &n.var.as_ref().expect("named").name;
            if self.bound(name).is_some() {
                continue;
            }
            matched[i] = true;
            let m = ast::Match {
                optional: false,
                patterns: vec![ast::PathPattern {
                    name: None,
                    shortest: None,
                    start: n.clone(),
                    steps: vec![],
                    span: n.span,
                }],
                where_: None,
                unique_within: None,
                span: p.span,
            };
            ends.push(self.plan(&m, self.options.reroot, None)?);
        }
        // Their labels and properties hold already: not tested again per row (a test of a
        // parameter would also keep the physical plan from being reused).
        if matched[0] {
            p.start.props = None;
        }
        if matched[1] {
            p.steps[0].1.props = None;
        }
        let m = ast::Match {
            optional: false,
            span: p.span,
            patterns: vec![p],
            where_: None,
            unique_within: None,
        };
        let search = self.plan(&m, self.options.reroot, Some(mode))?;
        Ok(ShortestSearch {
            ends,
            mode,
            filters,
            search: Box::new(search),
        })
    }
}

/// Takes the conjuncts of `rest` the search of path `path` can apply.
fn search_filters(rest: &mut Vec<ast::Expr>, path: &str) -> SearchFilters {
    let mut out = SearchFilters::default();
    rest.retain(|c| {
        let ExprKind::Quantifier {
            kind: ast::Quantifier::All,
            var,
            list,
            pred,
        } = &c.kind
        else {
            return true;
        };
        let ExprKind::Function { name, args, .. } = &list.kind else {
            return true;
        };
        let of_path =
            matches!(args.as_slice(), [a] if matches!(&a.kind, ExprKind::Variable(v) if v == path));
        let mut only_var = true;
        pred.walk(&mut |e| {
            match &e.kind {
                ExprKind::Variable(v) if v != &var.name => only_var = false,
                ExprKind::ListComprehension { .. }
                | ExprKind::Quantifier { .. }
                | ExprKind::Reduce { .. } => only_var = false,
                _ => {}
            }
            only_var
        });
        if !of_path || !only_var || pred.contains_aggregate() {
            return true;
        }
        let item = (var.clone(), (**pred).clone());
        match name.to_lowercase().as_str() {
            "nodes" => out.nodes.push(item),
            "relationships" => out.rels.push(item),
            _ => return true,
        }
        false
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{sample, text};

    /// Each MATCH of `q`, prepared (re-rooting off, no CSR), as an outline.
    fn outline(q: &str) -> Vec<String> {
        let g = sample();
        let ast = cypher::parse_query(q).unwrap();
        let bound = crate::binder::query::bind(g.catalog(), false, &ast, &Default::default());
        let options = RewriteOptions {
            lenient: false,
            reroot: false,
            traversable: None,
            max_var_length: 10,
            lookup_labels: Default::default(),
        };
        let r = run(g.catalog(), &options, bound.unwrap()).unwrap();
        r.matches.iter().map(show).collect()
    }

    fn show(p: &MatchPlan) -> String {
        match p {
            MatchPlan::Prepared { prepared, .. } => text(&prepared.graph.clause),
            MatchPlan::ThenFilter { plain, pred } => format!("{}; then {pred}", show(plain)),
            MatchPlan::ValueNodes { nodes, then } => {
                let n: Vec<String> = (nodes.iter())
                    .map(|(f, v)| format!("{f} = {}", v.name))
                    .collect();
                format!("[{}] {}", n.join(", "), show(then))
            }
            MatchPlan::Shortest {
                rest,
                paths,
                where_,
            } => {
                let mut parts: Vec<String> = rest.iter().map(|r| show(r)).collect();
                for p in paths {
                    parts.extend(p.ends.iter().map(show));
                    let filters = (p.filters.nodes.iter().chain(&p.filters.rels))
                        .map(|(v, e)| format!("{} => {e}", v.name))
                        .collect::<Vec<_>>();
                    parts.push(format!("search {} {filters:?}", show(&p.search)));
                }
                parts.extend(where_.iter().map(|w| format!("where {w}")));
                parts.join("; ")
            }
        }
    }

    #[test]
    fn a_where_with_subqueries_is_applied_after_the_match() {
        let o = outline(
            "MATCH (a:Person)-[:KNOWS]->(b) WHERE exists((b)-[:KNOWS]->()) AND a.id = 1 RETURN b",
        );
        assert_eq!(
            o[0],
            "MATCH (a:Person {id: 1})-[:KNOWS]->(b); then exists((b)-[:KNOWS]->())"
        );
        // The pattern predicate's own MATCH, with `b` bound.
        assert_eq!(o[1], "MATCH (b)-[:KNOWS]->()");
    }

    #[test]
    fn values_in_node_positions_become_fresh_nodes_equal_to_them() {
        let o = outline("MATCH (p:Person) WITH collect(p) AS ps UNWIND ps AS f MATCH (f)-[:KNOWS]->(x) RETURN x");
        assert_eq!(
            o[1],
            "[__vnode1 = f] MATCH (__vnode1)-[:KNOWS]->(x) WHERE (__vnode1 = f)"
        );
    }

    #[test]
    fn a_shortest_path_matches_its_ends_then_searches() {
        let q =
            "MATCH (c:City), p = shortestPath((a:Person {id: 1})-[:KNOWS*]-(b:Person {id: 2})) \
                 WHERE all(n IN nodes(p) WHERE n.age > 3) AND c.id > 0 RETURN p";
        let g = sample();
        let ast = cypher::parse_query(q).unwrap();
        let bound =
            crate::binder::query::bind(g.catalog(), false, &ast, &Default::default()).unwrap();
        let mut options = RewriteOptions {
            lenient: false,
            reroot: false,
            traversable: None,
            max_var_length: 10,
            lookup_labels: Default::default(),
        };
        // Shortest paths search the CSRs.
        let e = run(g.catalog(), &options, bound.clone()).unwrap_err();
        assert_eq!(e.kind_name(), "Unsupported");
        let no_indexes = crate::csr::GraphIndexes::default();
        options.traversable = Some(crate::rewrite::unroll::Traversable {
            indexes: &no_indexes,
        });
        let r = run(g.catalog(), &options, bound).unwrap();
        assert_eq!(
            show(&r.matches[0]),
            "MATCH (c:City); MATCH (a:Person {id: 1}); MATCH (b:Person {id: 2}); \
             search MATCH (a:Person)-[__pr1:KNOWS*]-(b:Person) [\"n => (n.age > 3)\"]; \
             where (c.id > 0)"
        );
    }
}
