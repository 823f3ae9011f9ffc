//! Deletion that deletes: [`Engine::forget`] drops namespaces and [`Engine::compact`] rewrites
//! the store's files so that no byte of what was deleted is left in the engine directory.
//!
//! Deleting a record or dropping a namespace is logical at first: RocksDB writes tombstones
//! (the old values stay in table files and the write-ahead log until compaction) and tantivy
//! marks documents deleted (their terms stay in the segment until it is merged). Compaction
//! removes them: the lexical index is committed, every segment merged into one (which drops
//! deleted documents) and the replaced segment files garbage-collected; RocksDB's memtables
//! are flushed (so the write-ahead logs holding the old writes are released and deleted) and
//! every column family is compacted to its last level, where tombstones and the values they
//! cover are dropped and the old table files deleted.

use crate::engine::Engine;
use crate::error::Result;
use crate::lexical::index::LexicalOp;
use crate::namespace::Analyzer;
use crate::record::RecordId;

/// A namespace number no namespace gets (they are numbered from 0 up): compaction parks an
/// empty lexical document there so that even a single segment is merged (rewritten without
/// its deleted documents).
const COMPACTION_NS: u32 = u32::MAX;

impl Engine {
    /// Drops every namespace in `namespaces` that exists (records, vectors, BM25 postings,
    /// state, derived search state), then [`compact`](Engine::compact)s, so that nothing they
    /// held remains in any file of the engine directory. Returns how many were dropped.
    ///
    /// The guarantee covers the engine directory only: copies made outside it (backups,
    /// snapshots of the file system) keep what they copied.
    pub fn forget(&self, namespaces: &[&str]) -> Result<usize> {
        let mut dropped = 0;
        for name in namespaces {
            match self.drop_namespace(name) {
                Ok(()) => dropped += 1,
                Err(crate::Error::UnknownNamespace(_)) => {}
                Err(e) => return Err(e),
            }
        }
        self.compact()?;
        Ok(dropped)
    }

    /// Rewrites the store so that deleted records, dropped namespaces and removed state are
    /// gone from disk, not only from view: the lexical index is merged into one segment
    /// without deleted documents and the old segment files removed; RocksDB's memtables are
    /// flushed (releasing old write-ahead logs) and every column family compacted to its last
    /// level. Searches and writes go on meanwhile. Takes time in proportion to the store.
    pub fn compact(&self) -> Result<()> {
        let inner = &self.inner;
        // An empty document of no namespace makes at least two segments, so the merge below
        // rewrites every segment, however few there are.
        inner.lexical.apply(&[LexicalOp::Upsert {
            ns: COMPACTION_NS,
            id: RecordId(u64::MAX),
            analyzer: Analyzer::Standard,
            terms: Vec::new(),
            replaces: true,
        }]);
        self.merge_lexical_segments()?;
        // Deleting it makes the next commit run tantivy's garbage collection, now that no
        // searcher holds the segments the merge replaced.
        inner
            .lexical
            .apply(&[LexicalOp::DropNamespace { ns: COMPACTION_NS }]);
        inner.commit_lexical()?;
        inner.store.sync()?;
        inner.store.flush_memtables()?;
        inner.store.compact_all()?;
        Ok(())
    }
}
