//! Rule counters (seed 003): what the optimizer passes did to one query's plan, reported by
//! EXPLAIN. Each rule instance holds the counters of the session state it belongs to;
//! EXPLAIN optimizes with a fresh state so its counts are the query's alone.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Debug, Default)]
pub struct RuleCounters {
    /// Filter conjuncts moved into a graph operator.
    pub pushed_filters: AtomicUsize,
    /// Graph operators whose output columns were narrowed.
    pub pruned_projections: AtomicUsize,
    /// Columns those operators no longer fetch.
    pub dropped_columns: AtomicUsize,
    /// Plan nodes removed (a filter emptied by pushing, or folded to true).
    pub dropped_nodes: AtomicUsize,
    /// Filters merged into a filter the operator already had.
    pub fused_filters: AtomicUsize,
    /// Expressions folded (literals, identities).
    pub folded_expressions: AtomicUsize,
    /// Subplans evaluated once for several consumers.
    pub shared_subplans: AtomicUsize,
}

impl RuleCounters {
    pub fn add(c: &AtomicUsize, n: usize) {
        c.fetch_add(n, Ordering::Relaxed);
    }

    fn get(c: &AtomicUsize) -> usize {
        c.load(Ordering::Relaxed)
    }
}

impl fmt::Display for RuleCounters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pushed_filters={}, pruned_projections={}, dropped_columns={}, dropped_nodes={}, fused_filters={}, folded_expressions={}, shared_subplans={}",
            Self::get(&self.pushed_filters),
            Self::get(&self.pruned_projections),
            Self::get(&self.dropped_columns),
            Self::get(&self.dropped_nodes),
            Self::get(&self.fused_filters),
            Self::get(&self.folded_expressions),
            Self::get(&self.shared_subplans),
        )
    }
}
