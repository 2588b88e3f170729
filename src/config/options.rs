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
    /// Map each index file that is up to date only when a plan first needs it (the one-shot
    /// CLI commands): opening costs a header read per file. Its head is then checked; one
    /// damaged there makes the hops it serves run as joins and is removed, to be built at
    /// the next opening. Missing and stale indexes are built when the graph opens either way.
    pub defer_indexes: bool,
    /// Read the graph as it was: every dataset at a version, a tag or a time (`None`: the
    /// latest). A graph opened so never refreshes to newer data.
    pub as_of: Option<AsOf>,
}

/// Which state of a graph's datasets to read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AsOf {
    /// Every dataset at this version number (datasets written together, as `import` and
    /// `generate` write them and appends to all of them, keep their numbers in step).
    Version(u64),
    /// Every dataset at the version this tag names (Lance's tags, one per dataset).
    Tag(String),
    /// Every dataset at its latest version committed at or before this instant.
    Time(chrono::DateTime<chrono::Utc>),
}

impl std::str::FromStr for AsOf {
    type Err = String;

    /// A number is a version; an RFC 3339 instant (`2026-12-01T10:00:00Z`) or a date
    /// (`2026-12-01`, midnight UTC) a time; anything else a tag.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Err("an empty --as-of (give a version, a tag or a time)".into());
        }
        if s.bytes().all(|b| b.is_ascii_digit()) {
            return s
                .parse()
                .map(AsOf::Version)
                .map_err(|_| format!("version {s} is out of range"));
        }
        if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
            return Ok(AsOf::Time(t.with_timezone(&chrono::Utc)));
        }
        if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            let t = d.and_hms_opt(0, 0, 0).expect("midnight exists");
            return Ok(AsOf::Time(t.and_utc()));
        }
        Ok(AsOf::Tag(s.to_string()))
    }
}

impl std::fmt::Display for AsOf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AsOf::Version(v) => write!(f, "version {v}"),
            AsOf::Tag(t) => write!(f, "tag {t:?}"),
            AsOf::Time(t) => write!(f, "{}", t.to_rfc3339()),
        }
    }
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

    /// The state of the datasets to read (`None`: the latest).
    pub fn with_as_of(mut self, as_of: impl Into<Option<AsOf>>) -> Self {
        self.as_of = as_of.into();
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

#[cfg(test)]
mod tests {
    use super::AsOf;

    #[test]
    fn as_of_reads_numbers_as_versions_times_as_times_and_the_rest_as_tags() {
        assert_eq!("3".parse::<AsOf>(), Ok(AsOf::Version(3)));
        let t = |s: &str| match s.parse::<AsOf>() {
            Ok(AsOf::Time(t)) => t.to_rfc3339(),
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(t("2026-12-01T10:00:00Z"), "2026-12-01T10:00:00+00:00");
        assert_eq!(t("2026-12-01T11:00:00+01:00"), "2026-12-01T10:00:00+00:00");
        assert_eq!(t("2026-12-01"), "2026-12-01T00:00:00+00:00");
        assert_eq!(
            "release-1".parse::<AsOf>(),
            Ok(AsOf::Tag("release-1".into()))
        );
        // Not quite a date: a tag.
        assert_eq!(
            "2026-13-01".parse::<AsOf>(),
            Ok(AsOf::Tag("2026-13-01".into()))
        );
        assert!("".parse::<AsOf>().is_err());
        assert!("99999999999999999999999".parse::<AsOf>().is_err());
    }
}
