//! User names vs the planner's own. Plan columns are named after variables and properties
//! (`p__firstName`, `r__#eid`) and the planner adds names of its own (`__anon1`, `__agg0`,
//! `__ret0`); a user can write any name in backquotes, so before lowering every variable name
//! of the query is escaped into a form that can't collide with any of them:
//!
//! - a name of letters and digits with single inner underscores (`a`, `first_name`) is kept;
//! - any other name becomes `#` followed by the name with every character that is not a
//!   letter or digit written as `%XX` per UTF-8 byte (`__anon1` -> `#%5F%5Fanon1`).
//!
//! An escaped name never contains `__`, never starts or ends with `_`, and contains `#` only
//! as its first character, so `{var}__{prop}` (with the property escaped the same way, see
//! `scope::prop_col`) splits in one way only and never equals an internal name, all of which
//! start with `__` or continue with `__#`. Result column names are the user's text again
//! ([`unescape`]).

use cypher::ast::{self, ExprKind};

fn is_plain(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_alphanumeric() || c == '_')
        && !name.starts_with('_')
        && !name.ends_with('_')
        && !name.contains("__")
}

/// The planner's form of a user name.
pub fn escape(name: &str) -> String {
    if is_plain(name) {
        return name.to_string();
    }
    let mut out = String::from("#");
    for c in name.chars() {
        if c.is_alphanumeric() {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// The user's name back from [`escape`]'s form (other names are returned as they are).
pub fn unescape(name: &str) -> String {
    let Some(rest) = name.strip_prefix('#') else {
        return name.to_string();
    };
    let mut bytes = Vec::new();
    let mut chars = rest.char_indices();
    while let Some((i, c)) = chars.next() {
        if c == '%' {
            match u8::from_str_radix(rest.get(i + 1..i + 3).unwrap_or(""), 16) {
                Ok(b) => {
                    bytes.push(b);
                    chars.next();
                    chars.next();
                }
                Err(_) => return name.to_string(),
            }
        } else {
            let mut buf = [0u8; 4];
            bytes.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    String::from_utf8(bytes).unwrap_or_else(|_| name.to_string())
}

/// `text` with every backquoted escaped name (`` `#a%20b` ``) turned back into the user's.
/// `e` with the variable names its message quotes as the user wrote them.
pub fn unescape_error(e: crate::Error) -> crate::Error {
    match e {
        crate::Error::Semantic {
            kind,
            message,
            span,
        } => crate::Error::semantic(kind, unescape_quoted(&message), span),
        other => other,
    }
}

pub fn unescape_quoted(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    parts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            if i % 2 == 1 && p.starts_with('#') {
                unescape(p)
            } else {
                p.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("`")
}

/// Escapes every variable name of `q` (pattern variables, expression variables, aliases).
/// WITH items that pass a variable on unaliased get their (escaped) name as an alias, so
/// the name they bind never depends on how the variable was written.
pub fn escape_query(q: &mut ast::Query) {
    escape_single(&mut q.first);
    for (_, sq) in &mut q.unions {
        escape_single(sq);
    }
}

fn escape_single(sq: &mut ast::SingleQuery) {
    for c in &mut sq.clauses {
        match c {
            ast::Clause::Match(m) => {
                m.patterns.iter_mut().for_each(escape_pattern);
                if let Some(w) = &mut m.where_ {
                    escape_expr(w);
                }
            }
            ast::Clause::Unwind(u) => {
                escape_expr(&mut u.expr);
                u.alias.name = escape(&u.alias.name);
            }
            ast::Clause::With(w) => {
                for it in &mut w.projection.items {
                    if it.alias.is_none() {
                        if let ExprKind::Variable(v) = &it.expr.kind {
                            it.alias = Some(ast::Ident::new(v.clone(), it.expr.span));
                        }
                    }
                }
                escape_projection(&mut w.projection);
                if let Some(e) = &mut w.where_ {
                    escape_expr(e);
                }
            }
            ast::Clause::Return(p) => escape_projection(p),
            ast::Clause::Call(c) => {
                c.args.iter_mut().for_each(escape_expr);
                // Without YIELD a known procedure binds each output under its own name.
                if c.yields.is_none() {
                    if let Some(p) = crate::functions::procedures::Procedure::lookup(&c.procedure) {
                        c.yields = Some(
                            (p.outputs().iter())
                                .map(|o| ast::YieldItem {
                                    field: ast::Ident::new(o.to_string(), c.procedure_span),
                                    alias: None,
                                })
                                .collect(),
                        );
                    }
                }
                // The field is the procedure's name for an output; the variable is the user's.
                for y in c.yields.iter_mut().flatten() {
                    let var = y.var().clone();
                    y.alias = Some(ast::Ident::new(escape(&var.name), var.span));
                }
                if let Some(w) = &mut c.where_ {
                    escape_expr(w);
                }
            }
        }
    }
}

fn escape_projection(p: &mut ast::Projection) {
    for it in &mut p.items {
        escape_expr(&mut it.expr);
        if let Some(a) = &mut it.alias {
            a.name = escape(&a.name);
        }
    }
    for s in &mut p.order_by {
        escape_expr(&mut s.expr);
    }
    for e in p.skip.iter_mut().chain(p.limit.iter_mut()) {
        escape_expr(e);
    }
}

fn escape_pattern(p: &mut ast::PathPattern) {
    escape_ident(&mut p.name);
    escape_node(&mut p.start);
    for (r, n) in &mut p.steps {
        escape_ident(&mut r.var);
        if let Some(e) = &mut r.props {
            escape_expr(e);
        }
        escape_node(n);
    }
}

fn escape_node(n: &mut ast::NodePattern) {
    escape_ident(&mut n.var);
    if let Some(e) = &mut n.props {
        escape_expr(e);
    }
}

fn escape_ident(i: &mut Option<ast::Ident>) {
    if let Some(i) = i {
        i.name = escape(&i.name);
    }
}

#[recursive::recursive]
fn escape_expr(e: &mut ast::Expr) {
    // Iterative: expressions may be deep.
    let mut stack = vec![e];
    while let Some(x) = stack.pop() {
        match &mut x.kind {
            ExprKind::Variable(v) => *v = escape(v),
            ExprKind::Literal(_) | ExprKind::Param(_) | ExprKind::CountStar => {}
            ExprKind::Property(t, _) | ExprKind::Unary(_, t) | ExprKind::HasLabels(t, _) => {
                stack.push(t)
            }
            ExprKind::IsNull { expr, .. } => stack.push(expr),
            ExprKind::List(xs) => stack.extend(xs.iter_mut()),
            ExprKind::Map(kv) => stack.extend(kv.iter_mut().map(|(_, v)| v)),
            ExprKind::Binary(_, l, r) | ExprKind::Index(l, r) => {
                stack.push(l);
                stack.push(r);
            }
            ExprKind::Chain(first, rest) => {
                stack.push(first);
                stack.extend(rest.iter_mut().map(|(_, e)| e));
            }
            ExprKind::Function { args, .. } => stack.extend(args.iter_mut()),
            ExprKind::Case {
                operand,
                whens,
                else_,
            } => {
                if let Some(o) = operand {
                    stack.push(o);
                }
                for (w, t) in whens {
                    stack.push(w);
                    stack.push(t);
                }
                if let Some(x) = else_ {
                    stack.push(x);
                }
            }
            ExprKind::ListComprehension {
                var,
                list,
                filter,
                map,
            } => {
                var.name = escape(&var.name);
                stack.push(list);
                stack.extend(filter.iter_mut().map(|b| b.as_mut()));
                stack.extend(map.iter_mut().map(|b| b.as_mut()));
            }
            ExprKind::Quantifier {
                var, list, pred, ..
            } => {
                var.name = escape(&var.name);
                stack.push(list);
                stack.push(pred);
            }
            ExprKind::Reduce {
                acc,
                init,
                var,
                list,
                body,
            } => {
                acc.name = escape(&acc.name);
                var.name = escape(&var.name);
                stack.push(init);
                stack.push(list);
                stack.push(body);
            }
            ExprKind::PatternPredicate(p) => escape_pattern(p),
            ExprKind::PatternComprehension {
                pattern,
                filter,
                map,
            } => {
                escape_pattern(pattern);
                stack.extend(filter.iter_mut().map(|b| b.as_mut()));
                stack.push(map);
            }
            ExprKind::Subquery(_, q) => escape_single(q),
            ExprKind::Slice(t, a, b) => {
                stack.push(t);
                if let Some(a) = a {
                    stack.push(a);
                }
                if let Some(b) = b {
                    stack.push(b);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_names_round_trip_and_never_look_internal() {
        for n in [
            "a",
            "first_name",
            "x1",
            "ü",
            "__anon1",
            "_",
            "a__b",
            "a_",
            "#key",
            "a.b",
            "two words",
            "x__#src",
            "",
            "%41",
            "名前",
        ] {
            let e = escape(n);
            assert_eq!(unescape(&e), n, "{n}");
            assert!(!e.contains("__"), "{e}");
            assert!(!e.starts_with('_') && !e.ends_with('_'), "{e}");
            assert!(!e.chars().skip(1).any(|c| c == '#'), "{e}");
        }
        assert_eq!(escape("first_name"), "first_name");
        assert_eq!(
            unescape_quoted(&format!("Variable `{}` not defined, `p`", escape("a b"))),
            "Variable `a b` not defined, `p`"
        );
        assert_ne!(escape("%41"), escape("A"));
        assert_ne!(escape("a__b"), escape("a_b"));
    }
}
