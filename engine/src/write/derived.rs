//! A write's changes to a namespace's derived search state: its BM25 statistics and vector
//! collections.
//!
//! Most writes change it once their batch is durable ([`Inner::update_derived`]). A batch of
//! many deletes only (a filtered delete: a thousand records) changes it while the batch is
//! written and synced, on the thread that counts the deleted records' terms
//! ([`Inner::delete_beside_derived`]): after a bulk load the write takes 5–8 ms, most of it
//! inserting the deletes into RocksDB's memtables, and the derived state's 1.2–1.9 ms no longer
//! follow it (`docs/history.md`). A search running meanwhile may or may not see the deletes, as
//! with any write under way; if the batch fails, the derived state is ahead of the store, so
//! it is dropped, and the next search builds it again from the store.

use std::sync::Arc;

use parking_lot::RwLock;

use super::{Prepared, ReplacedTexts};
use crate::batch::WriteReceipt;
use crate::error::Result;
use crate::lexical::stats::Removed;
use crate::record::RecordId;
use crate::residency::Evictable;
use crate::side_thread::beside;
use crate::state::{Derived, Inner, NamespaceState};
use crate::vector::collection::{schedule_graph_build, SharedCollection, VectorCollection};

impl Inner {
    /// Commits `prepared`, deletes only, while their records leave `derived` (the namespace's
    /// state) on a second thread; drops the derived state if either fails.
    pub(super) fn delete_beside_derived(
        &self,
        ns: &NamespaceState,
        derived: &Derived,
        replaced: &ReplacedTexts,
        prepared: &mut [Prepared],
    ) -> Result<WriteReceipt> {
        let ids: Vec<RecordId> = prepared
            .iter()
            .filter_map(|op| match op {
                Prepared::Delete { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        let (removed, receipt) = beside(
            "mb-delete-derived",
            || self.remove_derived(derived, &ids, &replaced.count()),
            || self.commit(ns, prepared),
        );
        if removed.is_none() || receipt.is_err() {
            tracing::warn!(
                "namespace {}: a delete of {} records failed or was cut short; its search state is built again from the store",
                ns.info.name,
                ids.len()
            );
            ns.unload();
            self.residency.forget(ns.info.id);
        }
        receipt
    }

    /// Takes the records `ids` out of `derived`'s vector collections and the terms `removed`
    /// counts out of its statistics.
    fn remove_derived(&self, derived: &Derived, ids: &[RecordId], removed: &Removed) {
        derived.lexical.write().remove(removed);
        let collections: Vec<SharedCollection> = derived.vectors.read().values().cloned().collect();
        for c in &collections {
            let mut touched = false;
            for id in ids {
                touched |= c.write().remove(*id);
            }
            if touched {
                schedule_graph_build(c, self.options.hnsw);
            }
        }
    }

    /// Mirrors a committed batch into the namespace's statistics and vector collections;
    /// `removed` counts the terms of the records it replaced.
    pub(super) fn update_derived(
        &self,
        ns: &NamespaceState,
        prepared: &[Prepared],
        removed: impl FnOnce() -> Removed,
    ) {
        let Some(derived) = ns.loaded() else {
            return;
        };
        let removed = removed();
        let mut touched = Vec::new();
        {
            let mut stats = derived.lexical.write();
            let mut collections = derived.vectors.write();
            for op in prepared {
                match op {
                    Prepared::Put {
                        record,
                        vectors,
                        terms,
                    }
                    | Prepared::Update {
                        record,
                        vectors,
                        terms,
                        ..
                    } => {
                        stats.add(terms);
                        if matches!(op, Prepared::Update { .. }) {
                            // The spaces the new version has no vector in lose the old one.
                            for c in collections.values() {
                                c.write().remove(record.id);
                            }
                        }
                        for (space, v) in vectors {
                            let dim = v.len();
                            let c = collections.entry(space.clone()).or_insert_with(|| {
                                Arc::new(RwLock::new(VectorCollection::new(dim)))
                            });
                            c.write().upsert(record.id, v);
                            touched.push(Arc::clone(c));
                        }
                    }
                    Prepared::Delete { id, old: _ } => {
                        for c in collections.values() {
                            if c.write().remove(*id) {
                                touched.push(Arc::clone(c));
                            }
                        }
                    }
                    Prepared::PutState(..) | Prepared::DeleteState(_) => {}
                }
            }
            // After the additions, so that no count passes through zero on the way.
            stats.remove(&removed);
        }
        // Once per collection, not once per record (a filtered delete touches one a thousand
        // times).
        touched.sort_by_key(Arc::as_ptr);
        touched.dedup_by(|a, b| Arc::ptr_eq(a, b));
        for c in touched {
            schedule_graph_build(&c, self.options.hnsw);
        }
    }
}
