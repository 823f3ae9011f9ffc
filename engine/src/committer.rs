//! The background thread that commits the lexical index every
//! `EngineOptions::lexical_commit_interval`, so that reopening replays only a short change log.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{Error, Result};

/// The running commit thread; [`Committer::stop`] ends it.
pub(crate) struct Committer {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<()>,
}

impl Committer {
    /// Starts calling `commit` every `interval` in the background.
    pub(crate) fn start(
        interval: Duration,
        commit: impl Fn() -> Result<()> + Send + 'static,
    ) -> Result<Committer> {
        let (stop, stopped) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("mb-lexical-commit".into())
            .spawn(move || {
                // Ends when `stop` sends or is dropped.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
                    if let Err(e) = commit() {
                        tracing::error!("background lexical commit failed: {e}");
                    }
                }
            })
            .map_err(|e| Error::Background(format!("cannot start the commit thread: {e}")))?;
        Ok(Committer { stop, handle })
    }

    /// Stops the thread and waits for it.
    pub(crate) fn stop(self) {
        // The receiver may already be gone if the thread ended; either way it stops.
        let _ = self.stop.send(());
        if self.handle.join().is_err() {
            tracing::error!("the lexical commit thread panicked");
        }
    }
}
