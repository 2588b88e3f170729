//! The library API: open a graph, run queries with parameters, get Arrow RecordBatches.

use crate::catalog::Catalog;
use crate::config::GraphConfig;
use crate::csr::registry::{open_indexes, IndexReport};
use crate::csr::GraphIndexes;
use crate::error::{Error, Result};
use crate::functions::value::Value;
use crate::operators::params::{
    bind_logical, bind_physical_plan, calls_unstable_function, physical_reusable,
    reuse_of_optimized, Reuse,
};
use crate::operators::planner::GraphQueryPlanner;
use crate::optimizer::{
    FactorizeCounts, FoldConstants, IntersectCycles, PruneCsrTargetColumns, PushCsrTargetFilters,
    RuleCounters, ShareSubplans, VarLengthDistinctEnds,
};
use crate::plan_cache::{param_values, CacheUse, CachedPlan, PlanCache, PlanKey};
use crate::planner::{Lowerer, Params, PlannerOptions};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::execution::context::SessionContext;
use datafusion::execution::{SessionState, SessionStateBuilder};
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use datafusion::prelude::SessionConfig;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use crate::config::rules::{Mode, RuleSwitches};
pub use crate::output::QueryResult;

/// Options for opening a graph.
#[derive(Debug, Clone, Default)]
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

/// An opened graph, ready for queries.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use lance_csr::{Graph, Params};
/// let graph = Graph::sample().await.unwrap();
/// let mut params = Params::new();
/// params.insert("name".into(), lance_csr::param("Ann"));
/// let result = graph
///     .query("MATCH (p:Person {firstName: $name})-[:KNOWS]->(f:Person) RETURN f.firstName AS friend ORDER BY friend", &params)
///     .await
///     .unwrap();
/// assert_eq!(result.columns, vec!["friend"]);
/// assert_eq!(result.num_rows(), 2);
/// # });
/// ```
pub struct Graph {
    catalog: Arc<Catalog>,
    /// Present in CSR mode.
    indexes: Option<Arc<GraphIndexes>>,
    ctx: SessionContext,
    /// What every execution runs with (built once: building one copies the session's
    /// function registries).
    task_ctx: Arc<datafusion::execution::TaskContext>,
    cache: Option<PlanCache>,
    /// Tells prepared queries whose plans are of this graph as it is now: unique per graph,
    /// and renewed by [`Graph::refresh`].
    generation: u64,
    options: GraphOptions,
    /// The scheduler queries run on (`with_cluster`).
    #[cfg(feature = "distributed")]
    cluster: Option<String>,
}

/// A distinct [`Graph::generation`] each time.
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

fn plan_cache(options: &GraphOptions) -> Option<PlanCache> {
    (!options.no_plan_cache).then(|| PlanCache::new(crate::plan_cache::PLAN_CACHE_ENTRIES))
}

/// Builds a graph from in-memory Arrow tables.
#[derive(Default)]
pub struct GraphBuilder {
    config: crate::config::GraphConfigBuilder,
    tables: BTreeMap<String, (SchemaRef, Vec<RecordBatch>)>,
    options: GraphOptions,
}

impl GraphBuilder {
    /// A node table: `label`'s nodes are the rows of `batches`, keyed by column `id`.
    pub fn node_table(
        mut self,
        label: &str,
        id: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Self {
        let source = format!("mem:node:{label}");
        self.config = self.config.node(label, &source, id);
        self.tables.insert(source, (schema, batches));
        self
    }

    /// Marks `label`'s key column as a row identifier, not a property (see
    /// `NodeTable::id_hidden`).
    pub fn hidden_key(mut self, label: &str) -> Self {
        self.config = self.config.hidden_key(label);
        self
    }

    /// A relationship table: `rel_type` edges from `from` to `to` nodes, endpoints in `src`/`dst`.
    #[allow(clippy::too_many_arguments)]
    pub fn relationship_table(
        mut self,
        rel_type: &str,
        from: &str,
        to: &str,
        src: &str,
        dst: &str,
        schema: SchemaRef,
        batches: Vec<RecordBatch>,
    ) -> Self {
        let source = format!("mem:rel:{rel_type}:{from}:{to}");
        self.config = self
            .config
            .relationship(rel_type, from, to, &source, src, dst);
        self.tables.insert(source, (schema, batches));
        self
    }

    pub fn options(mut self, options: GraphOptions) -> Self {
        self.options = options;
        self
    }

    pub async fn build(mut self) -> Result<Graph> {
        let config = self.config.build()?;
        let catalog = Catalog::open(config, &mut self.tables).await?;
        Graph::new(Arc::new(catalog), self.options, None).await
    }
}

/// One line per relationship table of the graph at `config` (its graph.toml): whether its
/// index exists and is up to date (checksum and contents checked), and its size.
pub async fn index_status(config: impl AsRef<Path>) -> Result<Vec<String>> {
    let config = GraphConfig::from_file(config)?;
    let catalog = Catalog::open(config, &mut BTreeMap::new()).await?;
    Ok(crate::csr::registry::index_status(&catalog))
}

/// Turns CSV / Parquet files into a graph at `out` (Lance datasets, a graph.toml and, with
/// `index`, the CSR indexes), all written into a new folder beside `out` that replaces it in
/// one step once complete: a failure or a crash at any moment leaves `out` as it was (the
/// next import removes what a crash left). A non-empty `out` is refused unless `overwrite`.
/// Returns the graph.toml's path.
pub async fn import(
    out: &Path,
    nodes: &[crate::storage::import::NodeSpec],
    rels: &[crate::storage::import::RelSpec],
    overwrite: bool,
    index: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<std::path::PathBuf> {
    let mut import = crate::storage::import::Import::begin(out, nodes, rels, overwrite)?;
    let config = import.write(progress).await?;
    if index {
        Graph::build_indexes(&config, progress).await?;
    }
    let path = import.commit()?;
    progress(&format!("wrote {}", path.display()));
    Ok(path)
}

/// Deletes the index files (`_csr/*.csr`, `*.keys`) of the graph at `graph` (its config file
/// or folder), so that the next build writes every one anew.
pub fn remove_index_files(graph: &Path) -> Result<()> {
    let base = if graph.is_dir() {
        graph
    } else {
        graph.parent().unwrap_or(Path::new("."))
    };
    let dir = crate::csr::persist::index_dir(base);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "csr" || x == "keys") {
            std::fs::remove_file(&p).map_err(|err| {
                Error::Storage(format!("removing index file {}: {err}", p.display()))
            })?;
        }
    }
    Ok(())
}

/// A parameter value from a Rust value (string, integer, float, bool, a list of them).
pub fn param(v: impl Into<Value>) -> Value {
    v.into()
}

/// Parses `NAME=VALUE` (the CLI's `--param`): VALUE is a Cypher literal.
pub fn parse_param(kv: &str) -> Result<(String, Value)> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| Error::Other(format!("--param {kv}: expected NAME=VALUE")))?;
    let k = k.trim().trim_start_matches('$');
    if k.is_empty() {
        return Err(Error::Other(format!("--param {kv}: empty name")));
    }
    let e = cypher::parse_expression(v).map_err(|e| {
        Error::Other(format!(
            "--param {k}: value is not a Cypher literal: {}",
            cypher::render_caret(v, &e.span, &e.message)
        ))
    })?;
    let value = Value::from_literal(&e).ok_or_else(|| {
        Error::Other(format!(
            "--param {k}: value must be a literal (number, 'string', true/false, null, list or map), got {v}"
        ))
    })?;
    Ok((k.to_string(), value))
}

/// Distinct counts of keys and endpoints from the indexes: a key per node row (a label with
/// a key index has unique keys); the sources (targets) of an edge table are the nodes with an
/// out- (in-) edge in its CSR, counted where the CSR is in memory (not for deferred ones).
fn key_statistics_from_csr(catalog: &Catalog, idx: &GraphIndexes) {
    for (label, info) in &catalog.nodes {
        if let (Some(p), true) = (
            crate::catalog::key_statistics(&info.table),
            idx.keys.contains_key(label),
        ) {
            p.set_distinct(&info.key, info.table.num_rows);
        }
    }
    let loaded = idx.csr.iter().map(|c| c.as_ref().and_then(|c| c.loaded()));
    for (r, csr) in catalog.rels.iter().zip(loaded) {
        if let (Some(p), Some(csr)) = (crate::catalog::key_statistics(&r.table), csr) {
            let with_edges =
                |c: &crate::csr::Csr| c.offsets.windows(2).filter(|w| w[1] > w[0]).count();
            p.set_distinct(&r.cfg.src, with_edges(&csr.out));
            p.set_distinct(&r.cfg.dst, with_edges(&csr.inc));
        }
    }
}

/// A DataFusion session for `options`; our rules report to `counters`.
fn session(options: &GraphOptions, counters: Arc<RuleCounters>) -> Result<SessionContext> {
    let mut rules = options.rules;
    if options.mode != Mode::Csr {
        // The join path runs none of our rules; key statistics are for its joins.
        rules = RuleSwitches {
            key_statistics: options.rules.key_statistics,
            ..RuleSwitches::none()
        };
    }
    let mut cfg = SessionConfig::new()
        .with_information_schema(false)
        .with_extension(Arc::new(rules))
        .with_option_extension(crate::functions::budget::CypherOptions {
            value_bytes_limit: options.memory_limit.unwrap_or(0),
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
    // DataFusion's `aggregate_statistics` answers count(DISTINCT col) from the column's
    // distinct-count statistic, which counts NULL as a value (`OPTIONAL MATCH (a) RETURN
    // count(DISTINCT a)` on an empty graph gave 1, not 0). Our plans gain nothing from it.
    let mut physical_rules: Vec<_> =
        datafusion::physical_optimizer::optimizer::PhysicalOptimizer::new()
            .rules
            .into_iter()
            .filter(|r| r.name() != "aggregate_statistics")
            .collect();
    // Last: the repartitions and filters it looks at are in place.
    physical_rules.push(Arc::new(crate::optimizer::KeepHeavyRowsApart));

    let mut runtime = datafusion::execution::runtime_env::RuntimeEnvBuilder::new();
    if let Some(bytes) = options.memory_limit {
        runtime = runtime.with_memory_limit(bytes, 1.0);
    }
    let mut b = SessionStateBuilder::new()
        .with_runtime_env(runtime.build_arc()?)
        .with_config(cfg)
        .with_default_features()
        .with_physical_optimizer_rules(physical_rules)
        .with_query_planner(Arc::new(GraphQueryPlanner));
    // Push before prune: columns read only by a pushed filter can then be pruned.
    if rules.push_csr_target_filters {
        b = b.with_optimizer_rule(Arc::new(PushCsrTargetFilters::with_counters(
            counters.clone(),
        )));
    }
    if rules.fold_constants {
        b = b.with_optimizer_rule(Arc::new(FoldConstants::with_counters(counters.clone())));
    }
    if rules.prune_csr_target_columns {
        b = b.with_optimizer_rule(Arc::new(PruneCsrTargetColumns::with_counters(
            counters.clone(),
        )));
    }
    if rules.var_length_distinct_ends {
        b = b.with_optimizer_rule(Arc::new(VarLengthDistinctEnds::new()));
    }
    // After push: the hops' filters must be inside them to be counted per node.
    if rules.factorize_counts {
        b = b.with_optimizer_rule(Arc::new(FactorizeCounts::new()));
    }
    // After factorize: a counted cycle needs no rows at all.
    if rules.intersect_cycles {
        b = b.with_optimizer_rule(Arc::new(IntersectCycles::new()));
    }
    // Last: the subtrees it compares are final.
    if rules.share_subplans {
        let min = options
            .share_min_saved_work
            .unwrap_or(crate::optimizer::share_subplans::DEFAULT_MIN_SAVED_WORK);
        b = b.with_optimizer_rule(Arc::new(ShareSubplans::new(counters.clone(), min)));
    }
    let ctx = SessionContext::new_with_state(b.build());
    // `eliminate_group_by_constant` turns `RETURN 'x' AS k, count(*)` into a global
    // aggregate, which yields one row over no input; a grouped aggregate yields none.
    ctx.remove_optimizer_rule("eliminate_group_by_constant");
    // These push a field access of an UNWIND-ed entity below the Unnest, where the column
    // is still the list (a planning error). Our properties are columns; nothing is lost.
    ctx.remove_optimizer_rule("extract_leaf_expressions");
    ctx.remove_optimizer_rule("push_down_leaf_projections");
    Ok(ctx)
}

/// The options a distributed plan is made with: no shared subplans (sharing needs one
/// process; an executor plans its part of the plan alone).
#[cfg(feature = "distributed")]
fn cluster_options(options: &GraphOptions) -> GraphOptions {
    let mut o = options.clone();
    o.rules.share_subplans = false;
    o
}

/// A client session over the cluster at `url`.
#[cfg(feature = "distributed")]
async fn connect(url: &str, state: SessionState) -> Result<SessionContext> {
    crate::distributed::cluster::connect(url, state)
        .await
        .map_err(|e| Error::Other(format!("cluster {url}: {e}")))
}

/// The session a scheduler or executor plans with, for a client's `config`: the default
/// options' rules (without shared subplans) and removed DataFusion rules, `config`'s settings.
#[cfg(feature = "distributed")]
pub fn cluster_state(
    config: datafusion::prelude::SessionConfig,
) -> datafusion::common::Result<datafusion::execution::SessionState> {
    let options = cluster_options(&GraphOptions::default());
    let state = session(&options, Default::default())
        .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?
        .state();
    let config = config.with_extension(Arc::new(options.rules));
    Ok(SessionStateBuilder::new_from_existing(state)
        .with_config(config)
        .build())
}

impl Graph {
    /// A graph over an opened catalog; in CSR mode its indexes are read or built (and
    /// `reuse`d where unchanged).
    async fn new(
        catalog: Arc<Catalog>,
        options: GraphOptions,
        reuse: Option<&GraphIndexes>,
    ) -> Result<Self> {
        Self::new_with_progress(catalog, options, reuse, &mut |_| {}).await
    }

    async fn new_with_progress(
        catalog: Arc<Catalog>,
        options: GraphOptions,
        reuse: Option<&GraphIndexes>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<Self> {
        let ctx = session(&options, Default::default())?;
        let indexes = if options.mode == Mode::Csr {
            let (idx, _) = open_indexes(
                &catalog,
                &ctx.state(),
                reuse,
                options.defer_indexes,
                progress,
            )
            .await?;
            key_statistics_from_csr(&catalog, &idx);
            Some(Arc::new(idx))
        } else {
            None
        };
        Ok(Self {
            catalog,
            indexes,
            task_ctx: ctx.task_ctx(),
            ctx,
            cache: plan_cache(&options),
            generation: next_generation(),
            options,
            #[cfg(feature = "distributed")]
            cluster: None,
        })
    }

    /// The same graph in another mode (shares tables and indexes).
    pub async fn with_mode(&self, mode: Mode) -> Result<Self> {
        self.with_options(GraphOptions {
            mode,
            ..self.options.clone()
        })
        .await
    }

    /// The same graph with other options (shares tables, and indexes where possible; on the
    /// same cluster).
    pub async fn with_options(&self, options: GraphOptions) -> Result<Self> {
        let local = self.with_local_options(options).await?;
        #[cfg(feature = "distributed")]
        if let Some(url) = &self.cluster {
            return local.with_cluster(url).await;
        }
        Ok(local)
    }

    async fn with_local_options(&self, options: GraphOptions) -> Result<Self> {
        if options.mode == Mode::Csr && self.indexes.is_none() {
            return Self::new(self.catalog.clone(), options, None).await;
        }
        let ctx = session(&options, Default::default())?;
        Ok(Self {
            catalog: self.catalog.clone(),
            indexes: if options.mode == Mode::Csr {
                self.indexes.clone()
            } else {
                None
            },
            task_ctx: ctx.task_ctx(),
            ctx,
            cache: plan_cache(&options),
            generation: next_generation(),
            options,
            #[cfg(feature = "distributed")]
            cluster: None,
        })
    }

    pub fn options(&self) -> &GraphOptions {
        &self.options
    }

    /// Makes the graph's indexes known to this process's registry of graphs plans name (by
    /// the canonical path of its graph.toml, returned).
    #[cfg(feature = "distributed")]
    pub(crate) fn register_for_cluster(&self) -> Result<String> {
        let origin = &self.catalog.config.origin;
        let path = std::fs::canonicalize(origin).map_err(|_| {
            Error::Other(format!(
                "a graph runs on a cluster only when opened from its graph.toml (executors \
                 open it by path); this one is {}",
                if origin.is_empty() {
                    "built in memory"
                } else {
                    origin
                }
            ))
        })?;
        let path = path.to_string_lossy().to_string();
        if let Some(idx) = &self.indexes {
            crate::distributed::registry::register(&path, self.catalog.clone(), idx.clone());
        }
        Ok(path)
    }

    /// The same graph, its queries run on the Ballista cluster whose scheduler is at `url`
    /// (`df://host:port`). Executors open the graph from the same `graph.toml` path, so the
    /// graph must be opened from one that every executor can read (not built in memory).
    /// Plans are not cached (each is planned for its parameters' values), and subplans are
    /// never shared (sharing needs one process).
    #[cfg(feature = "distributed")]
    pub async fn with_cluster(self, url: &str) -> Result<Self> {
        self.register_for_cluster()?;
        let options = cluster_options(&GraphOptions {
            no_plan_cache: true,
            ..self.options.clone()
        });
        let local = session(&options, Default::default())?;
        let ctx = connect(url, local.state()).await?;
        Ok(Self {
            task_ctx: ctx.task_ctx(),
            ctx,
            cache: None,
            generation: next_generation(),
            options,
            cluster: Some(url.to_string()),
            ..self
        })
    }

    /// A session for `options` reporting to `counters`, on this graph's cluster if it has one.
    async fn session_for(&self, counters: Arc<RuleCounters>) -> Result<SessionState> {
        let state = session(&self.options, counters)?.state();
        #[cfg(feature = "distributed")]
        if let Some(url) = &self.cluster {
            return Ok(connect(url, state).await?.state());
        }
        Ok(state)
    }

    /// The labels and relationship tables of the graph, with their properties.
    pub fn schema(&self) -> crate::catalog::GraphSchema {
        self.catalog.schema()
    }

    /// Whether every relationship table has its CSR index (CSR mode, integer node keys): no
    /// hop of this graph falls back to joins.
    pub fn has_all_indexes(&self) -> bool {
        self.indexes
            .as_ref()
            .is_some_and(|i| i.csr.iter().all(|c| c.is_some()))
    }

    /// Opens a graph.toml and builds (or reads) its indexes, reporting each step.
    pub async fn build_indexes(
        path: impl AsRef<Path>,
        progress: &mut dyn FnMut(&str),
    ) -> Result<IndexReport> {
        let config = GraphConfig::from_file(path)?;
        let catalog = Catalog::open(config, &mut BTreeMap::new()).await?;
        let ctx = session(&GraphOptions::default(), Default::default())?;
        let (_, report) = open_indexes(&catalog, &ctx.state(), None, false, progress).await?;
        Ok(report)
    }

    /// Re-reads the datasets' latest versions; indexes of unchanged tables are kept (no work),
    /// changed ones are rebuilt, so no query ever uses a stale index; cached plans (and the
    /// plans of prepared queries) are planned anew. Returns how many index structures were
    /// rebuilt.
    pub async fn refresh(&mut self) -> Result<usize> {
        let config = self.catalog.config.clone();
        if config.nodes.values().any(|n| n.source.starts_with("mem:")) {
            return Ok(0);
        }
        let catalog = Arc::new(Catalog::open(config, &mut BTreeMap::new()).await?);
        if catalog.versions() == self.catalog.versions() {
            // Nothing changed: indexes and cached plans stay.
            return Ok(0);
        }
        let mut built = 0;
        let indexes = match (&self.indexes, self.options.mode) {
            (Some(old), Mode::Csr) => {
                let (idx, report) = open_indexes(
                    &catalog,
                    &self.ctx.state(),
                    Some(old),
                    self.options.defer_indexes,
                    &mut |_| {},
                )
                .await?;
                built = report.built;
                Some(Arc::new(idx))
            }
            _ => None,
        };
        self.catalog = catalog;
        self.indexes = indexes;
        // Plans hold the tables and indexes they were planned over.
        if let Some(c) = &self.cache {
            c.clear();
        }
        self.generation = next_generation();
        Ok(built)
    }

    /// Opens the graph described by a `graph.toml`.
    pub async fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, GraphOptions::default()).await
    }

    pub async fn open_with(path: impl AsRef<Path>, options: GraphOptions) -> Result<Self> {
        let config = GraphConfig::from_file(path)?;
        Self::from_config(config, options).await
    }

    /// Opens the graph of an already loaded configuration (sources are Lance datasets).
    pub async fn from_config(config: GraphConfig, options: GraphOptions) -> Result<Self> {
        let catalog = Catalog::open(config, &mut BTreeMap::new()).await?;
        Self::new(Arc::new(catalog), options, None).await
    }

    /// A graph built from in-memory tables.
    pub fn builder() -> GraphBuilder {
        GraphBuilder::default()
    }

    /// The small sample social network the demo and the doc examples use (in memory).
    pub async fn sample() -> Result<Self> {
        Self::from_tables(
            lance_csr_datasets::sample::tables(),
            GraphOptions::default(),
        )
        .await
    }

    /// A graph over generated tables (in memory), e.g. `lance_csr_datasets::social::generate`.
    pub async fn from_tables(
        tables: Vec<lance_csr_datasets::Table>,
        options: GraphOptions,
    ) -> Result<Self> {
        let mut b = Graph::builder().options(options);
        for t in tables {
            let schema = t.batch.schema();
            b = match t.kind {
                lance_csr_datasets::TableKind::Node { label, id } => {
                    b.node_table(&label, &id, schema, vec![t.batch])
                }
                lance_csr_datasets::TableKind::Rel { rel_type, from, to } => {
                    b.relationship_table(&rel_type, &from, &to, "src", "dst", schema, vec![t.batch])
                }
            };
        }
        b.build().await
    }

    #[cfg(test)]
    pub(crate) fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    pub fn config(&self) -> &GraphConfig {
        &self.catalog.config
    }

    /// Parses and lowers a query to a DataFusion logical plan (unoptimized).
    pub fn plan(&self, query: &str, params: &Params) -> Result<(LogicalPlan, Vec<String>)> {
        let lowered = self.lower(query, params)?;
        Ok((lowered.plan, lowered.columns))
    }

    fn lower(&self, query: &str, params: &Params) -> Result<crate::planner::Lowered> {
        on_planning_stack(|| {
            let ast = cypher::parse_query(query)?;
            Ok(self.lower_ast(&ast, params, false)?.0)
        })?
    }

    /// Binds and lowers a parsed query; `placeholders`: scalar parameters as placeholders
    /// (a plan to cache). Also returns the parameters the plan was built for by value.
    fn lower_ast(
        &self,
        ast: &cypher::ast::Query,
        params: &Params,
        placeholders: bool,
    ) -> Result<(crate::planner::Lowered, std::collections::BTreeSet<String>)> {
        let mut popts = self.options.planner.clone();
        popts.reroot = self.options.mode == Mode::Csr && self.options.rules.reroot;
        let mut lowerer = Lowerer::new(&self.catalog, params, popts)?;
        lowerer.indexes = self.indexes.as_deref();
        lowerer.placeholders = placeholders;
        // Lowering never executes anything: a DataFusion error here is a planning error.
        let lowered = lowerer.lower_query(ast).map_err(Error::while_planning)?;
        Ok((lowered, lowerer.baked.into_inner()))
    }

    /// Runs DataFusion's optimizer (and ours, as switched on) over a lowered plan.
    pub fn optimize(&self, plan: &LogicalPlan) -> Result<LogicalPlan> {
        optimize_on_planning_stack(&self.ctx.state(), plan)
    }

    /// The physical plan of `query`, for the operators' tests.
    #[cfg(test)]
    pub(crate) async fn physical_plan(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(self.physical(query, params).await?.2)
    }

    /// The task context queries run with, for the operators' tests.
    #[cfg(test)]
    pub(crate) fn task_ctx(&self) -> Arc<datafusion::execution::TaskContext> {
        self.task_ctx.clone()
    }

    /// `query` planned for exactly these `params` (parameters lowered as literals), without
    /// the cache: parsed, lowered and optimized on one switch to the planning stack.
    async fn plan_bound(&self, query: &str, params: &Params) -> Result<CachedPlan> {
        let state = self.ctx.state();
        let (lowered, optimized) = on_planning_stack(|| -> Result<_> {
            let ast = cypher::parse_query(query)?;
            let (lowered, _) = self.lower_ast(&ast, params, false)?;
            let optimized = state.optimize(&lowered.plan).map_err(Error::planning)?;
            Ok((lowered, optimized))
        })??;
        let physical = physical_plan(&state, &optimized).await?;
        Ok(CachedPlan {
            columns: lowered.columns,
            schema: Arc::new(optimized.schema().as_arrow().clone()),
            baked: params
                .iter()
                .map(|(k, v)| (k.clone(), Some(v.clone())))
                .collect(),
            logical: optimized,
            physical: Some(physical),
            reuse: Reuse::None,
        })
    }

    /// `query` planned for any values of the kinds of `params` (scalar parameters as
    /// placeholders), as far as its plan allows; a query the placeholders don't suit is
    /// planned for these values ([`Reuse::None`]).
    async fn plan_reusable(&self, query: &str, params: &Params) -> Result<CachedPlan> {
        let state = self.ctx.state();
        let template = on_planning_stack(|| -> Result<_> {
            let ast = cypher::parse_query(query)?;
            // Anything placeholders make fail is planned as written (that reports the error
            // the query has, if any).
            let Ok((lowered, baked)) = self.lower_ast(&ast, params, true) else {
                return Ok(None);
            };
            if calls_unstable_function(&lowered.plan) {
                return Ok(None);
            }
            let Ok(optimized) = state.optimize(&lowered.plan) else {
                return Ok(None);
            };
            Ok(Some((lowered, baked, optimized)))
        })??;
        let Some((lowered, baked, optimized)) = template else {
            return self.plan_bound(query, params).await;
        };
        let mut reuse = reuse_of_optimized(&optimized);
        if reuse == Reuse::None {
            return self.plan_bound(query, params).await;
        }
        let mut physical = None;
        if reuse == Reuse::Physical {
            match physical_plan(&state, &optimized).await {
                Ok(p) if physical_reusable(&p) => physical = Some(p),
                _ => reuse = Reuse::Logical,
            }
        }
        Ok(CachedPlan {
            columns: lowered.columns,
            schema: Arc::new(optimized.schema().as_arrow().clone()),
            baked: baked
                .into_iter()
                .map(|k| {
                    let v = params.get(&k).cloned();
                    (k, v)
                })
                .collect(),
            logical: optimized,
            physical,
            reuse,
        })
    }

    /// The plan of `query` for `params`: from the plan cache, or planned (and cached where
    /// it can run again).
    async fn cached_plan(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<(Arc<CachedPlan>, CacheUse)> {
        let Some(cache) = &self.cache else {
            return Ok((
                Arc::new(self.plan_bound(query, params).await?),
                CacheUse::Off,
            ));
        };
        let key = PlanKey::new(query, params);
        if let Some(p) = cache.get(&key, params) {
            let reuse = p.reuse;
            return Ok((p, CacheUse::Hit(reuse)));
        }
        let plan = Arc::new(self.plan_reusable(query, params).await?);
        if plan.reuse != Reuse::None {
            cache.insert(key, plan.clone());
        }
        let reuse = plan.reuse;
        Ok((plan, CacheUse::Miss(reuse)))
    }

    /// The physical plan that runs `plan` with `params`' values.
    async fn executable(
        &self,
        plan: &CachedPlan,
        params: &Params,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match (&plan.physical, plan.reuse) {
            // Planned for these values, runs once.
            (Some(p), Reuse::None) => Ok(p.clone()),
            (Some(p), _) => {
                let values = Arc::new(param_values(params)?);
                bind_physical_plan(p, values).map_err(Error::planning)
            }
            (None, _) => {
                let values = param_values(params)?;
                let bound = bind_logical(&plan.logical, &values).map_err(Error::planning)?;
                physical_plan(&self.ctx.state(), &bound).await
            }
        }
    }

    /// The plan of `query` to execute with `params`: the result's column names and schema,
    /// and the physical plan.
    async fn physical(
        &self,
        query: &str,
        params: &Params,
    ) -> Result<(Vec<String>, SchemaRef, Arc<dyn ExecutionPlan>)> {
        let (plan, _) = self.cached_plan(query, params).await?;
        let physical = self.executable(&plan, params).await?;
        Ok((plan.columns.clone(), plan.schema.clone(), physical))
    }

    /// Runs `query` once, phase by phase, and times each phase (`lance-csr bench --phases`):
    /// where the time of a query goes. A query whose plan is cached times the cache lookup
    /// and binding as `cache`; the planning phases are then zero.
    pub async fn time_phases(&self, query: &str, params: &Params) -> Result<PhaseTimes> {
        use std::time::Instant;
        let start = Instant::now();
        if let Some(cache) = &self.cache {
            if let Some(plan) = cache.get(&PlanKey::new(query, params), params) {
                let physical = self.executable(&plan, params).await?;
                let cache = start.elapsed();
                let t = Instant::now();
                let rows = self.collect_rows(physical).await?;
                return Ok(PhaseTimes {
                    cache,
                    execute: t.elapsed(),
                    total: start.elapsed(),
                    rows,
                    ..Default::default()
                });
            }
        }
        let state = self.ctx.state();
        let session = start.elapsed();
        let trip = Instant::now();
        let (parse, lower, optimize, optimized) = on_planning_stack(|| -> Result<_> {
            let t = Instant::now();
            let ast = cypher::parse_query(query)?;
            let parse = t.elapsed();
            let t = Instant::now();
            let (lowered, _) = self.lower_ast(&ast, params, false)?;
            let lower = t.elapsed();
            let t = Instant::now();
            let optimized = state.optimize(&lowered.plan).map_err(Error::planning)?;
            Ok((parse, lower, t.elapsed(), optimized))
        })??;
        let planning_stack = trip.elapsed().saturating_sub(parse + lower + optimize);
        let t = Instant::now();
        let physical = physical_plan(&state, &optimized).await?;
        let physical_planning = t.elapsed();
        let t = Instant::now();
        let rows = self.collect_rows(physical).await?;
        let execute = t.elapsed();
        // Cache the plan as a query would, so that the next run times the cached path.
        if self.cache.is_some() {
            self.cached_plan(query, params).await?;
        }
        Ok(PhaseTimes {
            session,
            planning_stack,
            parse,
            bind_and_lower: lower,
            optimize,
            physical_planning,
            cache: Default::default(),
            execute,
            total: start.elapsed(),
            rows,
        })
    }

    /// Runs `physical` to its end under the graph's limits; the number of rows.
    async fn collect_rows(&self, physical: Arc<dyn ExecutionPlan>) -> Result<usize> {
        let batches = self.collect_limited(physical).await?;
        Ok(batches.iter().map(|b| b.num_rows()).sum())
    }

    /// Runs `physical` to its end under the graph's limits; its batches.
    async fn collect_limited(
        &self,
        physical: Arc<dyn ExecutionPlan>,
    ) -> Result<Vec<arrow::array::RecordBatch>> {
        self.limited(async {
            collect(physical, self.task_ctx.clone())
                .await
                .map_err(|e| memory_error(self.options.memory_limit, e))
        })
        .await
    }

    /// Runs a query and collects its result.
    pub async fn query(&self, query: &str, params: &Params) -> Result<QueryResult> {
        self.query_stream(query, params).await?.collect().await
    }

    /// Runs a query and hands its result over batch by batch, as it is computed (for output
    /// that needn't hold all rows at once). The time limit covers planning and every batch.
    pub async fn query_stream(&self, query: &str, params: &Params) -> Result<ResultStream> {
        self.stream_with(async { self.physical(query, params).await })
            .await
    }

    /// `run` under the graph's time limit, if it has one. Dropping the execution on
    /// timeout stops its operators (DataFusion aborts the tasks it spawned).
    async fn limited<T>(&self, run: impl std::future::Future<Output = Result<T>>) -> Result<T> {
        match self.options.timeout {
            None => run.await,
            Some(limit) => match tokio::time::timeout(limit, run).await {
                Ok(r) => r,
                Err(_) => Err(time_limit_error(limit)),
            },
        }
    }

    /// Starts the plan `plan` gives, under the graph's limits.
    async fn stream_with(
        &self,
        plan: impl std::future::Future<
            Output = Result<(Vec<String>, SchemaRef, Arc<dyn ExecutionPlan>)>,
        >,
    ) -> Result<ResultStream> {
        let deadline = self
            .options
            .timeout
            .map(|t| tokio::time::Instant::now() + t);
        let start = self.limited(async {
            let (columns, schema, physical) = plan.await?;
            let stream =
                datafusion::physical_plan::execute_stream(physical.clone(), self.task_ctx.clone())?;
            Ok((columns, schema, stream, physical))
        });
        let (columns, schema, stream, _physical) = start.await?;
        Ok(ResultStream {
            columns,
            schema,
            stream,
            deadline,
            timeout: self.options.timeout,
            memory_limit: self.options.memory_limit,
            #[cfg(feature = "distributed")]
            job: self
                .cluster
                .as_deref()
                .map(|url| crate::distributed::cluster::JobGuard::new(url, _physical)),
        })
    }

    /// Prepares `query` for repeated execution: parsed now (a syntax error is reported
    /// here), planned at its first execution for the kinds of the parameters given, and from
    /// then on executed with new values without parsing, binding or optimizing again.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use lance_csr::{param, Graph, Params};
    /// let graph = Graph::sample().await.unwrap();
    /// let friends = graph
    ///     .prepare("MATCH (p:Person {firstName: $name})-[:KNOWS]->(f:Person) RETURN count(f) AS n")
    ///     .unwrap();
    /// for name in ["Ann", "Bob", "Nobody"] {
    ///     let params = Params::from([("name".to_string(), param(name))]);
    ///     let prepared = lance_csr::rows(&friends.query(&graph, &params).await.unwrap());
    ///     let planned = lance_csr::rows(&graph.query(friends.text(), &params).await.unwrap());
    ///     assert_eq!(prepared, planned);
    ///     if name == "Ann" {
    ///         assert_eq!(prepared, vec![vec!["2".to_string()]]);
    ///     }
    /// }
    /// # });
    /// ```
    pub fn prepare(&self, query: &str) -> Result<Prepared> {
        on_planning_stack(|| cypher::parse_query(query))??;
        Ok(Prepared {
            text: query.into(),
            plans: Default::default(),
        })
    }

    /// Runs the query and returns the physical plan annotated with each operator's metrics.
    pub async fn explain_analyze(&self, query: &str, params: &Params) -> Result<String> {
        #[cfg(feature = "distributed")]
        if self.cluster.is_some() {
            return self.explain_analyze_on_cluster(query, params).await;
        }
        let (_, _, physical) = self.physical(query, params).await?;
        let rows = self.collect_rows(physical.clone()).await?;
        Ok(format!(
            "== physical plan with metrics ({rows} rows) ==\n{}",
            datafusion::physical_plan::display::DisplayableExecutionPlan::with_metrics(
                physical.as_ref()
            )
            .indent(false)
        ))
    }

    /// On a cluster: the job's stages with their operators' metrics (the scheduler's), the
    /// rows it produced and the rows its stages wrote for other stages (shuffled).
    #[cfg(feature = "distributed")]
    async fn explain_analyze_on_cluster(&self, query: &str, params: &Params) -> Result<String> {
        let url = self.cluster.as_deref().unwrap_or_default();
        let plan = self.plan_bound(query, params).await?;
        let physical = physical_plan(&self.ctx.state(), &plan.logical).await?;
        let rows = self.collect_rows(physical.clone()).await?;
        let stages = crate::distributed::cluster::job_stages(url, &physical)
            .await
            .map_err(|e| Error::Other(format!("cluster {url}: {e}")))?;
        // The last stage writes the result for the client; the others, for the next stage.
        let shuffled: u64 = stages.iter().rev().skip(1).map(|s| s.written).sum();
        let mut text = String::from("== stages with metrics ==\n");
        for s in &stages {
            text.push_str(&format!(
                "stage {} ({} partitions, {} rows written):\n{}\n",
                s.id, s.partitions, s.written, s.plan
            ));
        }
        text.push_str(&format!(
            "== {rows} rows; rows shuffled between stages: {shuffled} =="
        ));
        Ok(text)
    }

    /// Where the plan of `query` comes from (the plan cache), the logical plan (as lowered,
    /// then optimized) and the physical plan, as text; for a plan the cache keeps
    /// physically, also that plan, parameters shown as `$name`.
    pub async fn explain(&self, query: &str, params: &Params) -> Result<String> {
        let (cached, cache_use) = self.cached_plan(query, params).await?;
        let lowered = self.lower(query, params)?;
        let plan = lowered.plan;
        // A session of its own, so that the counters are this query's.
        let counters = Arc::new(RuleCounters::default());
        let state = self.session_for(counters.clone()).await?;
        let optimized = optimize_on_planning_stack(&state, &plan)?;
        let physical = physical_plan(&state, &optimized).await?;
        let rewrites = if lowered.notes.is_empty() {
            String::new()
        } else {
            format!("== pattern order ==\n{}\n\n", lowered.notes.join("\n"))
        };
        let kept = match (&cached.physical, cached.reuse) {
            (Some(p), Reuse::Physical) => format!(
                "\n\n== cached physical plan ==\n{}",
                displayable(p.as_ref()).indent(false)
            ),
            (_, Reuse::Logical) => format!(
                "\n\n== cached logical plan ==\n{}",
                cached.logical.display_indent()
            ),
            _ => String::new(),
        };
        Ok(format!(
            "{rewrites}== logical plan ==\n{}\n\n== optimized logical plan ==\n{}\n\n== rule counters ==\n{counters}\n\n== physical plan ==\n{}{kept}\n\n== plan cache ==\n{cache_use}",
            plan.display_indent(),
            optimized.display_indent(),
            displayable(physical.as_ref()).indent(false)
        ))
    }
}

/// A query prepared for repeated execution ([`Graph::prepare`]): one plan per kind of
/// parameters it was executed with, kept for as long as the handle lives (not evicted like
/// the plan cache's), and planned anew for another graph or after [`Graph::refresh`].
pub struct Prepared {
    text: Arc<str>,
    /// By parameter kinds: the graph generation it was planned for, and the plan.
    plans: std::sync::Mutex<Vec<(PlanKey, u64, Arc<CachedPlan>)>>,
}

impl Prepared {
    /// The query text.
    pub fn text(&self) -> &str {
        &self.text
    }

    async fn plan(&self, graph: &Graph, params: &Params) -> Result<Arc<CachedPlan>> {
        let key = PlanKey::new(&self.text, params);
        let found = {
            let plans = self.plans.lock().expect("prepared plans lock");
            plans
                .iter()
                .find(|(k, g, p)| k == &key && *g == graph.generation && p.serves(params))
                .map(|(_, _, p)| p.clone())
        };
        if let Some(p) = found {
            return Ok(p);
        }
        let plan = Arc::new(graph.plan_reusable(&self.text, params).await?);
        if plan.reuse != Reuse::None {
            let mut plans = self.plans.lock().expect("prepared plans lock");
            plans.retain(|(k, g, _)| k != &key && *g == graph.generation);
            plans.push((key, graph.generation, plan.clone()));
        }
        Ok(plan)
    }

    /// Runs the query on `graph` with `params` and collects its result.
    pub async fn query(&self, graph: &Graph, params: &Params) -> Result<QueryResult> {
        self.query_stream(graph, params).await?.collect().await
    }

    /// Runs the query on `graph` with `params`, its result batch by batch.
    pub async fn query_stream(&self, graph: &Graph, params: &Params) -> Result<ResultStream> {
        graph
            .stream_with(async {
                let plan = self.plan(graph, params).await?;
                let physical = graph.executable(&plan, params).await?;
                Ok((plan.columns.clone(), plan.schema.clone(), physical))
            })
            .await
    }
}

/// Stack size parsing, lowering and optimizing a query run with. Expressions as deep as the
/// parser accepts recurse in the lowering and in DataFusion's expression naming and
/// formatting, which no stack guard covers; the pages are only committed when touched.
const PLANNING_STACK: usize = 256 << 20;

/// Runs `f` on a [`PLANNING_STACK`]-sized stack: a segment of its own on the current thread
/// (no thread to start and join per query). A panic inside is a broken invariant: an
/// `Error::Internal`, not an abort of the caller.
fn on_planning_stack<T>(f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        stacker::grow(PLANNING_STACK, f)
    }))
    .map_err(|p| {
        let what = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Error::Internal(format!("planning panicked: {what}"))
    })
}

/// The physical plan of an optimized plan. (`SessionState::create_physical_plan` would
/// optimize it again.)
async fn physical_plan(
    state: &datafusion::execution::SessionState,
    optimized: &LogicalPlan,
) -> Result<Arc<dyn ExecutionPlan>> {
    state
        .query_planner()
        .create_physical_plan(optimized, state)
        .await
        .map_err(Error::planning)
}

fn optimize_on_planning_stack(
    state: &datafusion::execution::SessionState,
    plan: &LogicalPlan,
) -> Result<LogicalPlan> {
    on_planning_stack(|| state.optimize(plan))?.map_err(Error::planning)
}

/// Where one run of a query spent its time ([`Graph::time_phases`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct PhaseTimes {
    /// Taking the session state the query plans with.
    pub session: std::time::Duration,
    /// Switching to the big planning stack and back.
    pub planning_stack: std::time::Duration,
    pub parse: std::time::Duration,
    /// Binding (names, patterns, parameters) and lowering to a DataFusion logical plan.
    pub bind_and_lower: std::time::Duration,
    /// DataFusion's optimizer with our rules.
    pub optimize: std::time::Duration,
    pub physical_planning: std::time::Duration,
    /// Finding the plan in the plan cache and binding the parameters (a cached plan: the
    /// phases before are then zero).
    pub cache: std::time::Duration,
    /// Running the physical plan to its last batch.
    pub execute: std::time::Duration,
    pub total: std::time::Duration,
    pub rows: usize,
}

/// A query's result as it is computed ([`Graph::query_stream`]).
pub struct ResultStream {
    /// The result's column names, as the query wrote them.
    pub columns: Vec<String>,
    pub schema: SchemaRef,
    stream: datafusion::physical_plan::SendableRecordBatchStream,
    deadline: Option<tokio::time::Instant>,
    timeout: Option<std::time::Duration>,
    memory_limit: Option<usize>,
    /// The cluster job behind the stream, cancelled if the stream ends early.
    #[cfg(feature = "distributed")]
    job: Option<crate::distributed::cluster::JobGuard>,
}

impl ResultStream {
    /// Reads every remaining batch.
    pub async fn collect(mut self) -> Result<QueryResult> {
        let mut batches = Vec::new();
        while let Some(b) = self.next_batch().await? {
            batches.push(b);
        }
        Ok(QueryResult {
            columns: self.columns,
            schema: self.schema,
            batches,
        })
    }

    /// The next batch of rows; `None` at the end.
    pub async fn next_batch(&mut self) -> Result<Option<arrow::array::RecordBatch>> {
        use futures::StreamExt;
        let next = match (self.deadline, self.timeout) {
            (Some(d), Some(limit)) => {
                // Past the deadline even when a batch is ready: a reader slower than the query
                // (printing) would otherwise always find one.
                if tokio::time::Instant::now() >= d {
                    return Err(self.time_limit_error(limit));
                }
                match tokio::time::timeout_at(d, self.stream.next()).await {
                    Ok(next) => next,
                    Err(_) => return Err(self.time_limit_error(limit)),
                }
            }
            _ => self.stream.next().await,
        };
        let next = next
            .transpose()
            .map_err(|e| memory_error(self.memory_limit, e));
        #[cfg(feature = "distributed")]
        if matches!(next, Ok(None) | Err(_)) {
            if let Some(j) = self.job.as_mut() {
                j.finished();
            }
        }
        next
    }

    /// The time limit's error; for a cluster job (which is cancelled), what to check.
    fn time_limit_error(&self, limit: std::time::Duration) -> Error {
        let e = time_limit_error(limit);
        #[cfg(feature = "distributed")]
        if let (Error::Limit(m), Some(j)) = (&e, &self.job) {
            return Error::Limit(format!(
                "{m}; the job on the cluster at {} was cancelled (a job that never ends: are \
                 its executors running? The scheduler logs executors it lost)",
                j.url()
            ));
        }
        e
    }
}

fn time_limit_error(limit: std::time::Duration) -> Error {
    Error::Limit(format!(
        "the query ran longer than the time limit of {} (--timeout)",
        humantime(limit)
    ))
}

/// A DataFusion error, as [`Error::Limit`] when the memory pool refused an allocation.
fn memory_error(limit: Option<usize>, e: datafusion::error::DataFusionError) -> Error {
    let exhausted = matches!(
        e.find_root(),
        datafusion::error::DataFusionError::ResourcesExhausted(_)
    );
    match (exhausted, limit) {
        (true, Some(bytes)) => Error::Limit(format!(
            "the query needs more memory than the limit of {} (--memory-limit): {}",
            human_bytes(bytes),
            e.find_root()
        )),
        _ => e.into(),
    }
}

/// `90s`, `1.5s`, `250ms`.
fn humantime(d: std::time::Duration) -> String {
    if d.as_millis() < 1000 {
        format!("{}ms", d.as_millis())
    } else {
        format!("{}s", d.as_secs_f64())
    }
}

/// `512 MB`, `2 GB`, `1000 bytes`.
pub fn human_bytes(n: usize) -> String {
    const UNITS: [(usize, &str); 3] = [(1 << 30, "GB"), (1 << 20, "MB"), (1 << 10, "KB")];
    for (size, unit) in UNITS {
        if n >= size {
            let x = n as f64 / size as f64;
            return format!("{} {unit}", (x * 100.0).round() / 100.0);
        }
    }
    format!("{n} bytes")
}

/// A size as `--memory-limit` takes it: bytes, or a number with KB, MB, GB (powers of 1024;
/// case and a space before the unit don't matter).
pub fn parse_bytes(s: &str) -> std::result::Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, mult) = [
        ("GB", 1usize << 30),
        ("MB", 1 << 20),
        ("KB", 1 << 10),
        ("B", 1),
    ]
    .iter()
    .find_map(|(u, m)| t.strip_suffix(u).map(|n| (n.trim().to_string(), *m)))
    .unwrap_or((t.clone(), 1));
    let x: f64 = num
        .parse()
        .map_err(|_| format!("expected a size like 512MB or 2GB, got `{s}`"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("a memory limit must be positive, got `{s}`"));
    }
    Ok((x * mult as f64) as usize)
}

/// A duration as `--timeout` takes it: seconds, or a number with `ms`, `s`, `m` or `h`.
pub fn parse_duration(s: &str) -> std::result::Result<std::time::Duration, String> {
    let t = s.trim().to_ascii_lowercase();
    let (num, secs) = [("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)]
        .iter()
        .find_map(|(u, k)| t.strip_suffix(u).map(|n| (n.trim().to_string(), *k)))
        .unwrap_or((t.clone(), 1.0));
    let x: f64 = num
        .parse()
        .map_err(|_| format!("expected a duration like 30s, 500ms or 2m, got `{s}`"))?;
    if !(x.is_finite() && x > 0.0) {
        return Err(format!("a time limit must be positive, got `{s}`"));
    }
    Ok(std::time::Duration::from_secs_f64(x * secs))
}
