//! Documents stored through rig are engine records: they survive closing the engine.

use std::sync::Arc;

use mb_engine::{Engine, EngineOptions};
use mb_rig::rig_core::vector_store::{VectorSearchRequest, VectorStoreIndex};
use mb_rig::EngineIndex;

use crate::common::{filled_index, hashing, Memory, NAMESPACE};

#[tokio::test]
async fn documents_survive_a_reopen_of_the_engine() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    let request = || {
        VectorSearchRequest::builder()
            .query("marathon training knee")
            .samples(4)
            .build()
    };

    let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
    let (index, ids) = filled_index(&engine, hashing());
    let before = index.top_n::<Memory>(request()).await.unwrap();
    assert_eq!(before.len(), 4);
    drop(index);
    let Ok(engine) = Arc::try_unwrap(engine) else {
        panic!("the test holds the only handle on the engine");
    };
    engine.close().unwrap();

    let engine = Arc::new(Engine::open(&path, EngineOptions::default()).unwrap());
    assert_eq!(engine.count(NAMESPACE).unwrap(), ids.len() as u64);
    // `new`, not `create`: the namespace and the space must already be there.
    let index = EngineIndex::new(engine, NAMESPACE, hashing()).unwrap();
    let after = index.top_n::<Memory>(request()).await.unwrap();
    assert_eq!(after, before);
}
