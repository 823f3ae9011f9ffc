//! One item of the graph in memory: its value, its engine record, whether a write must carry
//! it, and the search text prepared from it.

use mb_engine::RecordId;

use crate::graph::model::{Entity, Relation};

/// What `search_nodes` matches an item against, prepared once per change rather than per search.
pub trait Searchable {
    /// The item's searched strings, each lowercased, joined by NUL.
    fn folded(&self) -> String;
}

impl Searchable for Entity {
    fn folded(&self) -> String {
        let fields = [&self.name, &self.entity_type]
            .into_iter()
            .chain(&self.observations);
        fields
            .map(|f| f.to_lowercase())
            .collect::<Vec<_>>()
            .join("\0")
    }
}

impl Searchable for Relation {
    fn folded(&self) -> String {
        String::new() // searches match entities only
    }
}

/// A graph item with its engine record.
#[derive(Debug, Clone, PartialEq)]
pub struct Node<T> {
    /// The record holding it; `None` until first written.
    pub id: Option<RecordId>,
    /// The item.
    pub value: T,
    /// Whether it changed since it was last handed to a write.
    pub dirty: bool,
    /// Its position among the new records of the write in flight, whose receipt gives its id.
    pub pending: Option<usize>,
    /// [`Searchable::folded`] of the value as it is.
    pub(super) folded: String,
    /// The item's place in creation order among its kind (increasing along
    /// [`crate::graph::ops::Graph::entities`] or [`crate::graph::ops::Graph::relations`]): how lookups and the trigram index name it.
    pub(super) serial: u32,
}

impl<T: Searchable> Node<T> {
    /// A node loaded from record `id`.
    pub fn stored(id: RecordId, value: T) -> Node<T> {
        Node {
            id: Some(id),
            folded: value.folded(),
            value,
            dirty: false,
            pending: None,
            serial: 0,
        }
    }

    /// Whether the next write must carry this item (changed since it was last handed to one).
    pub fn unwritten(&self) -> bool {
        self.dirty
    }

    pub(super) fn new(value: T) -> Node<T> {
        Node {
            id: None,
            folded: value.folded(),
            value,
            dirty: true,
            pending: None,
            serial: 0,
        }
    }

    /// Notes, for a node leaving the graph, what the store must delete.
    pub(super) fn forget(&self, deleted: &mut Vec<RecordId>, orphaned: &mut Vec<usize>) {
        match (self.id, self.pending) {
            (Some(id), _) => deleted.push(id),
            (None, Some(position)) => orphaned.push(position),
            (None, None) => {}
        }
    }
}
