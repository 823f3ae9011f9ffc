//! A value made on a background thread, waited for only by its first user.
//!
//! A reopened namespace's BM25 statistics are decoded from their snapshot while its vectors
//! load, and a vector search does not need them: with the statistics as an [`Arriving`] value,
//! that search answers as soon as the vectors are in, and the first text search or write waits
//! for the rest of the decode (docs/stores.md, reopen).
//!
//! - [`Arriving::ready`]: a value already at hand;
//! - [`Arriving::made_beside`]: a value a background thread makes (or fails to make);
//! - [`Arriving::get`]: the value, waiting for the thread, or made by a fallback where the thread
//!   failed;
//! - [`Arriving::arrived`]: the value if it is in, never waiting.

use std::sync::OnceLock;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::error::Result;

/// A value that is, or will be, made on a background thread.
pub(crate) struct Arriving<T> {
    value: OnceLock<T>,
    /// The thread making it, until someone waits for it.
    maker: Mutex<Option<JoinHandle<Option<T>>>>,
}

impl<T: Send + 'static> Arriving<T> {
    /// A value already made.
    pub(crate) fn ready(value: T) -> Arriving<T> {
        Arriving {
            value: OnceLock::from(value),
            maker: Mutex::new(None),
        }
    }

    /// A value `make` makes on a thread named `name` (`None`: it could not; [`get`](Self::get)'s
    /// fallback then makes it, as it does where no thread can be started).
    pub(crate) fn made_beside(
        name: &str,
        make: impl FnOnce() -> Option<T> + Send + 'static,
    ) -> Arriving<T> {
        let handle = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(make)
            .map_err(|e| tracing::warn!("cannot start {name}: {e}; its first user makes it"))
            .ok();
        Arriving {
            value: OnceLock::new(),
            maker: Mutex::new(handle),
        }
    }

    /// The value: at once if it is in; otherwise after the background thread ends, or made by
    /// `fallback` where that thread could not make it (or never ran). A fallback's error is
    /// returned and the next call tries again.
    pub(crate) fn get(&self, fallback: impl FnOnce() -> Result<T>) -> Result<&T> {
        if let Some(value) = self.value.get() {
            return Ok(value);
        }
        let mut maker = self.maker.lock();
        if let Some(value) = self.value.get() {
            return Ok(value);
        }
        let made = match maker.take() {
            Some(handle) => handle.join().ok().flatten(),
            None => None,
        };
        let value = match made {
            Some(value) => value,
            None => fallback()?,
        };
        Ok(self.value.get_or_init(|| value))
    }

    /// The value, if it is in; never waits.
    pub(crate) fn arrived(&self) -> Option<&T> {
        self.value.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn a_ready_value_is_there_at_once() {
        let value = Arriving::ready(7);
        assert_eq!(value.arrived(), Some(&7));
        assert_eq!(*value.get(|| panic!("no fallback")).unwrap(), 7);
    }

    #[test]
    fn the_first_user_waits_for_the_thread() {
        let (go, wait) = std::sync::mpsc::channel::<()>();
        let value = Arriving::made_beside("test-maker", move || {
            wait.recv().ok()?;
            Some(42)
        });
        assert_eq!(value.arrived(), None, "still being made");
        go.send(()).unwrap();
        assert_eq!(*value.get(|| panic!("the thread made it")).unwrap(), 42);
        assert_eq!(value.arrived(), Some(&42));
    }

    #[test]
    fn a_thread_that_fails_or_panics_leaves_it_to_the_fallback_once() {
        let calls = Arc::new(AtomicUsize::new(0));
        let fallback = || {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(5)
        };
        let failed: Arriving<i32> = Arriving::made_beside("test-fails", || None);
        assert_eq!(*failed.get(fallback).unwrap(), 5);
        assert_eq!(*failed.get(fallback).unwrap(), 5);
        let panicked: Arriving<i32> = Arriving::made_beside("test-panics", || panic!("decode"));
        assert_eq!(*panicked.get(fallback).unwrap(), 5);
        assert_eq!(calls.load(Ordering::SeqCst), 2, "one fallback per value");
    }

    #[test]
    fn a_failed_fallback_is_tried_again() {
        let value: Arriving<i32> = Arriving::made_beside("test-fails", || None);
        let error = value.get(|| Err(Error::Background("store away".into())));
        assert!(matches!(error, Err(Error::Background(_))));
        assert_eq!(value.arrived(), None);
        assert_eq!(*value.get(|| Ok(3)).unwrap(), 3);
    }
}
