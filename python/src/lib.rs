//! The `lance_csr` Python package's native module: the engine's `Graph`, prepared queries and
//! results, with the GIL released while a query plans and runs.
//!
//! Queries run on one process-wide tokio runtime, driven from the calling thread so that a short
//! read costs no thread hop. While one runs, the caller wakes every few milliseconds to let
//! Python deliver a signal (Ctrl-C cancels the query with KeyboardInterrupt) and to notice
//! `Graph.interrupt()` from another thread.

mod errors;
mod graph;
mod result;
mod values;

use pyo3::prelude::*;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How often a waiting query lets Python check for signals.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// The runtime every query runs on, one per process: a child made by `fork` inherits the
/// parent's without its threads, and gets one of its own (the parent's is left as it is).
/// The first process's is read without a lock (a lock held by another thread when the
/// process forked would never be let go in the child).
pub(crate) fn runtime() -> &'static tokio::runtime::Runtime {
    static FIRST: OnceLock<(u32, tokio::runtime::Runtime)> = OnceLock::new();
    static LATER: Mutex<Option<(u32, &'static tokio::runtime::Runtime)>> = Mutex::new(None);
    let pid = std::process::id();
    let (owner, first) = FIRST.get_or_init(|| (pid, new_runtime()));
    if *owner == pid {
        return first;
    }
    let mut rt = LATER.lock().unwrap_or_else(|e| e.into_inner());
    match *rt {
        Some((owner, r)) if owner == pid => r,
        _ => {
            let r: &'static _ = Box::leak(Box::new(new_runtime()));
            *rt = Some((pid, r));
            r
        }
    }
}

fn new_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // As the binary's: Lance plans a scan of a dataset with deleted rows in a frame that
        // overflows 2 MiB in a debug build (address space only; pages are touched as used).
        .thread_stack_size(32 << 20)
        .thread_name("lance-csr")
        .build()
        .expect("a tokio runtime")
}

/// An error unless this is process `pid`: what a graph holds (its runtime's tasks, its
/// locks) does not survive `fork`.
pub(crate) fn same_process(pid: u32) -> PyResult<()> {
    if pid == std::process::id() {
        return Ok(());
    }
    Err(errors::usage(
        "this graph was opened in the parent process, before it forked: open the graph in \
         the child (with multiprocessing, open it in the worker function, or use the \
         'spawn' or 'forkserver' start method)",
    ))
}

/// `Graph.interrupt()`: each call cancels the queries of the graph running at that moment.
#[derive(Default)]
pub struct Interrupts {
    count: AtomicU64,
    notify: tokio::sync::Notify,
}

impl Interrupts {
    /// The interrupts so far: a wait started now stops at the next.
    pub fn seen(&self) -> u64 {
        self.count.load(Ordering::SeqCst)
    }

    pub fn interrupt(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
        self.notify.notify_waiters();
    }
}

/// Runs `fut` to its end with the GIL released; Ctrl-C (a pending signal) or an interrupt of
/// the graph drops it, which cancels the query. `query` renders the error's caret.
pub(crate) fn wait<T, F>(
    py: Python<'_>,
    interrupts: &Interrupts,
    query: &str,
    fut: F,
) -> PyResult<T>
where
    T: Send,
    F: Future<Output = lance_csr::Result<T>> + Send,
{
    match wait_any(py, &[(interrupts, interrupts.seen())], query, fut)? {
        Ok(v) => Ok(v),
        Err(_) => Err(errors::Interrupted::new_err("the query was interrupted")),
    }
}

/// [`wait`], stopped by any of `interrupts` whose count has moved past the one given with it
/// (taken by the caller before it decided to wait, so an interrupt in between is not lost):
/// `Err(i)` when the `i`th interrupted it.
pub(crate) fn wait_any<T, F>(
    py: Python<'_>,
    interrupts: &[(&Interrupts, u64)],
    query: &str,
    fut: F,
) -> PyResult<Result<T, usize>>
where
    T: Send,
    F: Future<Output = lance_csr::Result<T>> + Send,
{
    let moved = || {
        interrupts
            .iter()
            .position(|(i, seen)| i.count.load(Ordering::SeqCst) != *seen)
    };
    let waits: Vec<&Interrupts> = interrupts.iter().map(|(i, _)| *i).collect();
    let mut fut = std::pin::pin!(fut);
    loop {
        if let Some(i) = moved() {
            return Ok(Err(i));
        }
        let step = py.detach(|| runtime().block_on(step(&mut fut, &waits)));
        match step {
            Some(r) => return r.map(Ok).map_err(|e| errors::to_py(e, Some(query))),
            None => py.check_signals()?,
        }
    }
}

/// Polls `fut` until it is done (`Some`) or until Python should check for signals or an
/// interrupt came (`None`). The timer and the interrupt's waiter are set up only once the
/// query has to wait: a short read that completes in its first poll shares nothing with the
/// other threads' queries.
async fn step<F: Future + Unpin>(fut: &mut F, interrupts: &[&Interrupts]) -> Option<F::Output> {
    let mut fut = std::pin::Pin::new(fut);
    let first = std::future::poll_fn(|cx| match fut.as_mut().poll(cx) {
        std::task::Poll::Ready(r) => std::task::Poll::Ready(Some(r)),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await;
    if first.is_some() {
        return first;
    }
    // The graph's interrupts, and a stream's own (its `close`).
    let waits = |k: usize| async move {
        match interrupts.get(k) {
            Some(i) => i.notify.notified().await,
            None => std::future::pending().await,
        }
    };
    let interrupted = async {
        tokio::select! {
            _ = waits(0) => {}
            _ = waits(1) => {}
        }
    };
    tokio::select! {
        r = fut => Some(r),
        _ = interrupted => None,
        _ = tokio::time::sleep(SIGNAL_CHECK) => None,
    }
}

#[pyfunction]
fn parse_literal(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    let v = lance_csr::Value::parse(text).map_err(|e| errors::to_py(e, Some(text)))?;
    values::to_python(py, &v)
}

/// The module's allocations, counted for the memory limit's backstop.
#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// `gil_used = false`: on a free-threaded CPython (3.13t and later) importing the module leaves
/// the GIL off. Its state is Rust's own synchronised types (the graph behind a read-write
/// lock, prepared plans per thread, atomics), shared by Python threads with or without a GIL.
#[pymodule(gil_used = false)]
fn _lance_csr(m: &Bound<'_, PyModule>) -> PyResult<()> {
    lance_csr::install_allocation_meter(|| ALLOCATOR.allocated());
    errors::register(m)?;
    m.add_class::<graph::Graph>()?;
    m.add_class::<graph::PreparedQuery>()?;
    m.add_class::<result::QueryResult>()?;
    m.add_class::<result::Stream>()?;
    m.add_class::<values::Node>()?;
    m.add_class::<values::Relationship>()?;
    m.add_class::<values::Path>()?;
    m.add_class::<values::Duration>()?;
    m.add_function(wrap_pyfunction!(graph::import_graph, m)?)?;
    m.add_function(wrap_pyfunction!(graph::generate, m)?)?;
    m.add_function(wrap_pyfunction!(graph::tag, m)?)?;
    m.add_function(wrap_pyfunction!(parse_literal, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
