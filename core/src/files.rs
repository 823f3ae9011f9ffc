//! Reading a whole file that came from outside, with a size limit suited to its kind.
//!
//! A settings file, a raw dataset or a run record is read into memory at once. A path that
//! names a device (`/dev/zero`), a pipe or a file far larger than its kind can be would
//! otherwise read until memory runs out. [`read_text`] refuses anything but a regular file,
//! refuses a file larger than the limit, and never reads more than the limit even when the size
//! the file system reports is wrong (`/proc` files say 0).

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Settings files (memory systems, model roles, embedders): a few hundred bytes in practice.
pub const SETTINGS_LIMIT: u64 = 4 << 20;
/// Raw dataset files read whole (LoCoMo's full file is 2.8 MB; MemoryBench's largest raw file
/// is under 100 MB).
pub const DATASET_LIMIT: u64 = 1 << 30;

/// Why a file could not be read whole. The message leaves the path to the caller, which
/// names it in its own error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// A device, pipe, socket or directory.
    #[error("not a regular file")]
    NotAFile {
        /// The path given.
        path: PathBuf,
    },
    /// Larger than the limit for its kind.
    #[error("larger than {limit} bytes, the most such a file may hold")]
    TooLarge {
        /// The path given.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText {
        /// The path given.
        path: PathBuf,
    },
    /// The file system refused.
    #[error("{source}")]
    Io {
        /// The path given.
        path: PathBuf,
        /// What it said.
        source: std::io::Error,
    },
}

/// The whole text of the regular file at `path`, if it holds at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    let io = |source| ReadError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let metadata = file.metadata().map_err(io)?;
    if !metadata.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let too_large = || ReadError::TooLarge {
        path: path.to_path_buf(),
        limit,
    };
    if metadata.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_directories_and_oversized_files_are_refused() {
        assert!(matches!(
            read_text(Path::new("/dev/zero"), SETTINGS_LIMIT),
            Err(ReadError::NotAFile { .. })
        ));
        let dir = std::env::temp_dir();
        assert!(matches!(
            read_text(&dir, SETTINGS_LIMIT),
            Err(ReadError::NotAFile { .. })
        ));
        let file = dir.join(format!("mb-core-files-{}", std::process::id()));
        std::fs::write(&file, "0123456789").unwrap();
        assert_eq!(read_text(&file, 10).unwrap(), "0123456789");
        let error = read_text(&file, 9).unwrap_err().to_string();
        assert!(error.contains("larger than 9 bytes"), "{error}");
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_text(&file, 10),
            Err(ReadError::NotText { .. })
        ));
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_file_that_reports_no_size_is_still_bounded() {
        // /proc files report a length of 0 whatever they hold.
        let error = read_text(Path::new("/proc/self/maps"), 16).unwrap_err();
        assert!(matches!(error, ReadError::TooLarge { .. }), "{error}");
    }
}
