//! The engine as a state machine: seeded random sequences of puts, updates, deletes, batches,
//! state writes and reopens, checked after every step against a plain in-memory model of what
//! must be found. Every live record is found by its word and its vector, no deleted or
//! replaced text is. `MB_MODEL_CHECK_STEPS` runs longer sequences.

use std::collections::BTreeMap;
use std::path::Path;

use mb_engine::{Batch, Engine, EngineOptions, NamespaceOptions, NewRecord, RecordId, Space};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const NAMESPACES: [&str; 2] = ["a", "b"];
const DIM: usize = 4;
const STEPS_VAR: &str = "MB_MODEL_CHECK_STEPS";

/// What must be stored: per namespace, record id to its unique word and vector; state values.
#[derive(Default)]
struct Model {
    records: BTreeMap<(&'static str, u64), (String, Vec<f32>)>,
    /// Words that must no longer be found (deleted or replaced records).
    gone: Vec<(&'static str, String)>,
    state: BTreeMap<(&'static str, String), u64>,
}

fn open(path: &Path) -> Engine {
    let engine = Engine::open(path, EngineOptions::default()).unwrap();
    for ns in NAMESPACES {
        engine
            .ensure_namespace(ns, NamespaceOptions::default())
            .unwrap();
    }
    if engine.spaces().is_empty() {
        engine.create_space(Space::new("s", DIM)).unwrap();
    }
    engine
}

struct Run {
    rng: StdRng,
    seed: u64,
    written: u64,
}

impl Run {
    fn record(&mut self) -> (String, NewRecord, Vec<f32>) {
        self.written += 1;
        let word = format!("tok{}x{}", self.seed, self.written);
        let vector: Vec<f32> = (0..DIM).map(|_| self.rng.random_range(-1.0..1.0)).collect();
        let record = NewRecord::new(format!("a memory about {word} and tea"))
            .with_vector("s", vector.clone());
        (word, record, vector)
    }

    fn live(&mut self, model: &Model, ns: &'static str) -> Option<u64> {
        let ids: Vec<u64> = model
            .records
            .keys()
            .filter(|(n, _)| *n == ns)
            .map(|(_, id)| *id)
            .collect();
        (!ids.is_empty()).then(|| ids[self.rng.random_range(0..ids.len())])
    }
}

fn check(engine: &Engine, model: &Model, rng: &mut StdRng) {
    for ns in NAMESPACES {
        let live = model.records.keys().filter(|(n, _)| *n == ns).count();
        assert_eq!(engine.count(ns).unwrap(), live as u64, "count of {ns}");
    }
    // A few live records by word and vector, a few gone words.
    let keys: Vec<_> = model.records.keys().copied().collect();
    for _ in 0..keys.len().min(3) {
        let (ns, id) = keys[rng.random_range(0..keys.len())];
        let (word, vector) = &model.records[&(ns, id)];
        let found = engine.search_text(ns, word, 5).unwrap();
        assert_eq!(found.len(), 1, "{ns}/{id}: {word}");
        assert_eq!(found[0].record.id, RecordId(id));
        let nearest = engine.search_vector(ns, "s", vector, 1).unwrap();
        assert_eq!(nearest[0].record.id, RecordId(id), "{ns}/{id} by vector");
    }
    for (ns, word) in model.gone.iter().rev().take(3) {
        assert!(
            engine.search_text(ns, word, 5).unwrap().is_empty(),
            "{word} came back"
        );
    }
}

fn full_check(engine: &Engine, model: &Model) {
    for ns in NAMESPACES {
        let stored: Vec<u64> = engine
            .records(ns)
            .unwrap()
            .map(|r| r.unwrap().id.0)
            .collect();
        let expected: Vec<u64> = model
            .records
            .keys()
            .filter(|(n, _)| *n == ns)
            .map(|(_, id)| *id)
            .collect();
        assert_eq!(stored, expected, "records of {ns}");
    }
    for ((ns, key), value) in &model.state {
        assert_eq!(
            engine.get_state::<u64>(ns, key).unwrap(),
            Some(*value),
            "{ns}/{key}"
        );
    }
}

fn run_sequence(seed: u64, steps: usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    let mut engine = open(&path);
    let mut model = Model::default();
    let mut run = Run {
        rng: StdRng::seed_from_u64(seed),
        seed,
        written: 0,
    };
    let mut checks = StdRng::seed_from_u64(seed + 1);
    for step in 0..steps {
        let ns = NAMESPACES[run.rng.random_range(0..2)];
        match run.rng.random_range(0..100) {
            0..=39 => {
                let (word, record, vector) = run.record();
                let id = engine.put(ns, record).unwrap();
                model.records.insert((ns, id.0), (word, vector));
            }
            40..=54 => {
                if let Some(id) = run.live(&model, ns) {
                    let (word, record, vector) = run.record();
                    engine.update(ns, RecordId(id), record).unwrap();
                    let (old, _) = model.records.insert((ns, id), (word, vector)).unwrap();
                    model.gone.push((ns, old));
                }
            }
            55..=69 => {
                if let Some(id) = run.live(&model, ns) {
                    assert!(engine.delete(ns, RecordId(id)).unwrap());
                    let (old, _) = model.records.remove(&(ns, id)).unwrap();
                    model.gone.push((ns, old));
                } else {
                    assert!(!engine.delete(ns, RecordId(u64::MAX)).unwrap());
                }
            }
            70..=89 => {
                let mut batch = Batch::new();
                let mut puts = Vec::new();
                for _ in 0..run.rng.random_range(1..4) {
                    let (word, record, vector) = run.record();
                    batch.put(record);
                    puts.push((word, vector));
                }
                let doomed = run.live(&model, ns);
                if let Some(id) = doomed {
                    batch.delete(RecordId(id));
                }
                let key = format!("k{}", run.rng.random_range(0..5));
                batch.put_state(key.clone(), &(step as u64)).unwrap();
                let receipt = engine.write(ns, batch).unwrap();
                for (id, put) in receipt.ids.iter().zip(puts) {
                    model.records.insert((ns, id.0), put);
                }
                if let Some(id) = doomed {
                    let (old, _) = model.records.remove(&(ns, id)).unwrap();
                    model.gone.push((ns, old));
                }
                model.state.insert((ns, key), step as u64);
            }
            90..=94 => {
                let key = format!("k{}", run.rng.random_range(0..5));
                engine.delete_state(ns, &key).unwrap();
                model.state.remove(&(ns, key));
            }
            _ => {
                engine.close().unwrap();
                engine = open(&path);
                full_check(&engine, &model);
            }
        }
        check(&engine, &model, &mut checks);
    }
    full_check(&engine, &model);
    engine.close().unwrap();
}

#[test]
fn random_operation_sequences_match_the_model() {
    let steps: usize = std::env::var(STEPS_VAR)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    for seed in 1..=3 {
        run_sequence(seed, steps);
    }
}
