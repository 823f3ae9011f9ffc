//! Telling a full disk from other storage failures: by the file system's free space, measured
//! when a write fails, never by the words of the error (issue 76, D5).
//!
//! RocksDB stops writing after a write-ahead-log append fails for want of space, and resumes by
//! itself: its file manager polls the free space every 5 seconds and, once the largest memtable
//! fits on the disk again, flushes and takes writes. Reads go on meanwhile. So a failed write is
//! a full disk when less than that headroom is free: the caller learns what to free, and that
//! nothing else is needed.

use std::path::Path;

/// Free bytes RocksDB needs before it resumes writes by itself: its largest memtable (the
/// default column's 64 MiB write buffer), which a flush must be able to write.
pub const RESUME_HEADROOM: u64 = 64 << 20;

/// The bytes an unprivileged process may still write on the file system holding `path`, or
/// `None` when the file system cannot say.
pub(crate) fn available_bytes(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        let mut stats = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
        // SAFETY: `c_path` is a NUL-terminated string that outlives the call, and `stats`
        // points to writable memory of the size `statvfs` fills; it is read only when the call
        // reports success, after which every field is initialized.
        let stats = unsafe {
            if libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) != 0 {
                return None;
            }
            stats.assume_init()
        };
        #[allow(clippy::unnecessary_cast)] // the fields' widths differ between platforms
        Some((stats.f_bavail as u64).saturating_mul(stats.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The bytes free on the disk of `path` when they are too few for RocksDB to write (a write that
/// failed with an I/O error there failed for want of space), else `None`.
pub(crate) fn free_when_full(path: &Path) -> Option<u64> {
    available_bytes(path).filter(|&free| free < RESUME_HEADROOM)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_free_space_of_a_real_directory_is_known() {
        let dir = tempfile::tempdir().unwrap();
        let free = available_bytes(dir.path());
        assert!(free.is_some_and(|f| f > 0), "{free:?}");
        assert_eq!(available_bytes(&dir.path().join("missing/x")), None);
    }
}
