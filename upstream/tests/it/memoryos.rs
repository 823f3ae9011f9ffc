//! MemoryOS's answer prompt against upstream's own `Memoryos.get_user_prompt`, run by Python
//! (the differential venv, heavy imports shimmed) on a memory faked to hold the same contents.

use crate::python::UpstreamPython;
use mb_core::Lang;
use mb_upstream::{MemoryOsAnswer, MemoryOsExchange, MemoryOsPage};
use serde_json::json;

/// Builds a `Memoryos` without its stores, its retriever, queue, page store and profile
/// answering with the case's contents, and prints `get_user_prompt`'s text as JSON.
const GET_USER_PROMPT_PY: &str = r#"
import sys, json, types
sys.path.insert(0, root + "/baselines/MemoryOS")
from memoryos_chromadb.memoryos import Memoryos
case = json.loads(sys.stdin.read())
m = object.__new__(Memoryos)
m.user_id = "user"
m.retriever = types.SimpleNamespace(retrieve_context=lambda user_query, user_id: {
    "retrieved_pages": [{"page_id": f"p{i}", "session_id": "s", "user_input": p["user"], "agent_response": p["assistant"]} for i, p in enumerate(case["pages"])],
    "retrieved_user_knowledge": [{"text": t} for t in case["user_knowledge"]],
    "retrieved_assistant_knowledge": [{"text": t} for t in case["assistant_knowledge"]],
})
m.short_term_memory = types.SimpleNamespace(get_all=lambda: [{"user_input": h["user"], "agent_response": h["assistant"], "timestamp": h["timestamp"]} for h in case["history"]])
metas = {f"p{i}": p["meta"] for i, p in enumerate(case["pages"])}
m.storage_provider = types.SimpleNamespace(get_page_full_info=lambda page_id, session_id: {"meta_info": metas[page_id]})
profile = case["profile"]
if profile is not None:
    try:
        profile = json.loads(profile)
    except json.JSONDecodeError:
        profile = {"raw_text_profile": profile}
m.user_long_term_memory = types.SimpleNamespace(get_user_profile=lambda user_id: profile)
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    text = m.get_user_prompt(query=case["query"], lang=case["lang"])
print(json.dumps(text))
"#;

/// One answer case: the language, the stored profile, user knowledge, assistant knowledge.
type Case<'a> = (Lang, Option<&'a str>, Vec<String>, Vec<String>);

#[test]
fn memoryos_answers_as_upstreams_own_get_user_prompt() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let history = vec![
        MemoryOsExchange {
            user: "Hi! \"Quotes\" and\nlines".into(),
            assistant: "Hello, {friend}".into(),
            timestamp: "2024-01-01 10:00:00".into(),
        },
        MemoryOsExchange {
            user: "我养了一只猫".into(),
            assistant: "真好".into(),
            timestamp: "2024-01-02 11:00:00".into(),
        },
    ];
    let pages = vec![
        MemoryOsPage {
            user: "Lisbon?".into(),
            assistant: "A blue tile.".into(),
            meta: "chain: trip".into(),
        },
        MemoryOsPage {
            user: "u2".into(),
            assistant: "a2".into(),
            meta: String::new(),
        },
    ];
    let cases: Vec<Case> = vec![
        (
            Lang::En,
            Some("Likes tea\nand cats"),
            vec!["Has a cat".into()],
            vec![],
        ),
        (
            Lang::Zh,
            Some("{\"z\": 1, \"a\": [\"é\", null]}"),
            vec![],
            vec!["知识".into()],
        ),
        (Lang::En, None, vec![], vec!["k1".into(), "k2".into()]),
        (Lang::Zh, Some("{}"), vec!["k".into()], vec![]),
    ];
    for (lang, profile, user_knowledge, assistant_knowledge) in cases {
        let ours = upstream
            .memoryos_answer(&MemoryOsAnswer {
                lang,
                history: &history,
                pages: &pages,
                profile,
                user_knowledge: &user_knowledge,
                assistant_knowledge: &assistant_knowledge,
                query: "Where did she go?",
            })
            .unwrap();
        let case = json!({
            "lang": if lang == Lang::En { "en" } else { "zh" },
            "query": "Where did she go?",
            "history": history.iter().map(|h| json!({"user": h.user, "assistant": h.assistant, "timestamp": h.timestamp})).collect::<Vec<_>>(),
            "pages": pages.iter().map(|p| json!({"user": p.user, "assistant": p.assistant, "meta": p.meta})).collect::<Vec<_>>(),
            "profile": profile,
            "user_knowledge": user_knowledge,
            "assistant_knowledge": assistant_knowledge,
        });
        let theirs: String = side.run(GET_USER_PROMPT_PY, &case.to_string());
        assert_eq!(ours, theirs, "{case}");
    }
}

/// Runs upstream's `check_conversation_continuity` and `generate_page_meta_info` with a client
/// that records what it is sent, and prints the recorded messages and temperatures as JSON.
const OPERATIONS_PY: &str = r#"
import sys, json, io, contextlib
sys.path.insert(0, root + "/baselines/MemoryOS")
from memoryos_chromadb import utils
case = json.loads(sys.stdin.read())
sent = []
class Client:
    def chat_completion(self, model, messages, temperature=0.1, max_tokens=2048):
        sent.append({"messages": messages, "temperature": temperature, "max_tokens": max_tokens})
        return "true"
previous = {"user_input": case["previous"][0], "agent_response": case["previous"][1]}
current = {"user_input": case["current"][0], "agent_response": case["current"][1]}
with contextlib.redirect_stdout(io.StringIO()):
    # The profile analysis as Memoryos and LongTermMemory call it: the pages joined, the stored
    # profile loaded (utils' reading of a reply) and dumped.
    pages = [{"user_input": u, "agent_response": a} for u, a in case["pages"]]
    conversation = "\n".join(f"User: {p.get('user_input', '')}\nAssistant: {p.get('agent_response', '')}" for p in pages)
    stored = case["stored"]
    if stored is not None:
        try:
            stored = json.loads(stored)
        except json.JSONDecodeError:
            stored = {"raw_text_profile": stored}
    utils.gpt_user_profile_analysis(conversation, Client(), existing_user_profile=json.dumps(stored or {}))
    utils.gpt_knowledge_extraction(conversation, Client())
    utils.gpt_generate_multi_summary(conversation, Client())
    utils.check_conversation_continuity(previous, current, Client())
    utils.generate_page_meta_info(case["meta"], current, Client())
    utils.generate_page_meta_info(None, current, Client())
print(json.dumps(sent))
"#;

#[test]
fn memoryos_chain_operations_are_what_upstreams_helpers_send() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let previous = ("Did you go to {Lisbon}?", "Yes, \"twice\".");
    let current = ("What did you bring back?", "A blue tile.\nAnd a postcard.");
    let meta = "Nadia's trip to Lisbon.";
    let pages = [("I moved to Oslo.", "Nice!"), ("Café? ☕", "Sure.")];
    let stored = "Likes \"tea\" — and cafés";
    let case = json!({"previous": previous, "current": current, "meta": meta, "pages": pages, "stored": stored});
    let sent: serde_json::Value = side.run(OPERATIONS_PY, &case.to_string());
    let pair = |request: &serde_json::Value| {
        vec![
            mb_core::Message::system(request["messages"][0]["content"].as_str().unwrap()),
            mb_core::Message::user(request["messages"][1]["content"].as_str().unwrap()),
        ]
    };
    assert_eq!(
        upstream
            .memoryos_profile_analysis(&pages, Some(stored))
            .unwrap(),
        pair(&sent[0])
    );
    assert_eq!(
        upstream.memoryos_knowledge_extraction(&pages).unwrap(),
        pair(&sent[1])
    );
    let conversation = pages
        .iter()
        .map(|(user, assistant)| format!("User: {user}\nAssistant: {assistant}"))
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        upstream.memoryos_topics(&conversation).unwrap(),
        pair(&sent[2])
    );
    let sent = &sent.as_array().unwrap()[3..];
    assert_eq!(
        upstream.memoryos_continuity(previous, current).unwrap(),
        pair(&sent[0])
    );
    assert_eq!(
        upstream
            .memoryos_meta_summary(Some(meta), current.0, current.1)
            .unwrap(),
        pair(&sent[1])
    );
    assert_eq!(
        upstream
            .memoryos_meta_summary(None, current.0, current.1)
            .unwrap(),
        pair(&sent[2])
    );
    assert_eq!(
        [&sent[0]["temperature"], &sent[1]["temperature"]],
        [&json!(0.0), &json!(0.3)]
    );
}

/// Upstream's `gpt_knowledge_extraction` reading replies: prints what it returns for each.
const KNOWLEDGE_READING_PY: &str = r#"
import sys, json, io, contextlib
sys.path.insert(0, root + "/baselines/MemoryOS")
from memoryos_chromadb import utils
class Client:
    def __init__(self, reply):
        self.reply = reply
    def chat_completion(self, model, messages, temperature=0.1, max_tokens=2048):
        return self.reply
out = []
with contextlib.redirect_stdout(io.StringIO()):
    for reply in json.loads(sys.stdin.read()):
        result = utils.gpt_knowledge_extraction("x", Client(reply))
        out.append([result["private"], result["assistant_knowledge"]])
print(json.dumps(out))
"#;

#[test]
fn knowledge_replies_read_as_upstream_reads_them() {
    let Some(side) = UpstreamPython::find() else {
        return;
    };
    let upstream = &side.upstream;
    let (user, assistant) = upstream.memoryos_knowledge_markers().unwrap();
    let replies = vec![
        format!("{user}\n- Has a cat\n{assistant}\n- Cats purr"),
        format!("{assistant} first {user} then"),
        format!("{user} only"),
        format!("just {assistant}"),
        "nothing marked".to_string(),
        format!("{user}{assistant}"),
        format!("{user}\n  \n{assistant}   "),
    ];
    let theirs: Vec<(String, String)> = side.run(KNOWLEDGE_READING_PY, &json!(replies).to_string());
    let ours: Vec<(String, String)> = replies
        .iter()
        .map(|reply| mb_upstream::read_marked_knowledge(reply, &user, &assistant))
        .collect();
    assert_eq!(ours, theirs);
}
