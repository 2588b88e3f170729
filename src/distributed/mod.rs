//! Distributed execution on Ballista (feature `distributed`): codecs for the graph plan nodes
//! (`codec.rs`), the graphs a process has opened for plans (`registry.rs`), scans partitioned
//! by Lance fragments (`scan.rs`), the graph operators as planned on the scheduler
//! (`planned.rs`) and the scheduler, executor and client wiring (`cluster.rs`).

pub mod cluster;
pub mod codec;
mod messages;
pub mod planned;
pub mod registry;
pub mod scan;

use datafusion::common::{DataFusionError, Result};
use std::future::Future;

/// Stack of the threads decoding runs on (planning recurses once per plan node).
const DECODE_STACK: usize = 32 << 20;

/// Runs `f` to completion from synchronous code (the codecs' decoding, which may open a graph
/// or load columns), on a thread of its own so that it works inside and outside a runtime.
pub(crate) fn block_on<T: Send, F: Future<Output = Result<T>>>(
    make: impl FnOnce() -> F + Send,
) -> Result<T> {
    std::thread::scope(|s| {
        let thread = std::thread::Builder::new().stack_size(DECODE_STACK);
        let handle = thread
            .spawn_scoped(s, || {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| DataFusionError::External(Box::new(e)))?
                    .block_on(make())
            })
            .map_err(|e| DataFusionError::External(Box::new(e)))?;
        handle
            .join()
            .map_err(|_| DataFusionError::Internal("a decoding thread panicked".into()))?
    })
}

#[cfg(test)]
mod tests;
