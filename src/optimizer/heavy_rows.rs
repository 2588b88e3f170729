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
