//! The gate between adding a user's dialogs and deleting that user. A deletion first closes the
//! gate (adds arriving from then on are refused with a retryable `busy` error) and waits for
//! the adds already past it to finish enqueueing; only then does it purge the queue and drop the
//! namespaces. So every dialog acknowledged before `delete_all_memories` answers is deleted by
//! it, and none slips into the queue half-way through (where a worker could write it into a
//! namespace being dropped).

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use tokio::sync::Notify;

use crate::error::McpError;

/// Adds in flight and deletions running, by user (the user's own namespace).
#[derive(Default)]
pub struct UserGate {
    users: Mutex<HashMap<String, Entry>>,
    /// Woken whenever a user's last add in flight ends, so a waiting deletion looks again
    /// instead of polling.
    drained: Notify,
}

#[derive(Default)]
struct Entry {
    adding: usize,
    deleting: bool,
}

/// An add admitted through the gate; dropping it ends the add.
pub struct AddPass<'a> {
    gate: &'a UserGate,
    user: String,
}

/// A deletion holding the gate closed; dropping it opens the gate again.
pub struct DeletePass<'a> {
    gate: &'a UserGate,
    user: String,
}

impl UserGate {
    /// Admits an add for `user`, or refuses it while the user is being deleted.
    pub fn enter_add(&self, user: &str) -> Result<AddPass<'_>, McpError> {
        let mut users = self.lock()?;
        let entry = users.entry(user.to_string()).or_default();
        if entry.deleting {
            return Err(McpError::Busy(
                "this user's memories are being deleted; retry when the deletion has answered"
                    .into(),
            ));
        }
        entry.adding += 1;
        Ok(AddPass {
            gate: self,
            user: user.to_string(),
        })
    }

    /// Closes the gate for `user` and waits until the adds already admitted have finished; a
    /// second deletion of the same user while one runs is refused.
    pub async fn begin_delete(&self, user: &str) -> Result<DeletePass<'_>, McpError> {
        {
            let mut users = self.lock()?;
            let entry = users.entry(user.to_string()).or_default();
            if entry.deleting {
                return Err(McpError::Busy(
                    "this user's memories are already being deleted".into(),
                ));
            }
            entry.deleting = true;
        }
        let pass = DeletePass {
            gate: self,
            user: user.to_string(),
        };
        loop {
            // Registered before looking, so an add ending in between still wakes this one.
            let drained = self.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            if self.adding(user)? == 0 {
                return Ok(pass);
            }
            drained.await;
        }
    }

    fn adding(&self, user: &str) -> Result<usize, McpError> {
        Ok(self.lock()?.get(user).map_or(0, |e| e.adding))
    }

    fn lock(&self) -> Result<MutexGuard<'_, HashMap<String, Entry>>, McpError> {
        self.users
            .lock()
            .map_err(|_| McpError::Io("the user gate lock is poisoned".into()))
    }

    /// Applies `change` to `user`'s entry and forgets the entry once it is idle.
    fn release(&self, user: &str, change: impl FnOnce(&mut Entry)) {
        if let Ok(mut users) = self.users.lock() {
            if let Some(entry) = users.get_mut(user) {
                change(entry);
                if entry.adding == 0 {
                    if entry.deleting {
                        self.drained.notify_waiters();
                    } else {
                        users.remove(user);
                    }
                }
            }
        }
    }
}

impl Drop for AddPass<'_> {
    fn drop(&mut self) {
        self.gate
            .release(&self.user, |e| e.adding = e.adding.saturating_sub(1));
    }
}

impl Drop for DeletePass<'_> {
    fn drop(&mut self) {
        self.gate.release(&self.user, |e| e.deleting = false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_deletion_waits_for_adds_in_flight_and_refuses_new_ones() {
        let gate = std::sync::Arc::new(UserGate::default());
        let add = gate.enter_add("u").unwrap();
        let deleting = {
            let gate = gate.clone();
            tokio::spawn(async move {
                let pass = gate.begin_delete("u").await.unwrap();
                // Held until the add in flight ended: nothing is adding now.
                let adding = gate.adding("u").unwrap();
                drop(pass);
                adding
            })
        };
        // The deletion has closed the gate but cannot proceed while the add is in flight.
        while gate.enter_add("u").is_ok() {
            tokio::task::yield_now().await;
        }
        assert!(matches!(gate.enter_add("u"), Err(McpError::Busy(_))));
        assert!(matches!(
            gate.begin_delete("u").await,
            Err(McpError::Busy(_))
        ));
        assert!(
            gate.enter_add("other").is_ok(),
            "other users are not held up"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!deleting.is_finished());
        drop(add);
        assert_eq!(deleting.await.unwrap(), 0);
        // Open again, and nothing is left behind.
        drop(gate.enter_add("u").unwrap());
        assert!(gate.lock().unwrap().is_empty());
    }
}
