//! Which `collect(n)` of a WITH may collect only the identities of its nodes or relationships
//! (label or type and identity, no properties): those whose list the rest of the query reads
//! only for its size, for membership (`x IN list`), or for its elements used as pattern nodes
//! (`[p IN list WHERE (p)-->()]`). Everything else (returning the list, indexing it, reading an
//! element's property, carrying it under another name, `RETURN *`) needs the whole records.
//! A list of records is copied into every row a later hop makes from its row, so collecting
//! only identities saves copying every property of every element per row.

use cypher::ast::{self, BinaryOp, Clause, Expr, ExprKind};

/// The `collect(v)` calls (by syntax) of the WITH at `clauses[i]` whose lists may hold only
/// identities; empty for any other clause.
pub(super) fn identity_collects(clauses: &[Clause], i: usize) -> Vec<Expr> {
    let Some(Clause::With(w)) = clauses.get(i) else {
        return Vec::new();
    };
    let p = &w.projection;
    let mut out: Vec<Expr> = Vec::new();
    let mut rejected: Vec<Expr> = Vec::new();
    for item in &p.items {
        let is_collect_of_var = matches!(&item.expr.kind, ExprKind::Function { name, args, .. }
            if name.eq_ignore_ascii_case("collect")
                && matches!(args.as_slice(), [a] if matches!(a.kind, ExprKind::Variable(_))));
        if !is_collect_of_var {
            // The call written inside another item (`collect(n)[0]`) needs whole records.
            item.expr.walk(&mut |e| {
                if matches!(&e.kind, ExprKind::Function { name, .. } if name.eq_ignore_ascii_case("collect"))
                {
                    rejected.push(e.clone());
                }
                true
            });
            continue;
        }
        let list = item.name();
        let later = clauses[i + 1..].iter().any(|c| clause_escapes(c, &list));
        let here = w.where_.as_ref().is_some_and(|e| escapes(e, &list))
            || projection_tail_escapes(p, &list);
        if later || here {
            rejected.push(item.expr.clone());
        } else if !out.contains(&item.expr) {
            out.push(item.expr.clone());
        }
    }
    out.retain(|c| !rejected.contains(c));
    out
}

/// ORDER BY, SKIP and LIMIT of a projection (they see its aliases).
fn projection_tail_escapes(p: &ast::Projection, l: &str) -> bool {
    p.order_by.iter().any(|s| escapes(&s.expr, l))
        || p.skip.iter().chain(&p.limit).any(|e| escapes(e, l))
}

fn clause_escapes(c: &Clause, l: &str) -> bool {
    match c {
        Clause::Match(m) => {
            m.patterns.iter().any(|p| pattern_escapes(p, l))
                || m.where_.as_ref().is_some_and(|e| escapes(e, l))
        }
        Clause::Unwind(u) => escapes(&u.expr, l),
        // Arguments read no variable; YIELD's WHERE may.
        Clause::Call(c) => c.where_.as_ref().is_some_and(|e| escapes(e, l)),
        Clause::With(w) => {
            projection_escapes(&w.projection, l) || w.where_.as_ref().is_some_and(|e| escapes(e, l))
        }
        // `RETURN *` returns the list.
        Clause::Return(r) => r.star || projection_escapes(r, l),
    }
}

fn projection_escapes(p: &ast::Projection, l: &str) -> bool {
    p.items.iter().any(|it| escapes(&it.expr, l)) || projection_tail_escapes(p, l)
}

/// A variable or property map of the pattern that reads `l` beyond its identities.
fn pattern_escapes(p: &ast::PathPattern, l: &str) -> bool {
    pattern_reads(p, l, false, &|e| escapes(e, l))
}

/// Whether pattern `p` reads `name`: as the path's name, a relationship, a node (not when
/// `bare_node_ok` and the node has no labels or properties), or where `reads` holds of a
/// property map.
fn pattern_reads(
    p: &ast::PathPattern,
    name: &str,
    bare_node_ok: bool,
    reads: &dyn Fn(&Expr) -> bool,
) -> bool {
    let named = |v: &Option<ast::Ident>| v.as_ref().is_some_and(|v| v.name == name);
    let props = |m: &Option<Expr>| m.as_ref().is_some_and(reads);
    let node = |n: &ast::NodePattern| {
        let bare = n.labels.is_empty() && n.label_expr.is_none() && n.props.is_none();
        (named(&n.var) && !(bare_node_ok && bare)) || props(&n.props)
    };
    named(&p.name)
        || node(&p.start)
        || p.steps
            .iter()
            .any(|(r, n)| named(&r.var) || props(&r.props) || node(n))
}

fn is_var(e: &Expr, l: &str) -> bool {
    matches!(&e.kind, ExprKind::Variable(v) if v == l)
}

/// Whether `e` reads the list `l` for anything but its size, membership and its elements'
/// identities.
#[recursive::recursive]
fn escapes(e: &Expr, l: &str) -> bool {
    match &e.kind {
        ExprKind::Variable(v) => v == l,
        ExprKind::Function { name, args, .. }
            if name.eq_ignore_ascii_case("size") && args.len() == 1 =>
        {
            match &args[0].kind {
                _ if is_var(&args[0], l) => false,
                // The size of a comprehension over the list: its elements are read by the
                // filter and the projection, never returned.
                ExprKind::ListComprehension {
                    var,
                    list,
                    filter,
                    map,
                } if is_var(list, l) => [filter, map]
                    .into_iter()
                    .flatten()
                    .any(|x| escapes(x, l) || element_escapes(x, &var.name)),
                _ => escapes(&args[0], l),
            }
        }
        ExprKind::Binary(BinaryOp::In, x, list) if is_var(list, l) => escapes(x, l),
        ExprKind::Quantifier {
            var, list, pred, ..
        } if is_var(list, l) => escapes(pred, l) || element_escapes(pred, &var.name),
        ExprKind::PatternPredicate(p) => pattern_escapes(p, l),
        ExprKind::PatternComprehension {
            pattern,
            filter,
            map,
        } => {
            pattern_escapes(pattern, l)
                || filter.as_ref().is_some_and(|f| escapes(f, l))
                || escapes(map, l)
        }
        ExprKind::Subquery(_, q) => q.clauses.iter().any(|c| clause_escapes(c, l)),
        _ => e.children().into_iter().any(|c| escapes(c, l)),
    }
}

/// Whether the element variable `v` is read in `e` beyond its identity: anywhere but as a
/// bare node of a pattern (`(v)`, no labels or properties) or on the left of `IN`.
#[recursive::recursive]
fn element_escapes(e: &Expr, v: &str) -> bool {
    match &e.kind {
        ExprKind::Variable(x) => x == v,
        ExprKind::Binary(BinaryOp::In, x, list) if is_var(x, v) => element_escapes(list, v),
        ExprKind::PatternPredicate(p) => pattern_reads(p, v, true, &|e| element_escapes(e, v)),
        // A subquery or pattern comprehension reading the element: its whole record.
        ExprKind::PatternComprehension { .. } | ExprKind::Subquery(..) => true,
        _ => e.children().into_iter().any(|c| element_escapes(c, v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn calls(q: &str) -> Vec<String> {
        let sq = cypher::parse_query(q).unwrap().first;
        let i = sq
            .clauses
            .iter()
            .position(|c| matches!(c, Clause::With(_)))
            .unwrap();
        identity_collects(&sq.clauses, i)
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn size_membership_and_pattern_nodes_need_only_identities() {
        let ok = [
            "MATCH (f)-->(x) WITH x, collect(f) AS fs MATCH (x)-->(y) WHERE y IN fs RETURN count(*)",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN size(fs)",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs WHERE size(fs) > 1 RETURN x",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN size([p IN fs WHERE (p)-->(x)])",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN any(p IN fs WHERE p IN [x])",
            "MATCH (f)-->(x) WITH x, collect(DISTINCT f) AS fs RETURN x, size(fs) AS n ORDER BY n",
        ];
        for q in ok {
            assert_eq!(calls(q).len(), 1, "{q}");
        }
    }

    #[test]
    fn any_other_use_needs_whole_records() {
        let full = [
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN fs",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN *",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs WITH fs AS gs RETURN size(gs)",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN fs[0].name",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs UNWIND fs AS y RETURN count(y)",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN size([p IN fs | p.name])",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN size([p IN fs WHERE (p:A)-->(x)])",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN [p IN fs WHERE (p)-->(x)]",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN any(p IN fs WHERE p = x)",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs, collect(f)[0] AS g RETURN size(fs), g",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN COUNT { MATCH (y) WHERE y IN fs[0..1] }",
            "MATCH (f)-->(x) WITH x, collect(f) AS fs RETURN x ORDER BY fs",
            "MATCH (f)-->(x) WITH x, collect(f.name) AS fs RETURN size(fs)",
        ];
        for q in full {
            assert!(calls(q).is_empty(), "{q}");
        }
    }
}
