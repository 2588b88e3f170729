//! `YieldPoints` (physical): a `CooperativeExec` above every operator that can hand out many
//! batches for one it reads.
//!
//! A task gives its runtime worker back once it has spent its tokio budget, which DataFusion
//! spends where batches come out of a leaf or an exchange (its `EnsureCooperative` rule wraps
//! those in `CooperativeExec`). A join emits batch after batch from one input batch (a product,
//! a hash join's probe of a frequent key), and so does a hop or a traversal of ours; an
//! aggregate above pulls them in a loop that reads no leaf, so the budget is never spent and
//! the whole join runs inside one poll: a query dropped meanwhile (a timeout, an interrupt,
//! a client gone) holds its worker until then. Wrapped, every batch they emit spends budget,
//! and the task yields every budget's worth of batches, where a drop takes effect.
//!
//! ```text
//! before:                                after:
//! AggregateExec: mode=Single             AggregateExec: mode=Single
//!   NestedLoopJoinExec                     CooperativeExec
//!     CooperativeExec                        NestedLoopJoinExec
//!       DataSourceExec                         CooperativeExec
//!     CooperativeExec                            DataSourceExec
//!       DataSourceExec                         CooperativeExec
//!                                                DataSourceExec
//! ```
//!
//! Must not fire: on an operator whose parent is a `CooperativeExec` already (the rule run
//! twice), nor on one that emits no more than it reads (a filter, a projection, a lookup).
//! A join's own loop between two batches it emits is DataFusion's: a nested-loop join whose
//! filter rejects every pair works through one whole input batch in a poll.

use crate::operators::csr_expand_exec::CsrExpandExec;
use crate::operators::csr_intersect_exec::CsrIntersectExec;
use crate::operators::var_length_exec::VarLengthExec;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::joins::{
    CrossJoinExec, HashJoinExec, NestedLoopJoinExec, PiecewiseMergeJoinExec, SortMergeJoinExec,
    SymmetricHashJoinExec,
};
use datafusion::physical_plan::ExecutionPlan;
use std::cell::RefCell;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct YieldPoints;

impl PhysicalOptimizerRule for YieldPoints {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // Per node on the way down from the root: whether it is a `CooperativeExec`.
        let ancestors = RefCell::new(Vec::<bool>::new());
        let plan = plan.transform_down_up(
            |p| {
                ancestors.borrow_mut().push(p.is::<CooperativeExec>());
                Ok(Transformed::no(p))
            },
            |p| {
                ancestors.borrow_mut().pop();
                let wrapped = ancestors.borrow().last().copied().unwrap_or(false);
                if wrapped || !emits_more_than_it_reads(&p) {
                    return Ok(Transformed::no(p));
                }
                let coop: Arc<dyn ExecutionPlan> = Arc::new(CooperativeExec::new(p));
                Ok(Transformed::yes(coop))
            },
        )?;
        Ok(plan.data)
    }

    fn name(&self) -> &str {
        "yield_points"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Whether `plan` can hand out many batches for one it reads: DataFusion's joins, our hops
/// and traversals. (Ours also spend budget per slice of input they expand themselves: a
/// cluster's scheduler, which sees them inside `PlannedExec`s, leaves them unwrapped.)
fn emits_more_than_it_reads(plan: &Arc<dyn ExecutionPlan>) -> bool {
    plan.is::<HashJoinExec>()
        || plan.is::<NestedLoopJoinExec>()
        || plan.is::<CrossJoinExec>()
        || plan.is::<SortMergeJoinExec>()
        || plan.is::<SymmetricHashJoinExec>()
        || plan.is::<PiecewiseMergeJoinExec>()
        || plan.is::<CsrExpandExec>()
        || plan.is::<VarLengthExec>()
        || plan.is::<CsrIntersectExec>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::common::JoinType;
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::physical_plan::displayable;
    use datafusion::physical_plan::limit::GlobalLimitExec;

    fn source(name: &str) -> Arc<dyn ExecutionPlan> {
        let schema = Arc::new(Schema::new(vec![Field::new(name, DataType::Int64, false)]));
        let col: arrow::array::ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
        let b = RecordBatch::try_new(schema.clone(), vec![col]).unwrap();
        MemorySourceConfig::try_new_exec(&[vec![b]], schema, None).unwrap()
    }

    /// Every row of `left` with every row of a second source.
    fn product(left: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        let join = NestedLoopJoinExec::try_new(left, source("b"), None, &JoinType::Inner, None);
        Arc::new(join.unwrap())
    }

    fn text(p: &Arc<dyn ExecutionPlan>) -> String {
        displayable(p.as_ref()).indent(false).to_string()
    }

    fn wrappers(p: &Arc<dyn ExecutionPlan>) -> usize {
        text(p).matches("CooperativeExec").count()
    }

    #[test]
    fn a_join_is_wrapped_once() {
        let config = ConfigOptions::default();
        let once = YieldPoints.optimize(product(source("a")), &config).unwrap();
        assert!(once.is::<CooperativeExec>(), "{}", text(&once));
        assert!(
            once.children()[0].is::<NestedLoopJoinExec>(),
            "{}",
            text(&once)
        );
        assert_eq!(wrappers(&once), 1, "{}", text(&once));
        // Again: nothing changes.
        let twice = YieldPoints.optimize(once.clone(), &config).unwrap();
        assert_eq!(text(&twice), text(&once));
        // Below another operator, over a leaf wrapped already: the join, once.
        let leaf: Arc<dyn ExecutionPlan> = Arc::new(CooperativeExec::new(source("a")));
        let limit: Arc<dyn ExecutionPlan> =
            Arc::new(GlobalLimitExec::new(product(leaf), 0, Some(5)));
        let all = YieldPoints.optimize(limit, &config).unwrap();
        assert_eq!(wrappers(&all), 2, "{}", text(&all));
        let join = all.children()[0].clone();
        assert!(join.is::<CooperativeExec>(), "{}", text(&all));
        assert!(
            join.children()[0].is::<NestedLoopJoinExec>(),
            "{}",
            text(&all)
        );
        let again = YieldPoints.optimize(all.clone(), &config).unwrap();
        assert_eq!(text(&again), text(&all));
    }

    #[test]
    fn what_emits_no_more_than_it_reads_is_left_alone() {
        let config = ConfigOptions::default();
        let limit: Arc<dyn ExecutionPlan> = Arc::new(GlobalLimitExec::new(source("a"), 0, None));
        let after = YieldPoints.optimize(limit, &config).unwrap();
        assert_eq!(wrappers(&after), 0, "{}", text(&after));
    }
}
