//! `RepairDistribution` (physical): every input distributed as its operator requires.
//!
//! DataFusion's `EnforceDistribution` puts a hash repartition below an aggregate whose input
//! is not partitioned by its keys; its `EnforceSorting`, removing a sort no operator needs (a
//! `WITH ... ORDER BY` before an aggregate over a union of labels), can take that repartition
//! away with it, leaving an aggregate that sees a key in two partitions (two groups for one
//! key; `SanityCheckPlan` refuses the plan). This rule, after them and before the check, puts
//! back what an input lacks: a hash repartition for a hash requirement, a merge of the
//! partitions for a single-partition one.
//!
//! ```text
//! before:                                            after:
//! AggregateExec: mode=SinglePartitioned, gby=[k]     AggregateExec: mode=SinglePartitioned
//!   UnionExec                                          RepartitionExec: Hash([k], 2)
//!                                                        UnionExec
//! ```
//!
//! Must not fire: an input that satisfies its requirement (exactly or as a subset of the
//! keys, as `SanityCheckPlan` accepts), an operator without requirements.

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coalesce_partitions::CoalescePartitionsExec;
use datafusion::physical_plan::repartition::RepartitionExec;
use datafusion::physical_plan::{
    Distribution, ExecutionPlan, ExecutionPlanProperties, Partitioning,
};
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct RepairDistribution;

impl PhysicalOptimizerRule for RepairDistribution {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let partitions = config.execution.target_partitions.max(1);
        Ok(plan
            .transform_up(|p| {
                let children: Vec<Arc<dyn ExecutionPlan>> =
                    p.children().into_iter().cloned().collect();
                let required = p.required_input_distribution();
                let mut changed = false;
                let mut repaired = Vec::with_capacity(children.len());
                for (child, req) in children.into_iter().zip(required) {
                    let satisfied = child
                        .output_partitioning()
                        .satisfaction(&req, child.equivalence_properties(), true)
                        .is_satisfied();
                    repaired.push(match (satisfied, req) {
                        (true, _) | (false, Distribution::UnspecifiedDistribution) => child,
                        (false, Distribution::SinglePartition) => {
                            changed = true;
                            Arc::new(CoalescePartitionsExec::new(child))
                        }
                        (false, Distribution::HashPartitioned(keys)) => {
                            changed = true;
                            Arc::new(RepartitionExec::try_new(
                                child,
                                Partitioning::Hash(keys, partitions),
                            )?)
                        }
                    });
                }
                if !changed {
                    return Ok(Transformed::no(p));
                }
                Ok(Transformed::yes(p.with_new_children(repaired)?))
            })?
            .data)
    }

    fn name(&self) -> &str {
        "RepairDistribution"
    }

    fn schema_check(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::array::{Int64Array, RecordBatch};
    use arrow::datatypes::{DataType, Field, Schema};
    use datafusion::datasource::memory::MemorySourceConfig;
    use datafusion::datasource::source::DataSourceExec;
    use datafusion::physical_expr::aggregate::AggregateExprBuilder;
    use datafusion::physical_expr::expressions::col;
    use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode, PhysicalGroupBy};
    use datafusion::physical_plan::union::UnionExec;

    fn source(values: Vec<i64>) -> Arc<dyn ExecutionPlan> {
        let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true)]));
        let b =
            RecordBatch::try_new(schema.clone(), vec![Arc::new(Int64Array::from(values))]).unwrap();
        let m = MemorySourceConfig::try_new(&[vec![b]], schema, None).unwrap();
        Arc::new(DataSourceExec::new(Arc::new(m)))
    }

    /// `count(*)` per `k` over `input`, in one step over partitions hashed by `k`.
    fn grouped(input: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        let schema = input.schema();
        let k = col("k", &schema).unwrap();
        let count = AggregateExprBuilder::new(
            datafusion::functions_aggregate::count::count_udaf(),
            vec![k.clone()],
        )
        .schema(schema.clone())
        .alias("n")
        .build()
        .unwrap();
        Arc::new(
            AggregateExec::try_new(
                AggregateMode::SinglePartitioned,
                PhysicalGroupBy::new_single(vec![(k, "k".into())]),
                vec![Arc::new(count)],
                vec![None],
                input,
                schema,
            )
            .unwrap(),
        )
    }

    fn text(p: &Arc<dyn ExecutionPlan>) -> String {
        datafusion::physical_plan::displayable(p.as_ref())
            .indent(false)
            .to_string()
    }

    #[tokio::test]
    async fn an_aggregate_over_a_union_gets_its_repartition_back() {
        let union = UnionExec::try_new(vec![source(vec![1, 2]), source(vec![1, 3])]).unwrap();
        let plan = grouped(union);
        assert!(
            datafusion::physical_optimizer::sanity_checker::check_plan_sanity(
                &plan,
                &ConfigOptions::default().optimizer
            )
            .is_err()
        );
        let fixed = RepairDistribution
            .optimize(plan, &ConfigOptions::default())
            .unwrap();
        let shown = text(&fixed);
        assert!(
            shown.contains("RepartitionExec: partitioning=Hash([k@0]"),
            "{shown}"
        );
        // One row per key: 1 counted once, with both its rows.
        let ctx = datafusion::prelude::SessionContext::new();
        let batches = datafusion::physical_plan::collect(fixed.clone(), ctx.task_ctx())
            .await
            .unwrap();
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        assert_eq!(rows, 3, "{shown}");
        // Nothing more to do the second time.
        let again = RepairDistribution
            .optimize(fixed.clone(), &ConfigOptions::default())
            .unwrap();
        assert_eq!(text(&again), shown);
    }

    #[test]
    fn a_satisfied_input_is_left_alone() {
        let one = grouped(source(vec![1, 2, 2]));
        let out = RepairDistribution
            .optimize(one.clone(), &ConfigOptions::default())
            .unwrap();
        assert_eq!(text(&out), text(&one));
    }
}
