//! LexEval ROUGE-L against the Python packages upstream uses (`jieba`, `rouge` 1.0.1, installed
//! in the setup venv), on the LexEval-QA answers of `../shared/data` (skipped when absent).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use jieba_rs::Jieba;
use mb_datasets::metrics::rouge::{lexeval_rouge_l, normalise};

/// Upstream's scoring in Python: our normalisation, then jieba and `rouge` as upstream calls
/// them; any exception scores 0.0.
const PYTHON: &str = r#"
import json, sys, jieba
from rouge import Rouge
jieba.setLogLevel(60)
pairs = json.load(sys.stdin)
scores = []
for hyp, ref in pairs:
    try:
        h = " ".join(jieba.cut(hyp))
        r = " ".join(jieba.cut(ref))
        scores.append(Rouge().get_scores(h, r)[0]["rouge-l"]["f"])
    except Exception:
        scores.append(0.0)
print(json.dumps(scores))
"#;

#[test]
fn matches_python_jieba_and_rouge_on_lexeval_answers() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let Ok(text) = std::fs::read_to_string(root.join("../shared/data/lexeval/5_4.json")) else {
        eprintln!("skipping: ../shared/data/lexeval/5_4.json not found");
        return;
    };
    let answers: Vec<String> = text
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|row| row["answer"].as_str().map(str::to_string))
        .collect();
    assert!(answers.len() >= 100);
    // Unrelated answers, an answer against its own first half, and identical answers.
    let mut pairs: Vec<(String, String)> = Vec::new();
    for (i, answer) in answers.iter().enumerate().take(150) {
        let other = &answers[(i + 1) % answers.len()];
        let half: String = answer.chars().take(answer.chars().count() / 2).collect();
        pairs.push((other.clone(), answer.clone()));
        pairs.push((half, answer.clone()));
        pairs.push((answer.clone(), answer.clone()));
    }
    let normalised: Vec<(String, String)> = pairs
        .iter()
        .map(|(h, r)| (normalise(h), normalise(r)))
        .collect();

    let python = root.join(".cache/venv/bin/python");
    assert!(python.exists(), "run `bash scripts/setup.sh` first");
    let mut child = Command::new(python)
        .args(["-c", PYTHON])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(&normalised).unwrap().as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let expected: Vec<f64> = serde_json::from_slice(&output.stdout).unwrap();

    let jieba = Jieba::new();
    let mut zeros = 0;
    for ((hyp, reference), want) in pairs.iter().zip(&expected) {
        let got = lexeval_rouge_l(&jieba, hyp, reference);
        zeros += usize::from(*want == 0.0);
        assert!(
            (got - want).abs() < 1e-9,
            "ours {got} vs python {want} for {:?}…",
            hyp.chars().take(30).collect::<String>()
        );
    }
    eprintln!("{} pairs agree ({zeros} score 0 in Python)", pairs.len());
}
