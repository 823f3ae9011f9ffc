//! `mb-harness off-policy --longmemeval FILE --longmemeval-upstream DIR`: a run sends the
//! official LongMemEval words, read from the checkout beside the project
//! (`../shared/upstream/LongMemEval`), and refuses a changed checkout.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common::{assert_ok, chat_server, json as read};
use crate::longmemeval::{fixture, off_policy, run_of};

/// LongMemEval's checkout beside the project, opened, or `None` after a `skipped:` line.
fn official_checkout() -> Option<(PathBuf, mb_upstream::LongMemEval)> {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream/LongMemEval");
    if !checkout.join("src/evaluation/evaluate_qa.py").is_file() {
        mb_core::test_data::skip(&format!("{} is absent", checkout.display()));
        return None;
    }
    let lme = mb_upstream::LongMemEval::open(&checkout).unwrap();
    Some((checkout, lme))
}

/// The official `get_anscheck_prompt` of each case (`[type, abstention, question, answer,
/// response]`), run by Python with the evaluation script's other imports stubbed.
fn official_judge_prompts(checkout: &Path, cases: &Value) -> Option<Vec<String>> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.cache/upstream-venv/bin/python");
    if !python.is_file() {
        mb_core::test_data::skip(&format!("{} is absent", python.display()));
        return None;
    }
    let script = r#"
import sys, json, types, importlib.util
for name in ["openai", "backoff", "tqdm", "numpy"]:
    stub = types.ModuleType(name)
    stub.__getattr__ = lambda attribute: (lambda *a, **k: (lambda f: f))
    sys.modules[name] = stub
spec = importlib.util.spec_from_file_location("evaluate_qa", sys.argv[1] + "/src/evaluation/evaluate_qa.py")
qa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(qa)
cases = json.loads(sys.argv[2])
print(json.dumps([qa.get_anscheck_prompt(t, q, a, r, abstention=abs) for t, abs, q, a, r in cases]))
"#;
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(checkout)
        .arg(cases.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn with_the_longmemeval_checkout_every_request_is_the_official_text() {
    use mb_upstream::{ChatTurn, Chunk, Reader};
    let Some((checkout, lme)) = official_checkout() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let sent = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = sent.clone();
    let port = chat_server(move |request| {
        let prompt = request["messages"][0]["content"]
            .as_str()
            .unwrap_or_default();
        seen.lock().unwrap().push(prompt.to_string());
        json!({"choices": [{"message": {"role": "assistant", "content": " yes \n"},
                "finish_reason": "stop"}]})
    });
    let settings = dir.path().join("llm.toml");
    let endpoint = format!(
        "provider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n"
    );
    std::fs::write(
        &settings,
        format!("reasks = 0\n[answer]\n{endpoint}[judge]\n{endpoint}"),
    )
    .unwrap();
    let out = off_policy(
        dir.path(),
        &fixture(),
        &[
            "--baseline",
            "bm25_message",
            "--reading",
            "chain-of-note",
            "--llm",
            settings.to_str().unwrap(),
            "--llm-cache",
            "off",
            "--longmemeval-upstream",
            checkout.to_str().unwrap(),
        ],
    );
    assert_ok(&out);
    let run = run_of(dir.path(), "bm25_message");
    let summary = read(run.join("summary.json"));
    let source = summary["about"]["longmemeval_prompts"].as_str().unwrap();
    assert!(
        source.starts_with("official xiaowu0162/LongMemEval 9e0b455f4ef0"),
        "{source}"
    );
    assert_eq!(
        read(run.join("run_config.json"))["longmemeval_prompts"],
        source
    );

    // What each request should be, from the fixture and the turns each question was shown.
    let instances: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let cases: Vec<Value> = std::fs::read_to_string(run.join("predict.partial.jsonl"))
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let mut expected = Vec::new();
    let mut judged = Vec::new();
    for case in &cases {
        let instance = instances
            .iter()
            .find(|i| i["question_id"] == case["question_id"])
            .unwrap();
        let mut turns = std::collections::HashMap::new();
        for ((id, date), session) in instance["haystack_session_ids"]
            .as_array()
            .unwrap()
            .iter()
            .zip(instance["haystack_dates"].as_array().unwrap())
            .zip(instance["haystack_sessions"].as_array().unwrap())
        {
            for (n, turn) in session.as_array().unwrap().iter().enumerate() {
                let key = mb_datasets::longmemeval::retrieval::turn_id(
                    id.as_str().unwrap(),
                    n + 1,
                    turn["has_answer"].as_bool(),
                );
                let shown = ChatTurn {
                    role: turn["role"].as_str().unwrap().into(),
                    content: turn["content"].as_str().unwrap().into(),
                };
                turns.insert(key, (date.as_str().unwrap().to_string(), shown));
            }
        }
        let question = instance["question"].as_str().unwrap();
        let asked_on = instance["question_date"].as_str().unwrap();
        let mut notes = Vec::new();
        for id in case["shown_turns"].as_array().unwrap() {
            let (date, turn) = &turns[id.as_str().unwrap()];
            let item = Chunk::Turns(vec![turn.clone()]);
            expected.push(lme.note_prompt(date, &item, asked_on, question).unwrap());
            notes.push((date.clone(), Chunk::Note("yes".into())));
        }
        assert!(!notes.is_empty(), "{case}");
        expected.push(
            lme.reading_prompt(Reader::StepByStep, &notes, asked_on, question)
                .unwrap(),
        );
        assert_eq!(case["hypothesis"], "yes");
        judged.push(json!([
            instance["question_type"],
            case["abstention"],
            question,
            instance["answer"],
            "yes",
        ]));
    }
    let Some(judge_prompts) = official_judge_prompts(&checkout, &Value::Array(judged)) else {
        return;
    };
    expected.extend(judge_prompts);
    // Beside one ping per model role, every request is one of these, and each was sent.
    let mut sent = sent.lock().unwrap().clone();
    assert_eq!(sent.len(), expected.len() + 2, "{sent:?}");
    sent.retain(|prompt| expected.contains(prompt));
    sent.sort();
    expected.sort();
    assert_eq!(sent, expected);
    assert_eq!(cases.len(), 4);
}

#[test]
fn a_changed_longmemeval_checkout_is_refused_naming_file_and_function() {
    let Some((checkout, _)) = official_checkout() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("LongMemEval");
    for file in [
        "src/generation/run_generation.py",
        "src/evaluation/evaluate_qa.py",
    ] {
        std::fs::create_dir_all(copy.join(file).parent().unwrap()).unwrap();
        let text = std::fs::read_to_string(checkout.join(file)).unwrap();
        std::fs::write(
            copy.join(file),
            text.replacen("step by step", "step-by-step", 2),
        )
        .unwrap();
    }
    let out = off_policy(
        dir.path(),
        &fixture(),
        &[
            "--baseline",
            "bm25_message",
            "--longmemeval-upstream",
            copy.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "src/generation/run_generation.py, prepare_prompt: longmemeval.reading.step_by_step"
        ),
        "{stderr}"
    );
}
