//! How many bytes of text an item of the graph holds: what the graph's byte bound
//! (`--max-graph-bytes`) and a reply's (`--max-reply-bytes`) count. Text, not JSON: the count
//! is kept as the graph changes, without serializing anything.

use crate::graph::model::{Entity, Relation};

/// The bytes of text an item holds.
pub trait TextBytes {
    /// The sum of the lengths of the item's strings.
    fn text_bytes(&self) -> usize;
}

impl TextBytes for Entity {
    fn text_bytes(&self) -> usize {
        self.observations
            .iter()
            .fold(self.name.len() + self.entity_type.len(), |sum, o| {
                sum.saturating_add(o.len())
            })
    }
}

impl TextBytes for Relation {
    fn text_bytes(&self) -> usize {
        self.from.len() + self.to.len() + self.relation_type.len()
    }
}

/// The bytes of text of all `items`.
pub fn total<'a, T: TextBytes + 'a>(items: impl IntoIterator<Item = &'a T>) -> usize {
    items
        .into_iter()
        .fold(0, |sum: usize, item| sum.saturating_add(item.text_bytes()))
}
