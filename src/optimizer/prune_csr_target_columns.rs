//! `PruneCsrTargetColumns`: narrows each `CsrExpand`'s target and relationship columns, each
//! `NodeLookup`'s and each `VarLengthExpand`'s end-node columns, to the columns used anywhere
//! in the plan.
//!
//! DataFusion's projection pushdown prunes an extension node's inputs but not its outputs, so
//! without this rule a fused hop would take every target column for every row. "Used" is
//! conservative: any column referenced by any expression of any node, the plan's output
//! columns, the keys and closing columns of the graph operators, and all input columns of nodes
//! whose column use is implicit (DISTINCT, UNION, UNNEST, ...).
//!
//! ```text
//! before:
//!   Projection: b__name
//!     CsrExpand: key=a__id -> ..., take=b[b__id*, b__name, b__age], edge=k[k__#src, ...], filter=b__age > Int64(35)
//! after:
//!   Projection: b__name
//!     CsrExpand: key=a__id -> ..., take=b[b__name], edge=k[], filter=b__age > Int64(35)
//! ```
//!
//! Runs after `PushCsrTargetFilters`: once a filter is inside the node, the columns only it
//! reads are no longer referenced above, and are pruned. Must not fire on a column read above
//! (including by DISTINCT or UNION, which read all their input columns). A `NodeLookup` whose
//! columns are all unused is removed only when its keys are known to exist (it would otherwise
//! drop rows with unknown keys).

use super::RuleCounters;
use crate::operators::csr_expand::TakeSpec;
use crate::operators::node::GraphNode;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::common::Result;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::optimizer::{OptimizerConfig, OptimizerRule};
use std::collections::HashSet;
use std::sync::Arc;

#[derive(Debug, Default)]
pub struct PruneCsrTargetColumns {
    counters: Arc<RuleCounters>,
}

impl PruneCsrTargetColumns {
    pub fn with_counters(counters: Arc<RuleCounters>) -> Self {
        Self { counters }
    }
}

/// Every column name the plan reads or outputs (conservatively).
pub fn used_columns(plan: &LogicalPlan) -> Result<HashSet<String>> {
    let mut used: HashSet<String> = plan
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    plan.apply(|node| {
        for e in node.expressions() {
            for c in e.column_refs() {
                used.insert(c.name.clone());
            }
        }
        match node {
            LogicalPlan::Distinct(_)
            | LogicalPlan::Union(_)
            | LogicalPlan::Unnest(_)
            | LogicalPlan::Window(_)
            | LogicalPlan::Subquery(_)
            | LogicalPlan::SubqueryAlias(_) => {
                for i in node.inputs() {
                    used.extend(i.schema().fields().iter().map(|f| f.name().clone()));
                }
            }
            LogicalPlan::Extension(Extension { node: ext }) => match GraphNode::of(ext.as_ref()) {
                Some(GraphNode::Expand(n)) => {
                    used.insert(n.key.clone());
                    used.extend(n.close.iter().cloned());
                }
                Some(GraphNode::Lookup(n)) => {
                    used.insert(n.key.clone());
                }
                // Adds columns; reads none of its input's.
                Some(GraphNode::ConstRow(_)) => {}
                Some(GraphNode::VarLength(n)) => {
                    used.insert(n.key.clone());
                    used.extend(n.shortest.iter().filter_map(|s| s.target.clone()));
                }
                // Their inputs' columns are all read (or passed on).
                Some(GraphNode::Intersect(_) | GraphNode::CountPaths(_) | GraphNode::Shared(_))
                | None => {
                    for i in node.inputs() {
                        used.extend(i.schema().fields().iter().map(|f| f.name().clone()));
                    }
                }
            },
            _ => {}
        }
        Ok(TreeNodeRecursion::Continue)
    })?;
    Ok(used)
}

/// The take list without the columns nothing uses; counted as dropped columns.
fn narrow(spec: &TakeSpec, used: &HashSet<String>, counters: &RuleCounters) -> Option<TakeSpec> {
    let take: Vec<usize> = spec
        .take
        .iter()
        .copied()
        .filter(|&i| used.contains(&spec.all[i].1))
        .collect();
    RuleCounters::add(&counters.dropped_columns, spec.take.len() - take.len());
    (take != spec.take).then(|| TakeSpec {
        take,
        ..spec.clone()
    })
}

impl OptimizerRule for PruneCsrTargetColumns {
    fn name(&self) -> &str {
        "prune_csr_target_columns"
    }

    fn rewrite(
        &self,
        plan: LogicalPlan,
        _config: &dyn OptimizerConfig,
    ) -> Result<Transformed<LogicalPlan>> {
        let used = used_columns(&plan)?;
        let mut changed = false;
        let out = plan.transform_up(|node| {
            if let LogicalPlan::Extension(Extension { node: ext }) = &node {
                match GraphNode::of(ext.as_ref()) {
                    Some(GraphNode::Expand(n)) => {
                        let c = &self.counters;
                        let (e, t) = (narrow(&n.edge, &used, c), narrow(&n.target, &used, c));
                        let mut m = n.clone();
                        if e.is_none() && t.is_none() {
                            // Children may have changed: refresh the schema.
                            m.schema = m.compute_schema()?;
                            return Ok(Transformed::no(LogicalPlan::Extension(Extension {
                                node: Arc::new(m),
                            })));
                        }
                        changed = true;
                        RuleCounters::add(&self.counters.pruned_projections, 1);
                        if let Some(e) = e {
                            m.edge = e;
                        }
                        if let Some(t) = t {
                            m.target = t;
                        }
                        m.schema = m.compute_schema()?;
                        return Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                            node: Arc::new(m),
                        })));
                    }
                    Some(GraphNode::Lookup(n)) => {
                        let mut m = n.clone();
                        if let Some(t) = narrow(&n.target, &used, &self.counters) {
                            changed = true;
                            RuleCounters::add(&self.counters.pruned_projections, 1);
                            m.target = t;
                            if m.target.take.is_empty() && m.keys_exist {
                                RuleCounters::add(&self.counters.dropped_nodes, 1);
                                return Ok(Transformed::yes(n.input.clone()));
                            }
                        }
                        m.schema = m.compute_schema()?;
                        return Ok(Transformed::yes(LogicalPlan::Extension(Extension {
                            node: Arc::new(m),
                        })));
                    }
                    Some(GraphNode::VarLength(n)) => {
                        let mut m = n.clone();
                        let narrowed = narrow(&n.target, &used, &self.counters);
                        if let Some(t) = &narrowed {
                            changed = true;
                            RuleCounters::add(&self.counters.pruned_projections, 1);
                            m.target = t.clone();
                        }
                        m.schema = m.compute_schema()?;
                        let node = LogicalPlan::Extension(Extension { node: Arc::new(m) });
                        return Ok(match narrowed {
                            Some(_) => Transformed::yes(node),
                            None => Transformed::no(node),
                        });
                    }
                    // Nothing of theirs to narrow.
                    Some(
                        GraphNode::Intersect(_)
                        | GraphNode::CountPaths(_)
                        | GraphNode::Shared(_)
                        | GraphNode::ConstRow(_),
                    )
                    | None => return Ok(Transformed::no(node)),
                }
            }
            // Parents of narrowed nodes: recompute stored schemas.
            Ok(Transformed::no(node.recompute_schema()?))
        })?;
        Ok(if changed {
            Transformed::yes(out.data)
        } else {
            Transformed::no(out.data)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::operators::node_lookup::NodeLookup;
    use crate::optimizer::test_util::{apply, optimized_without_our_rules};
    use crate::optimizer::PushCsrTargetFilters;
    use datafusion::optimizer::OptimizerRule;

    #[test]
    fn narrows_take_to_used_columns_after_push() {
        let plan = optimized_without_our_rules(
            "MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) WHERE k.creationDate > 5 AND b.age > 35 RETURN b.firstName",
        );
        // One optimizer pass as it runs in a session: push, DataFusion's projection pushdown
        // (drops the columns only the pushed filter read from the projection above), prune.
        let cx = datafusion::optimizer::OptimizerContext::new();
        let pushed = PushCsrTargetFilters::default()
            .rewrite(plan, &cx)
            .unwrap()
            .data;
        let projected = datafusion::optimizer::optimize_projections::OptimizeProjections::new()
            .rewrite(pushed, &cx)
            .unwrap()
            .data;
        let (after, changed) = apply(PruneCsrTargetColumns::default(), projected);
        assert!(changed);
        assert!(after.contains("take=b[b__firstName], edge=k[]"), "{after}");
        insta::assert_snapshot!("prune_fires", after);
    }

    #[test]
    fn keeps_columns_a_whole_node_needs() {
        let plan =
            optimized_without_our_rules("MATCH (a:Person {id: 1})-[k:KNOWS]->(b:Person) RETURN b");
        let (after, _) = apply(PruneCsrTargetColumns::default(), plan);
        assert!(after.contains("take=b[b__id*, b__firstName, b__lastName, b__gender, b__age, b__birthday, b__creationDate, b__browserUsed]"), "{after}");
        insta::assert_snapshot!("prune_keeps_node_columns", after);
    }

    #[test]
    fn removes_an_unused_lookup_only_when_its_keys_exist() {
        let plan = optimized_without_our_rules("MATCH (a:Person {id: 1}) RETURN a.firstName");
        let mut lookup = None;
        plan.apply(|p| {
            if let LogicalPlan::Extension(Extension { node }) = p {
                if let Some(n) = node.as_any().downcast_ref::<NodeLookup>() {
                    lookup = Some(n.clone());
                }
            }
            Ok(TreeNodeRecursion::Continue)
        })
        .unwrap();
        let lookup = lookup.expect("a point lookup");
        // A plan that reads nothing the lookup produces: only its input key.
        let only_key = |n: NodeLookup| {
            let key = datafusion::logical_expr::col(n.key.as_str());
            LogicalPlan::Projection(
                datafusion::logical_expr::Projection::try_new(
                    vec![key],
                    Arc::new(LogicalPlan::Extension(Extension { node: Arc::new(n) })),
                )
                .unwrap(),
            )
        };
        // As lowered, the lookup drops unknown keys: it stays, with nothing taken.
        let (after, _) = apply(PruneCsrTargetColumns::default(), only_key(lookup.clone()));
        assert!(
            after.contains("NodeLookup: key=__lookup1, label=Person, take=a[]"),
            "{after}"
        );
        // Over keys known to exist it is removed.
        let mut exists = lookup;
        exists.keys_exist = true;
        let (after, changed) = apply(PruneCsrTargetColumns::default(), only_key(exists));
        assert!(changed);
        assert!(!after.contains("NodeLookup"), "{after}");
    }
}
