//! Variable-length hops on the join path, unrolled: where no CSR covers a variable-length
//! relationship, the planner lowers it as the UNION ALL of one chain of fixed hops per
//! length. Each chain is a MATCH of its own, prepared here (so it branches over the labels
//! it passes and keeps its relationships distinct):
//!
//! ```text
//! MATCH (a:Person)-[:KNOWS*1..2]->(b:Person)        (no CSR for KNOWS)
//!   k = 1:  MATCH (__near)-[__vlr1:KNOWS]->(__far:Person)
//!   k = 2:  MATCH (__near)-[__vlr2:KNOWS]->(__vln3)-[__vlr4:KNOWS]->(__far:Person)
//! ```
//!
//! `__near` stands for the node the hop starts from (bound), `__far` for its other end
//! (bound too where the walk bound it before).

use super::{prepare_match, MatchContext, Names, PreparedMatch};
use crate::binder::{BoundVar, QueryGraph, ResolvedPath};
use crate::config::reach::longest_walk;
use crate::config::RelTable;
use crate::csr::GraphIndexes;
use crate::error::Result;
use cypher::ast;
use std::collections::{BTreeMap, BTreeSet};

/// The variable a chain's first node has: the node its hop starts from.
pub(crate) const NEAR: &str = "__near";
/// The variable a chain's last node has: the hop's other end.
pub(crate) const FAR: &str = "__far";

/// What the CSR indexes cover: a variable-length hop runs on them when all its tables have
/// one and its end labels have their keys and columns indexed. Asked per hop, so that a
/// graph opened with deferred indexes reads only the ones the query's hops need.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Traversable<'a> {
    pub indexes: &'a GraphIndexes,
}

impl Traversable<'_> {
    pub fn covers(&self, tables: &[usize], near: &str, far: &str) -> bool {
        self.indexes.traverses(tables, near, far)
    }
}

/// One length of an unrolled hop.
#[derive(Debug, Clone)]
pub(crate) struct Chain {
    /// Its relationships' variables, in order.
    pub rels: Vec<String>,
    /// Its nodes' after the first, in order (the last is [`FAR`]).
    pub nodes: Vec<String>,
    pub prepared: Box<PreparedMatch>,
}

/// Per variable-length step (path, step) of a resolved pattern, its chains by length.
pub(crate) type Chains = BTreeMap<(usize, usize), BTreeMap<u64, Chain>>;

/// The chains of every variable-length step of `graph` (resolved as `resolved`) the planner
/// unrolls; `elems`: whether a relationship variable's elements are needed as values (a
/// named path's segment, a list the user names); `names`: the last internal name given
/// (updated). Lengths the planner refuses (beyond the maximum depth) get none: it reports
/// them.
pub(crate) fn unroll(
    cx: &MatchContext<'_>,
    graph: &QueryGraph,
    resolved: &[ResolvedPath],
    reroot: bool,
    elems: &dyn Fn(&str) -> bool,
    names: &mut Names,
) -> Result<Chains> {
    let mut out = Chains::new();
    let satisfiable = resolved.iter().all(|r| r.satisfiable);
    // Node variables bound before each step, in the walk's order.
    let mut bound: BTreeSet<&str> = BTreeSet::new();
    for (pi, (path, res)) in graph.clause.patterns.iter().zip(resolved).enumerate() {
        bound.extend(path.start.var.as_ref().map(|v| v.name.as_str()));
        for (si, (rel, node)) in path.steps.iter().enumerate() {
            let far_var = node.var.as_ref().map(|v| v.name.as_str());
            let far_bound = far_var.is_some_and(|v| {
                bound.contains(v) || matches!(cx.bound(v), Some(BoundVar::Node { .. }))
            });
            bound.extend(far_var);
            if rel.length.is_none() {
                continue;
            }
            let (near, far) = (&res.labels[si], &res.labels[si + 1]);
            let tables = &res.tables[si];
            let covered = cx.traversable.is_some_and(|t| t.covers(tables, near, far));
            if covered && satisfiable {
                continue;
            }
            let Some((min, cap)) = lengths(cx, rel, tables, (near, far)) else {
                continue;
            };
            let mut by_length = BTreeMap::new();
            let named = rel.var.as_ref().is_some_and(|v| elems(&v.name));
            for k in min.max(1)..=cap {
                let hop = Hop {
                    k,
                    near,
                    far,
                    far_bound,
                    named,
                };
                by_length.insert(k, chain(cx, rel, tables, hop, reroot, names)?);
            }
            out.insert((pi, si), by_length);
        }
    }
    Ok(out)
}

/// The lengths an unrolled hop over `tables` between `labels` (near, far) takes: from its
/// lower bound (1 between different labels) to its upper bound, the longest walk an acyclic
/// label graph allows, or the tables' edges (a path repeats none). `None` where the planner
/// refuses the hop.
fn lengths(
    cx: &MatchContext<'_>,
    rel: &ast::RelPattern,
    tables: &[usize],
    (near, far): (&str, &str),
) -> Option<(u64, u64)> {
    let (lo, hi) = rel.length.unwrap_or_default();
    if rel.props.is_some() || hi.is_some_and(|h| h > cx.max_var_length) {
        return None;
    }
    let mut min = lo.unwrap_or(1);
    if near != far && min == 0 {
        min = 1;
    }
    let cfgs: Vec<&RelTable> = tables.iter().map(|&t| &cx.catalog.rels[t].cfg).collect();
    let max = match (hi, longest_walk(&cfgs, rel.direction)) {
        (Some(h), Some(l)) => Some(h.min(l)),
        (h, l) => h.or(l),
    };
    let edges: u64 = (tables.iter())
        .map(|&t| cx.catalog.rels[t].table.num_rows as u64)
        .sum();
    let cap = match tables.is_empty() {
        true => 0,
        false => max.unwrap_or(edges),
    };
    (cap <= cx.max_var_length).then_some((min, cap))
}

/// The chain of `k` hops over the types of `tables` from [`NEAR`] (of label `near`) to
/// [`FAR`] (of label `far`; bound before where `far_bound`), prepared; `named`: as a named
/// path (its elements are needed as values).
fn chain(
    cx: &MatchContext<'_>,
    rel: &ast::RelPattern,
    tables: &[usize],
    hop: Hop<'_>,
    reroot: bool,
    names: &mut Names,
) -> Result<Chain> {
    let mut fresh = |what: &str| names.fresh(what);
    let ident = |n: &str| ast::Ident::new(n, rel.span);
    let mut types: Vec<&str> = Vec::new();
    for &t in tables {
        let ty = cx.catalog.rels[t].cfg.rel_type.as_str();
        if !types.contains(&ty) {
            types.push(ty);
        }
    }
    let node = |var: &str, (labels, label_expr)| ast::NodePattern {
        var: Some(ident(var)),
        labels,
        label_expr,
        props: None,
        span: rel.span,
    };
    let (mut steps, mut rels, mut nodes) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..hop.k {
        let rv = fresh("vlr");
        let (var, labels) = match j + 1 == hop.k {
            true => (FAR.to_string(), cx.catalog.table_labels(hop.far, rel.span)),
            false => (fresh("vln"), (vec![], None)),
        };
        let r = ast::RelPattern {
            var: Some(ident(&rv)),
            types: types.iter().map(|t| ident(t)).collect(),
            direction: rel.direction,
            length: None,
            props: None,
            span: rel.span,
        };
        steps.push((r, node(&var, labels)));
        rels.push(rv);
        nodes.push(var);
    }
    // Named when its elements are needed as values: a path's relationships from several
    // tables then keep their nodes' identities.
    let name = hop.named.then(|| ident(&fresh("vlp")));
    let m = ast::Match {
        optional: false,
        patterns: vec![ast::PathPattern {
            shortest: None,
            name,
            start: node(NEAR, (vec![], None)),
            steps,
            span: rel.span,
        }],
        where_: None,
        unique_within: None,
        span: rel.span,
    };
    let mut scope = vec![(NEAR.to_string(), BoundVar::node(vec![hop.near.to_string()]))];
    if hop.far_bound {
        scope.push((FAR.to_string(), BoundVar::node(vec![hop.far.to_string()])));
    }
    let none = BTreeSet::new();
    let prepared = prepare_match(
        &MatchContext {
            scope: &scope,
            reroot,
            shortest: false,
            looked_up: &none,
            names: *names,
            ..*cx
        },
        &m,
    )?;
    *names = prepared.names_given();
    Ok(Chain {
        rels,
        nodes,
        prepared: Box::new(prepared),
    })
}

/// One length of a hop: `k`, the labels of its ends, whether the far one is bound and
/// whether the chain is a named path.
#[derive(Clone, Copy)]
struct Hop<'a> {
    k: u64,
    near: &'a str,
    far: &'a str,
    far_bound: bool,
    named: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{nth_match, sample, text};
    use crate::rewrite::MatchShape;

    /// The chains of `q`'s first MATCH per (path, step), as `k: MATCH ...`; `covered`: the
    /// sample's CSR indexes cover every hop, else none does.
    fn chains(q: &str, covered: bool) -> Vec<String> {
        let g = sample();
        let cat = g.catalog();
        let no_indexes = GraphIndexes::default();
        let traversable = Traversable {
            indexes: match covered {
                true => g.indexes().expect("the sample's indexes"),
                false => &no_indexes,
            },
        };
        let none = BTreeSet::new();
        let no_lookups = crate::rewrite::KeyLookups::default();
        let cx = MatchContext {
            catalog: cat,
            lenient: false,
            scope: &[],
            integer_params: &none,
            reroot: false,
            shortest: false,
            grouped_by: None,
            looked_up: &none,
            lookup_labels: &no_lookups,
            names: Names::default(),
            traversable: Some(traversable),
            max_var_length: 3,
        };
        let p = prepare_match(&cx, &nth_match(q, 0)).unwrap();
        let MatchShape::One(one) = p.shape else {
            panic!("branched")
        };
        let mut out = Vec::new();
        for (at, by_length) in &one.chains {
            for (k, c) in by_length {
                let first = text(&c.prepared.graph.clause);
                let paths: Vec<&str> = c.prepared.paths.iter().map(|p| p.name.as_str()).collect();
                out.push(format!("{at:?} {k}: {first} {:?} {paths:?}", c.rels));
            }
        }
        out
    }

    #[test]
    fn a_hop_no_csr_covers_is_a_chain_per_length() {
        let q = "MATCH (a:Person)-[:KNOWS*1..2]->(b:Person), (b)-[:LIKES]->(m:Post) RETURN m";
        assert_eq!(
            chains(q, false),
            [
                "(0, 0) 1: MATCH (__near)-[__vlr1:KNOWS]->(__far:Person) [\"__vlr1\"] []",
                "(0, 0) 2: MATCH (__near)-[__vlr2:KNOWS]->(__vln3)-[__vlr4:KNOWS]->(__far:Person) [\"__vlr2\", \"__vlr4\"] []"
            ]
        );
        // Covered: a traversal, no chains.
        assert!(chains(q, true).is_empty());
    }

    #[test]
    fn lengths_stop_where_the_planner_refuses_and_lists_are_named_paths() {
        // Beyond the maximum depth (3): the planner reports it, no chains.
        assert!(chains("MATCH (a:Person)-[:KNOWS*1..5]->(b:Person) RETURN b", false).is_empty());
        // The zero-length path needs no chain.
        let c = chains("MATCH (a:Person)-[:KNOWS*0..1]->(b:Person) RETURN b", false);
        assert_eq!(c.len(), 1, "{c:?}");
        // A named list needs its elements: the chain is a named path.
        let c = chains(
            "MATCH (a:Person)-[rs:KNOWS*1..1]->(b:Person) RETURN rs",
            false,
        );
        assert!(c[0].ends_with("[\"__vlr1\"] [\"__vlp2\"]"), "{c:?}");
    }
}
