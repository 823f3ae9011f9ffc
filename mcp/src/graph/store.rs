//! The knowledge graph kept natively in an engine namespace: one record per entity and one per
//! relation, in creation order (engine ids increase with insertion, and an update keeps the
//! id). A record's text is what BM25 indexes (name, type and observations; or "from type to"),
//! its body the item's JSON, its `kg` attribute the kind.
//!
//! The graph lives in memory after the first load, behind a lock held only for in-memory work.
//! Writes are **group-committed**: a call applies its operation to the graph, then waits until
//! what it changed is durable. One caller at a time is the *leader*: it takes every change made
//! so far into one engine batch (one synced log write), writes it without the lock, so that
//! reads and further operations go on meanwhile, and then answers every caller whose changes
//! the batch held. Callers that arrived during the write are answered by the next batch, led
//! by one of them. A failed write drops the in-memory graph (it is loaded again from the
//! store) and fails every caller whose change it lost; nothing unwritten is acknowledged.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};

use mb_engine::{Batch, Engine, NamespaceOptions, NewRecord, Record, RecordId};

use crate::error::McpError;
use crate::graph::model::{Entity, Relation};
use crate::graph::node::Node;
use crate::graph::ops::{Graph, Item};
use crate::limits::GraphBounds;

/// Attribute naming a record's kind.
const KIND: &str = "kg";
const ENTITY: &str = "entity";
const RELATION: &str = "relation";

/// The graph of one namespace.
pub struct GraphStore {
    engine: Arc<Engine>,
    namespace: String,
    bounds: GraphBounds,
    state: Mutex<State>,
}

/// What the lock guards.
#[derive(Default)]
struct State {
    /// The graph, loaded at first use (and again after a failed write).
    graph: Option<Graph>,
    /// Callers whose changes are not durable yet, in arrival order.
    waiting: Vec<SyncSender<Turn>>,
    /// Whether a leader is writing (or has been handed the next batch).
    leading: bool,
}

/// What a waiting caller is told.
enum Turn {
    /// Its change is durable, or was lost with the error.
    Done(Result<(), String>),
    /// It leads the next batch.
    Lead,
}

impl GraphStore {
    /// The graph in `namespace` of `engine` (created when missing), which may grow to
    /// `bounds` (a stored graph already larger loads whole, but grows no further).
    pub fn open(
        engine: Arc<Engine>,
        namespace: &str,
        bounds: GraphBounds,
    ) -> Result<GraphStore, McpError> {
        engine.ensure_namespace(namespace, NamespaceOptions::default())?;
        Ok(GraphStore {
            engine,
            namespace: namespace.to_string(),
            bounds,
            state: Mutex::new(State::default()),
        })
    }

    /// How large the graph may grow.
    pub fn bounds(&self) -> GraphBounds {
        self.bounds
    }

    /// The namespace holding the graph.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Runs a read-only `op` on the graph (never waits for a write in flight).
    pub fn read<R>(&self, op: impl FnOnce(&Graph) -> R) -> Result<R, McpError> {
        let mut state = self.lock()?;
        let graph = self.loaded(&mut state)?;
        Ok(op(graph))
    }

    /// Runs `op` on the graph and returns once what it changed is durable. An operation that
    /// fails changes nothing (see [`crate::graph::ops`]); a failed write is returned too.
    pub fn mutate<R>(
        &self,
        op: impl FnOnce(&mut Graph) -> Result<R, McpError>,
    ) -> Result<R, McpError> {
        let (sender, turns) = sync_channel(2);
        let (out, lead) = {
            let mut state = self.lock()?;
            let graph = self.loaded(&mut state)?;
            let out = op(graph)?;
            if !graph.has_changes() && !state.leading {
                return Ok(out);
            }
            state.waiting.push(sender);
            let lead = !state.leading;
            state.leading = true;
            (out, lead)
        };
        if lead {
            self.lead_batch()?;
        }
        self.wait(&turns)?;
        Ok(out)
    }

    /// Waits for this caller's answer, leading a batch when handed one.
    fn wait(&self, turns: &Receiver<Turn>) -> Result<(), McpError> {
        loop {
            match turns.recv() {
                Ok(Turn::Done(result)) => return result.map_err(McpError::Io),
                Ok(Turn::Lead) => self.lead_batch()?,
                Err(_) => return Err(McpError::Io("the graph write was abandoned".into())),
            }
        }
    }

    /// Writes every change made so far in one batch and answers the callers who made them;
    /// hands the next batch to a caller who arrived meanwhile.
    fn lead_batch(&self) -> Result<(), McpError> {
        let (batch, callers) = {
            let mut state = self.lock()?;
            let callers = std::mem::take(&mut state.waiting);
            let batch = match state.graph.as_mut() {
                Some(graph) => take_changes(graph)?,
                None => Batch::new(),
            };
            (batch, callers)
        };
        let written = match batch.is_empty() {
            true => Ok(Vec::new()),
            false => self
                .engine
                .write(&self.namespace, batch)
                .map(|receipt| receipt.ids)
                .map_err(|e| e.to_string()),
        };
        let mut lost = Vec::new();
        {
            let mut state = self.lock()?;
            match (&written, state.graph.as_mut()) {
                (Ok(ids), Some(graph)) => settle(graph, ids),
                _ => {
                    // The graph holds changes the store lacks: load it again, and fail
                    // whoever changed it since.
                    state.graph = None;
                    lost = std::mem::take(&mut state.waiting);
                }
            }
            match state.waiting.first() {
                Some(next) => {
                    let _ = next.send(Turn::Lead);
                }
                None => state.leading = false,
            }
        }
        let result = written.map(|_| ());
        for caller in callers {
            let _ = caller.send(Turn::Done(result.clone()));
        }
        let dropped = Err("an earlier graph write failed; nothing of this call was kept".into());
        for caller in lost {
            let _ = caller.send(Turn::Done(dropped.clone()));
        }
        Ok(())
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>, McpError> {
        self.state
            .lock()
            .map_err(|_| McpError::Io("the graph lock is poisoned".into()))
    }

    fn loaded<'a>(&self, state: &'a mut State) -> Result<&'a mut Graph, McpError> {
        if state.graph.is_none() {
            state.graph = Some(self.load()?);
        }
        state
            .graph
            .as_mut()
            .ok_or_else(|| McpError::Io("the graph did not load".into()))
    }

    fn load(&self) -> Result<Graph, McpError> {
        let mut records: Vec<Record> = self
            .engine
            .records(&self.namespace)?
            .collect::<Result<_, _>>()?;
        records.sort_by_key(|r| r.id);
        let mut graph = Graph::with_bounds(self.bounds);
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
                    graph.push_stored_entity(record.id, entity);
                }
                Some(RELATION) => {
                    let relation: Relation =
                        serde_json::from_str(record.content()).map_err(corrupt)?;
                    graph.push_stored_relation(record.id, relation);
                }
                _ => {}
            }
        }
        Ok(graph)
    }
}

/// The batch writing every change of `graph` since the last one: new items (numbered by
/// position, see [`Node::pending`]), changed items and deletions. Only the items the graph
/// listed as touched are visited: a call costs what it changes, not the size of the graph.
fn take_changes(graph: &mut Graph) -> Result<Batch, McpError> {
    let mut batch = Batch::new();
    if !graph.take_changed() {
        return Ok(batch);
    }
    let mut new = Vec::new();
    for item in graph.take_touched() {
        let record = match item {
            Item::Entity(serial) => match graph.entity_mut(serial).filter(|n| n.unwritten()) {
                Some(node) => add(&mut batch, node, entity_record(&node.value)?, new.len()),
                None => None,
            },
            Item::Relation(serial) => match graph.relation_mut(serial).filter(|n| n.unwritten()) {
                Some(node) => add(&mut batch, node, relation_record(&node.value)?, new.len()),
                None => None,
            },
        };
        new.extend(record.map(|()| item));
    }
    graph.begin_write(new);
    for id in graph.deleted.drain(..) {
        batch.delete(id);
    }
    Ok(batch)
}

/// Gives the new items of the written batch their record ids (`ids`, by position); items
/// deleted meanwhile are deleted by the next batch.
fn settle(graph: &mut Graph, ids: &[RecordId]) {
    for (position, item) in graph.take_in_flight().into_iter().enumerate() {
        let slots = match item {
            Some(Item::Entity(serial)) => graph
                .entity_mut(serial)
                .map(|n| (&mut n.id, &mut n.pending)),
            Some(Item::Relation(serial)) => graph
                .relation_mut(serial)
                .map(|n| (&mut n.id, &mut n.pending)),
            None => None,
        };
        if let Some((id, pending)) = slots {
            if pending.take() == Some(position) {
                *id = ids.get(position).copied();
            }
        }
    }
    let orphaned = std::mem::take(&mut graph.orphaned);
    graph.delete_records(orphaned.into_iter().filter_map(|p| ids.get(p).copied()));
}

/// Puts `node`'s record in `batch`, marking it written; `Some` when the record is new (at
/// position `next` among the batch's new records).
fn add<T>(batch: &mut Batch, node: &mut Node<T>, record: NewRecord, next: usize) -> Option<()> {
    node.dirty = false;
    match node.id {
        None => {
            batch.put(record);
            node.pending = Some(next);
            Some(())
        }
        Some(id) => {
            batch.update(id, record);
            None
        }
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
            let store = GraphStore::open(engine.clone(), "kg", GraphBounds::default()).unwrap();
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
        let store = GraphStore::open(engine, "kg", GraphBounds::default()).unwrap();
        assert_eq!(store.read(Graph::snapshot).unwrap(), expected);
        assert_eq!(expected.entities[0].observations, vec!["été".to_string()]);
    }

    #[test]
    fn concurrent_changes_are_group_committed_and_reopen_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("store");
        let mut options = EngineOptions::default();
        options.sync_writes = true;
        let expected = {
            let engine = Arc::new(Engine::open(&path, options.clone()).unwrap());
            let store =
                Arc::new(GraphStore::open(engine.clone(), "kg", GraphBounds::default()).unwrap());
            // Each thread creates entities and adds to them, and deletes the entity another
            // thread is creating meanwhile: changes and deletions of items whose creation may
            // still be in a write in flight.
            let threads: Vec<_> = (0..8)
                .map(|t| {
                    let store = store.clone();
                    std::thread::spawn(move || {
                        for i in 0..60 {
                            let name = format!("t{t}-{i}");
                            store
                                .mutate(|g| g.create_entities(vec![entity(&name)]))
                                .unwrap();
                            store
                                .mutate(|g| {
                                    g.delete_entities(&[format!("t{}-{i}", (t + 1) % 8)]);
                                    g.add_observations(vec![ObservationAddition {
                                        entity_name: name.clone(),
                                        contents: vec![format!("seen {i}")],
                                    }])
                                })
                                .ok();
                        }
                    })
                })
                .collect();
            for thread in threads {
                thread.join().unwrap();
            }
            let graph = store.read(Graph::snapshot).unwrap();
            drop(store);
            Arc::try_unwrap(engine).ok().unwrap().close().unwrap();
            graph
        };
        let kept = expected.entities.len();
        assert!(kept < 8 * 60, "some deletions found their entity");
        let engine = Arc::new(Engine::open(&path, options).unwrap());
        let store = GraphStore::open(engine.clone(), "kg", GraphBounds::default()).unwrap();
        let mut reopened = store.read(Graph::snapshot).unwrap();
        let mut sorted = expected.clone();
        // Creation order across threads is the order of the writes; compare as sets.
        reopened.entities.sort_by(|a, b| a.name.cmp(&b.name));
        sorted.entities.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(reopened, sorted);
        // No record is left of a deleted entity.
        assert_eq!(engine.records("kg").unwrap().count(), kept);
    }
}
