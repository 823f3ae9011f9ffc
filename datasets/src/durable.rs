//! Durable file writes: a crash leaves the old file or the new one, never a torn mix.

use std::fs;
use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` so that a crash leaves the old file or the new one, whole: a
/// temporary file beside it, synced, renamed over it, and the directory synced so that the
/// rename itself survives.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".partial");
    let temporary = std::path::PathBuf::from(temporary);
    let mut file = fs::File::create(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    // The new file is whole beside the old one; the rename has not happened.
    fail::fail_point!("results::rename");
    fs::rename(&temporary, path)?;
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    fs::File::open(parent)?.sync_all()
}
