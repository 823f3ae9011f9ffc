//! The nine operations of the reference server on an in-memory copy of the graph, with the
//! reference's exact semantics (`dist/index.js` of `@modelcontextprotocol/server-memory`):
//! a duplicate is judged against the graph as it was before the call (so two equal new items in
//! one call are both kept, as the reference keeps them), a delete of something missing is a
//! no-op, and `add_observations` on a missing entity fails the whole call, changing nothing.
//!
//! Every operation changes nothing when it fails, so the store can apply operations to its one
//! in-memory graph without copying it. Each node remembers its engine record (none yet for a
//! new one) and whether it changed, and the graph lists the items changed since the last
//! write, so [`crate::graph::store`] writes only what operations touched without visiting the
//! rest. Names, relations and endpoints are looked up in [`Lookups`], never by a scan, so a
//! call costs what it changes, not the size of the graph. The read operations are in
//! [`crate::graph::query`].

use std::collections::HashMap;

use mb_engine::RecordId;

use crate::error::McpError;
use crate::graph::index::{union, Lookups};
use crate::graph::model::{
    AddedObservations, Entity, KnowledgeGraph, ObservationAddition, ObservationDeletion, Relation,
};
use crate::graph::node::{Node, Searchable};
use crate::graph::size::{self, TextBytes};
use crate::graph::trigram::TrigramIndex;
use crate::limits::{self, GraphBounds};

/// An item of the graph by kind and serial: what a write takes and settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Item {
    /// The entity of this serial.
    Entity(u32),
    /// The relation of this serial.
    Relation(u32),
}

/// The graph as stored: entities and relations in creation order, with pending deletions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    /// Entities in creation order (serials increasing).
    pub entities: Vec<Node<Entity>>,
    /// Relations in creation order (serials increasing).
    pub relations: Vec<Node<Relation>>,
    /// Records to delete at the next write.
    pub deleted: Vec<RecordId>,
    /// New records of the write in flight (by position) whose items were deleted since: once
    /// their ids are known they are deleted too.
    pub orphaned: Vec<usize>,
    /// How large the graph may grow.
    bounds: GraphBounds,
    /// The bytes of text the graph holds ([`TextBytes`]), kept as it changes.
    text_bytes: usize,
    /// Entities by name, relations by triple and by endpoint.
    pub(super) lookups: Lookups,
    /// Whether anything changed since the last write took the changes.
    changed: bool,
    /// The entities' folded text by trigram, for `search_nodes`.
    pub(super) trigrams: TrigramIndex,
    /// The serial the next entity gets.
    pub(super) next_serial: u32,
    /// The serial the next relation gets.
    next_relation_serial: u32,
    /// Items changed since the last write took the changes (repeats, and items deleted
    /// since, allowed): a write visits these, not the whole graph.
    touched: Vec<Item>,
    /// The new items of the write in flight, by position (`None` once renumbering forgot a
    /// deleted one).
    in_flight: Vec<Option<Item>>,
}

impl Graph {
    /// An empty graph that may grow to `bounds`.
    pub fn with_bounds(bounds: GraphBounds) -> Graph {
        Graph {
            bounds,
            ..Graph::default()
        }
    }

    /// An empty graph whose next serials are these (tests of renumbering).
    #[cfg(test)]
    pub(super) fn with_next_serials(entity: u32, relation: u32) -> Graph {
        Graph {
            next_serial: entity,
            next_relation_serial: relation,
            ..Graph::default()
        }
    }

    /// How large the graph may grow.
    pub fn bounds(&self) -> GraphBounds {
        self.bounds
    }

    /// The bytes of text the graph holds.
    pub fn text_bytes(&self) -> usize {
        self.text_bytes
    }

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
        for relation in relations {
            self.push_relation(Node::new(relation));
        }
    }

    /// Adds an entity read from record `id` of the store.
    pub fn push_stored_entity(&mut self, id: RecordId, entity: Entity) {
        self.push_entity(Node::stored(id, entity));
    }

    /// Adds a relation read from record `id` of the store.
    pub fn push_stored_relation(&mut self, id: RecordId, relation: Relation) {
        self.push_relation(Node::stored(id, relation));
    }

    fn push_entity(&mut self, mut node: Node<Entity>) {
        if self.next_serial == u32::MAX {
            self.renumber();
        }
        node.serial = self.next_serial;
        self.next_serial = self.next_serial.saturating_add(1);
        self.text_bytes = self.text_bytes.saturating_add(node.value.text_bytes());
        self.lookups.add_entity(&node.value.name, node.serial);
        self.trigrams.insert(node.serial, &node.folded);
        if node.dirty {
            self.touched.push(Item::Entity(node.serial));
        }
        self.entities.push(node);
    }

    fn push_relation(&mut self, mut node: Node<Relation>) {
        if self.next_relation_serial == u32::MAX {
            self.renumber();
        }
        node.serial = self.next_relation_serial;
        self.next_relation_serial = self.next_relation_serial.saturating_add(1);
        self.text_bytes = self.text_bytes.saturating_add(node.value.text_bytes());
        self.lookups.add_relation(&node.value, node.serial);
        if node.dirty {
            self.touched.push(Item::Relation(node.serial));
        }
        self.relations.push(node);
    }

    /// Gives the items serials from 0 again and rebuilds every lookup (serials ran out: only
    /// after billions of creations), carrying the items a write must still visit.
    fn renumber(&mut self) {
        let mut moved: HashMap<Item, Item> = HashMap::new();
        self.trigrams.clear();
        self.lookups = Lookups::default();
        let mut serial = 0;
        for node in &mut self.entities {
            moved.insert(Item::Entity(node.serial), Item::Entity(serial));
            node.serial = serial;
            self.trigrams.insert(serial, &node.folded);
            self.lookups.add_entity(&node.value.name, serial);
            serial = serial.saturating_add(1);
        }
        self.next_serial = serial;
        serial = 0;
        for node in &mut self.relations {
            moved.insert(Item::Relation(node.serial), Item::Relation(serial));
            node.serial = serial;
            self.lookups.add_relation(&node.value, serial);
            serial = serial.saturating_add(1);
        }
        self.next_relation_serial = serial;
        let touched = std::mem::take(&mut self.touched);
        self.touched = touched
            .iter()
            .filter_map(|i| moved.get(i).copied())
            .collect();
        for item in &mut self.in_flight {
            *item = item.and_then(|i| moved.get(&i).copied());
        }
    }

    /// The entity of `serial`, if it is still in the graph.
    pub fn entity_mut(&mut self, serial: u32) -> Option<&mut Node<Entity>> {
        let at = position(&self.entities, serial)?;
        self.entities.get_mut(at)
    }

    /// The relation of `serial`, if it is still in the graph.
    pub fn relation_mut(&mut self, serial: u32) -> Option<&mut Node<Relation>> {
        let at = position(&self.relations, serial)?;
        self.relations.get_mut(at)
    }

    /// The items changed since the last call, once each, entities first, in creation order
    /// (some may be written already or deleted: check [`Node::unwritten`]).
    pub fn take_touched(&mut self) -> Vec<Item> {
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        touched
    }

    /// Notes the new items of the write about to start, by position.
    pub fn begin_write(&mut self, new: Vec<Item>) {
        self.in_flight = new.into_iter().map(Some).collect();
    }

    /// The new items of the write that just ended, by position (`None` for one forgotten).
    pub fn take_in_flight(&mut self) -> Vec<Option<Item>> {
        std::mem::take(&mut self.in_flight)
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
            .filter(|e| !self.lookups.has_name(&e.name))
            .collect();
        limits::check_total(
            "entities",
            self.entities.len() + new.len(),
            self.bounds.max_entities,
        )?;
        self.bounds
            .check_growth(self.text_bytes, size::total(&new))?;
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
            .filter(|r| !self.lookups.has_relation(r))
            .collect();
        limits::check_total(
            "relations",
            self.relations.len() + new.len(),
            self.bounds.max_relations,
        )?;
        self.bounds
            .check_growth(self.text_bytes, size::total(&new))?;
        self.changed |= !new.is_empty();
        for relation in &new {
            self.push_relation(Node::new(relation.clone()));
        }
        Ok(new)
    }

    /// Adds the new observations of each addition to its entity (the first of that name).
    pub fn add_observations(
        &mut self,
        additions: Vec<ObservationAddition>,
    ) -> Result<Vec<AddedObservations>, McpError> {
        // What each changed entity was before the call: (position, observations, dirty).
        let mut undo: Vec<(usize, usize, bool)> = Vec::new();
        let (was_changed, touched, bytes) = (self.changed, self.touched.len(), self.text_bytes);
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
                    self.touched.truncate(touched);
                    self.text_bytes = bytes;
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
        let Some(at) = self.first_named(&addition.entity_name) else {
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
        let added = new
            .iter()
            .fold(0, |sum: usize, o| sum.saturating_add(o.len()));
        self.bounds.check_growth(self.text_bytes, added)?;
        if !new.is_empty() {
            self.text_bytes = self.text_bytes.saturating_add(added);
            undo.push((at, node.value.observations.len(), node.dirty));
            node.value.observations.extend(new.iter().cloned());
            node.dirty = true;
            refold(&mut self.trigrams, node);
            self.touched.push(Item::Entity(node.serial));
            self.changed = true;
        }
        Ok(AddedObservations {
            entity_name: addition.entity_name,
            added_observations: new,
        })
    }

    /// The position of the first entity named `name`.
    fn first_named(&self, name: &str) -> Option<usize> {
        let serial = *self.lookups.named(name).first()?;
        position(&self.entities, serial)
    }

    /// Deletes the named entities (every one of each name) and the relations touching them.
    pub fn delete_entities(&mut self, names: &[String]) {
        let gone = union(names.iter().map(|n| self.lookups.named(n)));
        for &serial in &gone {
            let Some(node) = position(&self.entities, serial).and_then(|at| self.entities.get(at))
            else {
                continue;
            };
            self.lookups.remove_entity(&node.value.name, serial);
            self.text_bytes = self.text_bytes.saturating_sub(node.value.text_bytes());
            self.trigrams.remove(serial, &node.folded);
            node.forget(&mut self.deleted, &mut self.orphaned);
        }
        if !gone.is_empty() {
            self.entities
                .retain(|n| gone.binary_search(&n.serial).is_err());
            self.changed = true;
        }
        let relations = union(names.iter().map(|n| self.lookups.touching(n)));
        self.remove_relations(&relations);
    }

    /// Deletes observations from entities (the first of each name); missing ones are ignored.
    pub fn delete_observations(&mut self, deletions: &[ObservationDeletion]) {
        for deletion in deletions {
            let Some(at) = self.first_named(&deletion.entity_name) else {
                continue;
            };
            if let Some(node) = self.entities.get_mut(at) {
                let (before, bytes) = (node.value.observations.len(), node.value.text_bytes());
                node.value
                    .observations
                    .retain(|o| !deletion.observations.contains(o));
                if node.value.observations.len() != before {
                    let freed = bytes.saturating_sub(node.value.text_bytes());
                    self.text_bytes = self.text_bytes.saturating_sub(freed);
                    node.dirty = true;
                    refold(&mut self.trigrams, node);
                    self.touched.push(Item::Entity(node.serial));
                    self.changed = true;
                }
            }
        }
    }

    /// Deletes the given relations; missing ones are ignored.
    pub fn delete_relations(&mut self, relations: &[Relation]) {
        let gone = union(relations.iter().map(|r| self.lookups.relations_equal_to(r)));
        self.remove_relations(&gone);
    }

    /// Removes the relations of `serials` (sorted).
    fn remove_relations(&mut self, serials: &[u32]) {
        for &serial in serials {
            let Some(node) =
                position(&self.relations, serial).and_then(|at| self.relations.get(at))
            else {
                continue;
            };
            self.lookups.remove_relation(&node.value, serial);
            self.text_bytes = self.text_bytes.saturating_sub(node.value.text_bytes());
            node.forget(&mut self.deleted, &mut self.orphaned);
        }
        if !serials.is_empty() {
            self.relations
                .retain(|n| serials.binary_search(&n.serial).is_err());
            self.changed = true;
        }
    }
}

/// Where the node of `serial` is in `nodes` (sorted by serial).
pub(super) fn position<T>(nodes: &[Node<T>], serial: u32) -> Option<usize> {
    nodes.binary_search_by_key(&serial, |n| n.serial).ok()
}

/// Prepares `node`'s search text again after its value changed, and moves it in the index.
fn refold(trigrams: &mut TrigramIndex, node: &mut Node<Entity>) {
    let folded = node.value.folded();
    trigrams.update(node.serial, &node.folded, &folded);
    node.folded = folded;
}

#[cfg(test)]
#[path = "ops_tests.rs"]
mod tests;
