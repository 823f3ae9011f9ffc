//! The engine directory: created when allowed, recognised by a marker file naming its format,
//! and refused when it is something else (a file, a non-empty directory without the marker, an
//! engine of a format this build does not read). An engine of an older format this build can
//! upgrade is told apart ([`DirectoryFormat::Format1`]): `crate::opening` upgrades it under
//! the directory's lock, then marks it current ([`mark_current`]).

use std::fs;
use std::io::Write;
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

/// Writes the marker so that a crash leaves none or all of it: a temporary file beside it,
/// synced, renamed over it, and the directory synced so that the rename itself survives (as
/// `mb_datasets::durable::write_atomic` does).
fn write_marker(marker: &Path) -> Result<()> {
    let tmp = marker.with_extension("tmp");
    let mut file = fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
    file.write_all(format!("{MARKER_TEXT}{ENGINE_FORMAT}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&tmp, e))?;
    fs::rename(&tmp, marker).map_err(|e| Error::io(marker, e))?;
    let dir = match marker.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}
