//! Tests of the graph's storage: reopening, group commit from threads and from async tasks.

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
        let store =
            Arc::new(GraphStore::open(engine.clone(), "kg", GraphBounds::default()).unwrap());
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

#[test]
fn async_callers_share_commits_and_a_dropped_wait_keeps_its_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let mut options = EngineOptions::default();
    options.sync_writes = true;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let names = {
        let engine = Arc::new(Engine::open(&path, options.clone()).unwrap());
        let store =
            Arc::new(GraphStore::open(engine.clone(), "kg", GraphBounds::default()).unwrap());
        let names = runtime.block_on(async {
            let tasks: Vec<_> = (0..32)
                .map(|t| {
                    let store = store.clone();
                    tokio::spawn(async move {
                        let mut names = Vec::new();
                        for i in 0..20 {
                            let name = format!("t{t}-{i}");
                            let op = |g: &mut Graph| g.create_entities(vec![entity(&name)]);
                            if i % 5 == 4 {
                                // Applied, then the caller stops waiting.
                                let waited = std::time::Duration::ZERO;
                                let _ = tokio::time::timeout(waited, store.mutate_async(op)).await;
                            } else {
                                store.mutate_async(op).await.unwrap();
                            }
                            names.push(name);
                        }
                        names
                    })
                })
                .collect();
            let mut names = Vec::new();
            for task in tasks {
                names.extend(task.await.unwrap());
            }
            // A call after every abandoned wait is still answered, and flushes what remains.
            store.mutate_async(|_| Ok(())).await.unwrap();
            names
        });
        // The committer holds the store until it has answered its last batch.
        while Arc::strong_count(&store) > 1 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        drop(store);
        Arc::try_unwrap(engine).ok().unwrap().close().unwrap();
        names
    };
    let engine = Arc::new(Engine::open(&path, options).unwrap());
    let store = GraphStore::open(engine, "kg", GraphBounds::default()).unwrap();
    let mut stored: Vec<String> = store
        .read(Graph::snapshot)
        .unwrap()
        .entities
        .into_iter()
        .map(|e| e.name)
        .collect();
    stored.sort();
    let mut expected = names;
    expected.sort();
    assert_eq!(stored, expected);
}
