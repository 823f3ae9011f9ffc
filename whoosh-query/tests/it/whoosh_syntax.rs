//! The Whoosh query parser against Whoosh 2.7.4 itself: thousands of random queries mixing
//! every construct of the syntax, each printed by Python's `repr` and by the Rust `Display`,
//! must be identical. Needs a Python with Whoosh: `$WHOOSH_PYTHON`, else the setup venv
//! (`.cache/venv`); skipped with a message when neither imports `whoosh`.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use mb_text::Analyzer;
use mb_whoosh_query::parse;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Parses each JSON-string line of stdin with upstream's BM25 parser; prints one `repr` per
/// line, or `EXC <exception type>`.
const PYTHON: &str = r#"
import sys, json
from whoosh.fields import Schema, ID, TEXT
from whoosh.qparser import QueryParser, OrGroup
schema = Schema(doc_id=ID(stored=True, unique=True), content=TEXT(stored=True))
parser = QueryParser("content", schema, group=OrGroup)
out = []
for line in sys.stdin:
    try:
        out.append(repr(parser.parse(json.loads(line))))
    except Exception as e:
        out.append("EXC " + type(e).__name__)
sys.stdout.write("\n".join(out) + "\n")
"#;

/// A Python that imports `whoosh`, or `None` (with a message saying why the test skips).
fn whoosh_python() -> Option<PathBuf> {
    let python = std::env::var_os("WHOOSH_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.cache/venv/bin/python")
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

/// Whoosh's `repr` of each parsed text (`EXC <type>` where it raises).
fn whoosh_reprs(python: &PathBuf, texts: &[String]) -> Vec<String> {
    let mut child = Command::new(python)
        .args(["-c", PYTHON])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for t in texts {
        input.push_str(&serde_json::to_string(t).unwrap());
        input.push('\n');
    }
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

const PIECES: &[&str] = &[
    "apple",
    "Banana",
    "drive",
    "car",
    "What",
    "when",
    "the",
    "a",
    "of",
    "I",
    "x",
    "U.S.A.",
    "e.g.,",
    "5:30",
    "10:30am",
    "don't",
    "it's",
    "café",
    "ÜBER",
    "北京大学",
    "naïve",
    "Σίσυφος",
    "snake_case",
    "3.14",
    "co-op",
    "to",
    "To",
    "photo",
    "TOX",
    "and",
    "or",
    "not",
    "?",
    "*",
    "\"",
    "'",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "TO",
    "AND",
    "OR",
    "NOT",
    "ANDNOT",
    "ANDMAYBE",
    "REQUIRE",
    "content:",
    "doc_id:",
    "title:",
    "Speaker:",
    "*:",
    "*:*",
    "^2",
    "^0.5",
    "^1.5",
    "^",
    "^.25",
    "^10",
    "~2",
    "~",
    ",",
    ".",
    "!",
    ":",
    "-",
    "\t",
    "\n",
    "؟",
    "\u{200d}",
    "\u{a0}",
    "\\",
    "/",
    "#",
    "😀",
    "",
];

fn random_query(rng: &mut StdRng) -> String {
    let mut q = String::new();
    for _ in 0..rng.random_range(1..14) {
        q.push_str(PIECES[rng.random_range(0..PIECES.len())]);
        match rng.random_range(0..10) {
            0..=5 => q.push(' '),
            6 => q.push_str("  "),
            _ => {}
        }
    }
    if rng.random_bool(0.5) {
        q = q.trim_end().to_string();
    }
    q
}

#[test]
fn random_queries_parse_as_whoosh_parses_them() {
    let Some(python) = whoosh_python() else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(2_7_4);
    let texts: Vec<String> = (0..6000).map(|_| random_query(&mut rng)).collect();
    let expected = whoosh_reprs(&python, &texts);
    let (mut equal, mut raised, mut differ) = (0, 0, Vec::new());
    for (text, want) in texts.iter().zip(&expected) {
        if want.starts_with("EXC ") {
            // Whoosh's failures on operators left without operands (`NOT NOT a`: IndexError,
            // `a ANDNOT ANDNOT b`: AssertionError); the clause is dropped here.
            assert!(
                want == "EXC IndexError" || want == "EXC AssertionError",
                "{text:?}: {want}"
            );
            raised += 1;
            continue;
        }
        let got = parse(text, "content", &["doc_id", "content"], &Analyzer::Standard).to_string();
        if &got == want {
            equal += 1;
        } else {
            differ.push(format!("{text:?}\n  whoosh: {want}\n  rust:   {got}"));
        }
    }
    eprintln!(
        "{} random queries: {equal} equal, {raised} raise in Whoosh, {} differ",
        texts.len(),
        differ.len()
    );
    assert!(
        differ.is_empty(),
        "{}",
        differ[..differ.len().min(15)].join("\n")
    );
    assert!(equal > 5000);
}
