//! The tantivy writer: created on first use, and handed pending operations in their order.
//!
//! Creating a writer allocates its indexing memory, a tenth of a reopened 100k engine's open
//! (docs/history.md): an engine that only searches never pays it. The engine's holder lock
//! already keeps every other process out of the directory, so the writer's own lock can wait
//! for the first write too.
//!
//! tantivy builds a query weight for every delete operation it is handed. A filtered delete
//! of a thousand records had spent a seventh of its time there, so a run of consecutive
//! deletes becomes one delete by an [`IdSetQuery`] instead: the operations before the run are
//! handed over first and the ones after it later, so every delete still applies to exactly the
//! documents added before it.

use tantivy::indexer::UserOperation;
use tantivy::{Index, IndexWriter, Term};

use super::id_set::IdSetQuery;
use crate::error::Result;

/// Consecutive deletes from which one set query replaces the single ones (shorter runs, such
/// as an update's delete of its older version, are handed over as they are).
const DELETE_RUN: usize = 16;

/// The tantivy writer (once created) and what it holds beyond the last commit.
pub(super) struct WriterSlot {
    index: Index,
    /// Indexing memory of the writer, in bytes.
    memory: usize,
    writer: Option<IndexWriter>,
    /// The sequence number through which every write is in the writer (or will be, once the
    /// sealed generation is fed): the payload of its next commit.
    pub(super) last_seq: u64,
    /// The writer holds changes not yet committed.
    pub(super) dirty: bool,
    /// The writer lost operations (its indexing thread failed, or it could not be created):
    /// it must never commit again, so that reopening replays the change log from the last
    /// good commit.
    pub(super) failed: bool,
}

impl WriterSlot {
    /// A slot for `index`'s writer with `memory` bytes, committed through `last_seq`.
    pub(super) fn new(index: Index, memory: usize, last_seq: u64) -> WriterSlot {
        WriterSlot {
            index,
            memory,
            writer: None,
            last_seq,
            dirty: false,
            failed: false,
        }
    }

    /// The writer, created now if this is its first use.
    pub(super) fn writer(&mut self) -> Result<&mut IndexWriter> {
        let writer = match self.writer.take() {
            Some(writer) => writer,
            None => self.index.writer_with_num_threads(1, self.memory)?,
        };
        Ok(self.writer.insert(writer))
    }

    /// Hands pending operations to the writer. If it refuses them they are lost to it, so it
    /// is marked failed and never commits again (reopening replays them from the change log).
    pub(super) fn feed(&mut self, batch: Vec<UserOperation>) {
        if batch.is_empty() || self.failed {
            return;
        }
        let handed = self
            .writer()
            .and_then(|writer| Ok(hand_over(writer, batch)?));
        match handed {
            Ok(()) => self.dirty = true,
            Err(e) => {
                tracing::error!("the lexical index writer refused a batch: {e}");
                self.failed = true;
            }
        }
    }
}

/// Hands `ops` to `writer` in order, each run of at least [`DELETE_RUN`] consecutive deletes
/// as one delete by query.
fn hand_over(writer: &IndexWriter, ops: Vec<UserOperation>) -> tantivy::Result<()> {
    let mut batch = Vec::with_capacity(ops.len());
    let mut deletes = Vec::new();
    for op in ops {
        match op {
            UserOperation::Delete(term) => deletes.push(term),
            add @ UserOperation::Add(_) => {
                hand_over_deletes(writer, &mut batch, &mut deletes)?;
                batch.push(add);
            }
        }
    }
    hand_over_deletes(writer, &mut batch, &mut deletes)?;
    if !batch.is_empty() {
        writer.run(batch)?;
    }
    Ok(())
}

/// Appends a short run of deletes to `batch`; for a long one, hands `batch` over, then the run
/// as one query.
fn hand_over_deletes(
    writer: &IndexWriter,
    batch: &mut Vec<UserOperation>,
    deletes: &mut Vec<Term>,
) -> tantivy::Result<()> {
    if deletes.len() < DELETE_RUN {
        batch.extend(deletes.drain(..).map(UserOperation::Delete));
        return Ok(());
    }
    if !batch.is_empty() {
        writer.run(std::mem::take(batch))?;
    }
    writer.delete_query(Box::new(IdSetQuery::new(std::mem::take(deletes))))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::collector::DocSetCollector;
    use tantivy::query::AllQuery;
    use tantivy::schema::{Schema, Value, STORED, STRING};
    use tantivy::{doc, Index, TantivyDocument};

    /// The keys left after `ops` (given as `+key` to add, `-key` to delete), handed over by
    /// `hand`, then committed.
    fn keys_after(ops: &[String], hand: impl Fn(&IndexWriter, Vec<UserOperation>)) -> Vec<String> {
        let mut builder = Schema::builder();
        let key = builder.add_text_field("key", STRING | STORED);
        let index = Index::create_in_ram(builder.build());
        let mut writer: IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
        let ops = ops
            .iter()
            .map(|op| match op.split_at(1) {
                ("+", k) => UserOperation::Add(doc!(key => k)),
                (_, k) => UserOperation::Delete(Term::from_field_text(key, k)),
            })
            .collect();
        hand(&writer, ops);
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let found = searcher.search(&AllQuery, &DocSetCollector).unwrap();
        let mut keys: Vec<String> = found
            .into_iter()
            .map(|address| {
                let doc: TantivyDocument = searcher.doc(address).unwrap();
                doc.get_first(key).unwrap().as_str().unwrap().to_string()
            })
            .collect();
        keys.sort();
        keys
    }

    #[test]
    fn runs_of_deletes_as_one_query_leave_what_single_deletes_leave() {
        let mut ops: Vec<String> = (0..40).map(|i| format!("+k{i:02}")).collect();
        // A long run, then a key added back after it was deleted, a short run, and a long run
        // that deletes a key added in the same hand-over and one added after an earlier run.
        ops.extend((0..20).map(|i| format!("-k{i:02}")));
        ops.push("+k05".into());
        ops.extend(["-k30", "-k31", "+k30"].map(String::from));
        ops.extend((20..25).map(|i| format!("+n{i}")));
        ops.extend((20..38).map(|i| format!("-n{i}")));
        ops.push("-k05".into());
        ops.push("+n21".into());
        let singly = keys_after(&ops, |w, ops| {
            w.run(ops).unwrap();
        });
        let grouped = keys_after(&ops, |w, ops| hand_over(w, ops).unwrap());
        assert_eq!(grouped, singly);
        let expected: Vec<String> = (20..40)
            .filter(|i| *i != 31)
            .map(|i| format!("k{i:02}"))
            .chain(["n21".to_string()])
            .collect();
        assert_eq!(grouped, expected);
    }
}
