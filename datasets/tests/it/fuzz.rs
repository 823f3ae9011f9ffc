//! Fuzzing with seeded hostile text (`mb_llm::testing::HostileText`; `MB_FUZZ_CASES` runs more):
//! dataset cells, JSON-lines tables and the raw importers never panic, and every error names its
//! file. The judges' reply parsers are fuzzed in mb-eval.

use std::collections::BTreeMap;

use mb_core::pyliteral::parse_column;
use mb_datasets::import;
use mb_datasets::sample::SAMPLE_LOCOMO_JSON;
use mb_datasets::table::parse_json_lines;
use mb_llm::testing::{fuzz_cases, HostileText};

#[test]
fn hostile_cells_and_lines_never_panic_and_errors_name_the_file() {
    let mut texts = HostileText::new(21);
    for _ in 0..fuzz_cases(2_000) {
        let text = texts.next_text();
        let _ = parse_column(&text);
        let lines = format!("{{\"test_idx\": 1}}\n{text}\n{{\"test_idx\": 2}}");
        if let Err(error) = parse_json_lines(&lines, "fuzz.jsonl") {
            let message = error.to_string();
            assert!(message.contains("fuzz.jsonl"), "{message}");
        }
    }
}

#[test]
fn mutated_raw_files_never_panic_an_importer() {
    let nfcats = "annotated_by,category,question\na,REASON,\"Why is the sky blue?\"\n\
                  b,INSTRUCTION,\"How do I tie a tie?\"\n";
    let lexeval = "{\"instruction\": \"回答\", \"input\": \"问题\", \"answer\": \"答案\"}\n";
    let hellobench = "{\"id\": \"1\", \"category\": \"science_problem_solve\", \
                      \"instruction\": \"Explain\", \"checklists\": [\"clear\"]}\n";
    let mut texts = HostileText::new(31);
    for case in 0..fuzz_cases(600) {
        let mut mutated = [
            SAMPLE_LOCOMO_JSON.to_string(),
            nfcats.to_string(),
            lexeval.to_string(),
            hellobench.to_string(),
        ];
        for text in &mut mutated {
            for _ in 0..1 + case % 4 {
                texts.mutate(text);
            }
        }
        let [locomo, nfcats, lexeval, hellobench] = mutated;
        let named = |result: Result<(), import::ImportError>, file: &str| {
            if let Err(error) = result {
                assert!(error.to_string().contains(file), "{error}");
            }
        };
        named(
            import::locomo(
                &locomo,
                "locomo.json",
                |i| format!("Locomo-{i}"),
                None,
                &import::Paraphrase,
            )
            .map(drop),
            "locomo.json",
        );
        named(
            import::nfcats(&nfcats, "test.csv", Some(250)).map(drop),
            "test.csv",
        );
        named(
            import::lexeval(&lexeval, "5_4.json", "LexEval-QA", None).map(drop),
            "5_4.json",
        );
        let files = BTreeMap::from([("chat".to_string(), hellobench)]);
        let _ = import::hellobench(&files, "HelloBench-Academic&Knowledge-QA");
    }
}
