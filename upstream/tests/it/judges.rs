//! The judges' requests against upstream's own judge functions, run by Python (the
//! differential venv, heavy imports shimmed) with a model that records what it is sent.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use mb_upstream::Upstream;
use serde_json::json;

/// Runs DialSim's `gpt_judge` on each case with a recording model and prints what it sent.
const DIALSIM_PY: &str = r#"
import sys, json, io, contextlib
root, shims = sys.argv[1], sys.argv[2]
sys.path.insert(0, shims)
import heavy_import_shims
heavy_import_shims.install()
sys.path.insert(0, root)
with contextlib.redirect_stdout(io.StringIO()):
    from src.dataset import DialSim
sent = []
class Model:
    def generate_response(self, messages):
        sent.append(messages)
        return "Correct"
for question, golden, prediction in json.loads(sys.stdin.read()):
    DialSim.gpt_judge(question, golden, prediction, Model())
print(json.dumps(sent))
"#;

#[test]
fn dialsim_judge_requests_are_what_upstreams_gpt_judge_sends() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let checkout = root.join("../shared/upstream/MemoryBench");
    let python = root.join(".cache/upstream-venv/bin/python");
    if !checkout.join("memorybench.py").is_file() || !python.is_file() {
        return mb_core::test_data::skip(&format!(
            "{} or {} is absent (bash scripts/setup.sh builds the venv)",
            checkout.display(),
            python.display()
        ));
    }
    let upstream = Upstream::open(&checkout).unwrap();
    let cases = [
        ("Who did Ross marry first?", "Carol", "Carol Willick"),
        // A mark inside an earlier value is replaced too, as Python's chained replace does.
        ("<<<TRUEANSWER>>>?", "Emily {x}", "<<<PREDICTION>>>"),
    ];
    let mut child = Command::new(&python)
        .args(["-c", DIALSIM_PY])
        .arg(&checkout)
        .arg(root.join("scripts/upstream/shims"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(json!(cases).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for (index, (question, golden, prediction)) in cases.iter().enumerate() {
        let (system, prompt) = upstream
            .dialsim_judge(question, golden, prediction)
            .unwrap();
        assert_eq!(sent[index][0]["content"], system.as_str());
        assert_eq!(sent[index][1]["content"], prompt.as_str(), "case {index}");
    }
}

/// Runs HelloBench's `gpt4o_ckwise_evaluation` with a recording model (its tokenizer replaced by
/// `str.split`: the prompt's assembly is compared here, not NLTK's tokenizer) and prints what
/// it sent.
const HELLOBENCH_PY: &str = r#"
import sys, json, io, contextlib
root, shims = sys.argv[1], sys.argv[2]
sys.path.insert(0, shims)
import heavy_import_shims
heavy_import_shims.install()
sys.path.insert(0, root)
with contextlib.redirect_stdout(io.StringIO()):
    from src.dataset import HelloBench
HelloBench.nltk.word_tokenize = str.split
sent = []
class Model:
    def generate_response(self, messages):
        sent.append(messages)
        return "[]"
case = json.loads(sys.stdin.read())
with contextlib.redirect_stdout(io.StringIO()):
    HelloBench.gpt4o_ckwise_evaluation(case["instruction"], case["response"], case["checklist"], Model())
print(json.dumps(sent[0]))
"#;

#[test]
fn hellobench_judge_requests_are_what_upstreams_checklist_evaluation_sends() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let checkout = root.join("../shared/upstream/MemoryBench");
    let python = root.join(".cache/upstream-venv/bin/python");
    if !checkout.join("memorybench.py").is_file() || !python.is_file() {
        return mb_core::test_data::skip(&format!(
            "{} or {} is absent (bash scripts/setup.sh builds the venv)",
            checkout.display(),
            python.display()
        ));
    }
    let upstream = Upstream::open(&checkout).unwrap();
    let checklist = json!([
        {"checklist_id": 0, "checklist_content": "Is it about the café {x}?"},
        {"checklist_id": 1, "checklist_content": "Does it say \"why\"?\n"},
    ]);
    let dumped =
        mb_upstream::python::dumps_unicode(&checklist, &["checklist_id", "checklist_content"]);
    // Written by hand so that each item reaches Python with its id first, as the published
    // rows have it (serde_json would sort the keys).
    let case = format!(
        "{{\"instruction\": \"Write about a café.\", \"response\": \"The café is small.\", \"checklist\": {dumped}}}"
    );
    let mut child = Command::new(&python)
        .args(["-c", HELLOBENCH_PY])
        .arg(&checkout)
        .arg(root.join("scripts/upstream/shims"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(case.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sent: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let dumped =
        mb_upstream::python::dumps_unicode(&checklist, &["checklist_id", "checklist_content"]);
    let (system, prompt) = upstream
        .hellobench_checklist("Write about a café.", "The café is small.", &dumped, 2)
        .unwrap();
    assert_eq!(sent[0]["content"], system.as_str());
    assert_eq!(sent[1]["content"], prompt.as_str());
}

/// Runs NFCats' `evaluate_single` (on an instance made without its constructor, its model a
/// recorder) and prints what its judge was sent.
const NFCATS_PY: &str = r#"
import sys, json, io, contextlib
root, shims = sys.argv[1], sys.argv[2]
sys.path.insert(0, shims)
import heavy_import_shims
heavy_import_shims.install()
sys.path.insert(0, root)
with contextlib.redirect_stdout(io.StringIO()):
    from src.dataset.NFCats import NFCats_Dataset
sent = []
class Model:
    def generate_response(self, messages):
        sent.append(messages)
        return "4"
dataset = object.__new__(NFCats_Dataset)
dataset.openai_model = Model()
case = json.loads(sys.stdin.read())
with contextlib.redirect_stdout(io.StringIO()):
    score = dataset.evaluate_single(case["question"], {}, case["answer"])
print(json.dumps({"sent": sent[0], "score": score}))
"#;

#[test]
fn nfcats_judge_requests_are_what_upstreams_evaluate_single_sends() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let checkout = root.join("../shared/upstream/MemoryBench");
    let python = root.join(".cache/upstream-venv/bin/python");
    if !checkout.join("memorybench.py").is_file() || !python.is_file() {
        return mb_core::test_data::skip(&format!(
            "{} or {} is absent (bash scripts/setup.sh builds the venv)",
            checkout.display(),
            python.display()
        ));
    }
    let upstream = Upstream::open(&checkout).unwrap();
    let (question, answer) = ("Why do cats purr? {x}", "Mostly \"contentment\".\n");
    let mut child = Command::new(&python)
        .args(["-c", NFCATS_PY])
        .arg(&checkout)
        .arg(root.join("scripts/upstream/shims"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(
            json!({"question": question, "answer": answer})
                .to_string()
                .as_bytes(),
        )
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (system, prompt) = upstream.nfcats_judge(question, answer).unwrap();
    assert_eq!(theirs["sent"][0]["content"], system.as_str());
    assert_eq!(theirs["sent"][1]["content"], prompt.as_str());
    assert_eq!(theirs["score"]["score"], 4);
}
