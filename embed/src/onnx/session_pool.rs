//! A fixed set of ONNX Runtime sessions lent out one caller at a time.
//!
//! `Session::run` needs `&mut`, so concurrent callers each borrow a whole session instead of
//! queueing behind one lock; when all are busy, a caller waits until one is given back.

use ort::session::Session;
use parking_lot::{Condvar, Mutex, MutexGuard};

pub(crate) struct SessionPool {
    slots: Vec<Mutex<Session>>,
    /// Held while scanning for a free slot and while announcing a freed one, so that an
    /// announcement cannot fall between a waiter's scan and its wait.
    scan: Mutex<()>,
    freed: Condvar,
}

impl SessionPool {
    pub(crate) fn new(sessions: Vec<Session>) -> SessionPool {
        SessionPool {
            slots: sessions.into_iter().map(Mutex::new).collect(),
            scan: Mutex::new(()),
            freed: Condvar::new(),
        }
    }

    /// How many sessions the pool lends.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Runs `f` with a session of its own, waiting for one if all are lent out.
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Session) -> R) -> R {
        // Locals drop in reverse order: the session is given back first, then announced, also
        // when `f` panics.
        let _announce = AnnounceOnDrop(self);
        let mut session = self.borrow();
        f(&mut session)
    }

    fn borrow(&self) -> MutexGuard<'_, Session> {
        let mut scan = self.scan.lock();
        loop {
            if let Some(session) = self.slots.iter().find_map(Mutex::try_lock) {
                return session;
            }
            self.freed.wait(&mut scan);
        }
    }
}

/// Wakes one waiter when a loan ends.
struct AnnounceOnDrop<'a>(&'a SessionPool);

impl Drop for AnnounceOnDrop<'_> {
    fn drop(&mut self) {
        let _scan = self.0.scan.lock();
        self.0.freed.notify_one();
    }
}
