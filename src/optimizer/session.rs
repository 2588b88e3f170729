//! The DataFusion sessions queries are planned and run in: our logical rules in their order
//! ([`rules`]), DataFusion's physical rules with ours ([`physical_rules`]), the DataFusion
//! rules we remove, the memory pool and the graph's query planner. One place for the graph's
//! session ([`session`]) and the cluster's ([`cluster_state`]).

use super::name_held_lists::NameHeldLists;
use super::{
    FactorizeCounts, FoldConstants, IntersectCycles, KeepHeavyRowsApart, PruneCsrTargetColumns,
    PruneSharedSubplans, PushCsrTargetFilters, RepairDistribution, RuleCounters, SearchNearest,
    SelectLabelBranch, ShareSubplans, VarLengthDistinctEnds, YieldPoints,
};
use crate::config::options::GraphOptions;
use crate::config::rules::{Mode, RuleSwitches};
use crate::operators::planner::GraphQueryPlanner;
use datafusion::common::Result;
use datafusion::execution::context::SessionContext;
#[cfg(feature = "distributed")]
use datafusion::execution::SessionState;
use datafusion::execution::SessionStateBuilder;
use datafusion::optimizer::OptimizerRule;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::prelude::SessionConfig;
use std::sync::Arc;

type Rule = Arc<dyn OptimizerRule + Send + Sync>;

/// Our logical rules, in the order they run (after DataFusion's), those `switches` leave on.
pub fn rules(
    switches: &RuleSwitches,
    options: &GraphOptions,
    counters: &Arc<RuleCounters>,
) -> Vec<Rule> {
    let mut rules: Vec<(bool, Rule)> = vec![
        // First: filters on a hop's far node or relationship move into the hop, where they
        // run before its columns are taken. Before pruning, so columns only a pushed filter
        // reads can then be pruned.
        (
            switches.push_csr_target_filters,
            Arc::new(PushCsrTargetFilters::with_counters(counters.clone())),
        ),
        // After push: the filters pushed into the graph operators, which DataFusion's
        // simplifier never sees, are folded too.
        (
            switches.fold_constants,
            Arc::new(FoldConstants::with_counters(counters.clone())),
        ),
        // After push and folding: a column only a folded-away expression read is unused.
        (
            switches.prune_csr_target_columns,
            Arc::new(PruneCsrTargetColumns::with_counters(counters.clone())),
        ),
        // After pruning, independent of the others: a traversal consumed only through
        // DISTINCT becomes a breadth-first search of its distinct ends.
        (
            switches.var_length_distinct_ends,
            Arc::new(VarLengthDistinctEnds::new()),
        ),
        // Before the graph rules that read chains of hops: a chain the planner split by label
        // at each clause that branches on a variable is one chain per label again.
        (
            switches.select_label_branch,
            Arc::new(SelectLabelBranch::new()),
        ),
        // After push: the hops' filters must be inside them to be counted per node.
        (switches.factorize_counts, Arc::new(FactorizeCounts::new())),
        // After factorizing: a counted cycle needs no rows at all.
        (switches.intersect_cycles, Arc::new(IntersectCycles::new())),
        // Independent of the graph rules (it reads a sort over a node scan, which they
        // leave alone); before sharing, which compares the final subtrees.
        (switches.search_nearest, Arc::new(SearchNearest::new())),
    ];
    // Last: the subtrees it compares are final.
    let min = options
        .share_min_saved_work
        .unwrap_or(super::share_subplans::DEFAULT_MIN_SAVED_WORK);
    rules.push((
        switches.share_subplans,
        Arc::new(ShareSubplans::new(counters.clone(), min)),
    ));
    // After sharing: the occurrences of every shared subplan, the planner's and the sharing
    // rule's, are in place; each computes only the columns its readers use.
    rules.push((
        switches.prune_shared_subplans,
        Arc::new(PruneSharedSubplans::with_counters(counters.clone())),
    ));
    rules
        .into_iter()
        .filter_map(|(on, rule)| on.then_some(rule))
        .collect()
}

/// DataFusion's physical rules without `aggregate_statistics`, then ours. The cluster's sessions
/// run them too (`cluster_state`): DataFusion's plan format carries the `CooperativeExec`s
/// `YieldPoints` adds.
pub fn physical_rules() -> Vec<Arc<dyn PhysicalOptimizerRule + Send + Sync>> {
    // `aggregate_statistics` answers count(DISTINCT col) from the column's distinct-count
    // statistic, which counts NULL as a value (`OPTIONAL MATCH (a) RETURN count(DISTINCT a)`
    // on an empty graph gave 1, not 0). Our plans gain nothing from it.
    let mut rules: Vec<_> = datafusion::physical_optimizer::optimizer::PhysicalOptimizer::new()
        .rules
        .into_iter()
        .filter(|r| r.name() != "aggregate_statistics")
        .collect();
    // Right before DataFusion's last check: `EnforceSorting` can take away a repartition an
    // aggregate needs (see the rule), and every rule before may have moved inputs.
    let check = rules
        .iter()
        .position(|r| r.name() == "SanityCheckPlan")
        .unwrap_or(rules.len());
    rules.insert(check, Arc::new(RepairDistribution));
    // After DataFusion's: the repartitions and filters it looks at are in place.
    rules.push(Arc::new(KeepHeavyRowsApart));
    // Last: the joins and traversals it wraps are final (no rule after it looks past a
    // `CooperativeExec` for them, as `KeepHeavyRowsApart` looks for a traversal right below a
    // filter), and after DataFusion's `EnsureCooperative`, which would not wrap a leaf below
    // one of its wrappers (the leaf would then spend no budget of its own).
    rules.push(Arc::new(YieldPoints));
    // After every rule that makes or rebuilds projections and filters.
    rules.push(Arc::new(NameHeldLists));
    rules
}

/// DataFusion's logical rules that are wrong for our plans.
const REMOVED_RULES: [&str; 3] = [
    // Turns `RETURN 'x' AS k, count(*)` into a global aggregate, which yields one row over no
    // input; a grouped aggregate yields none.
    "eliminate_group_by_constant",
    // These push a field access of an UNWIND-ed entity below the Unnest, where the column is
    // still the list (a planning error). Our properties are columns; nothing is lost.
    "extract_leaf_expressions",
    "push_down_leaf_projections",
];

/// A DataFusion session for `options`; our rules report to `counters`.
pub fn session(options: &GraphOptions, counters: Arc<RuleCounters>) -> Result<SessionContext> {
    let mut switches = options.rules;
    if options.mode != Mode::Csr {
        // The join path runs none of our rules; key statistics are for its joins.
        switches = RuleSwitches {
            key_statistics: options.rules.key_statistics,
            ..RuleSwitches::none()
        };
    }
    let mut cfg = SessionConfig::new()
        .with_information_schema(false)
        .with_extension(Arc::new(switches))
        .with_option_extension(crate::functions::budget::CypherOptions {
            // Half: what reads a value may copy it whole (UNWIND does).
            value_bytes_limit: options.memory_limit.map_or(0, |l| (l / 2).max(1)),
        });
    if let Some(n) = options.target_partitions {
        cfg = cfg.with_target_partitions(n);
    }
    if let Some(n) = options.batch_size {
        cfg = cfg.with_batch_size(n.max(1));
    }
    // A key lookup's row or two is not spread over partitions: the estimates of our
    // operators (at most one row per key, degrees from the indexes) are good enough to
    // decide that repartitioning does not pay.
    cfg.options_mut()
        .execution
        .use_row_number_estimates_to_optimize_partitioning = true;
    // Dynamic filters (a join's build-side bounds, a top-k's threshold, a min/max's bound)
    // have no consumer among our scans, and a plan kept for reuse must carry no bound from
    // one execution into the next.
    let optimizer = &mut cfg.options_mut().optimizer;
    optimizer.enable_dynamic_filter_pushdown = false;
    optimizer.enable_join_dynamic_filter_pushdown = false;
    optimizer.enable_topk_dynamic_filter_pushdown = false;
    optimizer.enable_aggregate_dynamic_filter_pushdown = false;
    let mut runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new();
    if let Some(bytes) = options.memory_limit {
        runtime = runtime.with_memory_limit(bytes, 1.0);
    }
    let mut b = SessionStateBuilder::new()
        .with_runtime_env(runtime.build_arc()?)
        .with_config(cfg)
        .with_default_features()
        .with_physical_optimizer_rules(physical_rules())
        .with_query_planner(Arc::new(GraphQueryPlanner));
    for rule in rules(&switches, options, &counters) {
        b = b.with_optimizer_rule(rule);
    }
    let ctx = SessionContext::new_with_state(b.build());
    // Long list parameters a plan names as variables (`functions::held`).
    ctx.register_variable(
        datafusion::logical_expr::var_provider::VarType::UserDefined,
        Arc::new(crate::functions::held::HeldLists),
    );
    for name in REMOVED_RULES {
        ctx.remove_optimizer_rule(name);
    }
    Ok(ctx)
}

/// The options a distributed plan is made with: no shared subplans (sharing needs one
/// process; an executor plans its part of the plan alone).
#[cfg(feature = "distributed")]
pub fn cluster_options(options: &GraphOptions) -> GraphOptions {
    let mut o = options.clone();
    o.rules.share_subplans = false;
    o.planner.one_process = false;
    o
}

/// The session a scheduler or executor plans with, for a client's `config`: the default
/// options' rules (without shared subplans) and removed DataFusion rules, `config`'s settings.
#[cfg(feature = "distributed")]
pub fn cluster_state(config: SessionConfig) -> Result<SessionState> {
    let options = cluster_options(&GraphOptions::default());
    let state = session(&options, Default::default())?.state();
    let config = config.with_extension(Arc::new(options.rules));
    Ok(SessionStateBuilder::new_from_existing(state)
        .with_config(config)
        .build())
}
