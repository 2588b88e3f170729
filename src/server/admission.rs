//! Who gets a connection slot. `--max-connections` slots in all, of which connections that
//! have not authenticated yet may hold at most a quarter: when one more arrives, the oldest
//! of them is closed and its slot handed over. A client that stalls before authenticating
//! (a TLS handshake never finished, a HELLO never followed by LOGON) can then never lock
//! out the clients that authenticate, however many such connections it opens.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

pub(crate) struct Admission {
    max: usize,
    /// Most slots held by connections not yet authenticated.
    max_pending: usize,
    /// The connections holding slots, by the order they arrived in.
    slots: Mutex<BTreeMap<u64, Slot>>,
}

struct Slot {
    authenticated: bool,
    /// Told when the slot is taken back.
    evict: Arc<Notify>,
}

/// A connection's slot; dropped, it is free again.
pub(crate) struct Admitted {
    id: u64,
    evict: Arc<Notify>,
    admission: Arc<Admission>,
}

impl Admission {
    pub fn new(max: usize) -> Self {
        Self {
            max: max.max(1),
            max_pending: (max / 4).max(1),
            slots: Mutex::default(),
        }
    }

    /// A slot for connection `id` (ids grow with arrival), taking back the oldest
    /// unauthenticated connection's where those hold their share; `None` when every slot is
    /// taken.
    pub fn admit(self: &Arc<Self>, id: u64) -> Option<Admitted> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let pending = slots.values().filter(|s| !s.authenticated).count();
        if pending >= self.max_pending {
            let oldest = slots
                .iter()
                .find(|(_, s)| !s.authenticated)
                .map(|(&id, _)| id);
            if let Some(slot) = oldest.and_then(|id| slots.remove(&id)) {
                // Stored when its connection is not waiting yet: it sees it at its next wait.
                slot.evict.notify_one();
            }
        }
        if slots.len() >= self.max {
            return None;
        }
        let evict = Arc::new(Notify::new());
        slots.insert(
            id,
            Slot {
                authenticated: false,
                evict: evict.clone(),
            },
        );
        Some(Admitted {
            id,
            evict,
            admission: self.clone(),
        })
    }

    fn set_authenticated(&self, id: u64, yes: bool) {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = slots.get_mut(&id) {
            s.authenticated = yes;
        }
    }
}

impl Admitted {
    /// The connection authenticated: its slot is no longer taken back for newcomers.
    pub fn authenticated(&self) {
        self.admission.set_authenticated(self.id, true);
    }

    /// The connection logged off: it waits to authenticate again.
    pub fn logged_off(&self) {
        self.admission.set_authenticated(self.id, false);
    }

    /// Completes when the slot is taken back (never for an authenticated connection).
    pub async fn evicted(&self) {
        self.evict.notified().await
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut slots = self
            .admission
            .slots
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        // Only its own: a slot taken back may not be in the map any more.
        if slots
            .get(&self.id)
            .is_some_and(|s| Arc::ptr_eq(&s.evict, &self.evict))
        {
            slots.remove(&self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connections `ids`, each authenticated as it arrives.
    fn logged_in(a: &Arc<Admission>, ids: std::ops::Range<u64>) -> Vec<Admitted> {
        ids.map(|id| {
            let s = a.admit(id).unwrap();
            s.authenticated();
            s
        })
        .collect()
    }

    #[test]
    fn unauthenticated_connections_hold_at_most_a_quarter_of_the_slots() {
        let a = Arc::new(Admission::new(8));
        // Two waiting to authenticate, then a third: the first gives its slot up.
        let first = a.admit(1).unwrap();
        let second = a.admit(2).unwrap();
        let third = a.admit(3).unwrap();
        let evicted = futures::FutureExt::now_or_never(first.evicted());
        assert!(evicted.is_some(), "the oldest waiting connection is closed");
        assert!(futures::FutureExt::now_or_never(second.evicted()).is_none());
        // Authenticated ones fill the rest and are never taken back.
        second.authenticated();
        third.authenticated();
        let rest = logged_in(&a, 4..10);
        drop(first);
        assert!(a.admit(10).is_none(), "eight authenticated: full");
        assert!(futures::FutureExt::now_or_never(second.evicted()).is_none());
        drop(rest);
        assert!(a.admit(11).is_some());
    }

    #[test]
    fn a_slot_taken_back_is_not_freed_twice() {
        let a = Arc::new(Admission::new(4));
        let first = a.admit(1).unwrap();
        let second = a.admit(2).unwrap(); // takes the first's slot
        drop(first);
        second.authenticated();
        let more = logged_in(&a, 3..6);
        assert!(a.admit(6).is_none(), "{} slots held", more.len() + 1);
    }
}
