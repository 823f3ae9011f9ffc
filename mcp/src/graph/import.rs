//! Importing the reference server's graph file (`memory.jsonl`, its `MEMORY_FILE_PATH`): one
//! JSON object per line, `{"type": "entity", "name", "entityType", "observations"}` or
//! `{"type": "relation", "from", "to", "relationType"}`, read as the reference reads it (blank
//! lines skipped, other types ignored, order kept).

use std::path::Path;

use serde::Deserialize;

use crate::error::McpError;
use crate::graph::model::{Entity, Relation};
use crate::graph::store::GraphStore;
use crate::limits;

/// Largest graph file accepted, in bytes.
pub const MAX_FILE_BYTES: u64 = 512 << 20;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Entity(Entity),
    Relation(Relation),
    #[serde(other)]
    Other,
}

/// Imports `path` into an empty graph; returns the entities and relations imported. A graph
/// that already has items is left alone (`None`), so a restart with the same flag imports
/// nothing twice.
pub fn import_jsonl(store: &GraphStore, path: &Path) -> Result<Option<(usize, usize)>, McpError> {
    let text = mb_core::files::read_text(path, MAX_FILE_BYTES)
        .map_err(|e| McpError::Io(format!("{}: {e}", path.display())))?;
    let mut entities = Vec::new();
    let mut relations = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed: Line = serde_json::from_str(line)
            .map_err(|e| McpError::Io(format!("{} line {}: {e}", path.display(), number + 1)))?;
        match parsed {
            Line::Entity(entity) => entities.push(entity),
            Line::Relation(relation) => relations.push(relation),
            Line::Other => {}
        }
    }
    let bounds = store.bounds();
    // Said with the file's name: the flag's value is what is too large.
    let named = |e: McpError| McpError::Limit(format!("{}: {e}", path.display()));
    limits::check_total("entities", entities.len(), bounds.max_entities).map_err(named)?;
    limits::check_total("relations", relations.len(), bounds.max_relations).map_err(named)?;
    let counts = (entities.len(), relations.len());
    store.mutate(|graph| {
        if !graph.entities.is_empty() || !graph.relations.is_empty() {
            return Ok(None);
        }
        graph.append(entities, relations);
        Ok(Some(counts))
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use mb_engine::{Engine, EngineOptions};

    use super::*;
    use crate::graph::ops::Graph;

    #[test]
    fn a_reference_file_is_imported_once_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Arc::new(Engine::open(dir.path().join("s"), EngineOptions::default()).unwrap());
        let store = GraphStore::open(engine, "kg", limits::GraphBounds::default()).unwrap();
        let file = dir.path().join("memory.jsonl");
        std::fs::write(
            &file,
            "{\"type\":\"entity\",\"name\":\"b\",\"entityType\":\"t\",\"observations\":[\"ü\"]}\n\n\
             {\"type\":\"relation\",\"from\":\"b\",\"to\":\"a\",\"relationType\":\"r\"}\n\
             {\"type\":\"entity\",\"name\":\"a\",\"entityType\":\"t\",\"observations\":[]}",
        )
        .unwrap();
        assert_eq!(import_jsonl(&store, &file).unwrap(), Some((2, 1)));
        assert_eq!(import_jsonl(&store, &file).unwrap(), None);
        let graph = store.read(Graph::snapshot).unwrap();
        let names: Vec<&str> = graph.entities.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);

        std::fs::write(&file, "{\"type\":\"entity\",\"name\":1}\n").unwrap();
        let error = import_jsonl(&store, &file).unwrap_err().to_string();
        assert!(error.contains("line 1"), "{error}");
    }

    /// A file with more entities than the graph may hold is refused naming the file
    /// (issue 76: the size error named no file).
    #[test]
    fn a_file_over_the_graph_bounds_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Arc::new(Engine::open(dir.path().join("s"), EngineOptions::default()).unwrap());
        let bounds = limits::GraphBounds {
            max_entities: 1,
            max_relations: 1,
            ..limits::GraphBounds::default()
        };
        let store = GraphStore::open(engine, "kg", bounds).unwrap();
        let file = dir.path().join("big.jsonl");
        std::fs::write(
            &file,
            "{\"type\":\"entity\",\"name\":\"a\",\"entityType\":\"t\",\"observations\":[]}\n\
             {\"type\":\"entity\",\"name\":\"b\",\"entityType\":\"t\",\"observations\":[]}\n",
        )
        .unwrap();
        let error = import_jsonl(&store, &file).unwrap_err().to_string();
        assert!(
            error.contains("big.jsonl") && error.contains("entities"),
            "{error}"
        );
    }
}
