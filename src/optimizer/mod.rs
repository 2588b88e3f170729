//! lance-csr's own optimizer rules, run after DataFusion's (each can be switched off).

pub mod counters;
pub mod estimates;
pub mod factorize_counts;
pub mod fold_constants;
pub mod heavy_rows;
pub mod intersect_cycles;
pub mod name_held_lists;
pub mod prune_csr_target_columns;
pub mod prune_shared_subplans;
pub mod push_csr_target_filters;
pub mod repair_distribution;
pub mod search_nearest;
pub mod select_label_branch;
pub mod session;
pub mod share_subplans;
pub mod var_length_distinct_ends;
pub mod yield_points;

pub use counters::RuleCounters;
pub use factorize_counts::FactorizeCounts;
pub use fold_constants::FoldConstants;
pub use heavy_rows::KeepHeavyRowsApart;
pub use intersect_cycles::IntersectCycles;
pub use prune_csr_target_columns::PruneCsrTargetColumns;
pub use prune_shared_subplans::PruneSharedSubplans;
pub use push_csr_target_filters::PushCsrTargetFilters;
pub use repair_distribution::RepairDistribution;
pub use search_nearest::SearchNearest;
pub use select_label_branch::SelectLabelBranch;
pub use share_subplans::ShareSubplans;
pub use var_length_distinct_ends::VarLengthDistinctEnds;
pub use yield_points::YieldPoints;

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod test_util {
    use crate::config::options::GraphOptions;
    use crate::config::rules::RuleSwitches;
    use crate::session::Graph;
    use crate::Params;
    use datafusion::logical_expr::LogicalPlan;
    use datafusion::optimizer::{Optimizer, OptimizerContext, OptimizerRule};
    use std::sync::Arc;

    /// The sample graph's plan for `q` after DataFusion's optimizer with our rules off: the
    /// input our rules see.
    pub fn optimized_without_our_rules(q: &str) -> LogicalPlan {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let g = Graph::sample().await.unwrap();
            let g = g
                .with_options(GraphOptions {
                    rules: RuleSwitches {
                        reroot: true,
                        ..RuleSwitches::none()
                    },
                    ..g.options().clone()
                })
                .await
                .unwrap();
            let (plan, _) = g.plan(q, &Params::new()).unwrap();
            g.optimize(&plan).unwrap()
        })
    }

    /// The sample graph's plan for `q` as lowered, before any optimizer: the barriers of the
    /// query are all still where the query put them.
    pub fn lowered(q: &str) -> LogicalPlan {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let g = Graph::sample().await.unwrap();
            g.plan(q, &Params::new()).unwrap().0
        })
    }

    /// EXPLAIN of `q` on the sample graph (default options).
    pub fn explain_sample(q: &str) -> String {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let g = Graph::sample().await.unwrap();
            g.explain(q, &Params::new()).await.unwrap()
        })
    }

    /// Applies one rule through DataFusion's `Optimizer` (so its checks run: the plan's
    /// schema must not change, a failing rule is an error); returns the plan text and whether
    /// the plan changed.
    pub fn apply(
        rule: impl OptimizerRule + Send + Sync + 'static,
        plan: LogicalPlan,
    ) -> (String, bool) {
        let (after, changed) = apply_plan(rule, plan);
        let text = after.display_indent().to_string();
        (text, changed)
    }

    /// [`apply`], the plan itself.
    pub fn apply_plan(
        rule: impl OptimizerRule + Send + Sync + 'static,
        plan: LogicalPlan,
    ) -> (LogicalPlan, bool) {
        let optimizer = Optimizer::with_rules(vec![Arc::new(rule)]);
        let config = OptimizerContext::new()
            .with_max_passes(1)
            .with_skip_failing_rules(false);
        let after = optimizer
            .optimize(plan.clone(), &config, |_, _| {})
            .unwrap();
        let changed = after != plan;
        (after, changed)
    }
}
