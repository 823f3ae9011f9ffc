//! Numbering writes, so that writers to different namespaces run in parallel.
//!
//! A write gets its sequence number and record ids in a short critical section
//! ([`Sequencer::reserve`]), writes its batch to RocksDB beside other writers (RocksDB groups
//! concurrent batches into one log write), applies it to the in-memory indexes and is
//! acknowledged, all without waiting for writes numbered before it. Applying in any order is
//! sound because writes in different namespaces touch different documents, and writes in one
//! namespace are serialized by its write lock.
//!
//! What needs order is recovery: a lexical commit names the sequence number *through* which
//! every write is in it ([`Sequencer::finished_through`]: every number up to it is applied, or
//! was given up), and reopening replays the change log after that number. Writes applied out of
//! order beyond it may be in the commit as well; replaying them again is harmless, because
//! replay re-indexes a record from its stored version and deletes any older copy first.
//!
//! Batches may also reach RocksDB out of order. The counters each batch persists are merged by
//! maximum in the store, so a reopened engine never hands out a number already used; a write
//! that failed, or that a crash cut short, leaves a gap in the change log, which replay skips.

use std::collections::BTreeSet;

use parking_lot::Mutex;

use crate::store::Counters;

/// Hands out sequence numbers and ids, and knows through which number every write is done.
pub(crate) struct Sequencer {
    /// The counters after the last reservation.
    reserved: Mutex<Counters>,
    finished: Mutex<Finished>,
}

/// The writes done so far: every number through `through`, and some beyond it.
struct Finished {
    through: u64,
    beyond: BTreeSet<u64>,
}

/// One write's reservation. Dropping it unfinished (the write failed) gives its number up, so
/// that later numbers can count as done.
pub(crate) struct Ticket<'a> {
    sequencer: &'a Sequencer,
    /// The counters as this reservation left them: what the write persists.
    pub(crate) counters: Counters,
    /// The first of the record ids reserved.
    pub(crate) first_record: u64,
}

impl Sequencer {
    /// Continues from the counters a store persisted; every write up to them is done.
    pub(crate) fn new(counters: Counters) -> Sequencer {
        Sequencer {
            reserved: Mutex::new(counters),
            finished: Mutex::new(Finished {
                through: counters.seq,
                beyond: BTreeSet::new(),
            }),
        }
    }

    /// Reserves the next sequence number and `records` record ids.
    pub(crate) fn reserve(&self, records: u64) -> Ticket<'_> {
        let mut reserved = self.reserved.lock();
        reserved.seq += 1;
        let first_record = reserved.next_record;
        reserved.next_record += records;
        Ticket {
            sequencer: self,
            counters: *reserved,
            first_record,
        }
    }

    /// Reserves a namespace id; returns it with the counters to persist.
    pub(crate) fn reserve_namespace(&self) -> (u32, Counters) {
        let mut reserved = self.reserved.lock();
        let id = reserved.next_namespace;
        reserved.next_namespace += 1;
        (id, *reserved)
    }

    /// Makes every record id handed out from now on at least `next` (an import keeps the ids
    /// of the records it brings).
    pub(crate) fn raise_next_record(&self, next: u64) {
        let mut reserved = self.reserved.lock();
        reserved.next_record = reserved.next_record.max(next);
    }

    /// The counters after the last reservation.
    pub(crate) fn reserved(&self) -> Counters {
        *self.reserved.lock()
    }

    /// The largest sequence number through which every write is acknowledged or given up.
    pub(crate) fn finished_through(&self) -> u64 {
        self.finished.lock().through
    }

    fn finish(&self, seq: u64) {
        let mut finished = self.finished.lock();
        if seq != finished.through + 1 {
            finished.beyond.insert(seq);
            return;
        }
        finished.through = seq;
        while let Some(&next) = finished.beyond.first() {
            if next != finished.through + 1 {
                break;
            }
            finished.beyond.pop_first();
            finished.through = next;
        }
    }
}

impl Ticket<'_> {
    /// This write's sequence number.
    pub(crate) fn seq(&self) -> u64 {
        self.counters.seq
    }

    /// Runs `apply` (the write's changes to the in-memory indexes), then counts the write as
    /// done. Must come after the write is durable in the store.
    pub(crate) fn finish(self, apply: impl FnOnce()) {
        apply();
        // Dropping `self` marks the number done.
    }
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        self.sequencer.finish(self.seq());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seq: u64) -> Sequencer {
        Sequencer::new(Counters {
            seq,
            next_record: 1,
            next_namespace: 0,
        })
    }

    #[test]
    fn numbers_and_ids_are_handed_out_in_order() {
        let sequencer = at(10);
        let first = sequencer.reserve(2);
        let second = sequencer.reserve(1);
        assert_eq!((first.seq(), first.first_record), (11, 1));
        assert_eq!((second.seq(), second.first_record), (12, 3));
        assert_eq!(second.counters.next_record, 4);
        assert_eq!(sequencer.reserve_namespace().0, 0);
        assert_eq!(sequencer.reserved().next_namespace, 1);
    }

    #[test]
    fn done_through_waits_for_the_gaps_to_close() {
        let sequencer = at(10);
        let (a, b, c) = (
            sequencer.reserve(1),
            sequencer.reserve(1),
            sequencer.reserve(1),
        );
        c.finish(|| ());
        b.finish(|| ());
        // 11 is still in flight: 12 and 13 are done but not "through".
        assert_eq!(sequencer.finished_through(), 10);
        a.finish(|| ());
        assert_eq!(sequencer.finished_through(), 13);
    }

    #[test]
    fn a_given_up_number_counts_as_done() {
        let sequencer = at(0);
        let failed = sequencer.reserve(1);
        let next = sequencer.reserve(1);
        next.finish(|| ());
        assert_eq!(sequencer.finished_through(), 0);
        drop(failed);
        assert_eq!(sequencer.finished_through(), 2);
    }
}
