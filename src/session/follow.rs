//! A graph that follows its datasets as writers change them: the graph of the latest state is
//! built beside the one queries read (indexes of changed tables rebuilt, the others shared)
//! and swapped in whole, so a query reads one state from start to end, and never waits for
//! an index build unless the state it started on is gone.

use super::{Graph, Prepared, ResultStream};
use crate::error::{Error, Result};
use crate::output::QueryResult;
use crate::planner::Params;
use std::future::Future;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

/// A [`Graph`] kept at its datasets' latest state: [`LiveGraph::refresh`] on demand, or
/// [`LiveGraph::follow`] in the background. The server, the Python package and the shell
/// read their graph through one.
///
/// A query starts on the state current then. A state whose files a writer removed
/// (`compact_files` and `cleanup_old_versions`, a dataset replaced) fails to read; a query
/// that fails so before it handed out rows (a stream's first batch, a collected result) runs
/// again on the latest state.
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

/// Every this many intervals, [`LiveGraph::follow`] reads every dataset's manifest, not only
/// its latest version number and its manifest file's tag (for a store that gives no tags).
const FULL_CHECK_EVERY: u32 = 30;

impl LiveGraph {
    /// Times a query runs whose state's files went while it ran (each time on a newer
    /// state).
    pub const ATTEMPTS: usize = 3;

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
    /// nothing changed (or cannot: a graph read as it was, tables in memory). The work runs
    /// as a task of its own on the current runtime: a caller that stops waiting (a time
    /// limit, an interrupt) leaves it to finish for the next.
    pub async fn refresh(self: &Arc<Self>) -> Result<Option<usize>> {
        let live = self.clone();
        tokio::spawn(async move { live.refresh_here().await })
            .await
            .map_err(|e| Error::Other(format!("the graph's refresh stopped: {e}")))?
    }

    async fn refresh_here(&self) -> Result<Option<usize>> {
        let _one = self.refreshing.lock().await;
        let Some((graph, built)) = self.current().refreshed().await? else {
            return Ok(None);
        };
        let old = std::mem::replace(
            &mut *self.current.write().expect("live graph lock"),
            Arc::new(graph),
        );
        // The state before is let go (freed, where no query holds it) outside the lock.
        drop(old);
        Ok(Some(built))
    }

    /// Refreshes every `every` (at least 10 ms) on the current tokio runtime until this
    /// graph is dropped or [`LiveGraph::stop`]ped: a look at each dataset's latest version,
    /// and the refresh where one moved. A failed refresh (a dataset half written, an index
    /// that cannot be built) keeps the state queries read, is reported to `report` once
    /// until one succeeds, and is tried again after twice as long each time (at most a
    /// minute). Calling it again replaces the earlier task.
    pub fn follow(
        self: &Arc<Self>,
        every: Duration,
        report: impl Fn(std::result::Result<usize, &Error>) + Send + 'static,
    ) {
        let every = every.max(Duration::from_millis(10));
        let live: Weak<Self> = Arc::downgrade(self);
        let task = tokio::spawn(async move {
            let (mut failures, mut ticks) = (0u32, 0u32);
            loop {
                let wait = every * 2u32.pow(failures.min(12));
                tokio::time::sleep(wait.min(Duration::from_secs(60)).max(every)).await;
                let Some(live) = live.upgrade() else { return };
                ticks = ticks.wrapping_add(1);
                let full = failures > 0 || ticks.is_multiple_of(FULL_CHECK_EVERY);
                if !full && !live.current().moved().await {
                    continue;
                }
                match live.refresh().await {
                    Ok(Some(built)) => {
                        failures = 0;
                        report(Ok(built));
                    }
                    Ok(None) => failures = 0,
                    Err(e) => {
                        if failures == 0 {
                            report(Err(&e));
                        }
                        failures += 1;
                    }
                }
            }
        });
        self.stop();
        *self.following.lock().expect("follow lock") = Some(task.abort_handle());
    }

    /// Stops [`LiveGraph::follow`]'s task (a refresh it started finishes).
    pub fn stop(&self) {
        if let Some(t) = self.following.lock().expect("follow lock").take() {
            t.abort();
        }
    }

    /// Runs a query and collects its result; run again on the latest state where its
    /// state's files went before it ended.
    pub async fn query(self: &Arc<Self>, query: &str, params: &Params) -> Result<QueryResult> {
        let run =
            |g: Arc<Graph>| async move { g.query_stream(query, params).await?.collect().await };
        Ok(self.attempts(self.current(), run).await?.0)
    }

    /// Runs a query on `state` (a state [`LiveGraph::current`] returned: the one a
    /// transaction began on) or the current state, its result batch by batch: run again on
    /// the latest state where its state's files went before its first batch (the stream
    /// keeps `params` for that).
    pub async fn query_stream(
        self: &Arc<Self>,
        state: Option<Arc<Graph>>,
        query: &str,
        params: Params,
    ) -> Result<ResultStream> {
        let state = state.unwrap_or_else(|| self.current());
        self.streamed(state, Query::Text(query.to_string()), params)
            .await
    }

    /// Runs a prepared query ([`Graph::prepare`]) and collects its result, as
    /// [`LiveGraph::query`] runs a text.
    pub async fn prepared_query(
        self: &Arc<Self>,
        prepared: &Prepared,
        params: &Params,
    ) -> Result<QueryResult> {
        let run = |g: Arc<Graph>| async move { prepared.query(&g, params).await };
        Ok(self.attempts(self.current(), run).await?.0)
    }

    /// Runs a prepared query ([`Graph::prepare`]) as [`LiveGraph::query_stream`] runs a text.
    pub async fn prepared_stream(
        self: &Arc<Self>,
        prepared: &Arc<Prepared>,
        params: Params,
    ) -> Result<ResultStream> {
        self.streamed(self.current(), Query::Prepared(prepared.clone()), params)
            .await
    }

    /// `query`'s stream on `state` (or a later one, [`LiveGraph::attempts`]), with what it
    /// needs to run again.
    async fn streamed(
        self: &Arc<Self>,
        state: Arc<Graph>,
        query: Query,
        params: Params,
    ) -> Result<ResultStream> {
        let (q, p) = (&query, &params);
        let run = |g: Arc<Graph>| async move { q.stream(&g, p).await };
        let (mut stream, state, runs) = self.attempts(state, run).await?;
        stream.rerun = Some(Box::new(Rerun {
            live: self.clone(),
            state,
            query,
            params,
            runs,
        }));
        Ok(stream)
    }

    /// `run` on `graph`, with the state it ran on and how many runs it took; again on the
    /// latest state (up to [`Self::ATTEMPTS`] runs in all)
    /// while it fails because files of the state it read are gone. The time limit covers
    /// every attempt and the waits for the refresh between them.
    async fn attempts<T, F, Fut>(
        self: &Arc<Self>,
        mut graph: Arc<Graph>,
        run: F,
    ) -> Result<(T, Arc<Graph>, usize)>
    where
        F: Fn(Arc<Graph>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let limit = graph.options.timeout;
        let deadline = limit.map(|t| tokio::time::Instant::now() + t);
        let mut attempt = 1;
        loop {
            // The first attempt under the query's own limit (whose error names the cluster
            // job it stopped, where there is one); a rerun under what is left of it.
            let outcome = match attempt {
                1 => run(graph.clone()).await,
                _ => within(deadline, limit, run(graph.clone())).await?,
            };
            let e = match outcome {
                Err(e) if attempt < Self::ATTEMPTS => e,
                done => return done.map(|t| (t, graph, attempt)),
            };
            match within(deadline, limit, self.after_failure(&e, &graph)).await? {
                Some(newer) => graph = newer,
                None => return Err(e),
            }
            attempt += 1;
        }
    }

    /// After a query on `state` failed with `e`: where `e` says files of that state are
    /// gone, the latest state (read now, or by a refresh under way) to run it again on;
    /// `None` for an error of the query itself, or when the state did not move.
    async fn after_failure(self: &Arc<Self>, e: &Error, state: &Arc<Graph>) -> Option<Arc<Graph>> {
        if !gone(e) {
            return None;
        }
        // A failed refresh leaves the state as it was: the first error then stands.
        let _ = self.refresh().await;
        let now = self.current();
        (now.generation != state.generation).then_some(now)
    }
}

impl Drop for LiveGraph {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What a stream of [`LiveGraph::query_stream`] runs again when its first batch fails
/// because files of its state are gone.
pub(super) struct Rerun {
    live: Arc<LiveGraph>,
    state: Arc<Graph>,
    query: Query,
    params: Params,
    runs: usize,
}

enum Query {
    Text(String),
    Prepared(Arc<Prepared>),
}

impl Query {
    async fn stream(&self, graph: &Graph, params: &Params) -> Result<ResultStream> {
        match self {
            Query::Text(q) => graph.query_stream(q, params).await,
            Query::Prepared(p) => p.query_stream(graph, params).await,
        }
    }
}

impl Rerun {
    /// The query's stream on the latest state, where `e` says its state's files are gone
    /// (and it has not run [`LiveGraph::ATTEMPTS`] times yet).
    pub(super) async fn again(&mut self, e: &Error) -> Option<Result<ResultStream>> {
        if self.runs >= LiveGraph::ATTEMPTS {
            return None;
        }
        self.state = self.live.after_failure(e, &self.state).await?;
        self.runs += 1;
        Some(self.query.stream(&self.state, &self.params).await)
    }
}

/// `fut`, unless `deadline` passes first (the time limit's error then).
async fn within<T>(
    deadline: Option<tokio::time::Instant>,
    limit: Option<Duration>,
    fut: impl Future<Output = T>,
) -> Result<T> {
    match (deadline, limit) {
        (Some(d), Some(limit)) => tokio::time::timeout_at(d, fut)
            .await
            .map_err(|_| super::time_limit_error(limit)),
        _ => Ok(fut.await),
    }
}

/// Whether `e` says a file is not there: the state the query read lost its files (an
/// error of the query itself is not run again, nor does it wait for a refresh).
fn gone(e: &Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if let Some(l) = c.downcast_ref::<lance::Error>() {
            // Lance sees through its own wrappers (a read shared by several readers).
            if l.is_not_found() || matches!(l, lance::Error::DatasetNotFound { .. }) {
                return true;
            }
        }
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::NotFound {
                return true;
            }
        }
        cause = c.source();
    }
    false
}
