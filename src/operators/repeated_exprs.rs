//! The subexpressions a filter of a graph operator computes more than once, found so that
//! the operator computes each once per batch (`datetime({epochMillis: f.birthday}).month = 5
//! AND datetime({epochMillis: f.birthday}).day >= 21 OR ...` builds one datetime a row, not
//! four). DataFusion's own elimination works on plan nodes; a filter inside our operators
//! is evaluated by the operator, so it does this itself.

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::{Column, Result};
use datafusion::logical_expr::{BinaryExpr, Expr, Operator};
use std::collections::HashMap;

/// The subexpressions of `pred` worth computing once: deterministic, reading a column (not
/// a column or a constant themselves), occurring at least twice, and at least once where
/// every row evaluates it anyway (not only right of an AND / OR nor in a CASE branch, so
/// that computing it for every row adds neither work nor errors). Each comes after those
/// it contains.
pub fn repeated(pred: &Expr) -> Vec<Expr> {
    let mut seen: HashMap<&Expr, (usize, bool)> = HashMap::new();
    visit(pred, true, &mut seen);
    let mut out: Vec<(&Expr, usize)> = seen
        .into_iter()
        .filter(|(_, (n, always))| *n >= 2 && *always)
        .map(|(e, _)| (e, size(e)))
        .collect();
    // Smaller first (a containing expression is larger); ties by text, for a stable order.
    out.sort_by_cached_key(|(e, n)| (*n, e.to_string()));
    out.into_iter().map(|(e, _)| e.clone()).collect()
}

/// `e` with each of `names`' expressions (largest first where one holds another) replaced by
/// a column of its name.
pub fn replace(e: Expr, names: &HashMap<Expr, String>) -> Result<Expr> {
    Ok(e.transform_down(|x| {
        Ok(match names.get(&x) {
            Some(name) => Transformed::new(
                Expr::Column(Column::new_unqualified(name)),
                true,
                TreeNodeRecursion::Jump,
            ),
            None => Transformed::no(x),
        })
    })?
    .data)
}

fn visit<'a>(e: &'a Expr, always: bool, seen: &mut HashMap<&'a Expr, (usize, bool)>) {
    if candidate(e) {
        let s = seen.entry(e).or_default();
        s.0 += 1;
        s.1 |= always;
    }
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) if is_lazy(op) => {
            visit(left, always, seen);
            visit(right, false, seen);
        }
        // Only the operand and the first condition are evaluated for every row.
        Expr::Case(c) => {
            if let Some(x) = &c.expr {
                visit(x, always, seen);
            }
            for (i, (when, then)) in c.when_then_expr.iter().enumerate() {
                visit(when, always && i == 0, seen);
                visit(then, false, seen);
            }
            if let Some(x) = &c.else_expr {
                visit(x, false, seen);
            }
        }
        _ => {
            let _ = e.apply_children(|c| {
                visit(c, always, seen);
                Ok(TreeNodeRecursion::Continue)
            });
        }
    }
}

fn is_lazy(op: &Operator) -> bool {
    matches!(op, Operator::And | Operator::Or)
}

fn candidate(e: &Expr) -> bool {
    !matches!(
        e,
        Expr::Column(_)
            | Expr::Literal(..)
            | Expr::Alias(_)
            | Expr::ScalarVariable(..)
            | Expr::Placeholder(_)
    ) && !e.column_refs().is_empty()
        && !e.is_volatile()
}

fn size(e: &Expr) -> usize {
    let mut n = 0;
    let _ = e.apply(|_| {
        n += 1;
        Ok(TreeNodeRecursion::Continue)
    });
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::functions::expr_fn::{abs, sqrt};
    use datafusion::logical_expr::{col, lit, when};

    #[test]
    fn finds_what_repeats_where_every_row_computes_it() {
        let x = || sqrt(abs(col("a")));
        // (sqrt(abs(a)) > 1 AND sqrt(abs(a)) < 3) OR abs(a) = 7
        let pred = x()
            .gt(lit(1.0))
            .and(x().lt(lit(3.0)))
            .or(abs(col("a")).eq(lit(7.0)));
        assert_eq!(repeated(&pred), vec![abs(col("a")), x()]);

        // Repeated only right of an AND: not worth computing for every row.
        let right_only = col("b")
            .gt(lit(0))
            .and(x().gt(lit(1.0)).or(x().lt(lit(0.5))));
        assert_eq!(repeated(&right_only), vec![]);

        // In CASE branches: only the first condition counts as evaluated for every row.
        let case = when(x().gt(lit(1.0)), x()).otherwise(lit(0.0)).unwrap();
        assert_eq!(
            repeated(&case.clone().gt(lit(0.0))),
            vec![abs(col("a")), x()]
        );
        let branches = when(col("b").gt(lit(1)), x()).otherwise(x()).unwrap();
        assert_eq!(repeated(&branches), vec![]);

        // Columns and constants are not computed.
        assert_eq!(
            repeated(&col("a").gt(lit(1)).and(col("a").lt(lit(3)))),
            vec![]
        );
    }

    #[test]
    fn replaces_the_largest_first() {
        let x = sqrt(abs(col("a")));
        let names: HashMap<Expr, String> = [
            (abs(col("a")), "s0".to_string()),
            (x.clone(), "s1".to_string()),
        ]
        .into_iter()
        .collect();
        let pred = x.clone().gt(lit(1.0)).and(abs(col("a")).lt(lit(3.0)));
        assert_eq!(
            replace(pred, &names).unwrap(),
            col("s1").gt(lit(1.0)).and(col("s0").lt(lit(3.0)))
        );
        // A larger one computed from the smaller one's column.
        assert_eq!(
            replace(
                x,
                &[(abs(col("a")), "s0".to_string())].into_iter().collect()
            )
            .unwrap(),
            sqrt(col("s0"))
        );
    }
}
