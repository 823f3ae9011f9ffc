//! The knowledge graph kept natively in an engine namespace: one record per entity and one per
//! relation, in creation order (engine ids increase with insertion, and an update keeps the
//! id). A record's text is what BM25 indexes (name, type and observations; or "from type to"),
//! its body the item's JSON, its `kg` attribute the kind. Each tool call is one atomic engine
//! batch; the graph is cached in memory after the first load and calls are serialized.

use std::sync::{Arc, Mutex};

use mb_engine::{Batch, Engine, NamespaceOptions, NewRecord, Record};

use crate::error::McpError;
use crate::graph::model::{Entity, Relation};
use crate::graph::ops::{Graph, Node};

/// Attribute naming a record's kind.
const KIND: &str = "kg";
const ENTITY: &str = "entity";
const RELATION: &str = "relation";

/// The graph of one namespace.
pub struct GraphStore {
    engine: Arc<Engine>,
    namespace: String,
    cache: Mutex<Option<Graph>>,
}

impl GraphStore {
    /// The graph in `namespace` of `engine` (created when missing).
    pub fn open(engine: Arc<Engine>, namespace: &str) -> Result<GraphStore, McpError> {
        engine.ensure_namespace(namespace, NamespaceOptions::default())?;
        Ok(GraphStore {
            engine,
            namespace: namespace.to_string(),
            cache: Mutex::new(None),
        })
    }

    /// The namespace holding the graph.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Runs a read-only `op` on the graph.
    pub fn read<R>(&self, op: impl FnOnce(&Graph) -> R) -> Result<R, McpError> {
        let mut cache = self.lock()?;
        let graph = self.loaded(&mut cache)?;
        Ok(op(graph))
    }

    /// Runs `op` on a copy of the graph and, when it succeeds, writes what it changed in one
    /// batch; on any error nothing changes.
    pub fn mutate<R>(
        &self,
        op: impl FnOnce(&mut Graph) -> Result<R, McpError>,
    ) -> Result<R, McpError> {
        let mut cache = self.lock()?;
        let graph = self.loaded(&mut cache)?;
        let mut work = graph.clone();
        let out = op(&mut work)?;
        self.persist(&mut work)?;
        *graph = work;
        Ok(out)
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Option<Graph>>, McpError> {
        self.cache
            .lock()
            .map_err(|_| McpError::Io("the graph lock is poisoned".into()))
    }

    fn loaded<'a>(&self, cache: &'a mut Option<Graph>) -> Result<&'a mut Graph, McpError> {
        if cache.is_none() {
            *cache = Some(self.load()?);
        }
        cache
            .as_mut()
            .ok_or_else(|| McpError::Io("the graph did not load".into()))
    }

    fn load(&self) -> Result<Graph, McpError> {
        let mut records: Vec<Record> = self
            .engine
            .records(&self.namespace)?
            .collect::<Result<_, _>>()?;
        records.sort_by_key(|r| r.id);
        let mut graph = Graph::default();
        for record in records {
            let corrupt = |e: serde_json::Error| {
                McpError::Io(format!(
                    "record {} of namespace {} is not a graph item: {e}",
                    record.id, self.namespace
                ))
            };
            match record.attribute(KIND) {
                Some(ENTITY) => {
                    let entity: Entity = serde_json::from_str(record.content()).map_err(corrupt)?;
                    graph.entities.push(Node::stored(record.id, entity));
                }
                Some(RELATION) => {
                    let relation: Relation =
                        serde_json::from_str(record.content()).map_err(corrupt)?;
                    graph.relations.push(Node::stored(record.id, relation));
                }
                _ => {}
            }
        }
        Ok(graph)
    }

    fn persist(&self, graph: &mut Graph) -> Result<(), McpError> {
        // Only new and changed items are serialized: a call costs what it changes, not the
        // size of the graph.
        let mut batch = Batch::new();
        for node in graph.entities.iter().filter(|n| n.unwritten()) {
            add(&mut batch, node, entity_record(&node.value)?);
        }
        for node in graph.relations.iter().filter(|n| n.unwritten()) {
            add(&mut batch, node, relation_record(&node.value)?);
        }
        for id in &graph.deleted {
            batch.delete(*id);
        }
        if batch.is_empty() {
            return Ok(());
        }
        let receipt = self.engine.write(&self.namespace, batch)?;
        let mut ids = receipt.ids.into_iter();
        let entities = graph.entities.iter_mut().map(|n| (&mut n.id, &mut n.dirty));
        let relations = graph
            .relations
            .iter_mut()
            .map(|n| (&mut n.id, &mut n.dirty));
        for (id, dirty) in entities.chain(relations) {
            if id.is_none() {
                *id = ids.next();
            }
            *dirty = false;
        }
        graph.deleted.clear();
        Ok(())
    }
}

fn add<T>(batch: &mut Batch, node: &Node<T>, record: NewRecord) {
    match node.id {
        None => {
            batch.put(record);
        }
        Some(id) if node.dirty => {
            batch.update(id, record);
        }
        Some(_) => {}
    }
}

fn entity_record(entity: &Entity) -> Result<NewRecord, McpError> {
    let mut text = format!("{}\n{}", entity.name, entity.entity_type);
    for observation in &entity.observations {
        text.push('\n');
        text.push_str(observation);
    }
    let body = serde_json::to_string(entity).map_err(|e| McpError::Io(e.to_string()))?;
    Ok(NewRecord::new(text)
        .with_body(body)
        .with_attribute(KIND, ENTITY))
}

fn relation_record(relation: &Relation) -> Result<NewRecord, McpError> {
    let text = format!(
        "{} {} {}",
        relation.from, relation.relation_type, relation.to
    );
    let body = serde_json::to_string(relation).map_err(|e| McpError::Io(e.to_string()))?;
    Ok(NewRecord::new(text)
        .with_body(body)
        .with_attribute(KIND, RELATION))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::model::ObservationAddition;
    use mb_engine::EngineOptions;

    fn entity(name: &str) -> Entity {
        Entity {
            name: name.into(),
            entity_type: "thing".into(),
            observations: vec![],
        }
    }

    #[test]
    fn the_graph_survives_a_reopen_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        let expected = {
            let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
            let store = GraphStore::open(engine.clone(), "kg").unwrap();
            store
                .mutate(|g| g.create_entities(vec![entity("b"), entity("a"), entity("c")]))
                .unwrap();
            store
                .mutate(|g| {
                    g.create_relations(vec![Relation {
                        from: "a".into(),
                        to: "c".into(),
                        relation_type: "likes".into(),
                    }])
                })
                .unwrap();
            store
                .mutate(|g| {
                    g.add_observations(vec![ObservationAddition {
                        entity_name: "b".into(),
                        contents: vec!["été".into()],
                    }])
                })
                .unwrap();
            store
                .mutate(|g| {
                    g.delete_entities(&["c".into()]);
                    Ok(())
                })
                .unwrap();
            assert!(store
                .mutate(|g| g.add_observations(vec![ObservationAddition {
                    entity_name: "zz".into(),
                    contents: vec![],
                }]))
                .is_err());
            let graph = store.read(Graph::snapshot).unwrap();
            drop(store);
            Arc::try_unwrap(engine).ok().unwrap().close().unwrap();
            graph
        };
        assert_eq!(expected.entities.len(), 2);
        assert!(expected.relations.is_empty());
        let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
        let store = GraphStore::open(engine, "kg").unwrap();
        assert_eq!(store.read(Graph::snapshot).unwrap(), expected);
        assert_eq!(expected.entities[0].observations, vec!["été".to_string()]);
    }
}
