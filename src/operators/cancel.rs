//! Stopping the work of a dropped query. A query is cancelled (a timeout, an interrupt, a
//! client gone) by dropping its stream, which takes effect only when the poll in progress
//! returns: work done inside one poll must come in bounded units between which the stream
//! yields, and work too big for that runs off the runtime's workers ([`run_blocking`]) and
//! calls a [`Checkpoint`] every bounded unit, which fails once its [`CancelFlag`] is set.

use datafusion::common::Result;
use datafusion::error::DataFusionError;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Set once the query the work is for was dropped.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// A guard that sets the flag when dropped (with the future or stream that owns it).
    pub fn guard(&self) -> CancelOnDrop {
        CancelOnDrop(self.clone())
    }
}

/// Sets its flag when dropped. Once the work is done, setting it changes nothing.
#[derive(Debug)]
pub struct CancelOnDrop(CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Units of work (edges, nodes) between two looks at the flag: an atomic load, where this many
/// units take well under a millisecond.
pub const CHECK_EVERY: u64 = 1 << 15;

/// Units of work a computation may do on a runtime worker before it is moved to the blocking
/// pool (a few milliseconds of edges).
pub const IN_POLL_UNITS: u64 = 1 << 20;

/// How long one slice of work inside a poll should take, and how much of such work a stream
/// does before it yields once.
pub const SLICE_TIME: Duration = Duration::from_millis(10);

/// The error of work whose query was dropped (no one reads it).
pub fn cancelled() -> DataFusionError {
    DataFusionError::Execution("the query was cancelled".into())
}

/// Called by long synchronous work every bounded unit: fails once the query was cancelled, or
/// once a budget of units is spent (work tried on a runtime worker first, see
/// [`Self::over_budget`]). Counting is a `Cell` (no atomics on the hot path): a thread the work
/// is split onto takes a [`Self::fork`].
#[derive(Debug)]
pub struct Checkpoint {
    flag: Option<CancelFlag>,
    budget: u64,
    done: Cell<u64>,
    next: Cell<u64>,
    /// Shared with the forks: a thread that spent its budget stops the whole computation.
    over: Arc<AtomicBool>,
}

impl Default for Checkpoint {
    fn default() -> Self {
        Self::unlimited()
    }
}

impl Checkpoint {
    fn new(flag: Option<CancelFlag>, budget: u64) -> Self {
        Self {
            flag,
            budget,
            done: Cell::new(0),
            next: Cell::new(CHECK_EVERY.min(budget)),
            over: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Never stops the work.
    pub fn unlimited() -> Self {
        Self::new(None, u64::MAX)
    }

    /// Stops the work once `flag` is set.
    pub fn cancelled_by(flag: &CancelFlag) -> Self {
        Self::new(Some(flag.clone()), u64::MAX)
    }

    /// Stops the work after `units` (then [`Self::over_budget`]).
    pub fn with_budget(units: u64) -> Self {
        Self::new(None, units)
    }

    /// The same flag and budget, counting from zero: for another thread.
    pub fn fork(&self) -> Self {
        Self {
            over: self.over.clone(),
            ..Self::new(self.flag.clone(), self.budget)
        }
    }

    /// `units` more done: an error once the query was cancelled or the budget is spent,
    /// looked at every [`CHECK_EVERY`] units.
    #[inline]
    pub fn tick(&self, units: usize) -> Result<()> {
        let done = self.done.get().saturating_add(units as u64);
        self.done.set(done);
        if done < self.next.get() {
            return Ok(());
        }
        self.next
            .set(done.saturating_add(CHECK_EVERY).min(self.budget));
        self.check()
    }

    /// An error once the query was cancelled, the budget is spent or the process holds more
    /// than the running queries may use ([`super::backstop`]).
    pub fn check(&self) -> Result<()> {
        super::backstop::check()?;
        if self.flag.as_ref().is_some_and(CancelFlag::is_cancelled) {
            return Err(cancelled());
        }
        if self.done.get() >= self.budget || self.over.load(Ordering::Relaxed) {
            self.over.store(true, Ordering::Relaxed);
            return Err(DataFusionError::Execution(
                "the work budget of a poll was spent".into(),
            ));
        }
        Ok(())
    }

    /// Whether the work stopped because its budget was spent: worth doing again off the
    /// runtime's workers.
    pub fn over_budget(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    /// Units counted so far.
    #[cfg(test)]
    pub fn units(&self) -> u64 {
        self.done.get()
    }
}

/// Runs `f` on the runtime's blocking pool, not on a worker (where it would keep other tasks,
/// the query's own timeout among them, from running); dropping the returned future sets the
/// flag of `f`'s checkpoint, which then fails at its next look. Outside a runtime `f` runs in
/// place when the future is first polled.
pub fn run_blocking<T, F>(f: F) -> impl std::future::Future<Output = Result<T>> + Send + 'static
where
    T: Send + 'static,
    F: FnOnce(Checkpoint) -> Result<T> + Send + 'static,
{
    let flag = CancelFlag::new();
    let guard = flag.guard();
    async move {
        let _guard = guard;
        let cp = Checkpoint::cancelled_by(&flag);
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return f(cp);
        };
        match handle.spawn_blocking(move || f(cp)).await {
            Ok(r) => r,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => Err(DataFusionError::Execution(format!(
                "a computation ended early: {e}"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work of `n` units that ticks one at a time; the units it did.
    fn work(cp: &Checkpoint, n: u64) -> Result<u64> {
        for _ in 0..n {
            cp.tick(1)?;
        }
        Ok(cp.units())
    }

    #[test]
    fn a_flagged_run_stops_with_the_cancelled_error() {
        let flag = CancelFlag::new();
        let cp = Checkpoint::cancelled_by(&flag);
        assert_eq!(work(&cp, 3 * CHECK_EVERY).unwrap(), 3 * CHECK_EVERY);
        flag.cancel();
        let e = work(&cp, 3 * CHECK_EVERY).unwrap_err();
        assert!(e.to_string().contains("the query was cancelled"), "{e}");
        // Seen within one interval of looks, and not taken for a spent budget.
        assert!(cp.units() <= 4 * CHECK_EVERY + 1, "{}", cp.units());
        assert!(!cp.over_budget());
        // A fork shares the flag.
        assert!(work(&cp.fork(), 2 * CHECK_EVERY).is_err());
        // A guard sets it when dropped.
        let flag = CancelFlag::new();
        drop(flag.guard());
        assert!(Checkpoint::cancelled_by(&flag).check().is_err());
        // Unflagged work runs to its end.
        assert_eq!(
            work(&Checkpoint::unlimited(), 5 * CHECK_EVERY).unwrap(),
            5 * CHECK_EVERY
        );
    }

    #[test]
    fn a_budget_stops_the_work_once_spent() {
        let cp = Checkpoint::with_budget(1000);
        assert!(work(&cp, 999).is_ok());
        assert!(work(&cp, 10).is_err());
        assert!(cp.over_budget());
        assert_eq!(cp.units(), 1000);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropping_a_blocking_run_cancels_it() {
        let (tx, rx) = std::sync::mpsc::channel();
        let fut = run_blocking(move |cp| {
            let r = loop {
                if let Err(e) = cp.tick(1) {
                    break e;
                }
                std::hint::spin_loop();
            };
            tx.send(r.to_string()).unwrap();
            Ok(())
        });
        let mut fut = Box::pin(fut);
        // Started, then dropped while it runs.
        let pending = tokio::time::timeout(Duration::from_millis(20), &mut fut).await;
        assert!(pending.is_err());
        drop(fut);
        let e = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(e.contains("the query was cancelled"), "{e}");
        // Run to its end, it answers.
        assert_eq!(run_blocking(|cp| work(&cp, 10)).await.unwrap(), 10);
    }
}
