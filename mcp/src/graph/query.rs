//! The read operations of the graph: `search_nodes` and `open_nodes`, each answering with the
//! matching entities and the relations touching them, in creation order, exactly as the
//! reference's scans would.
//!
//! `search_nodes` answers from the [`crate::graph::trigram::TrigramIndex`] of the entities'
//! folded text and verifies each candidate with the scan's own substring test. Entities by name
//! and relations by endpoint come from the graph's [`crate::graph::index::Lookups`], so neither
//! operation visits the whole graph for a narrow question.

use crate::graph::index::union;
use crate::graph::model::{Entity, KnowledgeGraph};
use crate::graph::node::Node;
use crate::graph::ops::{position, Graph};

impl Graph {
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
                Some(candidates) => {
                    let nodes = by_serials(&self.entities, &candidates);
                    self.graph_of(nodes.into_iter().filter(matches))
                }
                None => self.subgraph(matches),
            };
        }
        // A NUL could match across two fields of the prepared text: match field by field.
        self.subgraph(|n| fields_contain(&n.value, &query))
    }

    /// The named entities with the relations touching them.
    pub fn open_nodes(&self, names: &[String]) -> KnowledgeGraph {
        let serials = union(names.iter().map(|n| self.lookups.named(n)));
        self.graph_of(by_serials(&self.entities, &serials).into_iter())
    }

    /// The entities `keep` accepts, found by visiting every one.
    pub(super) fn subgraph(&self, keep: impl Fn(&&Node<Entity>) -> bool) -> KnowledgeGraph {
        self.graph_of(self.entities.iter().filter(keep))
    }

    /// The given entities with the relations touching them.
    fn graph_of<'a>(&self, nodes: impl Iterator<Item = &'a Node<Entity>>) -> KnowledgeGraph {
        let entities: Vec<Entity> = nodes.map(|n| n.value.clone()).collect();
        if entities.is_empty() {
            return KnowledgeGraph::default();
        }
        let serials = union(entities.iter().map(|e| self.lookups.touching(&e.name)));
        let relations = by_serials(&self.relations, &serials)
            .into_iter()
            .map(|n| n.value.clone())
            .collect();
        KnowledgeGraph {
            entities,
            relations,
        }
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

#[cfg(test)]
#[path = "search_tests.rs"]
mod search_tests;
