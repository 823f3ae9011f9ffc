//! `PyRandom` against the CPython interpreter on this machine, and upstream's LoCoMo splits.

use std::process::Command;

use mb_datasets::split::test_ids;
use mb_datasets::PyRandom;

/// Runs a Python snippet that prints one JSON value.
fn python(code: &str) -> serde_json::Value {
    let output = Command::new("python3")
        .args(["-c", code])
        .output()
        .expect("python3 runs (CPython is part of the machine setup)");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn raw_draws_floats_and_bits_match_cpython() {
    for seed in [0u64, 1, 42, 2024, 1 << 40] {
        let expected = python(&format!(
            "import random, json, struct; r = random.Random({seed}); \
             bits = lambda x: struct.unpack('<Q', struct.pack('<d', x))[0]; \
             print(json.dumps([[r.getrandbits(32) for _ in range(1000)], \
             [bits(r.random()) for _ in range(50)], \
             [r.getrandbits(k) for k in (1, 7, 31, 33, 52, 64)]]))"
        ));
        let mut r = PyRandom::new(seed);
        let words: Vec<u64> = (0..1000).map(|_| u64::from(r.next_u32())).collect();
        // Floats are compared by their bits: a decimal round trip could hide a 1-ulp error.
        let floats: Vec<u64> = (0..50).map(|_| r.random().to_bits()).collect();
        let bits: Vec<u64> = [1, 7, 31, 33, 52, 64]
            .iter()
            .map(|&k| r.getrandbits(k))
            .collect();
        assert_eq!(
            serde_json::json!([words, floats, bits]),
            expected,
            "seed {seed}"
        );
    }
}

#[test]
fn sample_and_shuffle_match_cpython_on_both_sample_branches() {
    // (population, k): small populations use the pool branch, large ones the set branch.
    for (n, k) in [
        (10usize, 3usize),
        (21, 21),
        (30, 5),
        (30, 6),
        (199, 25),
        (1000, 200),
        (25, 5),
    ] {
        let expected = python(&format!(
            "import random, json; r = random.Random(42); s = r.sample(range({n}), {k}); \
             x = list(range({n})); r.shuffle(x); print(json.dumps([s, x, r.randrange(1000003)]))"
        ));
        let mut r = PyRandom::new(42);
        let population: Vec<u64> = (0..n as u64).collect();
        let sample = r.sample(&population, k).unwrap();
        let mut shuffled = population.clone();
        r.shuffle(&mut shuffled);
        let below = r.randbelow(1_000_003);
        assert_eq!(
            serde_json::json!([sample, shuffled, below]),
            expected,
            "n={n} k={k}"
        );
    }
    assert!(PyRandom::new(42).sample(&[1, 2, 3], 4).is_none());
}

#[test]
fn locomo_splits_match_the_reference_appendix() {
    // Appendix A of the reference: sample 25 of the QA indices, test = 5 of those.
    let cases: [(u64, &[u64], &[u64]); 3] = [
        (
            199,
            &[129, 189, 163, 143, 188],
            &[
                28, 6, 70, 62, 57, 35, 26, 173, 139, 22, 151, 108, 8, 7, 23, 55, 59, 154, 196, 50,
            ],
        ),
        (
            105,
            &[64, 94, 81, 71, 101],
            &[
                14, 3, 35, 31, 28, 17, 13, 86, 69, 11, 75, 54, 4, 102, 92, 27, 29, 77, 88, 25,
            ],
        ),
        (
            158,
            &[56, 62, 28, 1, 22],
            &[
                6, 70, 57, 35, 26, 139, 108, 8, 7, 23, 55, 59, 129, 156, 50, 150, 107, 114, 71, 40,
            ],
        ),
    ];
    for (qa_count, test, train) in cases {
        let ids: Vec<u64> = (0..qa_count).collect();
        let split = test_ids(&ids, Some(25));
        assert_eq!(split.test, test, "{qa_count} QA");
        assert_eq!(split.train, train, "{qa_count} QA");
    }
}
