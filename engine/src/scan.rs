//! Reading part of a namespace by id range, without iterating it from the start.

use crate::engine::Engine;
use crate::error::Result;
use crate::record::{Record, RecordId};

impl Engine {
    /// Iterates the records of a namespace whose ids are greater than `after`, in id order
    /// (ids increase with insertion, so: the records written after `after`, and the ones an
    /// update kept in place). Costs the records read, not the namespace's size.
    pub fn records_after(
        &self,
        namespace: &str,
        after: RecordId,
    ) -> Result<impl Iterator<Item = Result<Record>> + '_> {
        let ns = self.inner.namespace(namespace)?;
        let from = RecordId(after.0.saturating_add(1));
        self.inner.store.iter_records_from(ns.info.id, from)
    }
}
