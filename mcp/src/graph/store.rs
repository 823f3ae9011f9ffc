//! The knowledge graph kept natively in an engine namespace: one record per entity and one per
//! relation, in creation order (engine ids increase with insertion, and an update keeps the
//! id). A record's text is what BM25 indexes (name, type and observations; or "from type to"),
//! its body the item's JSON, its `kg` attribute the kind.
//!
//! The graph lives in memory after the first load, behind a lock held only for in-memory work.
//! Writes are **group-committed**: a call applies its operation to the graph, then waits until
//! what it changed is durable. One *committer* at a time takes every change made so far into
//! one engine batch (one synced log write), writes it without the lock, so that reads and
//! further operations go on meanwhile, answers every caller whose changes the batch held, and
//! goes on with the next batch while callers are waiting. The first caller to find no
//! committer running starts one: on the blocking pool for async callers
//! ([`GraphStore::mutate_async`], which then await their answer without holding a thread), in
//! its own thread for blocking ones ([`GraphStore::mutate`]), which return when it stops. A failed write drops the
//! in-memory graph (it is loaded again from the store) and fails every caller whose change it
//! lost; nothing unwritten is acknowledged.

use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::oneshot;

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
    waiting: Vec<oneshot::Sender<Answer>>,
    /// Whether a committer is running.
    committing: bool,
}

/// What a waiting caller is told: its change is durable, or was lost with the error.
type Answer = Result<(), String>;

/// An applied operation's result, and how its caller learns that the change is durable.
enum Applied<R> {
    /// Nothing to wait for.
    Ready(R),
    /// The answer comes through `answer`; `start` says the caller must start the committer.
    Commit {
        out: R,
        answer: oneshot::Receiver<Answer>,
        start: bool,
    },
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

    /// Runs `op` on the graph and returns once what it changed is durable, blocking the
    /// thread meanwhile (for callers outside an async runtime: imports and tools; a caller
    /// that starts the committer runs it until no one is waiting). An operation that fails
    /// changes nothing (see [`crate::graph::ops`]); a failed write is returned too.
    pub fn mutate<R>(
        &self,
        op: impl FnOnce(&mut Graph) -> Result<R, McpError>,
    ) -> Result<R, McpError> {
        match self.apply(op)? {
            Applied::Ready(out) => Ok(out),
            Applied::Commit { out, answer, start } => {
                if start {
                    self.commit_while_waiting();
                }
                settled(answer.blocking_recv())?;
                Ok(out)
            }
        }
    }

    /// [`GraphStore::mutate`] for async callers: `op` runs in place (in-memory work under the
    /// lock), and the wait for durability holds no thread. Dropping the future drops only the
    /// wait: a change already applied is written and kept all the same.
    pub async fn mutate_async<R>(
        self: &Arc<Self>,
        op: impl FnOnce(&mut Graph) -> Result<R, McpError>,
    ) -> Result<R, McpError> {
        match self.apply(op)? {
            Applied::Ready(out) => Ok(out),
            Applied::Commit { out, answer, start } => {
                if start {
                    let store = self.clone();
                    tokio::task::spawn_blocking(move || store.commit_while_waiting());
                }
                settled(answer.await)?;
                Ok(out)
            }
        }
    }

    /// Applies `op` and, when the caller must wait for a write (its own change, or one it may
    /// have seen that is not durable yet), queues it for the committer.
    fn apply<R>(
        &self,
        op: impl FnOnce(&mut Graph) -> Result<R, McpError>,
    ) -> Result<Applied<R>, McpError> {
        let mut state = self.lock()?;
        let graph = self.loaded(&mut state)?;
        let out = op(graph)?;
        if !graph.has_changes() && !state.committing {
            return Ok(Applied::Ready(out));
        }
        let (sender, answer) = oneshot::channel();
        state.waiting.push(sender);
        let start = !state.committing;
        state.committing = true;
        Ok(Applied::Commit { out, answer, start })
    }

    /// The committer: writes batches while callers are waiting, then stops (under the lock, so
    /// a caller arriving later starts the next one).
    fn commit_while_waiting(&self) {
        while let Ok(true) = self.commit_batch() {}
    }

    /// Writes every change made so far in one batch and answers the callers who made them;
    /// whether more callers are waiting (and the committer goes on).
    fn commit_batch(&self) -> Result<bool, McpError> {
        let (batch, callers) = {
            let mut state = self.lock()?;
            let callers = std::mem::take(&mut state.waiting);
            let batch = state.graph.as_mut().map(take_changes).transpose();
            (batch, callers)
        };
        let written = match batch {
            Err(e) => Err(e.to_string()),
            Ok(Some(batch)) if !batch.is_empty() => self
                .engine
                .write(&self.namespace, batch)
                .map(|receipt| receipt.ids)
                .map_err(|e| e.to_string()),
            Ok(_) => Ok(Vec::new()),
        };
        let mut lost = Vec::new();
        let more = {
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
            state.committing = !state.waiting.is_empty();
            state.committing
        };
        let result = written.map(|_| ());
        for caller in callers {
            let _ = caller.send(result.clone());
        }
        let dropped = Err("an earlier graph write failed; nothing of this call was kept".into());
        for caller in lost {
            let _ = caller.send(dropped.clone());
        }
        Ok(more)
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

/// A caller's answer as a result: the committer's, or the error of a committer that stopped.
fn settled(answer: Result<Answer, oneshot::error::RecvError>) -> Result<(), McpError> {
    answer
        .map_err(|_| McpError::Io("the graph write was abandoned".into()))?
        .map_err(McpError::Io)
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
    Ok(NewRecord::new(searchable(text, &body))
        .with_body(body)
        .with_attribute(KIND, ENTITY))
}

fn relation_record(relation: &Relation) -> Result<NewRecord, McpError> {
    let text = format!(
        "{} {} {}",
        relation.from, relation.relation_type, relation.to
    );
    let body = serde_json::to_string(relation).map_err(|e| McpError::Io(e.to_string()))?;
    Ok(NewRecord::new(searchable(text, &body))
        .with_body(body)
        .with_attribute(KIND, RELATION))
}

/// The record text of an item: its fields, or its JSON when they are all blank (the reference
/// keeps an entity or relation of empty strings; the engine stores no record without text, and
/// the graph is read from the bodies, so the text only feeds the namespace's BM25 index).
fn searchable(text: String, body: &str) -> String {
    if text.trim().is_empty() {
        body.to_string()
    } else {
        text
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
