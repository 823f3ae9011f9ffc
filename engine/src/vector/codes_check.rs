//! The deferred check of a vector file's codes.
//!
//! A graph's codes (a byte per dimension and point) are most of a vector file: 38 of a
//! 100k-vector file's 45 MB. Checksumming them with the rest kept a reopened namespace's first
//! vector answer waiting 4–5 ms (`docs/history.md`), so a file is used as soon as everything
//! else in it checks ([`super::file`]), and its codes are checked by the first background job
//! of each collection read from it: the one that loads the graph's vectors from the store
//! ([`super::collection`]).
//!
//! Until then a damaged code can only steer a search to other candidates, never give a wrong
//! answer: every candidate of a graph is scored from its vector in the store (or in memory,
//! checked with the rest of the file), and the links that searches follow are checked against
//! the points before the file is used. A graph whose codes fail is dropped once its vectors
//! are in memory: the collection is searched exactly, builds a new graph, and writes it at the
//! next close.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;

use super::io::crc_inside;

/// A mapped vector file's codes and the checksum they must have, checked once, on demand.
pub(crate) struct CodesCheck {
    map: Arc<Mmap>,
    /// Where the codes lie in the file, in file order.
    ranges: Vec<Range<usize>>,
    expected: u32,
    /// The file's path, for the report.
    path: PathBuf,
    verdict: OnceLock<bool>,
}

impl CodesCheck {
    /// The check of `map`'s codes at `ranges` (found by the parse, so inside the map) against
    /// the checksum `expected` stored in the file at `path`.
    pub(super) fn new(
        map: Arc<Mmap>,
        ranges: Vec<Range<usize>>,
        expected: u32,
        path: PathBuf,
    ) -> CodesCheck {
        CodesCheck {
            map,
            ranges,
            expected,
            path,
            verdict: OnceLock::new(),
        }
    }

    /// Whether the codes are as written: computed by the first caller (the others wait for
    /// it), and reported when they are not.
    pub(crate) fn passes(&self) -> bool {
        *self.verdict.get_or_init(|| {
            let sound = crc_inside(&self.map, &self.ranges) == self.expected;
            if !sound {
                tracing::error!(
                    "{}: the graphs' codes fail their checksum; the graphs are built again",
                    self.path.display()
                );
            }
            sound
        })
    }
}
