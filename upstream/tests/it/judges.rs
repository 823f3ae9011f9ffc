//! The judges' requests against upstream's own judge functions, run by Python (the
//! differential venv, heavy imports shimmed) with a model that records what it is sent.

use crate::python::UpstreamPython;
use serde_json::json;

/// Runs DialSim's `gpt_judge` on each case with a recording model and prints what it sent.
const DIALSIM_PY: &str = r#"
import sys, json, io, contextlib
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
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let cases = [
        ("Who did Ross marry first?", "Carol", "Carol Willick"),
        // A mark inside an earlier value is replaced too, as Python's chained replace does.
        ("<<<TRUEANSWER>>>?", "Emily {x}", "<<<PREDICTION>>>"),
    ];
    let sent: serde_json::Value = side.run(DIALSIM_PY, &json!(cases).to_string());
    for (index, (question, golden, prediction)) in cases.iter().enumerate() {
        let [system, prompt] = <[_; 2]>::try_from(
            upstream
                .dialsim_judge(question, golden, prediction)
                .unwrap(),
        )
        .unwrap()
        .map(|message| message.content);
        assert_eq!(sent[index][0]["content"], system.as_str());
        assert_eq!(sent[index][1]["content"], prompt.as_str(), "case {index}");
    }
}

/// Runs HelloBench's `gpt4o_ckwise_evaluation` with a recording model (its tokenizer replaced by
/// `str.split`: the prompt's assembly is compared here, not NLTK's tokenizer) and prints what
/// it sent.
const HELLOBENCH_PY: &str = r#"
import sys, json, io, contextlib
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
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
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
    let sent: serde_json::Value = side.run(HELLOBENCH_PY, &case);
    let dumped =
        mb_upstream::python::dumps_unicode(&checklist, &["checklist_id", "checklist_content"]);
    let [system, prompt] = <[_; 2]>::try_from(
        upstream
            .hellobench_checklist("Write about a café.", "The café is small.", &dumped, 2)
            .unwrap(),
    )
    .unwrap()
    .map(|message| message.content);
    assert_eq!(sent[0]["content"], system.as_str());
    assert_eq!(sent[1]["content"], prompt.as_str());
}

/// Runs NFCats' `evaluate_single` (on an instance made without its constructor, its model a
/// recorder) and prints what its judge was sent.
const NFCATS_PY: &str = r#"
import sys, json, io, contextlib
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
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let (question, answer) = ("Why do cats purr? {x}", "Mostly \"contentment\".\n");
    let input = json!({"question": question, "answer": answer}).to_string();
    let theirs: serde_json::Value = side.run(NFCATS_PY, &input);
    let [system, prompt] = <[_; 2]>::try_from(upstream.nfcats_judge(question, answer).unwrap())
        .unwrap()
        .map(|message| message.content);
    assert_eq!(theirs["sent"][0]["content"], system.as_str());
    assert_eq!(theirs["sent"][1]["content"], prompt.as_str());
    assert_eq!(theirs["score"]["score"], 4);
}

/// Runs LimitGen's `_evaluate_single` (its model a recorder answering yes, subtype 1 and a
/// rating) and its message builders for every aspect, and prints what was sent.
const LIMITGEN_PY: &str = r#"
import sys, json, io, contextlib
sys.path.insert(0, root)
with contextlib.redirect_stdout(io.StringIO()):
    from src.dataset import LimitGen
case = json.loads(sys.stdin.read())
replies = iter(["Yes, it is.", "1", '```json\n{"explanation": "same", "rating": 4}\n```'])
sent = []
class Model:
    def generate_response(self, messages, **kwargs):
        sent.append(messages)
        return next(replies)
dataset = object.__new__(LimitGen.LimitGen_Dataset)
dataset.openai_model = Model()
result = dataset._evaluate_single("", case["info"], json.dumps({"limitations": [case["limitation"]]}))
builders = {category: [LimitGen.prepare_aspect_check_message(category, case["limitation"]),
                       LimitGen.prepare_subtype_classification_message(category, case["limitation"])]
            for category in case["categories"]}
print(json.dumps({"sent": sent, "rating": result["rating"], "builders": builders}))
"#;

#[test]
fn limitgen_judge_requests_are_what_upstreams_evaluation_sends() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let limitation = "The data are scraped {x} without \"cleaning\".\n";
    let ground_truth = "Low-quality data {y}";
    let categories = ["data", "baseline", "metric", "citation"];
    let case = json!({
        "info": {"ground_truth": ground_truth, "category": "data"},
        "limitation": limitation,
        "categories": categories,
    });
    let theirs: serde_json::Value = side.run(LIMITGEN_PY, &case.to_string());
    let ours = |messages: Vec<mb_core::Message>| serde_json::to_value(messages).unwrap();
    let methodology = mb_upstream::LimitAspect::Methodology;
    assert_eq!(
        theirs["sent"][0],
        ours(
            upstream
                .limitgen_aspect_check(methodology, limitation)
                .unwrap()
        )
    );
    assert_eq!(
        theirs["sent"][1],
        ours(upstream.limitgen_subtypes(methodology, limitation).unwrap())
    );
    assert_eq!(
        theirs["sent"][2],
        ours(upstream.limitgen_rating(ground_truth, limitation).unwrap())
    );
    assert_eq!(theirs["rating"], 4);
    for category in categories {
        let aspect = mb_upstream::LimitAspect::of(category).unwrap();
        let built = &theirs["builders"][category];
        assert_eq!(
            built[0],
            ours(upstream.limitgen_aspect_check(aspect, limitation).unwrap())
        );
        assert_eq!(
            built[1],
            ours(upstream.limitgen_subtypes(aspect, limitation).unwrap())
        );
    }
}
