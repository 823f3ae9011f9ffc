//! LexEval ROUGE-L against the Python packages upstream uses (`jieba`, `rouge` 1.0.1, installed
//! in the setup venv), on the LexEval-QA answers of `../shared/data` (skipped when absent).

use crate::common::{root, venv_python};
use jieba_rs::Jieba;
use mb_eval::metrics::rouge::{lexeval_rouge_l, normalize};

/// Upstream's scoring in Python: our normalization, then jieba and `rouge` as upstream calls
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
    let Ok(text) = std::fs::read_to_string(root().join("../shared/data/lexeval/5_4.json")) else {
        mb_core::test_data::skip("../shared/data/lexeval/5_4.json not found");
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
    let normalized: Vec<(String, String)> = pairs
        .iter()
        .map(|(h, r)| (normalize(h), normalize(r)))
        .collect();

    let expected: Vec<f64> = venv_python(PYTHON, &normalized);

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
