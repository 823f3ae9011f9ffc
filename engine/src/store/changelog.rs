//! The store's change log: what each numbered write changed, kept until the derived indexes
//! have it, so that recovery replays what they miss.

use crate::store::StoreBatch;
use serde::{Deserialize, Serialize};

use super::{Counters, Store};
use crate::codec;
use crate::error::{Error, Result};
use crate::keys::*;
use crate::record::RecordId;

/// What one logical write changed, replayed by the derived indexes after a crash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ChangeEntry {
    pub ns: u32,
    pub changes: Vec<Change>,
}

/// One change of a [`ChangeEntry`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub(crate) enum Change {
    /// The record was created or replaced; its current version is in the records family.
    Upsert(RecordId),
    /// The record was deleted.
    Delete(RecordId),
    /// The whole namespace was dropped.
    DropNamespace,
}

impl Store {
    /// Completes a numbered write's batch: its change-log entry, under the sequence number the
    /// counters carry, and the counters themselves. Recovery replays the log from it.
    pub(crate) fn log_change(
        &self,
        batch: &mut StoreBatch,
        counters: &Counters,
        entry: &ChangeEntry,
    ) -> Result<()> {
        batch.put(
            self.cf(Family::Changelog)?,
            changelog_key(counters.seq),
            codec::encode("change log entry", entry)?,
        );
        self.put_counters(batch, counters)
    }

    /// Change-log entries with a sequence number above `after`, in order.
    pub(crate) fn changes_after(&self, after: u64) -> Result<Vec<(u64, ChangeEntry)>> {
        let start = changelog_key(after.saturating_add(1));
        let mut out = Vec::new();
        for (key, value) in self.scan(Family::Changelog, &start, &[0xff; 9])? {
            let seq = seq_of_changelog_key(&key).ok_or_else(|| Error::Corrupt {
                what: "change log",
                detail: format!("key {key:?}"),
            })?;
            out.push((seq, codec::decode("change log entry", &value)?));
        }
        Ok(out)
    }

    /// Forgets change-log entries up to and including `seq` (the indexes have them), and
    /// records how far the log is trimmed.
    pub(crate) fn trim_changes(&self, seq: u64) -> Result<()> {
        let mut batch = StoreBatch::default();
        batch.delete_range(
            self.cf(Family::Changelog)?,
            changelog_key(0),
            changelog_key(seq.saturating_add(1)),
        );
        batch.merge(
            self.cf(Family::Meta)?,
            META_CHANGELOG_TRIMMED,
            encode_u64(seq),
        );
        self.write(batch)
    }

    /// The last sequence number trimmed from the change log (`None`: a store written before
    /// this was recorded, or never trimmed).
    pub(crate) fn changes_trimmed(&self) -> Result<Option<u64>> {
        self.get(Family::Meta, META_CHANGELOG_TRIMMED)?
            .map(|b| {
                decode_u64(&b).ok_or_else(|| Error::Corrupt {
                    what: "counter",
                    detail: "changelog_trimmed".into(),
                })
            })
            .transpose()
    }
}
