//! The options a graph is opened with: planning (`PlannerOptions`), the DataFusion session
//! (`GraphOptions`). Below every stage that reads them.

use super::rules::{Mode, RuleSwitches};

/// How the planner treats names the graph does not have.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PlannerOptions {
    /// Schema-less semantics: an unknown label or type matches nothing and an unknown property
    /// is null (as in a property graph without a schema). Off by default: a typo is an error.
    pub lenient: bool,
    /// Re-root each MATCH at its most selective node (`rewrite::pattern_order`).
    pub reroot: bool,
    /// Deepest variable-length bound accepted (and joins an unrolled one may need).
    pub max_var_length: u64,
    /// Most relationships a shortest-path search may examine from one source before the
    /// query fails with a "limit exceeded" error.
    pub max_search_edges: u64,
    /// One process runs the plan: readers of one part of the query (an OPTIONAL MATCH's
    /// input) share one evaluation of it. Off on a cluster, where each reader evaluates it
    /// and an OPTIONAL MATCH joins back on the values of the variables it uses.
    pub one_process: bool,
}

impl Default for PlannerOptions {
    fn default() -> Self {
        Self {
            lenient: false,
            reroot: false,
            max_var_length: 15,
            max_search_edges: 50_000_000,
            one_process: true,
        }
    }
}

/// Options for opening a graph: `GraphOptions::default()` and the `with_*` setters
/// (`GraphOptions::default().with_timeout(Duration::from_secs(30))`); fields can be read and
/// set, and more may come.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct GraphOptions {
    pub planner: PlannerOptions,
    /// DataFusion target partitions (default: the number of cores).
    pub target_partitions: Option<usize>,
    /// Rows per batch operators exchange (default: DataFusion's, 8192). On a cluster, also
    /// the fewest rows a table scan's partition reads when a table is split into ranges.
    pub batch_size: Option<usize>,
    pub mode: Mode,
    pub rules: RuleSwitches,
    /// Least work (rows read or produced) sharing a repeated subplan must save; `None`: the
    /// default (`optimizer::share_subplans::DEFAULT_MIN_SAVED_WORK`).
    pub share_min_saved_work: Option<usize>,
    /// Longest a query may run (planning and execution); `None`: no limit.
    pub timeout: Option<std::time::Duration>,
    /// Most bytes the operators that track memory (sorts, aggregations, joins, DISTINCT,
    /// traversal state) may hold at once; past it they spill to disk where they can, else
    /// the query fails naming the limit. `None`: no limit.
    pub memory_limit: Option<usize>,
    /// Plan every query anew (no plan cache; `--no-cache`).
    pub no_plan_cache: bool,
    /// Read each index file that is up to date only when a plan first needs it (the
    /// one-shot CLI commands): opening costs a header read per file. Its checksum is then
    /// checked on first use; a damaged file makes the hops it serves run as joins (`index
    /// build` rewrites it). Missing and stale indexes are built when the graph opens either
    /// way.
    pub defer_indexes: bool,
}

impl PlannerOptions {
    /// Schema-less semantics (see [`PlannerOptions::lenient`]).
    pub fn with_lenient(mut self, yes: bool) -> Self {
        self.lenient = yes;
        self
    }

    /// Re-root each MATCH at its most selective node.
    pub fn with_reroot(mut self, yes: bool) -> Self {
        self.reroot = yes;
        self
    }

    /// The deepest variable-length bound accepted.
    pub fn with_max_var_length(mut self, n: u64) -> Self {
        self.max_var_length = n;
        self
    }

    /// Most relationships a shortest-path search may examine from one source.
    pub fn with_max_search_edges(mut self, n: u64) -> Self {
        self.max_search_edges = n;
        self
    }
}

impl GraphOptions {
    pub fn with_planner(mut self, planner: PlannerOptions) -> Self {
        self.planner = planner;
        self
    }

    pub fn with_target_partitions(mut self, n: impl Into<Option<usize>>) -> Self {
        self.target_partitions = n.into();
        self
    }

    pub fn with_batch_size(mut self, n: impl Into<Option<usize>>) -> Self {
        self.batch_size = n.into();
        self
    }

    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    pub fn with_rules(mut self, rules: RuleSwitches) -> Self {
        self.rules = rules;
        self
    }

    pub fn with_share_min_saved_work(mut self, n: impl Into<Option<usize>>) -> Self {
        self.share_min_saved_work = n.into();
        self
    }

    /// A time limit per query (`None`: none).
    pub fn with_timeout(mut self, limit: impl Into<Option<std::time::Duration>>) -> Self {
        self.timeout = limit.into();
        self
    }

    /// A memory limit in bytes (`None`: none).
    pub fn with_memory_limit(mut self, bytes: impl Into<Option<usize>>) -> Self {
        self.memory_limit = bytes.into();
        self
    }

    /// Whether plans are kept for reuse (on by default).
    pub fn with_plan_cache(mut self, yes: bool) -> Self {
        self.no_plan_cache = !yes;
        self
    }

    /// Whether up-to-date index files are read on first use rather than at open.
    pub fn with_deferred_indexes(mut self, yes: bool) -> Self {
        self.defer_indexes = yes;
        self
    }
}
