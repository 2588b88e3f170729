//! `SelectLabelBranch`: a filter keeping one label of a variable whose labels were branched
//! reads that label's branch alone.
//!
//! A MATCH over a union label (`(m:Message)`, Comment or Post) is planned as one branch per
//! label, their rows a UNION ALL each naming its label in a constant column. A later clause
//! that branches on the same variable (an OPTIONAL MATCH from `m`) reads those rows once (a
//! shared subplan) and keeps each label's rows for its own branch by a filter on that column.
//! The rows a filter keeps are exactly the rows of the branch that names its label, so it
//! reads that branch directly: each label's clauses then form one chain, which the counting
//! and intersection rules can see whole, and the other branches are not read for it.
//!
//! ```text
//! before:
//!   Filter: m__#label = Utf8("Comment:Message")
//!     SharedSubplan: id=0, consumers=2, same rows for every reader
//!       Union
//!         Projection: Utf8("Comment:Message") AS m__#label, m__id
//!           <Comment branch>
//!         Projection: Utf8("Post:Message") AS m__#label, m__id
//!           <Post branch>
//! after:
//!   Projection: Utf8("Comment:Message") AS m__#label, m__id
//!     <Comment branch>
//! ```
//!
//! Column-only projections between the filter and the shared rows are kept over the branch,
//! and other conjuncts of the filter above it. Must not fire when a branch's rows may
//! differ between two evaluations (a LIMIT, a window, a volatile function: the readers of the
//! shared rows must then see the same ones), when the filter names a label no branch or
//! several branches give, or when a branch does not give its label as a constant.

use crate::operators::shared::SharedSubplan;
use datafusion::common::tree_node::Transformed;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::utils::{conjunction, split_conjunction};
use datafusion::logical_expr::{Expr, LogicalPlan, LogicalPlanBuilder, Operator};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};

#[derive(Debug, Default)]
pub struct SelectLabelBranch;

impl SelectLabelBranch {
    pub fn new() -> Self {
        Self
    }
}

impl OptimizerRule for SelectLabelBranch {
    fn name(&self) -> &str {
        "select_label_branch"
    }

    fn supports_rewrite(&self) -> bool {
        true
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        plan.transform_down_with_subqueries(|node| match select(&node)? {
            Some(branch) => Ok(Transformed::yes(branch)),
            None => Ok(Transformed::no(node)),
        })
    }
}

/// `column = constant` (either way round): the column and the constant.
fn column_equals_constant(e: &Expr) -> Option<(&str, &ScalarValue)> {
    let Expr::BinaryExpr(b) = e else { return None };
    if b.op != Operator::Eq {
        return None;
    }
    match (b.left.as_ref(), b.right.as_ref()) {
        (Expr::Column(c), Expr::Literal(v, _)) | (Expr::Literal(v, _), Expr::Column(c)) => {
            Some((c.name.as_str(), v))
        }
        _ => None,
    }
}

/// The constant a branch of a union gives its column `name`: the branch is a projection
/// computing it as a literal.
fn constant_of<'a>(branch: &'a LogicalPlan, name: &str) -> Option<&'a ScalarValue> {
    let LogicalPlan::Projection(p) = branch else {
        return None;
    };
    p.expr.iter().find_map(|e| match e {
        Expr::Alias(a) if a.name == name => match a.expr.as_ref() {
            Expr::Literal(v, _) => Some(v),
            _ => None,
        },
        _ => None,
    })
}

/// `node` (a filter over the shared UNION ALL of label branches) as the one branch its
/// equality on the label column keeps, its other conjuncts above it.
fn select(node: &LogicalPlan) -> Result<Option<LogicalPlan>> {
    let LogicalPlan::Filter(filter) = node else {
        return Ok(None);
    };
    // (Column-only projections between them, which DataFusion's pruning puts there, are
    // put back over the branch.)
    let mut projections = Vec::new();
    let mut below = filter.input.as_ref();
    while let LogicalPlan::Projection(p) = below {
        if !p.expr.iter().all(|e| matches!(e, Expr::Column(_))) {
            return Ok(None);
        }
        projections.push(p.expr.clone());
        below = p.input.as_ref();
    }
    let input = match super::prune_shared_subplans::shared_of(below) {
        Some(s) if s.after.is_none() => &s.input,
        _ => return Ok(None),
    };
    let LogicalPlan::Union(union) = input else {
        return Ok(None);
    };
    if !SharedSubplan::deterministic(input) {
        return Ok(None);
    }
    let conjuncts = split_conjunction(&filter.predicate);
    for (i, c) in conjuncts.iter().enumerate() {
        let Some((name, value)) = column_equals_constant(c) else {
            continue;
        };
        let constants: Option<Vec<&ScalarValue>> =
            union.inputs.iter().map(|b| constant_of(b, name)).collect();
        let Some(constants) = constants else { continue };
        let mut kept = union
            .inputs
            .iter()
            .zip(constants)
            .filter(|(_, v)| *v == value);
        let (Some((branch, _)), None) = (kept.next(), kept.next()) else {
            continue;
        };
        // The branch's columns are the union's, in its order: it stands in its place.
        if branch.schema().field_names() != input.schema().field_names() {
            return Ok(None);
        }
        let rest: Vec<Expr> = (conjuncts.iter().enumerate())
            .filter(|(j, _)| *j != i)
            .map(|(_, e)| (*e).clone())
            .collect();
        let mut plan = LogicalPlanBuilder::from(branch.as_ref().clone());
        for exprs in projections.into_iter().rev() {
            plan = plan.project(exprs)?;
        }
        if let Some(p) = conjunction(rest) {
            plan = plan.filter(p)?;
        }
        return Ok(Some(plan.build()?));
    }
    Ok(None)
}
