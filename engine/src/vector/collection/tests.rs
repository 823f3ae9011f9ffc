//! Unit tests of the vector collection: exact and graph search, changes during builds.

use super::*;

fn unit(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter().map(|x| x / n).collect()
}

#[test]
fn exact_search_ranks_and_breaks_ties_by_age() {
    let mut c = VectorCollection::new(2);
    c.upsert(RecordId(3), &unit(&[1.0, 0.0]));
    c.upsert(RecordId(1), &unit(&[1.0, 0.0]));
    c.upsert(RecordId(2), &unit(&[0.0, 1.0]));
    let hits = c.exact_search(&unit(&[1.0, 0.1]), 2);
    assert_eq!(
        hits.iter().map(|h| h.0).collect::<Vec<_>>(),
        [RecordId(1), RecordId(3)]
    );
}

#[test]
fn remove_and_update_keep_arena_consistent() {
    let mut c = VectorCollection::new(2);
    for i in 0..5u64 {
        c.upsert(RecordId(i), &unit(&[1.0, i as f32]));
    }
    assert!(c.remove(RecordId(1)));
    assert!(!c.remove(RecordId(1)));
    c.upsert(RecordId(4), &unit(&[0.0, -1.0]));
    assert_eq!(c.len(), 4);
    let best = c.exact_search(&unit(&[0.0, -1.0]), 1);
    assert_eq!(best[0].0, RecordId(4));
    assert!((best[0].1 - 1.0).abs() < 1e-5);
    let all = c.exact_search(&unit(&[1.0, 1.0]), 10);
    assert!(all.iter().all(|h| h.0 != RecordId(1)));
}

#[test]
fn graph_handles_tombstones_and_updates() {
    let params = HnswParams {
        threshold: 10,
        ..HnswParams::default()
    };
    let shared: SharedCollection = Arc::new(RwLock::new(VectorCollection::new(3)));
    for i in 0..200u64 {
        let f = i as f32;
        shared
            .write()
            .upsert(RecordId(i), &unit(&[f.sin(), f.cos(), 0.3]));
    }
    schedule_graph_build(&shared, params);
    // Changes made while the graph is built are caught up on install.
    shared.write().remove(RecordId(7));
    wait_for_graph_build(&shared);
    let mut c = shared.write();
    assert!(c.has_graph());
    let q = unit(&[7f32.sin(), 7f32.cos(), 0.3]);
    assert!(c
        .search(&q, 5, params.ef_search)
        .unwrap()
        .iter()
        .all(|h| h.0 != RecordId(7)));
    c.upsert(RecordId(8), &unit(&[0.0, 0.0, 1.0]));
    let top = c
        .search(&unit(&[0.0, 0.0, 1.0]), 1, params.ef_search)
        .unwrap();
    assert_eq!(top[0].0, RecordId(8));
    let hits = c
        .search(&unit(&[8f32.sin(), 8f32.cos(), 0.3]), 200, params.ef_search)
        .unwrap();
    assert_eq!(hits.iter().filter(|h| h.0 == RecordId(8)).count(), 1);
}

#[test]
fn fresh_records_grow_the_graph_and_tombstones_rebuild_it() {
    let params = HnswParams {
        threshold: 10,
        ..HnswParams::default()
    };
    let point = |i: u64| {
        let f = i as f32;
        unit(&[f.sin(), f.cos(), (f * 0.37).sin()])
    };
    let shared: SharedCollection = Arc::new(RwLock::new(VectorCollection::new(3)));
    for i in 0..400u64 {
        shared.write().upsert(RecordId(i), &point(i));
    }
    schedule_graph_build(&shared, params);
    wait_for_graph_build(&shared);
    assert_eq!(shared.read().graph.as_ref().map(Graph::points), Some(400));
    // One removal: a tombstone a growth keeps and a rebuild drops.
    shared.write().remove(RecordId(399));

    // 100 new records: inserted into the same graph, which keeps its 400 points.
    for i in 400..500u64 {
        shared.write().upsert(RecordId(i), &point(i));
        schedule_graph_build(&shared, params);
    }
    wait_for_graph_build(&shared);
    {
        let c = shared.read();
        let graph = c.graph.as_ref().unwrap();
        assert_eq!(
            (graph.points(), graph.dead(), graph.fresh_count()),
            (500, 1, 0),
            "grown, not rebuilt"
        );
        // Every new record is found through the graph alone.
        for i in 400..500u64 {
            let candidates = graph.candidates(&point(i), 10, 10);
            assert!(
                candidates.contains(&RecordId(i)),
                "record {i} not found by the graph"
            );
        }
    }

    // Changing a third of the records leaves tombstones past the rebuild fraction: the
    // graph is rebuilt from scratch over the 500 current vectors.
    for i in 0..170u64 {
        shared.write().upsert(RecordId(i), &point(i + 1000));
        schedule_graph_build(&shared, params);
    }
    wait_for_graph_build(&shared);
    let c = shared.read();
    let graph = c.graph.as_ref().unwrap();
    assert_eq!(
        (graph.points(), graph.dead()),
        (499, 0),
        "rebuilt over the live vectors, not grown"
    );
    let top = c.search(&point(1005), 1, params.ef_search).unwrap();
    assert_eq!(top[0].0, RecordId(5));
}

#[test]
fn graph_searches_return_exact_similarities() {
    use crate::vector::seeded_unit;
    let (dim, n) = (64, 2_000u64);
    let shared: SharedCollection = Arc::new(RwLock::new(VectorCollection::new(dim)));
    for i in 0..n {
        shared.write().upsert(RecordId(i), &seeded_unit(i, dim));
    }
    let params = HnswParams {
        threshold: 100,
        ..HnswParams::default()
    };
    schedule_graph_build(&shared, params);
    wait_for_graph_build(&shared);
    let c = shared.read();
    assert!(c.has_graph());
    for q in 0..20u64 {
        let query = seeded_unit(10_000 + q, dim);
        let hits = c.search(&query, 10, 64).unwrap();
        assert_eq!(hits.len(), 10);
        for (id, score) in &hits {
            assert_eq!(
                *score,
                dot(&query, &seeded_unit(id.0, dim)),
                "rescored exactly"
            );
        }
    }
}

#[test]
fn an_installed_graph_lets_the_exact_scan_codes_go() {
    use crate::vector::scan::SCAN_CODES_MIN;
    use crate::vector::seeded_unit;
    let params = HnswParams {
        threshold: 10,
        ..HnswParams::default()
    };
    let n = SCAN_CODES_MIN as u64 + 100;
    let shared: SharedCollection = Arc::new(RwLock::new(VectorCollection::new(8)));
    for i in 0..n {
        shared.write().upsert(RecordId(i), &seeded_unit(i, 8));
    }
    let query = seeded_unit(3, 8);
    // The first two searches are exact (no graph yet); the second gives the slots their
    // scan codes.
    for _ in 0..2 {
        let exact = shared.read().search(&query, 5, params.ef_search).unwrap();
        assert_eq!(exact[0].0, RecordId(3));
    }
    let with_codes = shared.read().slots.bytes();
    assert!(shared.read().slots.has_scan_codes());
    schedule_graph_build(&shared, params);
    wait_for_graph_build(&shared);
    let c = shared.read();
    assert!(c.has_graph());
    assert!(!c.slots.has_scan_codes(), "a graph serves the searches now");
    assert!(
        c.slots.bytes() < with_codes,
        "the memory estimate counts them no more"
    );
    assert_eq!(
        c.search(&query, 5, params.ef_search).unwrap()[0].0,
        RecordId(3)
    );
}
