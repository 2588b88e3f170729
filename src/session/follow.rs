//! A graph that follows its datasets as writers change them: the graph of the latest state is
//! built beside the one queries read (indexes of changed tables rebuilt, the others shared)
//! and swapped in whole, so a query reads one state from start to end, and never waits for
//! an index build unless the state it started on is gone.

use super::{Graph, Prepared, ResultStream};
use crate::error::{Error, Result};
use crate::output::QueryResult;
use crate::planner::Params;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

/// A [`Graph`] kept at its datasets' latest state: [`LiveGraph::refresh`] on demand, or
/// [`LiveGraph::follow`] in the background. The server and the Python package read their
/// graph through one.
///
/// A query starts on the state current then. A state whose files a writer removed
/// (`compact_files` and `cleanup_old_versions`, a dataset replaced) fails to read; a query
/// that fails so before its first rows is run again on the latest state.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let live = lance_csr::LiveGraph::new(lance_csr::Graph::sample().await.unwrap());
/// let n = live.query("MATCH (p:Person) RETURN count(*)", &Default::default()).await.unwrap();
/// assert_eq!(lance_csr::rows(&n), vec![vec!["6".to_string()]]);
/// assert_eq!(live.refresh().await.unwrap(), None); // in memory: never changes
/// # });
/// ```
pub struct LiveGraph {
    current: RwLock<Arc<Graph>>,
    /// One refresh at a time: a query whose state is gone waits for the one under way.
    refreshing: tokio::sync::Mutex<()>,
    /// The background task of [`LiveGraph::follow`], stopped with the graph.
    following: Mutex<Option<tokio::task::AbortHandle>>,
}

impl LiveGraph {
    pub fn new(graph: Graph) -> Arc<Self> {
        Arc::new(Self {
            current: RwLock::new(Arc::new(graph)),
            refreshing: Default::default(),
            following: Default::default(),
        })
    }

    /// The graph of the state current now (queries started on it keep it while they run).
    pub fn current(&self) -> Arc<Graph> {
        self.current.read().expect("live graph lock").clone()
    }

    /// Reads the datasets' latest versions; if they changed, builds the graph of that state
    /// and swaps it in. `Some(n)` when it did, `n` the index structures rebuilt; `None` when
    /// nothing changed (or cannot: a graph read as it was, tables in memory).
    pub async fn refresh(&self) -> Result<Option<usize>> {
        let _one = self.refreshing.lock().await;
        let Some((graph, built)) = self.current().refreshed().await? else {
            return Ok(None);
        };
        *self.current.write().expect("live graph lock") = Arc::new(graph);
        Ok(Some(built))
    }

    /// Refreshes every `every` on the current tokio runtime until this graph is dropped; a
    /// failed refresh (a dataset half written, an index that cannot be built) keeps the state
    /// queries read, is reported to `report` once until one succeeds, and is tried again.
    /// Calling it again replaces the earlier task.
    pub fn follow(
        self: &Arc<Self>,
        every: Duration,
        report: impl Fn(std::result::Result<usize, &Error>) + Send + 'static,
    ) {
        let live: Weak<Self> = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            let mut failing = false;
            let mut tick = tokio::time::interval(every);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(live) = live.upgrade() else { return };
                // A look at each dataset's latest version first: reading every manifest
                // each time would cost a graph of many tables more than the interval's worth.
                if !failing && !live.current().moved().await {
                    continue;
                }
                match live.refresh().await {
                    Ok(Some(built)) => {
                        failing = false;
                        report(Ok(built));
                    }
                    Ok(None) => failing = false,
                    Err(e) if !failing => {
                        failing = true;
                        report(Err(&e));
                    }
                    Err(_) => {}
                }
            }
        });
        let old = (self.following.lock().expect("follow lock")).replace(task.abort_handle());
        if let Some(old) = old {
            old.abort();
        }
    }

    /// Runs a query and collects its result ([`LiveGraph::query_stream`]).
    pub async fn query(&self, query: &str, params: &Params) -> Result<QueryResult> {
        self.query_stream(query, params).await?.collect().await
    }

    /// Runs a query on the current state, its first batch computed: if that fails and the
    /// datasets have moved on meanwhile, it runs again on their latest state.
    pub async fn query_stream(&self, query: &str, params: &Params) -> Result<ResultStream> {
        self.started(|g| async move { g.query_stream(query, params).await })
            .await
    }

    /// Runs a prepared query ([`Graph::prepare`]) as [`LiveGraph::query_stream`] runs a text.
    pub async fn prepared_stream(
        &self,
        prepared: &Prepared,
        params: &Params,
    ) -> Result<ResultStream> {
        self.started(|g| async move { prepared.query_stream(&g, params).await })
            .await
    }

    async fn started<F, Fut>(&self, run: F) -> Result<ResultStream>
    where
        F: Fn(Arc<Graph>) -> Fut,
        Fut: std::future::Future<Output = Result<ResultStream>>,
    {
        let start = |g: Arc<Graph>| {
            let stream = run(g);
            async move {
                let mut s = stream.await?;
                s.start().await?;
                Ok::<_, Error>(s)
            }
        };
        let graph = self.current();
        let (generation, limit) = (graph.generation, graph.options.timeout);
        let deadline = limit.map(|t| tokio::time::Instant::now() + t);
        let e = match start(graph).await {
            Err(e) if worth_retrying(&e) => e,
            done => return done,
        };
        // Files of the state it read may be gone (compacted and cleaned up): once the latest
        // state is read, the query runs on that. The first error stands if nothing changed.
        // Waiting for a refresh under way (an index rebuilt) counts against the time limit.
        let refreshed = match (deadline, limit) {
            (Some(d), Some(limit)) => tokio::time::timeout_at(d, self.refresh())
                .await
                .map_err(|_| super::time_limit_error(limit))?,
            _ => self.refresh().await,
        };
        if refreshed.is_err() {
            return Err(e);
        }
        let graph = self.current();
        if graph.generation == generation {
            return Err(e);
        }
        start(graph).await
    }
}

impl Drop for LiveGraph {
    fn drop(&mut self) {
        if let Some(t) = self.following.get_mut().ok().and_then(Option::take) {
            t.abort();
        }
    }
}

/// Whether an error may be the state's, not the query's: not a syntax error, nor a limit
/// (running again would double the time or memory spent).
fn worth_retrying(e: &Error) -> bool {
    !matches!(e, Error::Parse(_) | Error::Limit(..))
}
