//! Property maps on variable-length relationships as a condition on every relationship of
//! the path: each one must have the map's values, which is what `all()` over the
//! relationship list says (a path of length 0 has none and matches).
//!
//! ```text
//! before:  MATCH (a)-[:KNOWS* {year: 1988}]->(b)
//! after:   MATCH (a)-[__vlmap1:KNOWS*]->(b) WHERE all(__vx2 IN __vlmap1 WHERE __vx2.year = 1988)
//! ```
//!
//! Not moved: a shortest path's map (its search applies its filters as it goes), a map that
//! is a parameter (refused by the binder).

use cypher::ast::{self, BinaryOp, ExprKind};
use std::borrow::Cow;

/// The name given to an anonymous relationship whose list the condition reads.
pub const LIST: &str = "vlmap";

/// A key of a variable-length relationship's map that no table of its written types has is a
/// typo, as it is on a single hop (checked here: once moved, the key is only read).
pub fn check_keys(m: &ast::Match, catalog: &crate::catalog::Catalog) -> crate::error::Result<()> {
    for (r, _) in m.patterns.iter().flat_map(|p| p.steps.iter()) {
        let (
            Some(_),
            Some(ast::Expr {
                kind: ExprKind::Map(entries),
                ..
            }),
        ) = (&r.length, &r.props)
        else {
            continue;
        };
        if r.types.is_empty() {
            continue;
        }
        let tables: Vec<_> = (catalog.rels.iter())
            .filter(|t| r.types.iter().any(|ty| ty.name == t.cfg.rel_type))
            .collect();
        for (k, _) in entries {
            let has = tables
                .iter()
                .any(|t| t.props.iter().any(|(p, _)| p == &k.name));
            if !tables.is_empty() && !has {
                return crate::sem_err!(
                    UnknownProperty,
                    k.span,
                    "Unknown property `{}`: no relationship type written in the pattern has it",
                    k.name
                );
            }
        }
    }
    Ok(())
}

/// `m` with the property map of each variable-length relationship moved into its WHERE as an
/// `all()` over the relationship's list (the relationship named where it was anonymous).
pub fn var_length_maps_into_where<'m>(
    m: &'m ast::Match,
    fresh: &mut dyn FnMut(&str) -> String,
) -> Cow<'m, ast::Match> {
    let movable = |r: &ast::RelPattern| {
        r.length.is_some() && matches!(&r.props, Some(p) if matches!(p.kind, ExprKind::Map(_)))
    };
    let any = m
        .patterns
        .iter()
        .filter(|p| p.shortest.is_none())
        .any(|p| p.steps.iter().any(|(r, _)| movable(r)));
    if !any {
        return Cow::Borrowed(m);
    }
    let mut out = m.clone();
    let mut conds: Vec<ast::Expr> = out.where_.take().into_iter().collect();
    for p in out.patterns.iter_mut().filter(|p| p.shortest.is_none()) {
        for (r, _) in &mut p.steps {
            if !movable(r) {
                continue;
            }
            let Some(ast::Expr {
                kind: ExprKind::Map(entries),
                span,
            }) = r.props.take()
            else {
                unreachable!("movable: a map")
            };
            if entries.is_empty() {
                continue;
            }
            let list = r
                .var
                .get_or_insert_with(|| ast::Ident::new(fresh(LIST), r.span))
                .clone();
            let x = ast::Ident::new(fresh("vx"), span);
            let each = entries
                .into_iter()
                .map(|(k, v)| {
                    let s = k.span.union(&v.span);
                    let target = ast::Expr::new(ExprKind::Variable(x.name.clone()), k.span);
                    let prop = ast::Expr::new(ExprKind::Property(Box::new(target), k), s);
                    ast::Expr::new(
                        ExprKind::Binary(BinaryOp::Eq, Box::new(prop), Box::new(v)),
                        s,
                    )
                })
                .collect();
            let pred = ast::Expr::associative(BinaryOp::And, each).expect("not empty");
            conds.push(ast::Expr::new(
                ExprKind::Quantifier {
                    kind: ast::Quantifier::All,
                    var: x,
                    list: Box::new(ast::Expr::new(
                        ExprKind::Variable(list.name.clone()),
                        list.span,
                    )),
                    pred: Box::new(pred),
                },
                span,
            ));
        }
    }
    out.where_ = ast::Expr::associative(BinaryOp::And, conds);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{nth_match, text};

    fn moved(q: &str) -> String {
        let m = nth_match(q, 0);
        let mut n = 0;
        let out = var_length_maps_into_where(&m, &mut |w| {
            n += 1;
            format!("__{w}{n}")
        });
        text(&out)
    }

    #[test]
    fn a_variable_length_map_becomes_a_condition_on_every_relationship() {
        assert_eq!(
            moved("MATCH (a)-[:KNOWS*1..3 {year: 1988, w: 2}]->(b) WHERE a.x = 1 RETURN b"),
            "MATCH (a)-[__vlmap1:KNOWS*1..3]->(b) WHERE ((a.x = 1) AND all(__vx2 IN __vlmap1 WHERE ((__vx2.year = 1988) AND (__vx2.w = 2))))"
        );
        assert_eq!(
            moved("MATCH (a)-[r:T* {k: $v}]-(b) RETURN b"),
            "MATCH (a)-[r:T*]-(b) WHERE all(__vx1 IN r WHERE (__vx1.k = $v))"
        );
    }

    #[test]
    fn fixed_hops_shortest_paths_and_empty_maps_stay() {
        for q in [
            "MATCH (a)-[:T {k: 1}]->(b) RETURN b",
            "MATCH p = shortestPath((a)-[:T* {k: 1}]-(b)) RETURN p",
            "MATCH (a)-[:T*]->(b) RETURN b",
        ] {
            let m = nth_match(q, 0);
            assert!(
                matches!(
                    var_length_maps_into_where(&m, &mut |w| w.into()),
                    Cow::Borrowed(_)
                ),
                "{q}"
            );
        }
    }
}
