//! The library API: open a graph (`open.rs`), run queries with parameters and get Arrow
//! RecordBatches (`query.rs`, as they are computed: `stream.rs`), explain them (`explain.rs`),
//! follow the datasets as writers change them (`follow.rs`).
//! Options are `config::options`; the DataFusion session is `optimizer::session`'s.

mod explain;
mod follow;
mod open;
mod query;
mod stream;

pub use explain::PhaseTimes;
pub use follow::LiveGraph;
pub use open::GraphBuilder;
pub use query::Prepared;
pub(crate) use stream::time_limit_error;
pub use stream::{human_bytes, ResultStream};

use crate::catalog::Catalog;
use crate::config::GraphConfig;
use crate::csr::registry::{open_indexes, IndexReport};
use crate::csr::GraphIndexes;
use crate::error::{Error, LimitKind, Result};
use crate::functions::value::Value;
use crate::operators::params::{
    bind_logical, bind_physical_plan, calls_unstable_function, mark_params, params_in_place,
    physical_reusable, reuse_of_optimized, Reuse,
};
#[cfg(feature = "distributed")]
use crate::optimizer::session::cluster_options;
use crate::optimizer::session::session;
use crate::optimizer::RuleCounters;
use crate::plan_cache::{param_values, CacheUse, CachedPlan, PerThread, PlanCache, PlanKey};
use crate::planner::{Lowerer, Params};
use arrow::array::RecordBatch;
use arrow::datatypes::SchemaRef;
use datafusion::execution::context::SessionContext;
use datafusion::execution::SessionState;
use datafusion::logical_expr::LogicalPlan;
use datafusion::physical_plan::{collect, displayable, ExecutionPlan};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub use crate::config::options::GraphOptions;
pub use crate::config::rules::Mode;
pub use crate::output::QueryResult;

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

/// One line per relationship table of the graph at `config` (its graph.toml): whether its
/// index exists and is up to date (checksum and contents checked), and its size.
pub async fn index_status(config: impl AsRef<Path>) -> Result<Vec<String>> {
    let config = GraphConfig::from_file(config)?;
    let searches = crate::storage::search_index::status(&config).await?;
    let catalog = Catalog::open(config, &mut BTreeMap::new()).await?;
    let mut lines = crate::csr::registry::index_status(&catalog);
    lines.extend(searches);
    Ok(lines)
}

/// Tags every dataset of the graph at `config` (its graph.toml) at its current version with
/// `tag` (Lance's tags), so that `GraphOptions::as_of(AsOf::Tag(tag))` reads the graph as it
/// is now. Returns each dataset with the version tagged. A tag that exists on a dataset is
/// an error, before any dataset is tagged.
pub async fn tag_graph(config: impl AsRef<Path>, tag: &str) -> Result<Vec<(String, u64)>> {
    let config = GraphConfig::from_file(config)?;
    let sources: std::collections::BTreeSet<std::path::PathBuf> = (config.nodes.values())
        .map(|n| config.resolve(&n.source))
        .chain(
            config
                .relationships
                .iter()
                .map(|r| config.resolve(&r.source)),
        )
        .collect();
    crate::storage::tag_datasets(sources.into_iter().collect(), tag).await
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
    progress: &mut (dyn FnMut(&str) + Send),
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

/// Deletes the index files (`_csr/*.csr`, `*.keys`, and past states' `_csr/at/`) of the graph at `graph` (its config file
/// or folder), so that the next build writes every one anew.
pub fn remove_index_files(graph: &Path) -> Result<()> {
    let base = if graph.is_dir() {
        graph
    } else {
        graph.parent().unwrap_or(Path::new("."))
    };
    let dir = crate::csr::persist::index_dir(base);
    let at = dir.join("at");
    if at.exists() {
        std::fs::remove_dir_all(&at).map_err(|err| {
            Error::storage_caused(format!("removing index folder {}", at.display()), err)
        })?;
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "csr" || x == "keys") {
            std::fs::remove_file(&p).map_err(|err| {
                Error::storage_caused(format!("removing index file {}", p.display()), err)
            })?;
        }
    }
    Ok(())
}

/// A parameter value from a Rust value (string, integer, float, bool, a list of them).
pub fn param(v: impl Into<Value>) -> Value {
    v.into()
}
