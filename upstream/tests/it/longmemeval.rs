//! LongMemEval's official wording read from the checkout beside the project
//! (`../shared/upstream/LongMemEval`), filled by [`LongMemEval`]'s methods and compared byte for
//! byte with what the official `get_anscheck_prompt` and `prepare_prompt` build, run by Python
//! with their heavy imports stubbed and the note model recording what it is sent.

use std::path::{Path, PathBuf};
use std::process::Command;

use mb_upstream::python::strip;
use mb_upstream::{ChatTurn, Chunk, LongMemEval, Reader, UpstreamError};
use serde_json::{json, Value};

/// Runs the official functions on the cases read from standard input.
const OFFICIAL_PY: &str = r#"
import sys, json, types, importlib.util
root = sys.argv[1]
for name in ["openai", "backoff", "tqdm", "numpy", "transformers", "tiktoken"]:
    stub = types.ModuleType(name)
    stub.__getattr__ = lambda attribute: (lambda *a, **k: (lambda f: f))
    sys.modules[name] = stub
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, root + "/" + path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
qa = load("evaluate_qa", "src/evaluation/evaluate_qa.py")
gen = load("run_generation", "src/generation/run_generation.py")
case = json.loads(sys.stdin.read())
# Each turn's keys in the order LongMemEval's files hold them (serde_json sorts them).
def in_file_order(turn):
    ordered = {"role": turn["role"], "content": turn["content"]}
    if "has_answer" in turn:
        ordered["has_answer"] = turn["has_answer"]
    return ordered
case["entry"]["haystack_sessions"] = [[in_file_order(t) for t in s] for s in case["entry"]["haystack_sessions"]]
judged = [qa.get_anscheck_prompt(j["type"], j["question"], j["answer"], j["response"], abstention=j["abstention"]) for j in case["judge"]]
class Tokens:
    def encode(self, text, allowed_special=None):
        return []
sent = []
def notes(client, **kwargs):
    sent.append(kwargs["messages"][0]["content"])
    reply = case["replies"][len(sent) - 1]
    message = types.SimpleNamespace(content=reply)
    return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])
gen.chat_completions_with_backoff = notes
def read(entry, cot, con, merge="none"):
    entry = json.loads(json.dumps(entry))
    return gen.prepare_prompt(entry, "flat-session", 1000, False, "json", cot, Tokens(), "openai", 10**9, merge, con=con, con_client=None, con_model="m")
read_out = {}
for name, cot, con in [("direct", False, False), ("step", True, False), ("con", True, True)]:
    sent.clear()
    prompt = read(case["entry"], cot, con)
    read_out[name] = {"prompt": prompt, "notes": list(sent)}
sent.clear()
read(case["entry"], True, True, "replace")
read_out["text_notes"] = list(sent)
print(json.dumps({"judge": judged, "reading": read_out}))
"#;

/// The checkout and the Python that runs its code, or `None` after a `skipped:` line.
fn official() -> Option<(LongMemEval, PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let checkout = root.join("../shared/upstream/LongMemEval");
    let python = root.join(".cache/upstream-venv/bin/python");
    if !checkout.join("src/generation/run_generation.py").is_file() || !python.is_file() {
        mb_core::test_data::skip(&format!(
            "{} or {} is absent (bash scripts/setup.sh builds the venv)",
            checkout.display(),
            python.display()
        ));
        return None;
    }
    Some((LongMemEval::open(&checkout).unwrap(), checkout, python))
}

fn run_official(python: &Path, checkout: &Path, case: &Value) -> Value {
    let mut command = Command::new(python);
    command.args(["-c", OFFICIAL_PY]).arg(checkout);
    mb_core::test_data::run_json(&mut command, &case.to_string())
}

/// A question with four retrieved sessions, out of date order (two on the same day), holding
/// non-ASCII text, quotes, braces, backslashes, control characters and `has_answer` marks.
fn entry() -> Value {
    let turn = |role: &str, content: &str, has_answer: Option<bool>| {
        let mut turn = json!({"role": role, "content": content});
        if let Some(has) = has_answer {
            turn["has_answer"] = json!(has);
        }
        turn
    };
    let sessions = [
        (
            "answer_4be1b6b4_2",
            "2023/05/20 (Sat) 02:21",
            vec![
                turn(
                    "user",
                    "I finally booked the trip to Kyōto — 5 nights! {not a field}",
                    Some(true),
                ),
                turn(
                    "assistant",
                    "  Great choice. \"Ryokan\" stays are lovely.\n\nTips: \\ pack light\t😀 ",
                    Some(false),
                ),
            ],
        ),
        (
            "sharegpt_x1_0",
            "2023/05/18 (Thu) 10:00",
            vec![
                turn("user", "What's a good name for a café?", None),
                turn("assistant", "How about \u{1f}Bean There\u{7f}?", None),
            ],
        ),
        (
            "ultrachat_77",
            "2023/05/20 (Sat) 02:21",
            vec![turn(
                "user",
                "Remind me: my sister's birthday is 3 June.",
                None,
            )],
        ),
        (
            "answer_4be1b6b4_1",
            "2023/04/02 (Sun) 19:45",
            vec![
                turn(
                    "user",
                    "I'm planning a trip to Japan next month.",
                    Some(true),
                ),
                turn(
                    "assistant",
                    "Wonderful! 日本 is beautiful in spring.",
                    Some(false),
                ),
            ],
        ),
    ];
    let ids: Vec<&str> = sessions.iter().map(|s| s.0).collect();
    json!({
        "question_id": "4be1b6b4",
        "question_type": "multi-session",
        "question": "How many nights will I stay in Kyōto, and when did I start planning?",
        "answer": "5 nights; since April",
        "question_date": "2023/05/25 (Thu) 08:00",
        "haystack_session_ids": ids,
        "haystack_dates": sessions.iter().map(|s| s.1).collect::<Vec<_>>(),
        "haystack_sessions": sessions.iter().map(|s| s.2.clone()).collect::<Vec<_>>(),
        "retrieval_results": {"ranked_items": ids.iter().map(|id| json!({
            "corpus_id": id,
            "text": format!("Fact of {id}: the user said “something” {{x}}\n"),
        })).collect::<Vec<_>>()},
    })
}

/// The entry's retrieved sessions as our items: (date, turns), in retrieval order.
fn items(entry: &Value) -> Vec<(String, Chunk)> {
    let dates = entry["haystack_dates"].as_array().unwrap();
    let sessions = entry["haystack_sessions"].as_array().unwrap();
    dates
        .iter()
        .zip(sessions)
        .map(|(date, session)| {
            let turns = session
                .as_array()
                .unwrap()
                .iter()
                .map(|t| ChatTurn {
                    role: t["role"].as_str().unwrap().into(),
                    content: t["content"].as_str().unwrap().into(),
                })
                .collect();
            (date.as_str().unwrap().to_string(), Chunk::Turns(turns))
        })
        .collect()
}

#[test]
fn judge_reading_and_notes_are_the_official_text_byte_for_byte() {
    let Some((lme, checkout, python)) = official() else {
        return;
    };
    let types = [
        "single-session-user",
        "single-session-assistant",
        "single-session-preference",
        "temporal-reasoning",
        "knowledge-update",
        "multi-session",
    ];
    let mut judge = Vec::new();
    for (i, kind) in types.iter().enumerate() {
        for abstention in [false, true] {
            judge.push(json!({
                "type": kind,
                "abstention": abstention,
                "question": format!("Q{i}: how many days between \"the trip\" and {{today}}?"),
                "answer": if i % 2 == 0 { "18 days (± one) — see session 2".to_string() } else { format!("The user would prefer café tips\n#{i}") },
                "response": "I think it's 19 days.\n\nReasoning: {} \\ done 😀",
            }));
        }
    }
    let entry = entry();
    let replies = [
        "  The user booked 5 nights in Kyōto. \u{1c}",
        "empty",
        "\nBirthday: 3 June\n",
        "Planning began in April ({}).",
    ];
    let mut all_replies: Vec<&str> = replies.to_vec();
    all_replies.extend(replies);
    let case = json!({"judge": judge, "entry": entry, "replies": all_replies});
    let official = run_official(&python, &checkout, &case);

    for (j, expected) in judge.iter().zip(official["judge"].as_array().unwrap()) {
        let ours = lme
            .judge_prompt(
                j["type"].as_str().unwrap(),
                j["abstention"].as_bool().unwrap(),
                j["question"].as_str().unwrap(),
                j["answer"].as_str().unwrap(),
                j["response"].as_str().unwrap(),
            )
            .unwrap();
        assert_eq!(ours, expected.as_str().unwrap(), "{j}");
    }

    let items = items(&entry);
    let question = entry["question"].as_str().unwrap();
    let date = entry["question_date"].as_str().unwrap();
    let reading = &official["reading"];
    for (name, reader) in [("direct", Reader::Direct), ("step", Reader::StepByStep)] {
        let ours = lme.reading_prompt(reader, &items, date, question).unwrap();
        assert_eq!(ours, reading[name]["prompt"].as_str().unwrap(), "{name}");
    }

    // Chain-of-Note: a note request per item in retrieval order, then the notes read.
    let note_requests: Vec<String> = items
        .iter()
        .map(|(d, chunk)| lme.note_prompt(d, chunk, date, question).unwrap())
        .collect();
    assert_eq!(json!(note_requests), reading["con"]["notes"]);
    let notes: Vec<(String, Chunk)> = items
        .iter()
        .zip(replies)
        .map(|((d, _), reply)| (d.clone(), Chunk::Note(strip(reply).to_string())))
        .collect();
    let ours = lme
        .reading_prompt(Reader::StepByStep, &notes, date, question)
        .unwrap();
    assert_eq!(ours, reading["con"]["prompt"].as_str().unwrap());

    // A text standing for an item is written as the JSON string the official reader writes.
    let texts: Vec<String> = entry["retrieval_results"]["ranked_items"]
        .as_array()
        .unwrap()
        .iter()
        .zip(&items)
        .map(|(item, (d, _))| {
            let text = Chunk::Text(item["text"].as_str().unwrap().into());
            lme.note_prompt(d, &text, date, question).unwrap()
        })
        .collect();
    assert_eq!(json!(texts), reading["text_notes"]);
}

#[test]
fn an_unknown_question_type_is_refused_as_the_official_judge_raises() {
    let Some((lme, _, _)) = official() else {
        return;
    };
    let refused = lme.judge_prompt("temporal", false, "q", "a", "r");
    assert!(matches!(refused, Err(UpstreamError::Field { .. })));
    // An abstention question takes the abstention template whatever its type says.
    assert!(lme.judge_prompt("temporal", true, "q", "a", "r").is_ok());
    assert!(lme
        .provenance()
        .starts_with("official xiaowu0162/LongMemEval 9e0b455f4ef0"));
}

#[test]
fn a_changed_checkout_is_refused_naming_file_and_function() {
    let Some((_, checkout, _)) = official() else {
        return;
    };
    let copy = tempfile::tempdir().unwrap();
    for file in [
        "src/generation/run_generation.py",
        "src/evaluation/evaluate_qa.py",
    ] {
        let target = copy.path().join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(checkout.join(file), &target).unwrap();
    }
    assert!(LongMemEval::open(copy.path()).is_ok());
    let judge = copy.path().join("src/evaluation/evaluate_qa.py");
    let text = std::fs::read_to_string(&judge).unwrap();
    std::fs::write(&judge, text.replacen("yes", "Yes", 1)).unwrap();
    let error = LongMemEval::open(copy.path()).unwrap_err().to_string();
    assert!(
        error.contains(
            "src/evaluation/evaluate_qa.py, get_anscheck_prompt: longmemeval.judge.answer"
        ),
        "{error}"
    );
    let missing = LongMemEval::open(&copy.path().join("src")).unwrap_err();
    assert!(matches!(missing, UpstreamError::NotACheckout { .. }));
}
