//! Consecutive MATCH clauses as one (`merge_matches`): `MATCH a MATCH b` has the rows of
//! `MATCH a, b` except for relationship uniqueness, which holds within each clause only.
//! Lowered clause by clause, every row of the first clause is built before the second is
//! looked at (three persons of one country, every triple, before the KNOWS edges that close
//! them into a triangle are read); merged, re-rooting orders the whole pattern. Every
//! relationship is named (anonymous ones get internal names) and the merged clause keeps
//! each clause's relationships as one group of `unique_within`.
//!
//! ```text
//! before:  MATCH (a:Person)-[:IS_LOCATED_IN]->(c) MATCH (a)-[:KNOWS]-(b)-[:IS_LOCATED_IN]->(c)
//! after:   MATCH (a:Person)-[__mr1:IS_LOCATED_IN]->(c), (a)-[__mr2:KNOWS]-(b)-[__mr3:IS_LOCATED_IN]->(c)
//!          unique within [__mr1], [__mr2, __mr3]
//! ```
//!
//! A run of clauses is merged when each is a MATCH without OPTIONAL and:
//! - has no shortest path, variable-length relationship or named path (their lowering keeps
//!   the written order or a clause of its own);
//! - has no WHERE or property map that reads the graph (a pattern expression, a subquery,
//!   `startNode`: inside one the other clauses' variables would be bound) or calls `rand()`
//!   (drawn once per row of its own clause, not of them all);
//! - names no relationship that an earlier clause of the query mentions (matched again) or
//!   another clause of the run names;
//! - gives no local variable (of a list comprehension, quantifier or `reduce`) the name of
//!   a variable another clause of the run binds.
//!
//! Runs inside subqueries stay as written. The WHEREs are joined with AND: every one holds
//! above the whole pattern, as it did above the clauses after its own.

use crate::binder::query::{bind_escaped, BoundQuery};
use crate::catalog::Catalog;
use crate::functions::registry::is_volatile;
use crate::functions::value::Value;
use cypher::ast::{self, Clause, ExprKind};
use std::collections::{BTreeMap, BTreeSet};

/// `bound` with its runs of MATCH clauses merged, bound again; as it is when there is none.
/// (The query bound as written first: its errors are the ones reported.)
pub(crate) fn run(
    catalog: &Catalog,
    lenient: bool,
    bound: BoundQuery,
    params: &BTreeMap<String, Value>,
) -> BoundQuery {
    let Some(merged) = merge_query(&bound.query) else {
        return bound;
    };
    // A merged query that does not bind (a name the merge made ambiguous that the checks
    // above did not foresee) is planned as written.
    bind_escaped(catalog, lenient, merged, params).unwrap_or(bound)
}

/// The prefix of the names given to anonymous relationships.
pub const MERGED_REL: &str = "mr";

/// `q` (its names escaped) with every run of mergeable MATCH clauses merged; `None` when
/// there is none.
pub fn merge_query(q: &ast::Query) -> Option<ast::Query> {
    let mut q = q.clone();
    let mut next = 0;
    let mut merged = merge_single(&mut q.first, &mut next);
    for (_, sq) in &mut q.unions {
        merged |= merge_single(sq, &mut next);
    }
    merged.then_some(q)
}

/// Merges the runs of `sq`'s clauses; whether there was one.
fn merge_single(sq: &mut ast::SingleQuery, next: &mut usize) -> bool {
    let clauses = std::mem::take(&mut sq.clauses);
    let mut out: Vec<Clause> = Vec::with_capacity(clauses.len());
    let mut run: Vec<ast::Match> = Vec::new();
    let mut merged = false;
    // Every name the clauses before the current one mention.
    let mut mentioned: BTreeSet<String> = BTreeSet::new();
    for c in clauses {
        let candidate = matches!(&c, Clause::Match(m)
            if mergeable(m) && !rel_vars(m).any(|r| mentioned.contains(r)));
        let joins = candidate && matches!(&c, Clause::Match(m) if locals_apart(m, &run));
        if !joins {
            merged |= flush(&mut run, &mut out, next);
        }
        let mut names = Vec::new();
        c.mentioned_names(&mut names);
        mentioned.extend(names.into_iter().map(str::to_string));
        match c {
            Clause::Match(m) if candidate => run.push(m),
            other => out.push(other),
        }
    }
    merged |= flush(&mut run, &mut out, next);
    sq.clauses = out;
    merged
}

/// Whether `m` may be merged with the MATCH clauses around it at all.
fn mergeable(m: &ast::Match) -> bool {
    let plain_patterns = m.patterns.iter().all(|p| {
        p.name.is_none() && p.shortest.is_none() && p.steps.iter().all(|(r, _)| r.length.is_none())
    });
    plain_patterns
        && !m.optional
        && m.unique_within.is_none()
        && expressions(m).all(|e| !e.contains_subquery() && !volatile(e))
}

/// Whether `e` calls a function that gives a new value at every call: its WHERE drew once
/// per row of its clause, merged it would draw once per row of them all.
fn volatile(e: &ast::Expr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        found |= matches!(&x.kind, ExprKind::Function { name, .. } if is_volatile(name));
        !found
    });
    found
}

/// The expressions of `m`: its WHERE and its property maps.
fn expressions(m: &ast::Match) -> impl Iterator<Item = &ast::Expr> {
    let maps = m.patterns.iter().flat_map(|p| {
        let nodes = p.nodes().filter_map(|n| n.props.as_ref());
        nodes.chain(p.steps.iter().filter_map(|(r, _)| r.props.as_ref()))
    });
    m.where_.iter().chain(maps)
}

/// The variables `m`'s patterns bind (nodes and relationships).
fn pattern_vars(m: &ast::Match) -> BTreeSet<&str> {
    (m.patterns.iter())
        .flat_map(|p| p.variables())
        .map(|v| v.name.as_str())
        .collect()
}

/// The relationship variables `m` names.
fn rel_vars(m: &ast::Match) -> impl Iterator<Item = &str> {
    (m.patterns.iter())
        .flat_map(|p| p.steps.iter())
        .filter_map(|(r, _)| r.var.as_ref().map(|v| v.name.as_str()))
}

/// The local variables `m`'s expressions introduce.
fn local_vars(m: &ast::Match) -> BTreeSet<&str> {
    let mut out = BTreeSet::new();
    for e in expressions(m) {
        e.walk(&mut |x| {
            match &x.kind {
                ExprKind::ListComprehension { var, .. } | ExprKind::Quantifier { var, .. } => {
                    out.insert(var.name.as_str());
                }
                ExprKind::Reduce { acc, var, .. } => {
                    out.insert(acc.name.as_str());
                    out.insert(var.name.as_str());
                }
                _ => {}
            }
            true
        });
    }
    out
}

/// Whether no local variable of `m` is named as a variable of a clause of `run`, nor the
/// other way round.
fn locals_apart(m: &ast::Match, run: &[ast::Match]) -> bool {
    let (vars, locals) = (pattern_vars(m), local_vars(m));
    run.iter().all(|other| {
        let (other_vars, other_locals) = (pattern_vars(other), local_vars(other));
        locals.is_disjoint(&other_vars) && other_locals.is_disjoint(&vars)
    })
}

/// Moves `run` into `out`: one merged MATCH when it has several clauses, else as it is.
/// Whether it merged.
fn flush(run: &mut Vec<ast::Match>, out: &mut Vec<Clause>, next: &mut usize) -> bool {
    let clauses = std::mem::take(run);
    if clauses.len() < 2 {
        out.extend(clauses.into_iter().map(Clause::Match));
        return false;
    }
    out.push(Clause::Match(merge(clauses, next)));
    true
}

/// One MATCH of `clauses`, each clause's relationships (named) a group of uniqueness.
fn merge(clauses: Vec<ast::Match>, next: &mut usize) -> ast::Match {
    let span = (clauses.iter().map(|m| m.span))
        .reduce(|a, b| a.union(&b))
        .expect("clauses");
    let mut patterns = Vec::new();
    let mut wheres = Vec::new();
    let mut groups = Vec::new();
    for mut m in clauses {
        let mut group = Vec::new();
        for p in &mut m.patterns {
            for (r, _) in &mut p.steps {
                let v = r.var.get_or_insert_with(|| {
                    *next += 1;
                    ast::Ident::new(format!("__{MERGED_REL}{next}"), r.span)
                });
                group.push(v.name.clone());
            }
        }
        patterns.append(&mut m.patterns);
        wheres.extend(m.where_);
        groups.push(group);
    }
    ast::Match {
        optional: false,
        patterns,
        where_: ast::Expr::associative(ast::BinaryOp::And, wheres),
        unique_within: Some(groups),
        span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(q: &str) -> Option<String> {
        let mut q = cypher::parse_query(q).unwrap();
        crate::binder::names::escape_query(&mut q);
        let m = merge_query(&q)?;
        let groups: Vec<String> = (m.first.clauses.iter())
            .filter_map(|c| match c {
                Clause::Match(m) => m.unique_within.as_ref(),
                _ => None,
            })
            .map(|g| format!("{g:?}"))
            .collect();
        let text = (m.first.clauses.iter().map(|c| c.to_string()))
            .collect::<Vec<_>>()
            .join(" ");
        Some(format!("{text} | {}", groups.join(" ")))
    }

    #[test]
    fn consecutive_matches_become_one_with_uniqueness_per_clause() {
        assert_eq!(
            merged(
                "MATCH (c:Country) MATCH (a)-[:AT]->(c) MATCH (a)-[k:KNOWS]-(b)-[:AT]->(c) \
                 WHERE b.x > 1 RETURN count(*)"
            )
            .unwrap(),
            "MATCH (c:Country), (a)-[__mr1:AT]->(c), (a)-[k:KNOWS]-(b)-[__mr2:AT]->(c) \
             WHERE (b.x > 1) RETURN count(*) | [[], [\"__mr1\"], [\"k\", \"__mr2\"]]"
        );
    }

    #[test]
    fn the_wheres_hold_together() {
        assert_eq!(
            merged("MATCH (a) WHERE a.x = 1 MATCH (b) WHERE b.y = a.x RETURN a").unwrap(),
            "MATCH (a), (b) WHERE ((a.x = 1) AND (b.y = a.x)) RETURN a | [[], []]"
        );
    }

    #[test]
    fn runs_end_at_other_clauses_and_optional_matches() {
        assert_eq!(
            merged(
                "MATCH (a) MATCH (b) WITH a, b MATCH (c) OPTIONAL MATCH (d) MATCH (e) \
                 MATCH (f) RETURN *"
            )
            .unwrap(),
            "MATCH (a), (b) WITH a AS a, b AS b MATCH (c) OPTIONAL MATCH (d) MATCH (e), (f) \
             RETURN * \
             | [[], []] [[], []]"
        );
        assert_eq!(merged("MATCH (a) WITH a MATCH (b) RETURN *"), None);
    }

    #[test]
    fn every_part_of_a_union_is_merged() {
        assert!(merged("MATCH (a) RETURN a UNION MATCH (a) MATCH (b) RETURN a").is_some());
    }

    #[test]
    fn clauses_whose_lowering_needs_their_own_clause_stay() {
        for q in [
            "MATCH (a) MATCH (a)-[*]->(b) RETURN *",
            "MATCH (a) MATCH p = (a)-->(b) RETURN *",
            "MATCH (a), (b) MATCH p = shortestPath((a)-[*]-(b)) RETURN *",
            "MATCH (a) MATCH (b) WHERE exists((a)-->(b)) RETURN *",
            "MATCH (a) MATCH (b) WHERE EXISTS { MATCH (b)-->(c) } RETURN *",
            "MATCH (a) MATCH (b {x: size([(a)-->(c) | c])}) RETURN *",
            "MATCH ()-[r]->() WITH r MATCH (a) MATCH ()-[r]->(a) RETURN *",
            "MATCH ()-[r]->() MATCH ()-[r]->() RETURN *",
            "MATCH (a) MATCH (b) WHERE any(a IN [1] WHERE a > 0) RETURN *",
            "MATCH (a) WHERE rand() < 0.5 MATCH (a)-->(b) RETURN *",
        ] {
            assert_eq!(merged(q), None, "{q}");
        }
    }
}
