//! A query's result as it is computed, and the errors a stream ends with (time and memory limits).

use super::*;

/// A query's result as it is computed ([`Graph::query_stream`]).
pub struct ResultStream {
    /// The result's column names, as the query wrote them.
    pub columns: Vec<String>,
    pub schema: SchemaRef,
    pub(super) stream: datafusion::physical_plan::SendableRecordBatchStream,
    pub(super) deadline: Option<tokio::time::Instant>,
    pub(super) timeout: Option<std::time::Duration>,
    pub(super) memory_limit: Option<usize>,
    /// The memory backstop's watch of the query, for as long as its stream lives.
    pub(super) watched: Option<crate::operators::backstop::Watched>,
    /// The cluster job behind the stream, cancelled if the stream ends early.
    #[cfg(feature = "distributed")]
    pub(super) job: Option<crate::distributed::cluster::JobGuard>,
    /// A [`LiveGraph`](super::LiveGraph)'s stream: how to run the query again on the latest
    /// state while no batch went out.
    pub(super) rerun: Option<Box<super::follow::Rerun>>,
}

impl ResultStream {
    /// Reads every remaining batch. Under a memory limit, the batches held count against
    /// it: a result larger than the limit is an error (stream it instead).
    pub async fn collect(mut self) -> Result<QueryResult> {
        let mut batches = Vec::new();
        let mut held = 0usize;
        while let Some(b) = self.next_batch().await? {
            // What this batch's rows take: slices of one larger batch share its buffers.
            held += b
                .columns()
                .iter()
                .map(|c| c.to_data().get_slice_memory_size().unwrap_or(0))
                .sum::<usize>();
            if let Some(limit) = self.memory_limit.filter(|&l| held > l) {
                self.drop_plan();
                return Err(Error::Limit(
                    LimitKind::Memory,
                    format!(
                        "the result is larger than the memory limit of {} (--memory-limit): \
                         read it as a stream, or return fewer rows",
                        human_bytes(limit)
                    ),
                ));
            }
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
        loop {
            let next = self.next_of_plan().await;
            if let (Err(e), Some(mut rerun)) = (&next, self.rerun.take()) {
                // Nothing went out yet: on the latest state, where this one's files went.
                if let Some(again) = self.rerun(&mut rerun, e).await? {
                    *self = again;
                    self.rerun = Some(rerun);
                    continue;
                }
            }
            // Once rows went out (or an error), the query is not run again: what a rerun
            // keeps (the state it started on, the parameters) is let go.
            if !matches!(next, Ok(None)) {
                self.rerun = None;
            }
            return next;
        }
    }

    /// The query run again on the latest state after `e`, under the time limit this stream
    /// started with; `None` where it is not (`e` is the query's own, or the state did not
    /// move, or the result's columns would differ).
    async fn rerun(
        &mut self,
        rerun: &mut super::follow::Rerun,
        e: &Error,
    ) -> Result<Option<ResultStream>> {
        // The plan that failed holds what it read until then: let go before planning again.
        self.drop_plan();
        // On the heap: planning again is a large future, and every read of a batch would
        // otherwise carry its size on the stack.
        let again = Box::pin(rerun.again(e));
        let again = match (self.deadline, self.timeout) {
            (Some(d), Some(limit)) => match tokio::time::timeout_at(d, again).await {
                Ok(again) => again,
                Err(_) => return Err(self.time_limit_error(limit)),
            },
            _ => again.await,
        };
        let Some(mut again) = again.transpose()? else {
            return Ok(None);
        };
        if again.schema != self.schema {
            return Ok(None);
        }
        again.deadline = self.deadline;
        Ok(Some(again))
    }

    /// The next batch of the plan running now.
    async fn next_of_plan(&mut self) -> Result<Option<arrow::array::RecordBatch>> {
        use futures::StreamExt;
        let next = match (self.deadline, self.timeout) {
            (Some(d), Some(limit)) => {
                // Past the deadline even when a batch is ready: a reader slower than the query
                // (printing) would otherwise always find one.
                if tokio::time::Instant::now() >= d {
                    return Err(self.stop_at_time_limit(limit));
                }
                match tokio::time::timeout_at(d, self.stream.next()).await {
                    Ok(next) => next,
                    Err(_) => return Err(self.stop_at_time_limit(limit)),
                }
            }
            _ => self.stream.next().await,
        };
        let mut next = next
            .transpose()
            .map_err(|e| memory_error(self.memory_limit, e));
        // Between batches, the memory backstop: past it, the query's plan is dropped at once.
        if let (Ok(Some(_)), Err(e)) = (&next, crate::operators::backstop::check()) {
            self.drop_plan();
            next = Err(memory_error(self.memory_limit, e));
        }
        // An ended query is no longer watched, whether or not its stream is kept.
        if !matches!(next, Ok(Some(_))) {
            self.watched = None;
            #[cfg(feature = "distributed")]
            if let Some(j) = self.job.as_mut() {
                j.finished();
            }
        }
        next
    }

    /// The query stopped at its time limit: its plan dropped at once (work off the runtime
    /// sees its cancellation, whether or not the caller keeps this stream), and the error.
    fn stop_at_time_limit(&mut self, limit: std::time::Duration) -> Error {
        self.drop_plan();
        self.time_limit_error(limit)
    }

    /// The query's plan dropped at once: the stream ends here.
    fn drop_plan(&mut self) {
        let empty = datafusion::physical_plan::EmptyRecordBatchStream::new(self.schema.clone());
        self.stream = Box::pin(empty);
    }

    /// The time limit's error; for a cluster job (which is cancelled), what to check.
    pub(super) fn time_limit_error(&self, limit: std::time::Duration) -> Error {
        let e = time_limit_error(limit);
        #[cfg(feature = "distributed")]
        if let (Error::Limit(kind, m), Some(j)) = (&e, &self.job) {
            return Error::Limit(
                *kind,
                format!(
                    "{m}; the job on the cluster at {} was cancelled (a job that never ends: are \
                 its executors running? The scheduler logs executors it lost)",
                    j.url()
                ),
            );
        }
        e
    }
}

pub(crate) fn time_limit_error(limit: std::time::Duration) -> Error {
    Error::Limit(
        LimitKind::Time,
        format!(
            "the query ran longer than the time limit of {} (--timeout)",
            humantime(limit)
        ),
    )
}

/// A DataFusion error, as [`Error::Limit`] when the memory pool refused an allocation.
pub(super) fn memory_error(limit: Option<usize>, e: datafusion::error::DataFusionError) -> Error {
    let exhausted = matches!(
        e.find_root(),
        datafusion::error::DataFusionError::ResourcesExhausted(_)
    );
    match (exhausted, limit) {
        // The limit named with its size.
        (true, Some(bytes)) => Error::Limit(
            LimitKind::Memory,
            format!(
                "the query needs more memory than the limit of {} (--memory-limit): {}",
                human_bytes(bytes),
                e.find_root()
            ),
        ),
        _ => e.into(),
    }
}

/// `90s`, `1.5s`, `250ms`.
pub(super) fn humantime(d: std::time::Duration) -> String {
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
