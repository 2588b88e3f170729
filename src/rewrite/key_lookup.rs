//! Key equalities into property maps: a WHERE conjunct `v.key = <integer>` on a node
//! written with one label whose key is `key` moves into that node's property map, where the
//! planner looks the node up by its key instead of scanning and filtering.
//!
//! ```text
//! before:  MATCH (p:Person)-[:KNOWS]->(f) WHERE p.id = 7 AND f.age > 30
//! after:   MATCH (p:Person {id: 7})-[:KNOWS]->(f) WHERE f.age > 30
//! ```
//!
//! Not moved: a label without that key, several labels, a map that already has the key, a
//! value that is not an integer (keys are looked up by integers only).

use crate::catalog::Catalog;
use crate::functions::value::Value;
use cypher::ast::{self, ExprKind};

/// `m` with each WHERE conjunct `v.key = <literal or parameter>` moved into the property map
/// of `v`'s first node pattern, where `v` is written with one label whose key is `key`:
/// the same rows (a property map is an equality on the pattern, as the conjunct was), and
/// the node is then looked up by its key instead of scanned and filtered.
pub fn key_equalities_into_maps<'m>(
    m: &'m ast::Match,
    catalog: &Catalog,
    integer_param: &dyn Fn(&str) -> bool,
) -> std::borrow::Cow<'m, ast::Match> {
    use std::borrow::Cow;
    let Some(w) = &m.where_ else {
        return Cow::Borrowed(m);
    };
    let mut out = m.clone();
    let mut kept: Vec<ast::Expr> = Vec::new();
    let mut moved = false;
    for c in w.conjuncts() {
        if let Some((v, key, value)) = key_equality(c, integer_param) {
            if let Some(node) = keyed_node(&mut out, v, key, catalog) {
                // `keyed_node` leaves no property map, or a map.
                let span = node.span;
                let props = node.props.get_or_insert_with(|| ast::Expr {
                    kind: ExprKind::Map(vec![]),
                    span,
                });
                let ExprKind::Map(entries) = &mut props.kind else {
                    unreachable!("keyed_node checked it is a map")
                };
                entries.push((key.clone(), value.clone()));
                moved = true;
                continue;
            }
        }
        kept.push(c.clone());
    }
    if !moved {
        return Cow::Borrowed(m);
    }
    out.where_ = ast::Expr::associative(ast::BinaryOp::And, kept);
    Cow::Owned(out)
}

/// `v.key = c` or `c = v.key`, `c` an integer (a literal or a parameter): (v, key, c). Keys
/// are looked up by integers only; an integer equality means the same in a property map.
fn key_equality<'e>(
    e: &'e ast::Expr,
    integer_param: &dyn Fn(&str) -> bool,
) -> Option<(&'e str, &'e ast::Ident, &'e ast::Expr)> {
    let ExprKind::Binary(ast::BinaryOp::Eq, l, r) = &e.kind else {
        return None;
    };
    fn prop(x: &ast::Expr) -> Option<(&str, &ast::Ident)> {
        match &x.kind {
            ExprKind::Property(t, k) => match &t.kind {
                ExprKind::Variable(v) => Some((v.as_str(), k)),
                _ => None,
            },
            _ => None,
        }
    }
    let constant = |x: &ast::Expr| match &x.kind {
        ExprKind::Param(p) => integer_param(p),
        _ => matches!(Value::from_literal(x), Some(Value::Int(_))),
    };
    match (prop(l), prop(r)) {
        (Some((v, k)), None) if constant(r) => Some((v, k, r)),
        (None, Some((v, k))) if constant(l) => Some((v, k, l)),
        _ => None,
    }
}

/// The first node pattern of `v` in `m`, when it is written with one label whose key is
/// `key` and its property map (if any) is a map without `key`.
fn keyed_node<'a>(
    m: &'a mut ast::Match,
    v: &str,
    key: &ast::Ident,
    catalog: &Catalog,
) -> Option<&'a mut ast::NodePattern> {
    let node = m
        .patterns
        .iter_mut()
        .flat_map(|p| p.nodes_mut())
        .find(|n| n.var.as_ref().is_some_and(|x| x.name == v))?;
    if !node.has_label_test() {
        return None;
    }
    let tables = catalog.tables_for(node);
    if tables.is_empty() || tables.iter().any(|t| t.key != key.name) {
        return None;
    }
    match &node.props {
        None => Some(node),
        Some(ast::Expr {
            kind: ExprKind::Map(entries),
            ..
        }) if !entries.iter().any(|(k, _)| k.name == key.name) => Some(node),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rewrite::test_util::{nth_match, sample, text};

    fn rewrite(q: &str) -> Option<String> {
        let g = sample();
        let m = nth_match(q, 0);
        let int_param = |p: &str| p == "int";
        match key_equalities_into_maps(&m, g.catalog(), &int_param) {
            std::borrow::Cow::Borrowed(_) => None,
            std::borrow::Cow::Owned(m) => Some(text(&m)),
        }
    }

    #[test]
    fn an_integer_key_equality_becomes_a_property_map_entry() {
        assert_eq!(
            rewrite("MATCH (p:Person)-[:KNOWS]->(f) WHERE p.id = 7 AND f.age > 30 RETURN f")
                .unwrap(),
            "MATCH (p:Person {id: 7})-[:KNOWS]->(f) WHERE (f.age > 30)"
        );
        // Either side, a parameter known to be an integer, into an existing map.
        assert_eq!(
            rewrite("MATCH (p:Person {firstName: 'Ann'}) WHERE $int = p.id RETURN p").unwrap(),
            "MATCH (p:Person {firstName: 'Ann', id: $int})"
        );
    }

    #[test]
    fn other_equalities_stay_in_where() {
        for q in [
            // Not the key, not an integer, not one label, a parameter of another type.
            "MATCH (p:Person) WHERE p.age = 7 RETURN p",
            "MATCH (p:Person) WHERE p.id = '7' RETURN p",
            "MATCH (p) WHERE p.id = 7 RETURN p",
            "MATCH (p:Person:Post) WHERE p.id = 7 RETURN p",
            "MATCH (p:Person) WHERE p.id = $str RETURN p",
            // The map has the key already; an OR is not a conjunct.
            "MATCH (p:Person {id: 1}) WHERE p.id = 7 RETURN p",
            "MATCH (p:Person) WHERE p.id = 7 OR p.id = 8 RETURN p",
        ] {
            assert_eq!(rewrite(q), None, "{q}");
        }
    }
}
