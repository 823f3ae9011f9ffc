//! The Whoosh query parser against Whoosh 2.7.4 on every LoCoMo question as the harness asks
//! it (the row's `input_prompt`: preamble, instruction, "Question: ... Short answer:"), and on
//! long prompts made of conversation turns. Needs `../shared/data/locomo` and a Python with
//! Whoosh (`$WHOOSH_PYTHON`, else `.cache/venv`); skipped with a message without either.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use memorybench::datasets::import;
use memorybench::engine::lexical::whoosh::parse;
use memorybench::engine::Analyzer;

use crate::common::turns;

/// Parses each JSON-string line of stdin with upstream's BM25 parser; prints one `repr` per line.
const PYTHON: &str = r#"
import sys, json
from whoosh.fields import Schema, ID, TEXT
from whoosh.qparser import QueryParser, OrGroup
schema = Schema(doc_id=ID(stored=True, unique=True), content=TEXT(stored=True))
parser = QueryParser("content", schema, group=OrGroup)
out = [repr(parser.parse(json.loads(line))) for line in sys.stdin]
sys.stdout.write("\n".join(out) + "\n")
"#;

fn whoosh_python() -> Option<PathBuf> {
    let python = std::env::var_os("WHOOSH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".cache/venv/bin/python")
        });
    let works = Command::new(&python)
        .args(["-c", "import whoosh"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !works {
        mb_core::test_data::skip(&format!(
            "{} cannot import whoosh (run scripts/setup.sh or set WHOOSH_PYTHON)",
            python.display()
        ));
    }
    works.then_some(python)
}

fn whoosh_reprs(python: &PathBuf, texts: &[String]) -> Vec<String> {
    let mut child = Command::new(python)
        .args(["-c", PYTHON])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = texts
        .iter()
        .map(|t| serde_json::to_string(t).unwrap() + "\n")
        .collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(output.status.success(), "the Python side failed");
    let lines: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), texts.len());
    lines
}

fn rust_repr(text: &str) -> String {
    parse(text, "content", &["doc_id", "content"], &Analyzer::Standard).to_string()
}

#[test]
fn locomo_prompts_parse_as_whoosh_parses_them() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data/locomo/locomo10-dev.json");
    let Ok(json) = std::fs::read_to_string(&path) else {
        mb_core::test_data::skip(&format!("{} not found", path.display()));
        return;
    };
    let Some(python) = whoosh_python() else {
        return;
    };
    let datasets = import::locomo(
        &json,
        "locomo10-dev.json",
        |j| format!("locomo-{j}"),
        None,
        &import::Paraphrase,
    )
    .unwrap();
    let mut texts: Vec<String> = datasets
        .iter()
        .flat_map(|(_, d)| d.train.iter().chain(&d.test))
        .map(|row| row["input_prompt"].as_str().unwrap().to_string())
        .collect();
    let questions = texts.len();
    let samples: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let qa_items: usize = samples
        .iter()
        .map(|s| s["qa"].as_array().unwrap().len())
        .sum();
    assert_eq!(questions, qa_items, "every QA item is a row");
    // Long prompts: each conversation's turns, 20 KB at a time.
    let mut long = String::new();
    for (_, turn) in samples.iter().flat_map(turns) {
        long.push_str(&turn);
        long.push('\n');
        if long.len() >= 20_000 {
            texts.push(std::mem::take(&mut long));
        }
    }
    let expected = whoosh_reprs(&python, &texts);
    let mut differ = Vec::new();
    for (text, want) in texts.iter().zip(&expected) {
        let got = rust_repr(text);
        if &got != want {
            differ.push(format!("{text:?}\n  whoosh: {want}\n  rust:   {got}"));
        }
    }
    eprintln!(
        "{questions} LoCoMo prompts and {} 20 KB turn sequences: {} equal, {} differ",
        texts.len() - questions,
        texts.len() - differ.len(),
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "{}",
        differ[..differ.len().min(10)].join("\n")
    );

    // Timing: the fastest of many runs, the cost without other processes taking the CPU.
    let prompt = &texts[questions];
    let fastest = (0..300)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(parse(
                prompt,
                "content",
                &["doc_id", "content"],
                &Analyzer::Standard,
            ));
            start.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min);
    eprintln!(
        "parsing a {}-byte prompt: {:.3} ms (fastest of 300 runs)",
        prompt.len(),
        fastest * 1e3
    );
}
