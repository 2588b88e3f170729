//! The memory the connections hold in what clients sent: the bytes of a message or request
//! body as they are read, decoded Bolt messages queued or being handled (a RUN's with what its query copies of its parameters while it is planned
//! and started), HTTP request bodies and what they decode to. One pool of the graph's memory
//! limit for all of it: a connection that finds no room waits for its own earlier messages
//! to be let go (its socket is not read meanwhile), and a message that still finds none is
//! refused with a transient error (drivers retry), as is one that would decode to more than
//! half the limit, before its memory is taken.

use super::status::{self, Failure};
use datafusion::execution::memory_pool::{
    GreedyMemoryPool, MemoryConsumer, MemoryLimit, MemoryPool, MemoryReservation,
    UnboundedMemoryPool,
};
use std::sync::Arc;
use std::time::Duration;

/// What a query holds of its parameters' strings and one-kind lists while it is planned and
/// started, in copies of them: the engine's values, the binder's and the planner's copies,
/// the literal physical planning makes (measured with a debug build: a 15 MiB string
/// parameter grows the server by about 200 MB, a million integers, 8 MB as a list, by 63 MB).
const PARAMETER_COPIES: usize = 12;

/// How long a query waits for room for its parameters (others' queries end meanwhile).
const ROOM_WAIT: Duration = Duration::from_secs(30);

pub(crate) struct Messages {
    pool: Arc<dyn MemoryPool>,
    /// The most one message may decode to.
    pub budget: usize,
}

impl Messages {
    /// Room for `limit` bytes of messages (`None`: no limit; one message may still decode to
    /// at most a quarter of the memory the process may have).
    pub fn new(limit: Option<usize>) -> Self {
        match limit {
            Some(l) => Self {
                pool: Arc::new(GreedyMemoryPool::new(l)),
                budget: (l / 2).max(1),
            },
            None => Self {
                pool: Arc::new(UnboundedMemoryPool::default()),
                budget: crate::functions::budget::limit(&Default::default()).unwrap_or(usize::MAX),
            },
        }
    }

    /// An empty reservation for what `who` holds.
    pub fn reservation(&self, who: String) -> MemoryReservation {
        MemoryConsumer::new(who).register(&self.pool)
    }

    /// `bytes` taken from `from` as a reservation of their own (let go when dropped);
    /// `None` when there is no room.
    pub fn take(from: &MemoryReservation, bytes: usize) -> Option<MemoryReservation> {
        let r = from.new_empty();
        r.try_grow(bytes).ok()?;
        Some(r)
    }

    /// `bytes` more for `held` once there is room for them, waiting while others hold it
    /// (until `stop`); false when there is none in time, or never can be.
    pub async fn grow(
        &self,
        held: &MemoryReservation,
        bytes: usize,
        stop: impl Fn() -> bool,
    ) -> bool {
        let fits = held.size().saturating_add(bytes) <= self.limit();
        let until = tokio::time::Instant::now() + ROOM_WAIT;
        while fits && !stop() && tokio::time::Instant::now() < until {
            if held.try_grow(bytes).is_ok() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    /// `held` grown to at least `bytes` (a buffer's capacity as it fills), waiting for room
    /// as `grow` does; false when there is none in time.
    pub async fn cover(&self, held: &MemoryReservation, bytes: usize) -> bool {
        let more = bytes.saturating_sub(held.size());
        more == 0 || held.try_grow(more).is_ok() || self.grow(held, more, || false).await
    }

    /// What a query's request takes: what it decoded to, and what planning copies of its
    /// parameters (`copied`: the bytes of their strings and one-kind lists).
    pub fn query_cost(decoded: usize, copied: usize) -> usize {
        decoded.saturating_add(copied.saturating_mul(PARAMETER_COPIES - 1))
    }

    /// The bytes held now.
    pub fn held(&self) -> usize {
        self.pool.reserved()
    }

    /// The room's size (`usize::MAX`: no limit).
    fn limit(&self) -> usize {
        match self.pool.memory_limit() {
            MemoryLimit::Finite(l) => l,
            _ => usize::MAX,
        }
    }

    /// The failure of a message of `bytes` (decoded) that found no room.
    pub fn no_room(&self, bytes: usize) -> Failure {
        let (limit, held) = (self.limit(), self.pool.reserved());
        Failure::new(
            status::OUT_OF_MEMORY,
            format!(
                "the message needs {} of memory, and the messages and parameters the server \
                 holds take {} of its {} (--memory-limit): try again later",
                crate::human_bytes(bytes),
                crate::human_bytes(held),
                crate::human_bytes(limit)
            ),
        )
    }

    /// The failure of a message that decodes to more than one may.
    pub fn too_large(&self) -> Failure {
        Failure::new(
            status::OUT_OF_MEMORY,
            format!(
                "the message decodes to more than {} (half the server's --memory-limit)",
                crate::human_bytes(self.budget)
            ),
        )
    }
}
