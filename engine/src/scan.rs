//! Reading part of a namespace: by id range, without iterating it from the start, or by
//! attributes, decoding only the records that match.

use crate::codec;
use crate::engine::Engine;
use crate::error::Result;
use crate::filter::Filter;
use crate::record::{Record, RecordId};
use crate::store::Caching;

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

    /// The records of a namespace whose attributes `filter` matches (an empty filter matches
    /// every record), in id order. A filter with conditions reads the records its first
    /// condition names through the attribute index; an empty one reads every record in place.
    pub fn records_where(&self, namespace: &str, filter: &Filter) -> Result<Vec<Record>> {
        let ns = self.inner.namespace(namespace)?;
        self.inner.attributes.map_matching(
            &self.inner.store,
            ns.info.id,
            filter,
            Caching::Fill,
            |_, value| codec::decode("record", value),
        )
    }
}
