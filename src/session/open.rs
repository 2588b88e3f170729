//! Opening a graph: from a graph.toml or Arrow tables, with options, on a cluster; refreshing it.

use super::*;

/// The time limit of a cluster's queries where none is given.
#[cfg(feature = "distributed")]
pub const CLUSTER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

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
        self.tables.insert(source.clone(), (schema, batches));
        self.node_dataset(label, &source, id)
    }

    /// A node table read from the Lance dataset at `uri` (a folder path): `label`'s nodes are
    /// its rows, keyed by column `id`. In-memory and Lance tables mix in one graph.
    pub fn node_dataset(mut self, label: &str, uri: &str, id: &str) -> Self {
        self.config = self.config.node(label, uri, id);
        self
    }

    /// A relationship table read from the Lance dataset at `uri` (see
    /// [`Self::relationship_table`]).
    pub fn relationship_dataset(
        mut self,
        rel_type: &str,
        from: &str,
        to: &str,
        src: &str,
        dst: &str,
        uri: &str,
    ) -> Self {
        self.config = self.config.relationship(rel_type, from, to, uri, src, dst);
        self
    }

    /// Marks `label`'s key column as a row identifier, not a property (see
    /// `NodeTable::id_hidden`).
    pub fn hidden_key(mut self, label: &str) -> Self {
        self.config = self.config.hidden_key(label);
        self
    }

    /// Gives the node table `table` the labels `labels` (by default its name; see
    /// `NodeTable::labels`).
    pub fn labels(mut self, table: &str, labels: &[&str]) -> Self {
        self.config = self.config.labels(table, labels);
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
        self.tables.insert(source.clone(), (schema, batches));
        self.relationship_dataset(rel_type, from, to, src, dst, &source)
    }

    /// Declares a vector or full-text index over a table (see `IndexDecl`): a table in
    /// memory is searched exactly (vectors only), a Lance dataset through Lance.
    pub fn index(mut self, index: crate::config::IndexDecl) -> Self {
        self.config = self.config.index(index);
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

/// Distinct counts of keys and endpoints from the indexes: a key per node row (a label with
/// a key index has unique keys); the sources (targets) of an edge table are the nodes with an
/// out- (in-) edge in its CSR, counted where the CSR is in memory (not for deferred ones).
pub(super) fn key_statistics_from_csr(catalog: &Catalog, idx: &GraphIndexes) {
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
            p.set_distinct(&r.cfg.src, csr.out.with_edges);
            p.set_distinct(&r.cfg.dst, csr.inc.with_edges);
        }
    }
}

/// A client session over the cluster at `url`.
#[cfg(feature = "distributed")]
pub(super) async fn connect(url: &str, state: SessionState) -> Result<SessionContext> {
    crate::distributed::cluster::connect(url, state)
        .await
        .map_err(|source| Error::Cluster {
            url: url.to_string(),
            source,
        })
}

impl Graph {
    /// A graph over an opened catalog; in CSR mode its indexes are read or built (and
    /// `reuse`d where unchanged).
    pub(super) async fn new(
        catalog: Arc<Catalog>,
        options: GraphOptions,
        reuse: Option<&GraphIndexes>,
    ) -> Result<Self> {
        Self::new_with_progress(catalog, options, reuse, &mut |_| {}).await
    }

    pub(super) async fn new_with_progress(
        catalog: Arc<Catalog>,
        options: GraphOptions,
        reuse: Option<&GraphIndexes>,
        progress: &mut (dyn FnMut(&str) + Send),
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
        Ok(Self::local(catalog, indexes, ctx, options))
    }

    /// A graph in this process over `ctx` (a new generation: no prepared plan carries over).
    fn local(
        catalog: Arc<Catalog>,
        indexes: Option<Arc<GraphIndexes>>,
        ctx: SessionContext,
        options: GraphOptions,
    ) -> Self {
        Self {
            catalog,
            indexes,
            task_ctx: ctx.task_ctx(),
            ctx,
            cache: plan_cache(&options),
            generation: next_generation(),
            options,
            #[cfg(feature = "distributed")]
            cluster: None,
        }
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

    pub(super) async fn with_local_options(&self, options: GraphOptions) -> Result<Self> {
        if options.mode == Mode::Csr && self.indexes.is_none() {
            return Self::new(self.catalog.clone(), options, None).await;
        }
        let ctx = session(&options, Default::default())?;
        let indexes = (options.mode == Mode::Csr)
            .then(|| self.indexes.clone())
            .flatten();
        Ok(Self::local(self.catalog.clone(), indexes, ctx, options))
    }

    pub fn options(&self) -> &GraphOptions {
        &self.options
    }

    /// Makes the graph's indexes known to this process's registry of graphs plans name (by
    /// the canonical path of its graph.toml, returned).
    #[cfg(feature = "distributed")]
    pub(crate) fn register_for_cluster(&self) -> Result<String> {
        if let Some(at) = &self.catalog.config.as_of {
            return Err(Error::Other(format!(
                "a graph read as of {at} runs in one process only (executors open the latest)"
            )));
        }
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
    /// never shared (sharing needs one process). Without a time limit, queries get
    /// [`CLUSTER_TIMEOUT`]: a cluster whose executors are gone (or never came) would otherwise
    /// keep a query waiting without end.
    #[cfg(feature = "distributed")]
    pub async fn with_cluster(self, url: &str) -> Result<Self> {
        self.register_for_cluster()?;
        let options = cluster_options(&GraphOptions {
            no_plan_cache: true,
            timeout: self.options.timeout.or(Some(CLUSTER_TIMEOUT)),
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
    pub(super) async fn session_for(&self, counters: Arc<RuleCounters>) -> Result<SessionState> {
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

    /// The indexes, for the rewrites' tests.
    #[cfg(test)]
    pub(crate) fn indexes(&self) -> Option<&crate::csr::GraphIndexes> {
        self.indexes.as_deref()
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
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<IndexReport> {
        Self::build_indexes_with(path, false, progress).await
    }

    /// [`Self::build_indexes`]; `rebuild_search` rebuilds the declared vector and full-text
    /// indexes too (they are built first: each build is a new version of its dataset, which
    /// the CSR indexes are then stamped with).
    pub async fn build_indexes_with(
        path: impl AsRef<Path>,
        rebuild_search: bool,
        progress: &mut (dyn FnMut(&str) + Send),
    ) -> Result<IndexReport> {
        let config = GraphConfig::from_file(path)?;
        let searched =
            crate::storage::search_index::build(&config, rebuild_search, progress).await?;
        let catalog = Catalog::open(config, &mut BTreeMap::new()).await?;
        let ctx = session(&GraphOptions::default(), Default::default())?;
        let (_, mut report) = open_indexes(&catalog, &ctx.state(), None, false, progress).await?;
        report.built += searched;
        Ok(report)
    }

    /// Opens the graph at `path` as it was at `as_of` (a version, a tag or a time; see
    /// [`AsOf`](crate::AsOf)), with default options otherwise.
    pub async fn open_at(path: impl AsRef<Path>, as_of: crate::AsOf) -> Result<Self> {
        Self::open_with(path, GraphOptions::default().with_as_of(as_of)).await
    }

    /// Re-reads the datasets' latest versions; indexes of unchanged tables are kept (no work),
    /// changed ones are rebuilt, so no query ever uses a stale index; cached plans (and the
    /// plans of prepared queries) are planned anew. Returns how many index structures were
    /// rebuilt.
    pub async fn refresh(&mut self) -> Result<usize> {
        match self.refreshed().await? {
            Some((graph, built)) => {
                *self = graph;
                Ok(built)
            }
            None => Ok(0),
        }
    }

    /// Whether a dataset has a version newer than this graph reads: a cheap look for polling
    /// ([`Graph::refreshed`] reads every dataset's latest manifest, and tells a dataset
    /// deleted and made again with the same version number, which this does not).
    pub async fn moved(&self) -> bool {
        if self.catalog.config.as_of.is_some() {
            return false;
        }
        for t in self.catalog.tables() {
            if t.stale().await {
                return true;
            }
        }
        false
    }

    /// The graph of the datasets' latest state, if it differs from this one's, and how many
    /// index structures were rebuilt for it (those of unchanged tables are shared); this
    /// graph is left as it was, so queries may go on reading it meanwhile
    /// ([`LiveGraph`](crate::LiveGraph) swaps the new one in). `None` for a graph read as it
    /// was (`as_of`) or over in-memory tables.
    pub async fn refreshed(&self) -> Result<Option<(Graph, usize)>> {
        let config = self.catalog.config.clone();
        if config.as_of.is_some() || self.catalog.tables().any(|t| t.version.is_none()) {
            return Ok(None);
        }
        let catalog = Arc::new(Catalog::open(config, &mut BTreeMap::new()).await?);
        // The same states in manifests rewritten (a copy, a touch): taken, their indexes
        // shared, so that the next look does not see them as moved again.
        if catalog.versions() == self.catalog.versions()
            && catalog.manifest_tags() == self.catalog.manifest_tags()
        {
            return Ok(None);
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
                key_statistics_from_csr(&catalog, &idx);
                built = report.built;
                Some(Arc::new(idx))
            }
            _ => None,
        };
        // A new generation with a plan cache of its own: plans hold the tables and indexes
        // they were planned over.
        Ok(Some((
            Graph {
                catalog,
                indexes,
                ctx: self.ctx.clone(),
                task_ctx: self.task_ctx.clone(),
                cache: plan_cache(&self.options),
                generation: next_generation(),
                options: self.options.clone(),
                #[cfg(feature = "distributed")]
                cluster: self.cluster.clone(),
            },
            built,
        )))
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
    pub async fn from_config(mut config: GraphConfig, options: GraphOptions) -> Result<Self> {
        if options.as_of.is_some() {
            config.as_of = options.as_of.clone();
        }
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
                lance_csr_datasets::TableKind::Node {
                    label,
                    id,
                    extra_labels,
                } => {
                    let b = b.node_table(&label, &id, schema, vec![t.batch]);
                    if extra_labels.is_empty() {
                        b
                    } else {
                        let mut all = vec![label.as_str()];
                        all.extend(extra_labels.iter().map(String::as_str));
                        b.labels(&label, &all)
                    }
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
}
