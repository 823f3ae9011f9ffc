//! Dropping a namespace: its records, vectors, state and attribute index entries deleted by
//! ranges in one atomic write (with its catalog entry and record count), its derived state and
//! lexical documents let go.

use std::sync::atomic::Ordering;

use crate::error::{Error, Result};
use crate::keys::{count_key, namespace_key, ns_end, ns_prefix, Family};
use crate::lexical::index::LexicalOp;
use crate::state::Inner;
use crate::store::{Change, ChangeEntry, StoreBatch};

impl Inner {
    /// Drops namespace `name`; errors with [`Error::UnknownNamespace`] if there is none.
    pub(crate) fn drop_namespace(&self, name: &str) -> Result<()> {
        let ns = self.namespace(name)?;
        let _serialized = ns.write_lock.lock();
        let mut catalog = self.catalog.write();
        if ns.dropped.load(Ordering::SeqCst) {
            return Err(Error::UnknownNamespace(name.to_string()));
        }
        let id = ns.info.id;
        self.residency.forget(id);
        let ticket = self.sequencer.reserve(0);
        let mut batch = StoreBatch::default();
        let meta = self.store.cf(Family::Meta)?;
        batch.delete(meta, namespace_key(name));
        batch.delete(meta, count_key(id));
        for cf in [
            Family::Records,
            Family::Vectors,
            Family::State,
            Family::Attributes,
        ] {
            batch.delete_range(self.store.cf(cf)?, ns_prefix(id), ns_end(id));
        }
        let entry = ChangeEntry {
            ns: id,
            changes: vec![Change::DropNamespace],
        };
        self.store
            .log_change(&mut batch, &ticket.counters, &entry)?;
        self.invalidate_snapshots(None, &catalog.namespaces, &mut batch)?;
        self.store.write(batch)?;
        self.snapshots.invalidated();
        ticket.finish(|| self.lexical.apply(&[LexicalOp::DropNamespace { ns: id }]));
        ns.dropped.store(true, Ordering::SeqCst);
        catalog.namespaces.remove(name);
        Ok(())
    }
}
