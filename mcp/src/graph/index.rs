//! The lookups a [`crate::graph::ops::Graph`] keeps beside its items, so that no operation
//! scans the whole graph: entities by name, relations by their three fields, and relations by
//! the names they start or end at.
//!
//! Items are named by their *serial*, their place in creation order (increasing along the
//! graph's vectors, so a serial is found by binary search). Every list of serials here is kept
//! sorted, which makes "in creation order" free for every answer built from it.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;

use crate::graph::model::Relation;

/// Entities by name and relations by triple and by endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookups {
    /// Serials of the entities bearing each name, ascending (the reference allows duplicates
    /// created in one call; the first is the one observations go to).
    names: HashMap<String, Vec<u32>>,
    /// Serials of the relations of each (from, to, type), ascending.
    triples: HashMap<Relation, Vec<u32>>,
    /// Serials of the relations starting or ending at each name, ascending.
    touching: HashMap<String, Vec<u32>>,
}

impl Lookups {
    /// Whether an entity bears `name`.
    pub fn has_name(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }

    /// The serials of the entities named `name`, in creation order.
    pub fn named(&self, name: &str) -> &[u32] {
        self.names.get(name).map_or(&[], Vec::as_slice)
    }

    /// Notes entity `serial`, named `name`.
    pub fn add_entity(&mut self, name: &str, serial: u32) {
        insert_sorted(self.names.entry(name.to_string()).or_default(), serial);
    }

    /// Forgets entity `serial`, named `name`.
    pub fn remove_entity(&mut self, name: &str, serial: u32) {
        remove_from(&mut self.names, name, serial);
    }

    /// Whether a relation equal to `relation` exists.
    pub fn has_relation(&self, relation: &Relation) -> bool {
        self.triples.contains_key(relation)
    }

    /// The serials of the relations equal to `relation`, in creation order.
    pub fn relations_equal_to(&self, relation: &Relation) -> &[u32] {
        self.triples.get(relation).map_or(&[], Vec::as_slice)
    }

    /// The serials of the relations starting or ending at `name`, in creation order.
    pub fn touching(&self, name: &str) -> &[u32] {
        self.touching.get(name).map_or(&[], Vec::as_slice)
    }

    /// Notes relation `serial`.
    pub fn add_relation(&mut self, relation: &Relation, serial: u32) {
        insert_sorted(self.triples.entry(relation.clone()).or_default(), serial);
        insert_sorted(
            self.touching.entry(relation.from.clone()).or_default(),
            serial,
        );
        if relation.to != relation.from {
            insert_sorted(
                self.touching.entry(relation.to.clone()).or_default(),
                serial,
            );
        }
    }

    /// Forgets relation `serial`.
    pub fn remove_relation(&mut self, relation: &Relation, serial: u32) {
        remove_from(&mut self.triples, relation, serial);
        remove_from(&mut self.touching, &relation.from, serial);
        remove_from(&mut self.touching, &relation.to, serial);
    }
}

/// Adds `serial` to the sorted `serials` (a push when it is the newest, as it usually is).
fn insert_sorted(serials: &mut Vec<u32>, serial: u32) {
    match serials.last() {
        Some(&last) if last >= serial => {
            if let Err(at) = serials.binary_search(&serial) {
                serials.insert(at, serial);
            }
        }
        _ => serials.push(serial),
    }
}

/// Removes `serial` from the list of `key`, and the key with its last serial.
fn remove_from<K, Q>(map: &mut HashMap<K, Vec<u32>>, key: &Q, serial: u32)
where
    K: Borrow<Q> + Eq + Hash,
    Q: Eq + Hash + ?Sized,
{
    if let Some(serials) = map.get_mut(key) {
        if let Ok(at) = serials.binary_search(&serial) {
            serials.remove(at);
        }
        if serials.is_empty() {
            map.remove(key);
        }
    }
}

/// The sorted union of sorted lists, without repeats.
pub fn union(lists: impl IntoIterator<Item = impl AsRef<[u32]>>) -> Vec<u32> {
    let mut all: Vec<u32> = Vec::new();
    for list in lists {
        all.extend_from_slice(list.as_ref());
    }
    all.sort_unstable();
    all.dedup();
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relation(from: &str, to: &str) -> Relation {
        Relation {
            from: from.into(),
            to: to.into(),
            relation_type: "r".into(),
        }
    }

    #[test]
    fn lists_stay_sorted_and_empty_keys_go() {
        let mut lookups = Lookups::default();
        lookups.add_entity("a", 5);
        lookups.add_entity("a", 2);
        lookups.add_entity("a", 9);
        assert_eq!(lookups.named("a"), &[2, 5, 9]);
        lookups.remove_entity("a", 5);
        lookups.remove_entity("a", 2);
        lookups.remove_entity("a", 9);
        assert!(!lookups.has_name("a"));
        assert_eq!(lookups, Lookups::default());

        lookups.add_relation(&relation("a", "a"), 1);
        lookups.add_relation(&relation("a", "b"), 3);
        lookups.add_relation(&relation("a", "b"), 4);
        assert_eq!(lookups.touching("a"), &[1, 3, 4]);
        assert_eq!(lookups.touching("b"), &[3, 4]);
        assert_eq!(lookups.relations_equal_to(&relation("a", "b")), &[3, 4]);
        for (r, s) in [(relation("a", "b"), 3), (relation("a", "a"), 1)] {
            lookups.remove_relation(&r, s);
        }
        lookups.remove_relation(&relation("a", "b"), 4);
        assert_eq!(lookups, Lookups::default());
        assert_eq!(union([vec![3, 5], vec![1, 3], vec![]]), vec![1, 3, 5]);
    }
}
