//! The engine directory: created when allowed, recognised by a marker file naming its format,
//! and refused when it is something else (a file, a non-empty directory without the marker, an
//! engine of a format this build does not read). An engine of an older format this build can
//! upgrade is told apart ([`DirectoryFormat::Format1`]): `crate::opening` upgrades it under
//! the directory's lock, then marks it current ([`mark_current`]).

use std::fs;
use std::path::Path;

use crate::error::{Error, Result};

/// On-disk format of the whole engine directory. Bump when the key layout or the meaning of
/// stored values changes incompatibly.
///
/// Format 2 keeps every family of stored data but the vectors in one RocksDB column family
/// (format 1 had one column family per family); a format-1 directory is upgraded on open.
pub const ENGINE_FORMAT: u32 = 2;

/// The format whose directories are upgraded on open.
const UPGRADABLE_FORMAT: u32 = 1;

/// What an engine directory's marker says of its format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DirectoryFormat {
    /// [`ENGINE_FORMAT`], or a new directory.
    Current,
    /// Format 1: its store is upgraded on open (`crate::store::upgrade_format_1`).
    Format1,
}

/// Marker file identifying an engine directory.
const MARKER: &str = "MEMORY_ENGINE";
const MARKER_TEXT: &str = "memorybench-rs memory engine\nformat ";

/// Prepares `path` as an engine directory (creating it if allowed) and checks its marker.
pub(crate) fn prepare_directory(path: &Path, create_if_missing: bool) -> Result<DirectoryFormat> {
    if path.to_str().is_none() {
        return Err(Error::NonUtf8Path { path: path.into() });
    }
    let marker = path.join(MARKER);
    if path.is_file() {
        return Err(Error::NotAnEngine {
            path: path.into(),
            reason: "it is a file".into(),
        });
    }
    if !path.exists() {
        if !create_if_missing {
            return Err(Error::Missing { path: path.into() });
        }
        fs::create_dir_all(path).map_err(|e| Error::io(path, e))?;
    }
    if marker.exists() {
        let text = fs::read_to_string(&marker).map_err(|e| Error::io(&marker, e))?;
        let found = text
            .strip_prefix(MARKER_TEXT)
            .and_then(|rest| rest.trim().parse::<u32>().ok())
            .ok_or_else(|| Error::NotAnEngine {
                path: path.into(),
                reason: format!("{MARKER} does not hold an engine format line"),
            })?;
        return match found {
            ENGINE_FORMAT => Ok(DirectoryFormat::Current),
            UPGRADABLE_FORMAT => Ok(DirectoryFormat::Format1),
            _ => Err(Error::IncompatibleFormat {
                path: path.into(),
                found,
                expected: ENGINE_FORMAT,
            }),
        };
    }
    let mut entries = fs::read_dir(path).map_err(|e| Error::io(path, e))?;
    if entries.next().is_some() {
        return Err(Error::NotAnEngine {
            path: path.into(),
            reason: format!("not empty and has no {MARKER} file"),
        });
    }
    if !create_if_missing {
        return Err(Error::Missing { path: path.into() });
    }
    write_marker(&marker)?;
    Ok(DirectoryFormat::Current)
}

/// Marks the engine directory `path` as of [`ENGINE_FORMAT`] (once its upgrade is done).
pub(crate) fn mark_current(path: &Path) -> Result<()> {
    write_marker(&path.join(MARKER))
}

/// Writes the marker so that a crash leaves none or all of it
/// ([`mb_core::atomic_file::write_atomic`]).
fn write_marker(marker: &Path) -> Result<()> {
    let text = format!("{MARKER_TEXT}{ENGINE_FORMAT}\n");
    mb_core::atomic_file::write_atomic(marker, text.as_bytes()).map_err(|e| Error::io(marker, e))
}
