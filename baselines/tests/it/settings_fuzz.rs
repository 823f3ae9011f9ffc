//! Mutated memory-system settings files (seeded, `MB_FUZZ_CASES` runs more) never panic, and
//! every error names the file.

use mb_baselines::hybrid::HybridFile;
use mb_baselines::registry;
use mb_llm::testing::{fuzz_cases, HostileText};

#[test]
fn mutated_memory_settings_never_panic_and_errors_name_the_file() {
    let shipped: Vec<(&str, String)> = [
        ("bm25_message", "bm25"),
        ("embedder_dialog", "embedder"),
        ("a_mem", "a_mem"),
        ("mem0", "mem0"),
        ("memoryos", "memoryos"),
    ]
    .iter()
    .map(|(system, file)| {
        let path = format!(
            "{}/../configs/memory/{file}.toml",
            env!("CARGO_MANIFEST_DIR")
        );
        (*system, std::fs::read_to_string(path).unwrap())
    })
    .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mutated.toml");
    let mut texts = HostileText::new(51);
    for case in 0..fuzz_cases(1_000) {
        let (system, text) = &shipped[case % shipped.len()];
        let mut text = text.clone();
        for _ in 0..1 + case % 3 {
            texts.mutate(&mut text);
        }
        std::fs::write(&path, &text).unwrap();
        let spec = registry::get(system).unwrap();
        if let Err(error) = spec.settings(Some(&path)) {
            let message = error.to_string();
            assert!(message.contains("mutated.toml"), "{message}\n---\n{text}");
        }
    }
}

#[test]
fn hybrid_numbers_that_are_not_finite_or_negative_are_refused_naming_the_key() {
    let values = [
        "nan", "inf", "-inf", "-1.0", "-0.001", "0.0", "0.4", "60.0", "1e30",
    ];
    let keys = ["lexical_weight", "dense_weight", "rrf_k", "time_weight"];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hybrid.toml");
    let spec = registry::get("hybrid").unwrap();
    // Every pair of keys with every pair of values (seeded order is irrelevant: all are run).
    for (i, first) in keys.iter().enumerate() {
        for second in &keys[i..] {
            for a in values {
                for b in values {
                    let text = if first == second {
                        format!("[hybrid]\n{first} = {a}\n")
                    } else {
                        format!("[hybrid]\n{first} = {a}\n{second} = {b}\n")
                    };
                    std::fs::write(&path, &text).unwrap();
                    match spec.settings(Some(&path)) {
                        Ok(settings) => {
                            let own = settings.own::<HybridFile>().unwrap();
                            let h = &own.hybrid;
                            for value in [h.lexical_weight, h.dense_weight, h.rrf_k, h.time_weight]
                            {
                                assert!(value.is_finite() && value >= 0.0, "{text}");
                            }
                        }
                        Err(error) => {
                            let message = error.to_string();
                            assert!(message.contains("hybrid.toml"), "{message}");
                            assert!(keys.iter().any(|key| message.contains(key)), "{message}");
                        }
                    }
                }
            }
        }
    }
    for candidates in ["0", "10001"] {
        std::fs::write(&path, format!("[hybrid]\ncandidates = {candidates}\n")).unwrap();
        let message = spec.settings(Some(&path)).unwrap_err().to_string();
        assert!(message.contains("candidates"), "{message}");
    }
}
