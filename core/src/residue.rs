//! Proving that deleted text is gone from disk: markers a byte scan can find, and the scan.
//!
//! - [`markers`]: strings of random letters, so that no four-byte run is shared with other
//!   text and LZ4 (RocksDB's and tantivy's compression) keeps each first occurrence whole;
//! - [`files_holding`]: every file under a directory containing a marker as written or
//!   lowercased (as a BM25 index holds it).
//!
//! The engine's and the MCP server's deletion tests scan their stores with these.

use std::path::{Path, PathBuf};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `count` markers of 20 random ASCII letters, the same for the same `seed`.
pub fn markers(count: usize, seed: u64) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(seed);
    let letters: Vec<char> = ('A'..='Z').chain('a'..='z').collect();
    (0..count)
        .map(|_| {
            (0..20)
                .map(|_| letters[rng.random_range(0..letters.len())])
                .collect()
        })
        .collect()
}

/// The files under `dir` holding `marker` as written or lowercased; an unreadable file or
/// folder is an error (a scan that skipped it would prove nothing).
pub fn files_holding(dir: &Path, marker: &str) -> std::io::Result<Vec<PathBuf>> {
    let needles = [
        marker.as_bytes().to_vec(),
        marker.to_lowercase().into_bytes(),
    ];
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path)?;
            let holds = needles
                .iter()
                .any(|n| !n.is_empty() && bytes.windows(n.len()).any(|w| w == n.as_slice()));
            if holds {
                found.push(path);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_is_found_as_written_or_lowercased_and_nowhere_else() {
        let dir = tempfile::tempdir().unwrap();
        let [a, b] = [0, 1].map(|i| markers(2, 7)[i].clone());
        assert_eq!(markers(2, 7), markers(2, 7));
        assert_ne!(a, b);
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(
            dir.path().join("sub/one"),
            format!("x {} y", a.to_lowercase()),
        )
        .unwrap();
        std::fs::write(dir.path().join("two"), "nothing").unwrap();
        assert_eq!(
            files_holding(dir.path(), &a).unwrap(),
            vec![dir.path().join("sub/one")]
        );
        assert!(files_holding(dir.path(), &b).unwrap().is_empty());
        assert!(files_holding(&dir.path().join("missing"), &a).is_err());
    }
}
