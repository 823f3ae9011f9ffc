//! Atomic multi-operation writes.

use serde::Serialize;

use crate::codec;
use crate::error::Result;
use crate::record::{NewRecord, RecordId};

/// A set of operations on one namespace applied atomically: either all of them are stored
/// (under one sequence number) or none is.
///
/// ```
/// # use mb_engine::{Batch, NewRecord, RecordId};
/// let mut batch = Batch::new();
/// batch.put(NewRecord::new("Alice likes tea"));
/// batch.delete(RecordId(42));
/// batch.put_state("heat/alice", &3u32).unwrap();
/// assert_eq!(batch.len(), 3);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub(crate) ops: Vec<Op>,
}

#[derive(Debug, Clone)]
pub(crate) enum Op {
    Put(NewRecord),
    Update(RecordId, NewRecord),
    Delete(RecordId),
    PutState(String, Vec<u8>),
    DeleteState(String),
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Batch::default()
    }

    /// Adds a new record; its id is returned in [`WriteReceipt::ids`].
    pub fn put(&mut self, record: NewRecord) -> &mut Self {
        self.ops.push(Op::Put(record));
        self
    }

    /// Replaces the text, body, attributes and vectors of an existing record (same id).
    pub fn update(&mut self, id: RecordId, record: NewRecord) -> &mut Self {
        self.ops.push(Op::Update(id, record));
        self
    }

    /// Deletes a record; deleting an absent record is not an error.
    pub fn delete(&mut self, id: RecordId) -> &mut Self {
        self.ops.push(Op::Delete(id));
        self
    }

    /// Stores a value under `key` in the namespace's free-form state.
    pub fn put_state<T: Serialize>(
        &mut self,
        key: impl Into<String>,
        value: &T,
    ) -> Result<&mut Self> {
        let bytes = codec::encode("namespace state", value)?;
        self.ops.push(Op::PutState(key.into(), bytes));
        Ok(self)
    }

    /// Removes `key` from the namespace's free-form state.
    pub fn delete_state(&mut self, key: impl Into<String>) -> &mut Self {
        self.ops.push(Op::DeleteState(key.into()));
        self
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operation.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

/// What an acknowledged [`Batch`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReceipt {
    /// Sequence number of the write.
    pub seq: u64,
    /// Ids of the records added by `put`, in order.
    pub ids: Vec<RecordId>,
    /// Number of `delete` operations that removed an existing record.
    pub deleted: usize,
}
