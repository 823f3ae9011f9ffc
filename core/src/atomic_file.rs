//! Files replaced whole or not at all: a crash leaves the old file or the new one, never a torn
//! mix. The new content goes to `<name>.partial` beside the file, which is synced, renamed over
//! the file, and the directory synced so that the rename itself survives. [`write_atomic`]
//! writes bytes at hand; [`AtomicFile`] is the streaming form, for output too large to hold.

use std::fs::{self, File};
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Writes `bytes` to `path` whole or not at all (see the module documentation).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(bytes)?;
    file.commit()
}

/// Where the new content of `path` is written before it replaces `path`.
pub fn partial_path(path: &Path) -> PathBuf {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    PathBuf::from(partial)
}

/// A file being written to replace `path`; [`AtomicFile::commit`] replaces it. Dropped
/// without a commit, the partial file stays behind (the next `create` replaces it) and `path`
/// is untouched.
pub struct AtomicFile {
    path: PathBuf,
    partial: PathBuf,
    out: BufWriter<File>,
}

impl AtomicFile {
    /// Starts replacing `path`: a partial file a crash left behind is removed, never followed
    /// (it is created anew, so a link planted there is not written through).
    pub fn create(path: &Path) -> io::Result<AtomicFile> {
        let partial = partial_path(path);
        match fs::remove_file(&partial) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&partial)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            partial,
            out: BufWriter::new(file),
        })
    }

    /// Syncs what was written and puts it in place of the file, durably.
    pub fn commit(self) -> io::Result<()> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        // The new file is whole beside the old one; the rename has not happened.
        #[cfg(feature = "failpoints")]
        fail::fail_point!("results::rename");
        fs::rename(&self.partial, &self.path)?;
        let parent = match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        File::open(parent)?.sync_all()
    }
}

/// Formats that patch what they wrote (a GGUF file's offsets) seek within the partial file.
impl Seek for AtomicFile {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.out.seek(to)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_an_uncommitted_one_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let mut unfinished = AtomicFile::create(&path).unwrap();
        unfinished.write_all(b"three").unwrap();
        drop(unfinished);
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert!(partial_path(&path).exists());
        write_atomic(&path, b"four").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"four");
        assert!(!partial_path(&path).exists());
    }
}
