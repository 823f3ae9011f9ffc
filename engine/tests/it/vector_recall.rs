//! HNSW against exact search: recall@10 at the default parameters on 20k random 384-d vectors
//! shaped like sentence embeddings, and exact results for collections below the threshold.
//!
//! Sentence embeddings occupy a low-dimensional part of their space; uniformly random 384-d
//! vectors do not, and no graph index finds their neighbours cheaply (see docs/benchmarks.md). The
//! vectors here are random points of a random 32-dimensional subspace plus isotropic noise.

use mb_core::test_vectors::{self, EmbeddingLike};
use mb_engine::{Engine, EngineOptions, HnswParams, NamespaceOptions, NewRecord, Space};
use rand::rngs::StdRng;
use rand::SeedableRng;

const DIM: usize = 384;

fn unit(rng: &mut StdRng) -> Vec<f32> {
    test_vectors::unit(rng, DIM)
}

fn brute_force(data: &[Vec<f32>], q: &[f32], k: usize) -> Vec<usize> {
    let mut scored: Vec<(usize, f32)> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v.iter().zip(q).map(|(a, b)| a * b).sum()))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored.into_iter().take(k).map(|s| s.0).collect()
}

#[test]
fn hnsw_recall_at_default_parameters() {
    let n = 20_000;
    let dir = tempfile::tempdir().unwrap();
    assert!(
        n > HnswParams::default().threshold,
        "the graph must be used"
    );
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    engine
        .create_namespace("v", NamespaceOptions::default())
        .unwrap();
    engine.create_space(Space::new("s", DIM)).unwrap();
    let mut rng = StdRng::seed_from_u64(1);
    let space = EmbeddingLike::new(&mut rng, DIM, 32);
    let data: Vec<Vec<f32>> = (0..n).map(|_| space.sample(&mut rng)).collect();
    let mut ids = Vec::with_capacity(n);
    // Touch the namespace first so its collection is live and builds in the background.
    assert!(engine
        .search_vector("v", "s", &data[0], 1)
        .unwrap()
        .is_empty());
    for chunk in data.chunks(1000) {
        let records = chunk
            .iter()
            .enumerate()
            .map(|(i, v)| NewRecord::new(format!("v{i}")).with_vector("s", v.clone()));
        ids.extend(engine.put_many("v", records).unwrap());
    }
    engine.flush().unwrap();

    let queries: Vec<Vec<f32>> = (0..200).map(|_| space.sample(&mut rng)).collect();
    let truth: Vec<Vec<_>> = queries
        .iter()
        .map(|q| {
            brute_force(&data, q, 10)
                .into_iter()
                .map(|i| ids[i])
                .collect()
        })
        .collect();
    let recall = || {
        let mut found = 0;
        for (q, exact) in queries.iter().zip(&truth) {
            let hits = engine.search_vector("v", "s", q, 10).unwrap();
            assert_eq!(hits.len(), 10);
            // Similarities are exact, whatever the graph compared on the way.
            for hit in &hits {
                let stored = &data[ids.iter().position(|id| *id == hit.record.id).unwrap()];
                let cosine: f32 = stored.iter().zip(q).map(|(a, b)| a * b).sum();
                assert!(
                    (hit.score - cosine).abs() < 1e-4,
                    "{} vs {cosine}",
                    hit.score
                );
            }
            found += hits.iter().filter(|h| exact.contains(&h.record.id)).count();
        }
        found as f64 / (queries.len() * 10) as f64
    };
    let at_default = recall();
    println!("HNSW recall@10 = {at_default:.4}");
    assert!(at_default >= 0.95, "recall@10 = {at_default}");

    // The beam width is tunable at run time: narrower finds less, wider at least as much.
    engine.set_ef_search(10);
    let narrow = recall();
    engine.set_ef_search(400);
    let wide = recall();
    println!("HNSW recall@10 at ef 10: {narrow:.4}, at ef 400: {wide:.4}");
    assert!(
        narrow < at_default,
        "ef 10 gave {narrow}, ef 96 {at_default}"
    );
    assert!(wide >= at_default, "ef 400 gave {wide}, ef 96 {at_default}");
    engine.set_ef_search(HnswParams::default().ef_search);

    // Deleting through the graph: deleted ids never come back.
    for id in ids.iter().take(500) {
        engine.delete("v", *id).unwrap();
    }
    for v in data.iter().take(50) {
        let hits = engine.search_vector("v", "s", v, 10).unwrap();
        assert!(hits.iter().all(|h| !ids[..500].contains(&h.record.id)));
    }

    // Records changed or added after the build are found (searched exactly beside the graph),
    // and a changed record is not found at its old place.
    let moved = space.sample(&mut rng);
    engine
        .update(
            "v",
            ids[600],
            NewRecord::new("moved").with_vector("s", moved.clone()),
        )
        .unwrap();
    let added = space.sample(&mut rng);
    let new_id = engine
        .put("v", NewRecord::new("added").with_vector("s", added.clone()))
        .unwrap();
    assert_eq!(
        engine.search_vector("v", "s", &moved, 1).unwrap()[0]
            .record
            .id,
        ids[600]
    );
    assert_eq!(
        engine.search_vector("v", "s", &added, 1).unwrap()[0]
            .record
            .id,
        new_id
    );
    let old_place = engine.search_vector("v", "s", &data[600], 1).unwrap();
    assert!(old_place[0].record.id != ids[600] || old_place[0].score < 0.999);
}

#[test]
fn small_collections_are_exact() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap();
    engine
        .create_namespace("v", NamespaceOptions::default())
        .unwrap();
    engine
        .create_namespace("w", NamespaceOptions::default())
        .unwrap();
    engine.create_space(Space::new("s", DIM)).unwrap();
    let mut rng = StdRng::seed_from_u64(2);
    let data: Vec<Vec<f32>> = (0..2000).map(|_| unit(&mut rng)).collect();
    let ids = engine
        .put_many(
            "v",
            data.iter()
                .map(|v| NewRecord::new("x").with_vector("s", v.clone())),
        )
        .unwrap();
    // Vectors of another namespace are never returned.
    engine
        .put_many(
            "w",
            data.iter()
                .map(|v| NewRecord::new("y").with_vector("s", v.clone())),
        )
        .unwrap();
    for _ in 0..20 {
        let q = unit(&mut rng);
        let exact: Vec<_> = brute_force(&data, &q, 10)
            .into_iter()
            .map(|i| ids[i])
            .collect();
        let got: Vec<_> = engine
            .search_vector("v", "s", &q, 10)
            .unwrap()
            .into_iter()
            .map(|h| h.record.id)
            .collect();
        assert_eq!(got, exact);
    }
}
