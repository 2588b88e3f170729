//! Relationships bound by an earlier clause, matched again: each such variable in a MATCH
//! becomes a fresh one that WHERE requires to equal it, so the pattern matches exactly where
//! its relationship is that one, and the pattern keeps to the tables it can be in.
//!
//! ```text
//! before:  MATCH ()-[r:KNOWS]->() WITH r MATCH (a)-[r]->(b)
//! after:   MATCH ()-[r:KNOWS]->() WITH r MATCH (a)-[__rebound1:KNOWS]->(b) WHERE __rebound1 = r
//! ```

use crate::binder::BoundVar;
use crate::catalog::Catalog;
use cypher::ast::{self, ExprKind};

/// Fresh variables of relationships matched again are `__rebound<n>`.
pub const REBOUND: &str = "rebound";

/// `m` with each relationship variable bound by an earlier clause (`MATCH ()-[r]->() WITH
/// r MATCH (a)-[r]->(b)`) replaced by a fresh one that WHERE requires to equal it: the
/// pattern then matches exactly where its relationship is that one (in either direction
/// for an undirected hop; nowhere for a null one); a value (a relationship taken from a list
/// or a path) likewise. `None` when there is none.
/// The pattern keeps to the bound relationship's types (the tables it can be in), so that
/// it branches only over those. A variable-length relationship bound to a list (`WITH
/// [r1, r2] AS rs MATCH (a)-[rs*]->(b)`) likewise: a fresh list equal to it as a value
/// (the same relationships in the same order).
pub fn rematch_bound_relationships(
    m: &ast::Match,
    catalog: &Catalog,
    bound: &dyn Fn(&str) -> Option<BoundVar>,
    fresh: &mut dyn FnMut() -> String,
) -> Option<ast::Match> {
    let tables = |v: &ast::Ident| match bound(&v.name) {
        Some(BoundVar::Rel { tables }) => Some(tables),
        Some(BoundVar::RelList { table: Some(table) }) => Some(vec![table]),
        _ => None,
    };
    // A node or a path in a relationship's place is the binder's error to report.
    let rematched = |r: &ast::RelPattern| match (&r.var, r.length.is_some()) {
        (Some(v), false) => matches!(bound(&v.name), Some(BoundVar::Rel { .. } | BoundVar::Value)),
        (Some(v), true) => matches!(
            bound(&v.name),
            Some(BoundVar::Rel { .. } | BoundVar::RelList { .. } | BoundVar::Value)
        ),
        (None, _) => false,
    };
    let mut rels = m
        .patterns
        .iter()
        .flat_map(|p| p.steps.iter().map(|(r, _)| r));
    if !rels.any(rematched) {
        return None;
    }
    let mut out = m.clone();
    let mut conjuncts: Vec<ast::Expr> = out.where_.take().into_iter().collect();
    for (r, _) in out.patterns.iter_mut().flat_map(|p| p.steps.iter_mut()) {
        if !rematched(r) {
            continue;
        }
        let v = r.var.as_mut().expect("rematched");
        let var = |name: &str| ast::Expr {
            kind: ExprKind::Variable(name.to_string()),
            span: v.span,
        };
        if r.types.is_empty() {
            let mut types: Vec<String> = tables(v)
                .unwrap_or_default()
                .into_iter()
                .filter_map(|t| catalog.rels.get(t))
                .map(|info| info.cfg.rel_type.clone())
                .collect();
            types.sort();
            types.dedup();
            r.types = types
                .into_iter()
                .map(|name| ast::Ident { name, span: v.span })
                .collect();
        }
        let fresh = fresh();
        conjuncts.push(ast::Expr {
            kind: ExprKind::Binary(
                ast::BinaryOp::Eq,
                Box::new(var(&fresh)),
                Box::new(var(&v.name)),
            ),
            span: v.span,
        });
        v.name = fresh;
    }
    out.where_ = ast::Expr::associative(ast::BinaryOp::And, conjuncts);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{nth_match, sample, text};

    fn rewrite(q: &str, bound: &dyn Fn(&str) -> Option<BoundVar>) -> Option<String> {
        let g = sample();
        let m = nth_match(q, 0);
        let mut names = crate::rewrite::Names::default();
        rematch_bound_relationships(&m, g.catalog(), bound, &mut || names.fresh(REBOUND))
            .map(|m| text(&m))
    }

    #[test]
    fn a_bound_relationship_is_matched_through_a_fresh_one() {
        let g = sample();
        let knows = (g.catalog().rels.iter())
            .position(|r| r.cfg.rel_type == "KNOWS")
            .unwrap();
        let bound = |v: &str| {
            (v == "r").then(|| BoundVar::Rel {
                tables: vec![knows],
            })
        };
        assert_eq!(
            rewrite("MATCH (a)-[r]->(b) WHERE a.id > 1 RETURN a", &bound).unwrap(),
            "MATCH (a)-[__rebound1:KNOWS]->(b) WHERE ((a.id > 1) AND (__rebound1 = r))"
        );
        // Its types as written are kept.
        assert_eq!(
            rewrite("MATCH (a)-[r:KNOWS|LIKES]-(b) RETURN a", &bound).unwrap(),
            "MATCH (a)-[__rebound1:KNOWS|LIKES]-(b) WHERE (__rebound1 = r)"
        );
    }

    #[test]
    fn lists_and_other_values() {
        // A list bound to a variable-length relationship is matched again as a value, and so
        // is a single hop's variable holding a value (a relationship from a list or a path);
        // a list on a single hop is left to the binder.
        let list = |v: &str| (v == "rs").then_some(BoundVar::RelList { table: None });
        assert_eq!(
            rewrite("MATCH (a)-[rs*]->(b) RETURN a", &list).unwrap(),
            "MATCH (a)-[__rebound1*]->(b) WHERE (__rebound1 = rs)"
        );
        assert_eq!(rewrite("MATCH (a)-[rs]->(b) RETURN a", &list), None);
        let other = |v: &str| (v == "x").then_some(BoundVar::Value);
        assert_eq!(
            rewrite("MATCH (a)-[x]->(b) RETURN a", &other).unwrap(),
            "MATCH (a)-[__rebound1]->(b) WHERE (__rebound1 = x)"
        );
        assert_eq!(rewrite("MATCH (a)-[y]->(b) RETURN a", &|_| None), None);
    }
}
