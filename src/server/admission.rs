//! Who gets a connection slot. `--max-connections` slots in all; when every slot is taken
//! and connections that have not authenticated yet hold a quarter of them or more, a
//! newcomer takes the slot of the oldest of those (which is closed). A client that stalls
//! before authenticating (a TLS handshake never finished, a HELLO never followed by LOGON)
//! can then never lock out the clients that authenticate, however many such connections it
//! opens, and nobody is closed while slots are free.

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

    /// A slot for connection `id` (ids grow with arrival); when all are taken, the oldest
    /// unauthenticated connection's where those hold their share; `None` when every slot is
    /// taken otherwise.
    pub fn admit(self: &Arc<Self>, id: u64) -> Option<Admitted> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let pending = slots.values().filter(|s| !s.authenticated).count();
        if slots.len() >= self.max && pending >= self.max_pending {
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

    /// Whether connection `id` still holds its slot (it may have been taken back).
    fn set_authenticated(&self, id: u64, evict: &Arc<Notify>, yes: bool) -> bool {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        match slots.get_mut(&id) {
            Some(s) if Arc::ptr_eq(&s.evict, evict) => {
                s.authenticated = yes;
                true
            }
            _ => false,
        }
    }
}

impl Admitted {
    /// The connection authenticated: its slot is no longer taken back for newcomers. False
    /// when it was taken back already (the connection is to close).
    #[must_use]
    pub fn authenticated(&self) -> bool {
        self.admission.set_authenticated(self.id, &self.evict, true)
    }

    /// The connection logged off: it waits to authenticate again.
    pub fn logged_off(&self) {
        self.admission
            .set_authenticated(self.id, &self.evict, false);
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

    fn evicted(s: &Admitted) -> bool {
        futures::FutureExt::now_or_never(s.evicted()).is_some()
    }

    /// Connections `ids`, each authenticated as it arrives.
    fn logged_in(a: &Arc<Admission>, ids: std::ops::Range<u64>) -> Vec<Admitted> {
        ids.map(|id| {
            let s = a.admit(id).unwrap();
            assert!(s.authenticated());
            s
        })
        .collect()
    }

    #[test]
    fn with_every_slot_taken_a_newcomer_takes_the_oldest_unauthenticated_ones() {
        let a = Arc::new(Admission::new(8));
        // Eight waiting to authenticate fill every slot: nobody is closed until then.
        let waiting: Vec<_> = (1..=8).map(|id| a.admit(id).unwrap()).collect();
        assert!(!waiting.iter().any(evicted));
        // A ninth takes the oldest's slot, and logs in.
        let ninth = a.admit(9).unwrap();
        assert!(evicted(&waiting[0]) && !evicted(&waiting[1]));
        assert!(ninth.authenticated());
        // Taken back, a slot cannot be logged in with.
        assert!(!waiting[0].authenticated());
        drop(waiting);
        // Six authenticated, two waiting: full, and two is the waiting ones' share.
        let authed = logged_in(&a, 10..15);
        let two: Vec<_> = (15..17).map(|id| a.admit(id).unwrap()).collect();
        let next = a.admit(17).unwrap();
        assert!(evicted(&two[0]) && !evicted(&two[1]));
        assert!(next.authenticated());
        // Seven authenticated and one waiting: full, and the one is within its share.
        assert!(a.admit(18).is_none());
        drop(two);
        // Eight authenticated: full, and never taken back.
        let last = a.admit(19).unwrap();
        assert!(last.authenticated());
        assert!(a.admit(20).is_none());
        assert!(!authed.iter().any(evicted) && !evicted(&ninth));
        drop(authed);
        assert!(a.admit(21).is_some());
    }

    #[test]
    fn a_slot_taken_back_is_not_freed_twice() {
        let a = Arc::new(Admission::new(4));
        let first = a.admit(1).unwrap();
        let held = logged_in(&a, 2..5);
        let second = a.admit(5).unwrap(); // takes the first's slot
        assert!(evicted(&first));
        drop(first);
        assert!(second.authenticated());
        assert!(a.admit(6).is_none(), "{} slots held", held.len() + 1);
    }
}
