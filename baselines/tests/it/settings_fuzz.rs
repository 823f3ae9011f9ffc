//! Mutated memory-system settings files (seeded, `MB_FUZZ_CASES` runs more) never panic, and
//! every error names the file.

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
