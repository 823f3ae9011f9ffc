//! The nine operations of the reference server on an in-memory copy of the graph, with the
//! reference's exact semantics (`dist/index.js` of `@modelcontextprotocol/server-memory`):
//! a duplicate is judged against the graph as it was before the call (so two equal new items in
//! one call are both kept, as the reference keeps them), a delete of something missing is a
//! no-op, and `add_observations` on a missing entity fails the whole call, changing nothing.
//!
//! Every operation changes nothing when it fails, so the store can apply operations to its one
//! in-memory graph without copying it. Each node remembers its engine record (none yet for a
//! new one) and whether it changed, so [`crate::graph::store`] writes only what operations
//! touched.
//!
//! `search_nodes` answers from a [`TrigramIndex`] of the entities' folded text, kept up to date
//! by every operation that changes an entity's text, and verifies each candidate with the
//! scan's own substring test: the answer is the scan's, in the same order.

use mb_engine::RecordId;

use crate::error::McpError;
use crate::graph::model::{
    AddedObservations, Entity, KnowledgeGraph, ObservationAddition, ObservationDeletion, Relation,
};
use crate::graph::trigram::TrigramIndex;
use crate::limits;

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
    folded: String,
    /// An entity's place in creation order in [`Graph::trigrams`] (increasing along
    /// [`Graph::entities`]); unused for relations.
    serial: u32,
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

    fn new(value: T) -> Node<T> {
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
    fn forget(self, deleted: &mut Vec<RecordId>, orphaned: &mut Vec<usize>) {
        match (self.id, self.pending) {
            (Some(id), _) => deleted.push(id),
            (None, Some(position)) => orphaned.push(position),
            (None, None) => {}
        }
    }
}

/// The graph as stored: entities and relations in creation order, with pending deletions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// Entities in creation order.
    pub entities: Vec<Node<Entity>>,
    /// Relations in creation order.
    pub relations: Vec<Node<Relation>>,
    /// Records to delete at the next write.
    pub deleted: Vec<RecordId>,
    /// New records of the write in flight (by position) whose items were deleted since: once
    /// their ids are known they are deleted too.
    pub orphaned: Vec<usize>,
    /// How many entities bear each name: duplicate checks without scanning the graph.
    names: std::collections::HashMap<String, usize>,
    /// Whether anything changed since the last write took the changes.
    changed: bool,
    /// The entities' folded text by trigram, for `search_nodes`.
    trigrams: TrigramIndex,
    /// The serial the next entity gets.
    next_serial: u32,
}

impl Graph {
    /// The plain graph.
    pub fn snapshot(&self) -> KnowledgeGraph {
        KnowledgeGraph {
            entities: self.entities.iter().map(|n| n.value.clone()).collect(),
            relations: self.relations.iter().map(|n| n.value.clone()).collect(),
        }
    }

    /// Appends items as they are (an imported graph: no duplicate checks).
    pub fn append(&mut self, entities: Vec<Entity>, relations: Vec<Relation>) {
        self.changed |= !entities.is_empty() || !relations.is_empty();
        for entity in entities {
            self.push_entity(Node::new(entity));
        }
        self.relations.extend(relations.into_iter().map(Node::new));
    }

    /// Adds an entity read from record `id` of the store.
    pub fn push_stored_entity(&mut self, id: RecordId, entity: Entity) {
        self.push_entity(Node::stored(id, entity));
    }

    /// Adds a relation read from record `id` of the store.
    pub fn push_stored_relation(&mut self, id: RecordId, relation: Relation) {
        self.relations.push(Node::stored(id, relation));
    }

    fn push_entity(&mut self, mut node: Node<Entity>) {
        *self.names.entry(node.value.name.clone()).or_default() += 1;
        if self.next_serial == u32::MAX {
            self.renumber();
        }
        node.serial = self.next_serial;
        self.next_serial = self.next_serial.saturating_add(1);
        self.trigrams.insert(node.serial, &node.folded);
        self.entities.push(node);
    }

    /// Gives the entities serials from 0 again and rebuilds the index (serials ran out: only
    /// after billions of creations).
    fn renumber(&mut self) {
        self.trigrams.clear();
        let mut serial = 0;
        for node in &mut self.entities {
            node.serial = serial;
            self.trigrams.insert(serial, &node.folded);
            serial = serial.saturating_add(1);
        }
        self.next_serial = serial;
    }

    /// Deletes records of the store at the next write (new records of a write whose items were
    /// deleted while it was in flight).
    pub fn delete_records(&mut self, ids: impl IntoIterator<Item = RecordId>) {
        let before = self.deleted.len();
        self.deleted.extend(ids);
        self.changed |= self.deleted.len() != before;
    }

    /// Whether anything changed since [`Graph::take_changed`] was last called.
    pub fn has_changes(&self) -> bool {
        self.changed
    }

    /// Whether anything changed, clearing the mark (a write is taking the changes).
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// Adds the entities whose name is not in the graph yet; returns them.
    pub fn create_entities(&mut self, entities: Vec<Entity>) -> Result<Vec<Entity>, McpError> {
        let new: Vec<Entity> = entities
            .into_iter()
            .filter(|e| !self.names.contains_key(&e.name))
            .collect();
        limits::check_total(
            "entities",
            self.entities.len() + new.len(),
            limits::MAX_ENTITIES,
        )?;
        self.changed |= !new.is_empty();
        for entity in &new {
            self.push_entity(Node::new(entity.clone()));
        }
        Ok(new)
    }

    /// Adds the relations not in the graph yet; returns them.
    pub fn create_relations(
        &mut self,
        relations: Vec<Relation>,
    ) -> Result<Vec<Relation>, McpError> {
        let new: Vec<Relation> = relations
            .into_iter()
            .filter(|r| !self.relations.iter().any(|n| n.value.same_as(r)))
            .collect();
        limits::check_total(
            "relations",
            self.relations.len() + new.len(),
            limits::MAX_RELATIONS,
        )?;
        self.changed |= !new.is_empty();
        self.relations.extend(new.iter().cloned().map(Node::new));
        Ok(new)
    }

    /// Adds the new observations of each addition to its entity (the first of that name).
    pub fn add_observations(
        &mut self,
        additions: Vec<ObservationAddition>,
    ) -> Result<Vec<AddedObservations>, McpError> {
        // What each changed entity was before the call: (position, observations, dirty).
        let mut undo: Vec<(usize, usize, bool)> = Vec::new();
        let was_changed = self.changed;
        let mut results = Vec::with_capacity(additions.len());
        for addition in additions {
            match self.add_observation(addition, &mut undo) {
                Ok(added) => results.push(added),
                Err(error) => {
                    // Observations are only appended: cutting them back restores the entity.
                    for (at, len, dirty) in undo.into_iter().rev() {
                        if let Some(node) = self.entities.get_mut(at) {
                            node.value.observations.truncate(len);
                            node.dirty = dirty;
                            refold(&mut self.trigrams, node);
                        }
                    }
                    self.changed = was_changed;
                    return Err(error);
                }
            }
        }
        Ok(results)
    }

    fn add_observation(
        &mut self,
        addition: ObservationAddition,
        undo: &mut Vec<(usize, usize, bool)>,
    ) -> Result<AddedObservations, McpError> {
        let Some(at) = self
            .entities
            .iter()
            .position(|n| n.value.name == addition.entity_name)
        else {
            return Err(McpError::NotFound(format!(
                "Entity with name {} not found",
                addition.entity_name
            )));
        };
        let Some(node) = self.entities.get_mut(at) else {
            return Err(McpError::Io(
                "an entity vanished during add_observations".into(),
            ));
        };
        let new: Vec<String> = addition
            .contents
            .into_iter()
            .filter(|c| !node.value.observations.contains(c))
            .collect();
        limits::check_total(
            "observations of one entity",
            node.value.observations.len() + new.len(),
            limits::MAX_OBSERVATIONS_PER_ENTITY,
        )?;
        if !new.is_empty() {
            undo.push((at, node.value.observations.len(), node.dirty));
            node.value.observations.extend(new.iter().cloned());
            node.dirty = true;
            refold(&mut self.trigrams, node);
            self.changed = true;
        }
        Ok(AddedObservations {
            entity_name: addition.entity_name,
            added_observations: new,
        })
    }

    /// Deletes the named entities (every one of each name) and the relations touching them.
    pub fn delete_entities(&mut self, names: &[String]) {
        let (gone, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.entities)
            .into_iter()
            .partition(|n| names.contains(&n.value.name));
        self.entities = kept;
        self.changed |= !gone.is_empty();
        for node in gone {
            if let Some(count) = self.names.get_mut(&node.value.name) {
                *count -= 1;
                if *count == 0 {
                    self.names.remove(&node.value.name);
                }
            }
            self.trigrams.remove(node.serial, &node.folded);
            node.forget(&mut self.deleted, &mut self.orphaned);
        }
        self.retain_relations(|r| !names.contains(&r.from) && !names.contains(&r.to));
    }

    /// Deletes observations from entities (the first of each name); missing ones are ignored.
    pub fn delete_observations(&mut self, deletions: &[ObservationDeletion]) {
        for deletion in deletions {
            if let Some(node) = self
                .entities
                .iter_mut()
                .find(|n| n.value.name == deletion.entity_name)
            {
                let before = node.value.observations.len();
                node.value
                    .observations
                    .retain(|o| !deletion.observations.contains(o));
                if node.value.observations.len() != before {
                    node.dirty = true;
                    refold(&mut self.trigrams, node);
                    self.changed = true;
                }
            }
        }
    }

    /// Deletes the given relations; missing ones are ignored.
    pub fn delete_relations(&mut self, relations: &[Relation]) {
        self.retain_relations(|r| !relations.iter().any(|d| d.same_as(r)));
    }

    fn retain_relations(&mut self, keep: impl Fn(&Relation) -> bool) {
        let (kept, gone): (Vec<_>, Vec<_>) = std::mem::take(&mut self.relations)
            .into_iter()
            .partition(|n| keep(&n.value));
        self.relations = kept;
        self.changed |= !gone.is_empty();
        for node in gone {
            node.forget(&mut self.deleted, &mut self.orphaned);
        }
    }

    /// Entities whose name, type or an observation contains `query` (case-insensitive), with
    /// the relations touching them. A query of 3 bytes or more is answered from the trigram
    /// index (candidates verified as the scan would); a shorter one scans every entity.
    pub fn search_nodes(&self, query: &str) -> KnowledgeGraph {
        let query = query.to_lowercase();
        if !query.contains('\0') {
            // One searcher for the query, not one per entity as `str::contains` builds.
            let finder = memchr::memmem::Finder::new(query.as_bytes());
            let matches = |n: &&Node<Entity>| finder.find(n.folded.as_bytes()).is_some();
            return match self.trigrams.candidates(&query) {
                Some(candidates) => self.graph_of(self.candidates(&candidates).filter(matches)),
                None => self.subgraph(matches),
            };
        }
        // A NUL could match across two fields of the prepared text: match field by field.
        self.subgraph(|n| fields_contain(&n.value, &query))
    }

    /// The named entities with the relations touching them.
    pub fn open_nodes(&self, names: &[String]) -> KnowledgeGraph {
        self.subgraph(|n| names.contains(&n.value.name))
    }

    /// The entities of `serials` (sorted), in creation order.
    fn candidates<'a>(&'a self, serials: &[u32]) -> impl Iterator<Item = &'a Node<Entity>> {
        // Few candidates: look each one up; many: one walk along the entities.
        let nodes: Vec<&Node<Entity>> = if serials.len().saturating_mul(16) < self.entities.len() {
            serials
                .iter()
                .filter_map(|s| {
                    let at = self.entities.binary_search_by_key(s, |n| n.serial).ok()?;
                    self.entities.get(at)
                })
                .collect()
        } else {
            let mut wanted = serials.iter().copied().peekable();
            self.entities
                .iter()
                .filter(|n| {
                    while wanted.next_if(|&s| s < n.serial).is_some() {}
                    wanted.peek() == Some(&n.serial)
                })
                .collect()
        };
        nodes.into_iter()
    }

    fn subgraph(&self, keep: impl Fn(&&Node<Entity>) -> bool) -> KnowledgeGraph {
        self.graph_of(self.entities.iter().filter(keep))
    }

    /// The given entities with the relations touching them.
    fn graph_of<'a>(&self, nodes: impl Iterator<Item = &'a Node<Entity>>) -> KnowledgeGraph {
        let entities: Vec<Entity> = nodes.map(|n| n.value.clone()).collect();
        if entities.is_empty() {
            return KnowledgeGraph::default();
        }
        let names: std::collections::HashSet<&str> =
            entities.iter().map(|e| e.name.as_str()).collect();
        let relations = self
            .relations
            .iter()
            .filter(|n| {
                names.contains(n.value.from.as_str()) || names.contains(n.value.to.as_str())
            })
            .map(|n| n.value.clone())
            .collect();
        KnowledgeGraph {
            entities,
            relations,
        }
    }
}

/// Prepares `node`'s search text again after its value changed, and moves it in the index.
fn refold(trigrams: &mut TrigramIndex, node: &mut Node<Entity>) {
    let folded = node.value.folded();
    trigrams.update(node.serial, &node.folded, &folded);
    node.folded = folded;
}

/// Whether one of an entity's fields, lowercased, holds `query` (already lowercase): the
/// reference server's match, used for queries the prepared text cannot answer (a NUL).
pub(crate) fn fields_contain(e: &Entity, query: &str) -> bool {
    e.name.to_lowercase().contains(query)
        || e.entity_type.to_lowercase().contains(query)
        || e.observations
            .iter()
            .any(|o| o.to_lowercase().contains(query))
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod search_tests;

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
