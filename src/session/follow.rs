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

/// Times a query runs whose state's files went while it ran (each time on a newer state).
const ATTEMPTS: usize = 3;

/// Every this many intervals, [`LiveGraph::follow`] reads every dataset's manifest, not only
/// its latest version number (a dataset replaced by one of the same version number).
const FULL_CHECK_EVERY: u32 = 30;

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
        let old = (self.following.lock().expect("follow lock")).replace(task.abort_handle());
        if let Some(old) = old {
            old.abort();
        }
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
        self.attempts(|g| async move { g.query_stream(query, params).await?.collect().await })
            .await
    }

    /// Runs a query on the current state, its first batch computed: run again on the latest
    /// state where its state's files went before that.
    pub async fn query_stream(
        self: &Arc<Self>,
        query: &str,
        params: &Params,
    ) -> Result<ResultStream> {
        self.attempts(|g| async move { started(g.query_stream(query, params).await?).await })
            .await
    }

    /// [`LiveGraph::query_stream`] on `state`, a state [`LiveGraph::current`] returned (the
    /// one a transaction reads from its start), until its files are gone.
    pub async fn query_stream_on(
        self: &Arc<Self>,
        state: Arc<Graph>,
        query: &str,
        params: &Params,
    ) -> Result<ResultStream> {
        self.attempts_from(state, |g| async move {
            started(g.query_stream(query, params).await?).await
        })
        .await
    }

    /// Runs a prepared query ([`Graph::prepare`]) as [`LiveGraph::query_stream`] runs a text.
    pub async fn prepared_stream(
        self: &Arc<Self>,
        prepared: &Prepared,
        params: &Params,
    ) -> Result<ResultStream> {
        self.attempts(|g| async move { started(prepared.query_stream(&g, params).await?).await })
            .await
    }

    /// `run` on the current state; again on the latest (up to [`ATTEMPTS`] times in all)
    /// while it fails because files of the state it read are gone. The time limit covers
    /// every attempt and the waits for the refresh between them.
    async fn attempts<T, F, Fut>(self: &Arc<Self>, run: F) -> Result<T>
    where
        F: Fn(Arc<Graph>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        self.attempts_from(self.current(), run).await
    }

    async fn attempts_from<T, F, Fut>(self: &Arc<Self>, mut graph: Arc<Graph>, run: F) -> Result<T>
    where
        F: Fn(Arc<Graph>) -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        let limit = graph.options.timeout;
        let deadline = limit.map(|t| tokio::time::Instant::now() + t);
        let mut attempt = 1;
        loop {
            let generation = graph.generation;
            // The first attempt under the query's own limit (whose error names the cluster
            // job it stopped, where there is one); a rerun under what is left of it.
            let outcome = match attempt {
                1 => run(graph).await,
                _ => within(deadline, limit, run(graph)).await?,
            };
            let e = match outcome {
                Err(e) if attempt < ATTEMPTS && gone(&e) => e,
                done => return done,
            };
            // Once the latest state is read, the query runs on that; the error stands if
            // the state did not move.
            let _ = within(deadline, limit, self.refresh()).await?;
            graph = self.current();
            if graph.generation == generation {
                return Err(e);
            }
            attempt += 1;
        }
    }
}

impl Drop for LiveGraph {
    fn drop(&mut self) {
        if let Some(t) = self.following.get_mut().ok().and_then(Option::take) {
            t.abort();
        }
    }
}

/// `stream` with its first batch computed: whether the query can read its files shows here.
async fn started(mut stream: ResultStream) -> Result<ResultStream> {
    stream.start().await?;
    Ok(stream)
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
