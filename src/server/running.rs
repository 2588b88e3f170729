//! A query run for a connection: on the query runtime, never on the one the protocol's tasks
//! run on, so a query that computes for long without yielding cannot stop the server from
//! accepting connections or answering other clients. Its batches come over a channel that
//! holds one, so a client that reads slowly holds the query back, and dropping the handle
//! aborts the query's task (at the next point where its operators yield).

use super::Shared;
use crate::error::{Error, Result};
use crate::planner::Params;
use crate::session::Graph;
use arrow::array::RecordBatch;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{mpsc, oneshot};

/// A query running on the query runtime.
pub(crate) struct Running {
    pub columns: Vec<String>,
    batches: mpsc::Receiver<Result<Option<RecordBatch>>>,
    /// The server's time limit (`--timeout`): past it (and a grace for the query to stop
    /// itself), the query is given up for stopped even if its operators never yield.
    deadline: Option<Instant>,
    limit: Option<std::time::Duration>,
    task: tokio::task::JoinHandle<()>,
    ended: bool,
}

/// How long past the server's time limit a query that has not stopped itself is given up.
const GRACE: std::time::Duration = std::time::Duration::from_millis(500);

impl Running {
    /// Plans and starts `query` on `state` (a transaction's) or the graph's current state; its
    /// columns once it runs, or the error planning met.
    pub async fn start(
        shared: &Arc<Shared>,
        state: Option<Arc<Graph>>,
        query: String,
        params: Params,
    ) -> Result<Running> {
        let (started, columns) = oneshot::channel();
        let (tx, batches) = mpsc::channel(1);
        let limit = shared.graph.current().options().timeout;
        let deadline = limit.map(|t| Instant::now() + t + GRACE);
        let s = shared.clone();
        let task = shared.queries.spawn(async move {
            let mut stream = match s.graph.query_stream(state, &query, params).await {
                Ok(stream) => stream,
                Err(e) => {
                    let _ = started.send(Err(e));
                    return;
                }
            };
            if started.send(Ok(stream.columns.clone())).is_err() {
                return;
            }
            loop {
                let next = stream.next_batch().await;
                let end = !matches!(next, Ok(Some(_)));
                if tx.send(next).await.is_err() || end {
                    return;
                }
            }
        });
        let mut running = Running {
            columns: Vec::new(),
            batches,
            deadline,
            limit,
            task,
            ended: false,
        };
        // Dropped on an error: the task is aborted.
        let columns = match before(deadline, limit, columns).await? {
            Ok(Ok(c)) => c,
            Ok(Err(e)) => return Err(e),
            Err(_) => return Err(stopped_unexpectedly()),
        };
        running.columns = columns;
        Ok(running)
    }

    /// The next batch; `None` at the end.
    pub async fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.ended {
            return Ok(None);
        }
        let next = self.batches.recv();
        let next = match before(self.deadline, self.limit, next).await {
            Ok(Some(next)) => next,
            Ok(None) => Err(stopped_unexpectedly()),
            Err(e) => Err(e),
        };
        if !matches!(next, Ok(Some(_))) {
            self.ended = true;
            self.task.abort();
        }
        next
    }
}

/// `fut`, unless `deadline` passes first: then the time limit's error.
async fn before<T>(
    deadline: Option<Instant>,
    limit: Option<std::time::Duration>,
    fut: impl std::future::Future<Output = T>,
) -> Result<T> {
    let (Some(d), Some(limit)) = (deadline, limit) else {
        return Ok(fut.await);
    };
    tokio::time::timeout_at(d.into(), fut)
        .await
        .map_err(|_| crate::session::time_limit_error(limit))
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn stopped_unexpectedly() -> Error {
    Error::Other("the query stopped unexpectedly (see the server's log)".into())
}
