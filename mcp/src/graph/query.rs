//! The read operations of the graph: `search_nodes` and `open_nodes`, each answering with the
//! matching entities and the relations touching them, in creation order, exactly as the
//! reference's scans would.
//!
//! `search_nodes` answers from the [`crate::graph::trigram::TrigramIndex`] of the entities'
//! folded text and verifies each candidate with the scan's own substring test. Entities by name
//! and relations by endpoint come from the graph's [`crate::graph::index::Lookups`], so neither
//! operation visits the whole graph for a narrow question.

use crate::graph::index::union;
use crate::graph::model::{Entity, KnowledgeGraph, Relation};
use crate::graph::node::Node;
use crate::graph::ops::{position, Graph};

impl Graph {
    /// The entities `search_nodes` answers with: those whose name, type or an observation
    /// contains `query` (case-insensitive), in creation order. A query of 3 bytes or
    /// more is answered from the trigram index (candidates verified as the scan would); a
    /// shorter one scans every entity.
    pub(super) fn matching(&self, query: &str) -> Vec<&Node<Entity>> {
        let query = query.to_lowercase();
        if !query.contains('\0') {
            // One searcher for the query, not one per entity as `str::contains` builds.
            let finder = memchr::memmem::Finder::new(query.as_bytes());
            let matches = |n: &&Node<Entity>| finder.find(n.folded.as_bytes()).is_some();
            return match self.trigrams.candidates(&query) {
                Some(candidates) => by_serials(&self.entities, &candidates)
                    .into_iter()
                    .filter(matches)
                    .collect(),
                None => self.entities.iter().filter(matches).collect(),
            };
        }
        // A NUL could match across two fields of the prepared text: match field by field.
        self.entities
            .iter()
            .filter(|n| fields_contain(&n.value, &query))
            .collect()
    }

    /// The entities bearing one of `names`, in creation order.
    pub(super) fn named(&self, names: &[String]) -> Vec<&Node<Entity>> {
        let serials = union(names.iter().map(|n| self.lookups.named(n)));
        by_serials(&self.entities, &serials)
    }

    /// The given entities with the relations touching them.
    pub(super) fn graph_of(&self, nodes: Vec<&Node<Entity>>) -> KnowledgeGraph {
        let relations = self.touching(&nodes);
        copied(nodes, relations)
    }

    /// The relations touching the given entities, once each, in creation order.
    pub(super) fn touching(&self, nodes: &[&Node<Entity>]) -> Vec<&Node<Relation>> {
        if nodes.is_empty() {
            return Vec::new();
        }
        let serials = union(nodes.iter().map(|n| self.lookups.touching(&n.value.name)));
        by_serials(&self.relations, &serials)
    }
}

/// The graph of these entities and relations, their values copied.
pub(super) fn copied(
    entities: Vec<&Node<Entity>>,
    relations: Vec<&Node<Relation>>,
) -> KnowledgeGraph {
    KnowledgeGraph {
        entities: entities.into_iter().map(|n| n.value.clone()).collect(),
        relations: relations.into_iter().map(|n| n.value.clone()).collect(),
    }
}

/// The nodes of `serials` (sorted) in `nodes` (sorted by serial), in creation order: few are
/// looked up one by one, many are found in one walk.
fn by_serials<'a, T>(nodes: &'a [Node<T>], serials: &[u32]) -> Vec<&'a Node<T>> {
    if serials.len().saturating_mul(16) < nodes.len() {
        return serials
            .iter()
            .filter_map(|&s| nodes.get(position(nodes, s)?))
            .collect();
    }
    let mut wanted = serials.iter().copied().peekable();
    nodes
        .iter()
        .filter(|n| {
            while wanted.next_if(|&s| s < n.serial).is_some() {}
            wanted.peek() == Some(&n.serial)
        })
        .collect()
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

/// The unpaged `search_nodes` and `open_nodes` replies, as the tools answer them (tests).
#[cfg(test)]
impl Graph {
    pub(super) fn search_nodes(&self, query: &str) -> KnowledgeGraph {
        self.search_page(query, None)
            .expect("within the reply bound")
            .graph
    }

    pub(super) fn open_nodes(&self, names: &[String]) -> KnowledgeGraph {
        self.open_page(names).expect("within the reply bound").graph
    }
}

#[cfg(test)]
#[path = "search_tests.rs"]
mod search_tests;
