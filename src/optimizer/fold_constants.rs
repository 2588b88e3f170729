//! `FoldConstants` (seed 000 "Fold"): folds what provably keeps every value, null included.
//!
//! - an operator over literals only becomes one literal (`1 + 1` -> `2`; an evaluation error
//!   is left for execution to raise);
//! - identities that hand back their operand: `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`,
//!   `x / 1`, `x AND true`, `true AND x`, `x OR false`, `false OR x`, `NOT NOT x` -> `x`, only
//!   where the operand already has the result's type (so nothing is cast away);
//! - a Filter whose predicate folds to `true` disappears.
//!
//! Absorbing identities are never folded: `x * 0`, `x AND false`, `x OR true` keep `x`, whose
//! null (or error) is owed to the result. DataFusion's simplifier covers ordinary nodes too;
//! this pass also reaches the filters inside the graph operators, which DataFusion does not
//! see, and counts what it folds.
//!
//! ```text
//! before:  CsrExpand: ..., filter=b__age + Int64(0) > Int64(30) AND Boolean(true)
//! after:   CsrExpand: ..., filter=b__age > Int64(30)
//! ```

use super::RuleCounters;
use crate::operators::node::GraphNode;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{DFSchema, Result, ScalarValue};
use datafusion::logical_expr::expr_rewriter::NamePreserver;
use datafusion::logical_expr::simplify::SimplifyContext;
use datafusion::logical_expr::{
    BinaryExpr, Expr, ExprSchemable, Extension, Filter, LogicalPlan, Operator,
};
use datafusion::optimizer::simplify_expressions::ExprSimplifier;
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct FoldConstants {
    counters: Arc<RuleCounters>,
}

impl FoldConstants {
    pub fn with_counters(counters: Arc<RuleCounters>) -> Self {
        Self { counters }
    }
}

fn is_literal(e: &Expr) -> bool {
    matches!(e, Expr::Literal(..))
}

/// A numeric literal equal to `v` (0 or 1).
fn is_number(e: &Expr, v: i64) -> bool {
    let Expr::Literal(s, _) = e else {
        return false;
    };
    match s {
        ScalarValue::Int8(Some(x)) => *x as i64 == v,
        ScalarValue::Int16(Some(x)) => *x as i64 == v,
        ScalarValue::Int32(Some(x)) => *x as i64 == v,
        ScalarValue::Int64(Some(x)) => *x == v,
        ScalarValue::UInt8(Some(x)) => *x as i64 == v,
        ScalarValue::UInt16(Some(x)) => *x as i64 == v,
        ScalarValue::UInt32(Some(x)) => *x as i64 == v,
        ScalarValue::UInt64(Some(x)) => *x as i64 == v && *x <= i64::MAX as u64,
        ScalarValue::Float32(Some(x)) => *x as f64 == v as f64,
        ScalarValue::Float64(Some(x)) => *x == v as f64,
        _ => false,
    }
}

fn is_bool(e: &Expr, v: bool) -> bool {
    matches!(e, Expr::Literal(ScalarValue::Boolean(Some(b)), _) if *b == v)
}

/// Folds one expression bottom-up; `schema` types the columns it reads.
pub fn fold_expr(e: Expr, schema: &DFSchema, counters: &RuleCounters) -> Result<Transformed<Expr>> {
    e.transform_up(|e| {
        // The operand, when the identity keeps its type (no implicit cast is lost).
        let same_type = |x: &Expr, whole: &Expr| -> bool {
            match (x.get_type(schema), whole.get_type(schema)) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            }
        };
        // `op` over `l` and `r`: the operand an identity hands back (when it keeps the type),
        // or the literal a literal-only operation folds to.
        let fold_binary = |op: &Operator, l: &Expr, r: &Expr| -> Option<Expr> {
            let keep = match op {
                Operator::Plus if is_number(r, 0) => Some(l),
                Operator::Plus if is_number(l, 0) => Some(r),
                Operator::Minus if is_number(r, 0) => Some(l),
                Operator::Multiply if is_number(r, 1) => Some(l),
                Operator::Multiply if is_number(l, 1) => Some(r),
                Operator::Divide if is_number(r, 1) => Some(l),
                Operator::And if is_bool(r, true) => Some(l),
                Operator::And if is_bool(l, true) => Some(r),
                Operator::Or if is_bool(r, false) => Some(l),
                Operator::Or if is_bool(l, false) => Some(r),
                _ => None,
            };
            match keep {
                Some(x) if same_type(x, &e) => Some(x.clone()),
                _ if is_literal(l) && is_literal(r) => evaluate(&e),
                _ => None,
            }
        };
        // Checked integer arithmetic: the same identities (an identity can't overflow).
        let checked = crate::functions::checked_arith(&e);
        let folded = match &e {
            Expr::BinaryExpr(BinaryExpr { left, op, right }) => fold_binary(op, left, right),
            _ if checked.is_some() => {
                let (op, l, r) = checked.expect("checked");
                fold_binary(&op, l, r)
            }
            Expr::Not(inner) => match inner.as_ref() {
                Expr::Not(x) if same_type(x, &e) => Some(x.as_ref().clone()),
                x if is_literal(x) => evaluate(&e),
                _ => None,
            },
            _ => None,
        };
        Ok(match folded {
            Some(f) => {
                RuleCounters::add(&counters.folded_expressions, 1);
                Transformed::yes(f)
            }
            None => Transformed::no(e),
        })
    })
}

/// An expression over literals only, as one literal; `None` when evaluating it fails (the
/// error is execution's to raise, on the rows that reach it).
fn evaluate(e: &Expr) -> Option<Expr> {
    let simplifier = ExprSimplifier::new(SimplifyContext::default());
    match simplifier.simplify(e.clone()) {
        Ok(out @ Expr::Literal(..)) => Some(out),
        _ => None,
    }
}

/// The schema the node's expressions are typed against: its inputs' columns.
fn input_schema(plan: &LogicalPlan) -> Result<DFSchema> {
    let mut schema = DFSchema::empty();
    for i in plan.inputs() {
        schema.merge(i.schema());
    }
    Ok(schema)
}

impl OptimizerRule for FoldConstants {
    fn name(&self) -> &str {
        "fold_constants"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let c = self.counters.clone();
        plan.transform_up(|node| {
            // The graph operators keep their filters out of `expressions()`.
            if let LogicalPlan::Extension(Extension { node: ext }) = &node {
                if let Some(GraphNode::Expand(n)) = GraphNode::of(ext.as_ref()) {
                    // Filters read the operator's own output columns.
                    let schema = n.schema.as_ref().clone();
                    let mut m = n.clone();
                    let mut changed = false;
                    for f in [&mut m.target_filter, &mut m.edge_filter] {
                        if let Some(p) = f.take() {
                            let t = fold_expr(p, &schema, &c)?;
                            changed |= t.transformed;
                            *f = (!is_bool(&t.data, true)).then_some(t.data);
                        }
                    }
                    return Ok(if changed {
                        Transformed::yes(LogicalPlan::Extension(Extension { node: Arc::new(m) }))
                    } else {
                        Transformed::no(node)
                    });
                }
            }
            let schema = input_schema(&node)?;
            // An expression's name is its text (an aggregate's output column is named after
            // its call): folded ones keep the name the plan above refers to.
            let names = NamePreserver::new(&node);
            let t = node.map_expressions(|e| {
                let name = names.save(&e);
                Ok(fold_expr(e, &schema, &c)?.update_data(|e| name.restore(e)))
            })?;
            match t.data {
                LogicalPlan::Filter(Filter {
                    predicate, input, ..
                }) if is_bool(&predicate, true) => {
                    RuleCounters::add(&c.dropped_nodes, 1);
                    Ok(Transformed::yes(Arc::unwrap_or_clone(input)))
                }
                data => Ok(Transformed::new_transformed(data, t.transformed)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lowered plan (before any optimizer) of `q` on the sample graph, after this rule.
    fn fold(q: &str) -> (String, usize) {
        let plan = crate::optimizer::test_util::lowered(q);
        let counters = Arc::new(RuleCounters::default());
        let rule = FoldConstants::with_counters(counters.clone());
        let (text, _) = crate::optimizer::test_util::apply(rule, plan);
        let n = counters
            .folded_expressions
            .load(std::sync::atomic::Ordering::Relaxed);
        (text, n)
    }

    fn filter_line(plan: &str) -> String {
        plan.lines()
            .find(|l| l.trim_start().starts_with("Filter:"))
            .map(|l| l.trim().to_string())
            .unwrap_or_default()
    }

    #[test]
    fn folds_identities_and_literals() {
        let (plan, n) = fold(
            "MATCH (p:Person) WHERE p.age + 0 > 10 * 3 AND NOT NOT p.age * 1 < 60 AND true RETURN p.id",
        );
        insta::assert_snapshot!(filter_line(&plan), @"Filter: p__age > Int64(30) AND p__age < Int64(60)");
        assert_eq!(n, 5, "{plan}");
    }

    #[test]
    fn folded_aggregate_arguments_keep_their_names() {
        // The aggregate's output is named after its call, and the projection above reads it
        // by that name.
        let q = "MATCH (p:Person) RETURN sum(p.age + 0) AS s, max(1 * p.age)";
        let (plan, n) = fold(q);
        assert_eq!(n, 2, "{plan}");
        let rt = tokio::runtime::Runtime::new().unwrap();
        let rows = rt.block_on(async {
            let g = crate::Graph::sample().await.unwrap();
            let r = g.query(q, &crate::Params::new()).await.unwrap();
            crate::render_cell(r.batches[0].column(0).as_ref(), 0, false)
        });
        assert_eq!(rows, "219");
    }

    #[test]
    fn a_filter_folding_to_true_disappears() {
        let (plan, _) = fold("MATCH (p:Person) WHERE 1 < 2 RETURN p.id");
        assert!(!plan.contains("Filter:"), "{plan}");
    }

    #[test]
    fn absorbing_identities_are_not_folded() {
        // `x * 0` is null for a null x, `x AND false` too: both must stay.
        let (plan, n) =
            fold("MATCH (p:Person) WHERE p.age * 0 = 0 AND (p.age > 1 AND false) RETURN p.id");
        insta::assert_snapshot!(filter_line(&plan), @"Filter: cypher_mul(p__age, Int64(0)) = Int64(0) AND p__age > Int64(1) AND Boolean(false)");
        assert_eq!(n, 0, "{plan}");
    }

    #[test]
    fn an_identity_that_would_drop_a_cast_is_kept() {
        // Integer age + float 0.0 is a float: handing back the integer would change the type.
        let (plan, _) = fold("MATCH (p:Person) WHERE p.age + 0.0 > 1 RETURN p.id");
        assert!(filter_line(&plan).contains("+ Float64(0)"), "{plan}");
    }
}
