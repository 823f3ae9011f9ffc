//! The one process that has an engine directory open.
//!
//! A process opening a directory takes an exclusive advisory lock on its `HOLDER` file and writes
//! its pid there. A second opener that cannot take the lock is told the directory is in use, by
//! the lock's own answer (never by reading an error message), and is given the holder's pid only
//! when that process is alive. The lock dies with its process, so a `kill -9` leaves nothing to
//! clean up.

use std::fs::{File, OpenOptions, TryLockError};
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{Error, Result};

/// The file whose lock marks the holder, and which names it.
const HOLDER_FILE: &str = "HOLDER";

/// The directory's lock, held until dropped.
#[derive(Debug)]
pub(crate) struct Holder {
    _file: File,
}

impl Holder {
    /// Takes the lock of `engine_dir`, or says which live process holds it.
    pub(crate) fn take(engine_dir: &Path) -> Result<Holder> {
        let path = engine_dir.join(HOLDER_FILE);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(Error::InUse {
                    path: engine_dir.to_path_buf(),
                    holder: recorded_pid(engine_dir).filter(|pid| is_alive(*pid)),
                })
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        // Best effort: only error messages read the pid. It is written over the last holder's
        // in place, padded to the width of any pid, since truncating the file first was a
        // journal transaction at every open (0.07 ms of CPU).
        let line = format!("{:>10}\n", std::process::id());
        let recorded = file.write_all_at(line.as_bytes(), 0);
        if let Err(e) = recorded {
            tracing::debug!("could not record the holder in {}: {e}", path.display());
        }
        Ok(Holder { _file: file })
    }
}

/// The pid the holder recorded, if any.
fn recorded_pid(engine_dir: &Path) -> Option<u32> {
    std::fs::read_to_string(engine_dir.join(HOLDER_FILE))
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok()
}

/// Whether a process with this pid exists (signal 0 checks without sending anything).
fn is_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks that the process exists and may be signalled.
    let answer = unsafe { libc::kill(pid, 0) };
    answer == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_and_named_only_when_alive() {
        let dir = tempfile::tempdir().unwrap();
        let first = Holder::take(dir.path()).unwrap();
        match Holder::take(dir.path()) {
            Err(Error::InUse { holder, .. }) => assert_eq!(holder, Some(std::process::id())),
            other => panic!("expected InUse, got {other:?}"),
        }
        // A pid that names no live process is not reported.
        std::fs::write(dir.path().join(HOLDER_FILE), "999999999\n").unwrap();
        match Holder::take(dir.path()) {
            Err(Error::InUse { holder, .. }) => assert_eq!(holder, None),
            other => panic!("expected InUse, got {other:?}"),
        }
        drop(first);
        Holder::take(dir.path()).unwrap();
    }

    #[test]
    fn a_stale_holder_file_does_not_keep_anyone_out() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(HOLDER_FILE), "1\n").unwrap();
        drop(Holder::take(dir.path()).unwrap());
        assert_eq!(recorded_pid(dir.path()), Some(std::process::id()));
        // Written over in place: a longer line left by anything else does not garble the pid.
        std::fs::write(dir.path().join(HOLDER_FILE), "123456789012345678\nmore\n").unwrap();
        Holder::take(dir.path()).unwrap();
        assert_eq!(recorded_pid(dir.path()), Some(std::process::id()));
    }
}
