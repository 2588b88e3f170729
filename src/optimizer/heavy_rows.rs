//! `KeepHeavyRowsApart` (physical): no batch of long paths is gathered up to a row count.
//!
//! DataFusion's round-robin repartition and its filter put small batches together until they
//! hold `batch_size` rows (8192). A traversal without a short upper bound (`-[:KNOWS*]-`)
//! hands out rows that each carry a whole path (its edge ids, and with a named path every
//! node and relationship on it), in batches sized by path steps, not rows; 8192 such rows
//! gathered can hold tens of millions of steps, the memory of which no pool tracks. Above such
//! a traversal, up to the first operator that consumes its rows (an aggregate, a sort, a
//! join), this rule drops round-robin repartitions and stops filters from gathering.
//!
//! ```text
//! before:                                      after:
//! AggregateExec: mode=Partial                  AggregateExec: mode=Partial
//!   RepartitionExec: RoundRobinBatch(2)          FilterExec: ... (batch_size=1)
//!     FilterExec: ...                              VarLengthExec: length=1..
//!       VarLengthExec: length=1..
//! ```
//!
//! Must not fire: above a traversal of at most [`HEAVY_STEPS`] steps (its rows are small, and
//! the repartition spreads the work after it over the cores), above one that only finds
//! distinct ends (one row per node), and below the first consuming operator.

use crate::operators::var_length_exec::VarLengthExec;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::filter::FilterExec;
use datafusion::physical_plan::projection::ProjectionExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{ExecutionPlan, Partitioning};
use std::sync::Arc;

/// Longest paths whose rows may be gathered.
pub const HEAVY_STEPS: u64 = 64;

#[derive(Debug, Default)]
pub struct KeepHeavyRowsApart;

impl PhysicalOptimizerRule for KeepHeavyRowsApart {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(plan
            .transform_up(|p| {
                let Some(input) = p.children().first().map(|c| (*c).clone()) else {
                    return Ok(Transformed::no(p));
                };
                if !carries_heavy_rows(&input) {
                    return Ok(Transformed::no(p));
                }
                if let Some(r) = p.downcast_ref::<RepartitionExec>() {
                    if matches!(r.partitioning(), Partitioning::RoundRobinBatch(_)) {
                        return Ok(Transformed::yes(input));
                    }
                }
                if let Some(f) = p.downcast_ref::<FilterExec>() {
                    if f.batch_size() > 1 {
                        return Ok(Transformed::yes(Arc::new(f.with_batch_size(1)?)));
                    }
                }
                Ok(Transformed::no(p))
            })?
            .data)
    }

    fn name(&self) -> &str {
        "keep_heavy_rows_apart"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Whether `plan`'s rows come from a traversal of long paths through operators that hand
/// them on one by one.
fn carries_heavy_rows(plan: &Arc<dyn ExecutionPlan>) -> bool {
    if let Some(v) = plan.downcast_ref::<VarLengthExec>() {
        return v.emits_long_paths(HEAVY_STEPS);
    }
    let passes_rows = plan.downcast_ref::<ProjectionExec>().is_some()
        || plan.downcast_ref::<FilterExec>().is_some()
        || plan
            .downcast_ref::<RepartitionExec>()
            .is_some_and(|r| matches!(r.partitioning(), Partitioning::RoundRobinBatch(_)));
    passes_rows
        && plan
            .children()
            .first()
            .is_some_and(|c| carries_heavy_rows(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::hand_built::{find, physical, traversal_of};
    use datafusion::physical_expr::expressions::{col, lit};
    use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode, PhysicalGroupBy};
    use datafusion::physical_plan::displayable;

    /// A filter over a round-robin repartition over the traversal of `length` of the
    /// hand-built graph, with an aggregate and another repartition above when `consumed`.
    async fn plan(length: (u64, Option<u64>), consumed: bool) -> Arc<dyn ExecutionPlan> {
        let (p, _) = physical(&traversal_of(length)).await;
        let walk = find(&p, "VarLengthExec");
        let spread: Arc<dyn ExecutionPlan> = Arc::new(
            RepartitionExec::try_new(walk.clone(), Partitioning::RoundRobinBatch(2)).unwrap(),
        );
        let predicate = datafusion::physical_expr::expressions::binary(
            col("b__age", &walk.schema()).unwrap(),
            datafusion::logical_expr::Operator::Gt,
            lit(35i64),
            &walk.schema(),
        )
        .unwrap();
        let filter: Arc<dyn ExecutionPlan> =
            Arc::new(FilterExec::try_new(predicate, spread).unwrap());
        if !consumed {
            return filter;
        }
        let group = PhysicalGroupBy::new_single(vec![]);
        let agg: Arc<dyn ExecutionPlan> = Arc::new(
            AggregateExec::try_new(
                AggregateMode::Partial,
                group,
                vec![],
                vec![],
                filter.clone(),
                filter.schema(),
            )
            .unwrap(),
        );
        Arc::new(RepartitionExec::try_new(agg, Partitioning::RoundRobinBatch(2)).unwrap())
    }

    fn shown(p: &Arc<dyn ExecutionPlan>) -> String {
        displayable(p.as_ref()).indent(true).to_string()
    }

    #[tokio::test]
    async fn long_paths_are_not_gathered_up_to_the_first_consumer() {
        let rule = KeepHeavyRowsApart;
        let config = ConfigOptions::default();
        // Without an upper bound: the repartition goes, the filter hands rows on one by one.
        let after = rule
            .optimize(plan((1, None), false).await, &config)
            .unwrap();
        let text = shown(&after);
        assert!(!text.contains("RepartitionExec"), "{text}");
        let filter = after
            .downcast_ref::<FilterExec>()
            .expect("the filter stays");
        assert_eq!(filter.batch_size(), 1);
        // Above the aggregate that consumes them, rows are small again: its repartition stays.
        let after = rule.optimize(plan((1, None), true).await, &config).unwrap();
        let text = shown(&after);
        assert_eq!(text.matches("RepartitionExec").count(), 1, "{text}");
        assert!(text.starts_with("RepartitionExec"), "{text}");
        // Must not fire: paths of a few steps.
        let short = plan((1, Some(3)), false).await;
        let after = rule.optimize(short.clone(), &config).unwrap();
        assert_eq!(shown(&after), shown(&short));
    }
}
