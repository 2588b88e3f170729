//! The backstop of the memory limit. Operators reserve what grows with the data from the
//! graph's memory pool; what no reservation covers (a structure someone forgot, a library's
//! buffers) is caught here: a binary that counts its allocations (the `lance-csr` binary and
//! the Python module wrap their allocator in a counter) installs a meter, every running query
//! is watched from its start, and once the process holds more than the running queries may
//! use, the next look ([`check`], from every [`super::cancel::Checkpoint`] and between a
//! stream's batches) fails the query that looks, never the process.
//!
//! The count is the process's, not one query's: a query may use its limit and a margin for
//! what the pool does not see (the pool's accounting is an estimate) above the memory held
//! when the oldest running query started; running queries add their allowances. A query
//! without a limit running beside others lifts the backstop until it ends.

use datafusion::common::Result;
use datafusion::error::DataFusionError;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Bytes the process holds now, as its counting allocator knows them.
pub type Meter = fn() -> usize;

/// What a query may grow the process by beyond its limit before the backstop stops it.
pub fn margin(limit: usize) -> usize {
    (limit / 2).max(128 << 20)
}

/// The queries running and the bound their allowances give.
#[derive(Debug, Default)]
pub struct Backstop {
    meter: OnceLock<Meter>,
    running: Mutex<Vec<Watch>>,
    next_id: AtomicU64,
    /// `usize::MAX` while nothing is watched or a query has no limit.
    bound: AtomicUsize,
}

#[derive(Debug, Clone, Copy)]
struct Watch {
    id: u64,
    start: usize,
    limit: Option<usize>,
}

impl Backstop {
    pub const fn new() -> Self {
        Self {
            meter: OnceLock::new(),
            running: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
            bound: AtomicUsize::new(usize::MAX),
        }
    }

    /// Counts from `meter` from now on; false when a meter was installed already.
    pub fn install(&self, meter: Meter) -> bool {
        self.meter.set(meter).is_ok()
    }

    pub fn allocated(&self) -> Option<usize> {
        self.meter.get().map(|m| m())
    }

    /// Watches a query with `limit` until the returned guard is dropped; nothing without a
    /// meter.
    pub fn watch(&'static self, limit: Option<usize>) -> Option<Watched> {
        let start = self.allocated()?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.push(Watch { id, start, limit });
        self.rebound(&running);
        Some(Watched { backstop: self, id })
    }

    fn rebound(&self, running: &[Watch]) {
        let bound = running
            .iter()
            .try_fold(0usize, |sum, w| {
                w.limit
                    .map(|l| sum.saturating_add(l).saturating_add(margin(l)))
            })
            .and_then(|allowed| {
                let floor = running.iter().map(|w| w.start).min()?;
                Some(floor.saturating_add(allowed))
            })
            .unwrap_or(usize::MAX);
        self.bound.store(bound, Ordering::Relaxed);
    }

    /// An error once the process holds more than the running queries may use.
    pub fn check(&self) -> Result<()> {
        let bound = self.bound.load(Ordering::Relaxed);
        if bound == usize::MAX {
            return Ok(());
        }
        match self.allocated() {
            Some(now) if now > bound => Err(DataFusionError::ResourcesExhausted(format!(
                "the process holds {} MB, past the {} MB the running queries may use (memory \
                 no reservation of the pool covered, counted by the allocator)",
                now >> 20,
                bound >> 20
            ))),
            _ => Ok(()),
        }
    }
}

/// A watched query; dropping it ends the watch.
#[derive(Debug)]
pub struct Watched {
    backstop: &'static Backstop,
    id: u64,
}

impl Drop for Watched {
    fn drop(&mut self) {
        let mut running = self
            .backstop
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        running.retain(|w| w.id != self.id);
        self.backstop.rebound(&running);
    }
}

/// The process's backstop.
pub static BACKSTOP: Backstop = Backstop::new();

/// Installs the meter of the process's counting allocator (see the module's documentation);
/// false when one was installed already.
pub fn install_meter(meter: Meter) -> bool {
    BACKSTOP.install(meter)
}

/// [`Backstop::check`] of the process's backstop.
#[inline]
pub fn check() -> Result<()> {
    BACKSTOP.check()
}

#[cfg(test)]
mod tests {
    use super::*;

    static HELD: AtomicUsize = AtomicUsize::new(0);

    fn held() -> usize {
        HELD.load(Ordering::Relaxed)
    }

    #[test]
    fn the_running_queries_allowances_bound_the_process() {
        static B: Backstop = Backstop::new();
        // No meter: nothing is watched, nothing fails.
        assert!(B.watch(Some(1)).is_none());
        assert!(B.install(held));
        assert!(!B.install(held));
        HELD.store(1000 << 20, Ordering::Relaxed);
        B.check().unwrap();

        let limit = 100 << 20;
        let first = B.watch(Some(limit)).unwrap();
        HELD.store((1000 << 20) + limit + margin(limit), Ordering::Relaxed);
        B.check().unwrap();
        HELD.fetch_add(1, Ordering::Relaxed);
        let e = B.check().unwrap_err();
        assert!(matches!(e, DataFusionError::ResourcesExhausted(_)), "{e}");
        assert!(e.to_string().contains("counted by the allocator"), "{e}");

        // A second query adds its allowance, counted from the oldest start.
        let second = B.watch(Some(limit)).unwrap();
        B.check().unwrap();
        // One without a limit lifts the bound while it runs.
        let unlimited = B.watch(None).unwrap();
        HELD.store(usize::MAX / 2, Ordering::Relaxed);
        B.check().unwrap();
        drop(unlimited);
        assert!(B.check().is_err());
        drop((first, second));
        B.check().unwrap();
    }
}
