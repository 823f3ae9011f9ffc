//! The LLM user simulator's request against upstream's own `FeedbackAgent`, run by Python (the
//! differential venv, heavy imports shimmed) with a model that records what it is sent: one
//! realistic row of each of the nine evaluator families, and the edge cases (Chinese and other
//! languages, empty and missing fields, values that are not strings, names the factory maps by
//! substring, and rows on which upstream's code raises instead of sending).

use crate::python::UpstreamPython;
use mb_core::Message;
use mb_upstream::UpstreamError;
use serde_json::{json, Map, Value};

/// Runs `get_feedback` (and so `_generate_llm_based_feedback`) on each case through upstream's
/// own agent and OpenAI client (its default configuration), and prints what reached the
/// client's `chat.completions.create` and what `get_feedback` returned.
const SIMULATOR_PY: &str = r#"
import sys, json, io, contextlib, logging
sys.path.insert(0, root)
logging.disable(logging.CRITICAL)
with contextlib.redirect_stdout(io.StringIO()):
    from src.agent.feedback import FeedbackAgent
    from src.llms.openai import OpenAILLM, OpenAIConfig
import os, types
os.environ.pop("OPENROUTER_API_KEY", None)
sent = []
reply = json.dumps({"reasoning": "r", "implicit_action": "copy", "behavior": "continue_conversation", "response": "More?"})
class Completions:
    def create(self, **params):
        sent.append(params)
        message = types.SimpleNamespace(content=reply, tool_calls=None)
        return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])
llm = object.__new__(OpenAILLM)
llm.config = OpenAIConfig(model="m")
llm.client = types.SimpleNamespace(chat=types.SimpleNamespace(completions=Completions()))
agent = object.__new__(FeedbackAgent)
agent.llm = llm
out = []
for case in json.loads(sys.stdin.read()):
    sent.clear()
    data = {"dataset_name": case["dataset_name"], "lang": case["lang"], "info": case["info"], "test_idx": 0}
    end, text, action = agent.get_feedback(case["messages"], data)
    out.append({"sent": sent[0] if sent else None, "returned": [end, text, action.value]})
print(json.dumps(out))
"#;

/// A conversation: the row's prompt, the answer, the user's reply and the next answer.
fn conversation(prompt: &str, answer: &str) -> Vec<Message> {
    vec![
        Message::system("You are a helpful assistant."),
        Message::user(format!("  {prompt}\n")),
        Message::assistant(answer),
        Message::user("Could you say more about {this}?"),
        Message::assistant(format!("{answer} More.\n\n")),
    ]
}

/// One case: a dataset name, a language, the row's info and a conversation.
struct Case {
    dataset: &'static str,
    lang: &'static str,
    info: Value,
    messages: Vec<Message>,
}

fn case(dataset: &'static str, lang: &'static str, info: Value) -> Case {
    let messages = if lang == "zh" {
        conversation(
            "请根据案情回答：盗窃罪的量刑标准是什么？",
            "依照《刑法》规定……",
        )
    } else {
        conversation("Write about the topic below.", "Here is the text.")
    };
    Case {
        dataset,
        lang,
        info,
        messages,
    }
}

/// Realistic rows of each family, then the edge cases; `true` where upstream's code raises.
fn cases() -> Vec<(Case, bool)> {
    let criteria = json!([
        {"name": "Clarity", "criteria_description": "Is it \"clear\"? {x}", "weight": 2},
        {"criteria_description": 7},
        {"name": null, "criteria_description": "Structure."},
    ]);
    let checklist = json!([
        {"checklist_id": 1, "checklist_content": "Covers the main point."},
        {"checklist_id": 2},
        {"checklist_content": ["a", 1.5, true]},
    ]);
    vec![
        (
            case(
                "LexEval-QA",
                "zh",
                json!({"golden_answer": "应处三年以下有期徒刑。\n"}),
            ),
            false,
        ),
        (
            case(
                "JuDGE",
                "zh",
                json!({"golden_answer": "本院认为，被告人……", "id": 7}),
            ),
            false,
        ),
        (
            case(
                "WritingBench-Politics&Law",
                "en",
                json!({"criteria": criteria}),
            ),
            false,
        ),
        (
            case(
                "HelloBench-Academic&Knowledge-QA",
                "en",
                json!({"checklist": checklist}),
            ),
            false,
        ),
        (
            case(
                "IdeaBench",
                "en",
                json!({"paperId": "p1", "title": "Gut {flora}", "abstract": "We show..."}),
            ),
            false,
        ),
        (
            case(
                "JRE-L",
                "en",
                json!({"sc-title": "S", "pr-title": "Phones leak", "pr-abstract": "A study."}),
            ),
            false,
        ),
        (
            case(
                "LimitGen-Syn",
                "en",
                json!({"ground_truth": "missing baseline", "category": "baseline"}),
            ),
            false,
        ),
        (
            case(
                "WritingPrompts",
                "en",
                json!({"golden_answer": "Once upon a time.\n\nThe end."}),
            ),
            false,
        ),
        (
            case(
                "NFCats",
                "en",
                json!({"category": "DEBATE", "golden_answer": "x"}),
            ),
            false,
        ),
        // Edge cases: other languages, empty and missing fields, values that are not strings.
        (
            case("LexEval-Judge", "fr", json!({"golden_answer": null})),
            false,
        ),
        (
            case(
                "LexEval-QA",
                "",
                json!({"golden_answer": ["a", {"b": 1}], "info": {}}),
            ),
            false,
        ),
        (
            case("WritingBench-Politics & Law", "en", json!({"criteria": []})),
            false,
        ),
        (
            case("WritingBench-Education", "zh", json!({"criteria": {}})),
            false,
        ),
        (case("WritingBench-Creative&Design", "en", json!({})), false),
        (
            case("HelloBench-Creative&Design", "en", json!({"checklist": ""})),
            false,
        ),
        (case("IdeaBench", "en", json!({})), false),
        (
            case("JRE-L", "en", json!({"pr-title": 3, "pr-abstract": {}})),
            false,
        ),
        (case("LimitGen-Syn", "en", json!({})), false),
        (
            case(
                "LimitGen-Syn",
                "en",
                json!({"category": "", "ground_truth": 0}),
            ),
            false,
        ),
        (case("LimitGen-Syn", "en", json!({"category": 4.0})), false),
        (
            case("WritingPrompts", "en", json!({"golden_answer": false})),
            false,
        ),
        // Names the factory maps by substring, in its order.
        (
            case("my-legal-judgment-set", "en", json!({"golden_answer": "g"})),
            false,
        ),
        (case("Journalist-Reports", "en", json!({})), false),
        (
            case("court-judgment", "zh", json!({"golden_answer": "g"})),
            false,
        ),
        (
            case("limit-study", "en", json!({"category": "review"})),
            false,
        ),
        (case("writing_prompts-v2", "en", json!({})), false),
        (case("nf-cats", "en", json!({})), false),
        // Rows on which upstream's code raises, and get_feedback ends the conversation.
        (case("Mystery", "en", json!({})), true),
        (
            case(
                "WritingBench-Politics&Law",
                "en",
                json!({"criteria": "be clear"}),
            ),
            true,
        ),
        (
            case("WritingBench-Politics&Law", "en", json!({"criteria": [1]})),
            true,
        ),
        (
            case(
                "HelloBench-Creative&Design",
                "en",
                json!({"checklist": {"a": 1}}),
            ),
            true,
        ),
        (
            case("LimitGen-Syn", "en", json!({"category": ["data"]})),
            true,
        ),
    ]
}

#[test]
fn simulator_requests_are_what_upstreams_feedback_agent_sends() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let cases = cases();
    let input: Vec<Value> = cases
        .iter()
        .map(|(case, _)| {
            json!({"dataset_name": case.dataset, "lang": case.lang, "info": case.info,
                   "messages": serde_json::to_value(&case.messages).unwrap()})
        })
        .collect();
    let theirs: Vec<Value> = side.run(SIMULATOR_PY, &Value::Array(input).to_string());
    assert_eq!(theirs.len(), cases.len());
    for ((case, raises), theirs) in cases.iter().zip(theirs) {
        let what = format!("{} ({}) {}", case.dataset, case.lang, case.info);
        let info: Map<String, Value> = serde_json::from_value(case.info.clone()).unwrap();
        let ours = upstream.simulator_request(case.dataset, &case.messages, case.lang, &info);
        if *raises {
            assert!(
                matches!(ours, Err(UpstreamError::Raises { .. })),
                "{what}: {ours:?}"
            );
            assert_eq!(theirs["sent"], Value::Null, "{what}");
            assert_eq!(theirs["returned"][0], true, "{what}");
            assert_eq!(theirs["returned"][2], "none", "{what}");
            continue;
        }
        let ours = ours.unwrap_or_else(|e| panic!("{what}: {e}"));
        let sent = &theirs["sent"];
        let messages = sent["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 2, "{what}");
        for (mine, theirs) in ours.messages.iter().zip(messages) {
            let text = theirs["content"].as_str().unwrap();
            assert_eq!(mine.content, text, "{what}: {:?}", mine.role);
        }
        assert_eq!(
            serde_json::to_value(&ours.messages).unwrap(),
            sent["messages"],
            "{what}"
        );
        assert_eq!(
            ours.schema.response_format(),
            sent["response_format"],
            "{what}"
        );
        // The sampling SimulateFeedback sends (mb-llm's test checks it is these numbers).
        assert_eq!(sent["temperature"], 0.7, "{what}");
        assert_eq!(sent["max_tokens"], 1000, "{what}");
        assert_eq!(sent["top_p"], 0.1, "{what}");
        assert_eq!(
            theirs["returned"],
            json!([false, "More?", "copy"]),
            "{what}"
        );
    }
}
