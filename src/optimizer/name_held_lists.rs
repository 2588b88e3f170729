//! `NameHeldLists` (physical): a long list (or map, or string) parameter shows by its name in
//! projections, filters, sorts and join filters, not as all of its values (our hop
//! operators show theirs by name when they are displayed, `held::shown`).
//!
//! Logical plans name such a list by a variable (`$xs#7`, see `functions::held`); physical
//! planning makes the variable a literal of the whole list. A projection writes each of its
//! expressions into the labels of its metrics every time it runs, and EXPLAIN prints every
//! filter's: for ten million integers, seconds and hundreds of megabytes per run. The rule
//! puts a `HeldValue` (the same list, shown as `$xs#7`) in the literal's place.
//!
//! ```text
//! before:                                   after:
//! ProjectionExec: expr=[cypher_in(x, [0,    ProjectionExec: expr=[cypher_in(x, $xs#7)]
//!   3, 6, ... ten million values])]
//! ```
//!
//! Must not fire: on a literal list or map equal to a held one but not the same array (one
//! the query wrote), nor on a plan when nothing is held. A string is copied where physical
//! planning makes the variable a literal, so a string of 64 KiB or more is matched by value:
//! one the query wrote equal to a held parameter shows by that name (the same value).

use crate::functions::held::{named, Held};
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_expr::projection::ProjectionExpr;
use datafusion::physical_expr::{LexOrdering, PhysicalSortExpr};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::{FilterExec, FilterExecBuilder};
use datafusion::physical_plan::joins::utils::JoinFilter;
use datafusion::physical_plan::joins::{
    HashJoinExec, NestedLoopJoinExec, NestedLoopJoinExecBuilder,
};
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::sorts::sort::SortExec;
use datafusion::physical_plan::sorts::sort_preserving_merge::SortPreservingMergeExec;
use datafusion::physical_plan::ExecutionPlan;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct NameHeldLists;

impl PhysicalOptimizerRule for NameHeldLists {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if !Held::any() {
            return Ok(plan);
        }
        plan.transform_up(|p| {
            if let Some(proj) = p.downcast_ref::<ProjectionExec>() {
                let exprs = proj
                    .expr()
                    .iter()
                    .map(|e| {
                        Ok(named(&e.expr)?.update_data(|expr| ProjectionExpr {
                            expr,
                            alias: e.alias.clone(),
                        }))
                    })
                    .collect::<Result<Vec<_>>>()?;
                if exprs.iter().any(|e| e.transformed) {
                    let exprs = exprs.into_iter().map(|e| e.data);
                    let renamed = ProjectionExec::try_new(exprs, proj.input().clone())?;
                    return Ok(Transformed::yes(Arc::new(renamed) as Arc<dyn ExecutionPlan>));
                }
            } else if let Some(sort) = p.downcast_ref::<SortExec>() {
                if let Some(ordering) = named_ordering(sort.expr())? {
                    let renamed = SortExec::new(ordering, sort.input().clone())
                        .with_fetch(sort.fetch())
                        .with_preserve_partitioning(sort.preserve_partitioning());
                    return Ok(Transformed::yes(Arc::new(renamed) as Arc<dyn ExecutionPlan>));
                }
            } else if let Some(merge) = p.downcast_ref::<SortPreservingMergeExec>() {
                if let Some(ordering) = named_ordering(merge.expr())? {
                    let renamed = SortPreservingMergeExec::new(ordering, merge.input().clone())
                        .with_fetch(merge.fetch());
                    return Ok(Transformed::yes(Arc::new(renamed) as Arc<dyn ExecutionPlan>));
                }
            } else if let Some(join) = p.downcast_ref::<HashJoinExec>() {
                if let Some(filter) = named_filter(join.filter())? {
                    let renamed = join.builder().with_filter(Some(filter)).build()?;
                    return Ok(Transformed::yes(Arc::new(renamed) as Arc<dyn ExecutionPlan>));
                }
            } else if let Some(join) = p.downcast_ref::<NestedLoopJoinExec>() {
                if let Some(filter) = named_filter(join.filter())? {
                    let renamed = NestedLoopJoinExecBuilder::from(join)
                        .with_filter(Some(filter))
                        .build()?;
                    return Ok(Transformed::yes(Arc::new(renamed) as Arc<dyn ExecutionPlan>));
                }
            } else if let Some(filter) = p.downcast_ref::<FilterExec>() {
                let predicate = named(filter.predicate())?;
                if predicate.transformed {
                    let renamed = FilterExecBuilder::from(filter)
                        .with_predicate(predicate.data)
                        .build()?;
                    return Ok(Transformed::yes(Arc::new(renamed) as Arc<dyn ExecutionPlan>));
                }
            }
            Ok(Transformed::no(p))
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "name_held_lists"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// A join's `filter` with its held lists named; `None` when it holds none.
fn named_filter(filter: Option<&JoinFilter>) -> Result<Option<JoinFilter>> {
    let Some(f) = filter else { return Ok(None) };
    let e = named(f.expression())?;
    Ok(e.transformed
        .then(|| JoinFilter::new(e.data, f.column_indices().to_vec(), f.schema().clone())))
}

/// `ordering` with its held lists named; `None` when it holds none.
fn named_ordering(ordering: &LexOrdering) -> Result<Option<LexOrdering>> {
    let exprs = ordering
        .iter()
        .map(|s| {
            Ok(named(&s.expr)?.update_data(|expr| PhysicalSortExpr {
                expr,
                options: s.options,
            }))
        })
        .collect::<Result<Vec<_>>>()?;
    if !exprs.iter().any(|e| e.transformed) {
        return Ok(None);
    }
    Ok(LexOrdering::new(exprs.into_iter().map(|e| e.data)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::common::ScalarValue;
    use datafusion::physical_expr::expressions::{col, lit};
    use datafusion::physical_expr::PhysicalExpr;
    use datafusion::physical_plan::displayable;
    use datafusion::physical_plan::empty::EmptyExec;

    fn list(xs: &[i64]) -> ScalarValue {
        let items: Vec<ScalarValue> = xs.iter().map(|&x| ScalarValue::Int64(Some(x))).collect();
        ScalarValue::List(ScalarValue::new_list_nullable(&items, &DataType::Int64))
    }

    #[test]
    fn held_lists_in_projections_and_filters_show_by_name() {
        let schema = Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)]));
        let input: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(schema.clone()));
        let value = list(&[98765, 43210]);
        let held = Held::new("xs", value.clone());
        // Equal values, another array: written by the query, shown as written.
        let written = list(&[98765, 43210]);
        let is_not_null = |v: &ScalarValue| -> Arc<dyn PhysicalExpr> {
            Arc::new(datafusion::physical_expr::expressions::IsNotNullExpr::new(
                lit(v.clone()),
            ))
        };
        let filter: Arc<dyn ExecutionPlan> =
            Arc::new(FilterExec::try_new(is_not_null(&value), input.clone()).unwrap());
        let exprs = vec![
            ProjectionExpr::new(col("x", &schema).unwrap(), "x".to_string()),
            ProjectionExpr::new(lit(value.clone()), "held".to_string()),
            ProjectionExpr::new(lit(written), "written".to_string()),
        ];
        let projected: Arc<dyn ExecutionPlan> =
            Arc::new(ProjectionExec::try_new(exprs, filter).unwrap());
        // Ordered by an expression over the list, the first 3 (a top-k).
        let order = LexOrdering::new([PhysicalSortExpr::new_default(is_not_null(&value))]).unwrap();
        let plan: Arc<dyn ExecutionPlan> =
            Arc::new(SortExec::new(order, projected).with_fetch(Some(3)));
        let after = NameHeldLists
            .optimize(plan.clone(), &ConfigOptions::default())
            .unwrap();
        let text = displayable(after.as_ref()).indent(true).to_string();
        assert_eq!(text.matches("98765").count(), 1, "{text}");
        assert_eq!(text.matches("$xs#").count(), 3, "{text}");
        assert!(text.contains("TopK(fetch=3)"), "{text}");
        assert_eq!(after.schema(), plan.schema());
        // The name gives the list.
        let proj = after.children()[0]
            .downcast_ref::<ProjectionExec>()
            .unwrap();
        let one = arrow::array::RecordBatch::new_empty(schema.clone());
        match proj.expr()[1].expr.evaluate(&one).unwrap() {
            datafusion::logical_expr::ColumnarValue::Scalar(v) => assert_eq!(v, value),
            other => panic!("{other:?}"),
        }
        // A join's filter, and a hop's filter as it is displayed.
        let filter = JoinFilter::new(is_not_null(&value), vec![], Arc::new(Schema::empty()));
        let join: Arc<dyn ExecutionPlan> = Arc::new(
            NestedLoopJoinExec::try_new(
                input.clone(),
                input.clone(),
                Some(filter),
                &datafusion::common::JoinType::Inner,
                None,
            )
            .unwrap(),
        );
        let named_join = NameHeldLists
            .optimize(join, &ConfigOptions::default())
            .unwrap();
        let text = displayable(named_join.as_ref()).indent(true).to_string();
        assert!(
            text.contains("filter=$xs#") && !text.contains("98765"),
            "{text}"
        );
        assert!(crate::functions::held::shown(&is_not_null(&value)).starts_with("$xs#"));
        // Let go: the plan keeps its literals.
        drop(held);
        let kept = NameHeldLists
            .optimize(plan, &ConfigOptions::default())
            .unwrap();
        let text = displayable(kept.as_ref()).indent(true).to_string();
        assert_eq!(text.matches("98765").count(), 4, "{text}");
    }
}
