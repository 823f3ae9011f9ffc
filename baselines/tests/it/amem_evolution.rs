//! A-Mem's memory evolution against upstream's own `AgenticMemorySystem.process_memory`, run
//! by Python (the differential venv, heavy imports shimmed) on a memory whose retriever
//! answers as the Chroma retriever that code was written for, and whose client records what
//! it is sent. Upstream's MemoryBench wiring never reaches this request (its retriever returns
//! indices where `find_related_memories` reads Chroma's results), so no run compares it: this
//! test does, message for message and parameter for parameter, for `evolution = true`.

use mb_baselines::amem::ops::{EvolveNote, NoteView};
use mb_core::Lang;
use mb_llm::ops::{Backend, OutputHandling};
use mb_llm::testing::ScriptedProvider;
use mb_llm::ResponseFormat;
use mb_upstream::{Upstream, Wording};
use serde_json::{json, Value};

/// Runs `process_memory` on each case (a new note and its neighbours, nearest first) and
/// prints the parameters each evolution request reached the client with.
const PROCESS_MEMORY_PY: &str = r#"
import json, io, contextlib, logging, os
from types import SimpleNamespace
sys.path.insert(0, root)
logging.disable(logging.CRITICAL)
os.environ["VLLM_BASE_URL"] = "http://127.0.0.1:9/v1"
with contextlib.redirect_stdout(io.StringIO()):
    from baselines.A_mem.agentic_memory import memory_system as ms
ms.SimpleEmbeddingRetriever = lambda model_name: None
system = ms.AgenticMemorySystem(llm_backend="vllm", llm_model="stub-model")
sent = []
reply = json.dumps({"should_evolve": False, "actions": [], "suggested_connections": [],
                    "tags_to_update": [], "new_context_neighborhood": [], "new_tags_neighborhood": []})
class Completions:
    def create(self, **params):
        sent.append(params)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=reply))])
system.llm_controller.llm.client = SimpleNamespace(chat=SimpleNamespace(completions=Completions()))
class ChromaLike:
    def __init__(self, notes):
        self.notes = notes
    def search(self, query, k):
        notes = self.notes[:k]
        return {"ids": [[str(i) for i in range(len(notes))]], "metadatas": [notes]}
out = []
for case in json.loads(sys.stdin.read()):
    sent.clear()
    neighbours = case["neighbours"]
    system.memories = {str(i): ms.MemoryNote(content=n["content"]) for i, n in enumerate(neighbours)}
    system.retriever = ChromaLike(neighbours)
    note = case["note"]
    system.process_memory(ms.MemoryNote(content=note["content"], keywords=note["keywords"],
                                        context=note["context"], tags=note["tags"],
                                        timestamp=note["timestamp"]))
    out.append(list(sent))
print(json.dumps(out))
"#;

/// A note with these fields.
fn note(
    content: &str,
    context: &str,
    keywords: &[&str],
    tags: &[&str],
    timestamp: &str,
) -> NoteView {
    let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
    NoteView {
        content: content.to_string(),
        context: context.to_string(),
        keywords: strings(keywords),
        tags: strings(tags),
        timestamp: timestamp.to_string(),
    }
}

/// The note as the Python side takes it.
fn as_json(note: &NoteView) -> Value {
    json!({
        "content": note.content,
        "context": note.context,
        "keywords": note.keywords,
        "tags": note.tags,
        "timestamp": note.timestamp,
    })
}

/// New notes and their neighbours: one neighbour; five, with quotes, backslashes, tabs,
/// newlines, braces and Chinese in every field, and empty lists.
fn cases() -> Vec<(NoteView, Vec<NoteView>)> {
    vec![
        (
            note(
                "Speaker user says: I adopted a collie.",
                "General",
                &[],
                &[],
                "3_0",
            ),
            vec![note(
                "Speaker assistant says: Congratulations!",
                "A new pet.",
                &["collie"],
                &["pets"],
                "2_1",
            )],
        ),
        (
            note(
                "Speaker Nadiasays : Lisbon {city} was\tlovely.\nTruly.",
                "Travel {news}: a trip",
                &["it's", "say \"hi\"", "back\\slash", "里斯本"],
                &["travel", "葡萄牙"],
                "6:22 pm on 28 April, 2024 Turn 3",
            ),
            vec![
                note(
                    "Speaker Ewansays : Fly safe!",
                    "General",
                    &[],
                    &[],
                    "6:22 pm on 28 April, 2024 Turn 2",
                ),
                note(
                    "Speaker Nadiasays : 我买了瓷砖。",
                    "一件礼物",
                    &["瓷砖"],
                    &["礼物", "旅行"],
                    "1_0",
                ),
                note("a\tb\nc", "x'y\"z", &["'", "\""], &["{}"], "1_1"),
                note(
                    "Speaker user says: {0} and {name}",
                    "General",
                    &["k"],
                    &[],
                    "1_2",
                ),
                note("", "", &[], &[], ""),
            ],
        ),
    ]
}

/// The request body's `response_format` as the OpenAI-compatible provider writes it.
fn wire(format: &ResponseFormat) -> Value {
    match format {
        ResponseFormat::JsonObject => json!({"type": "json_object"}),
        ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } => {
            let mut inner = json!({"name": name, "schema": schema});
            if *strict {
                inner["strict"] = json!(true);
            }
            json!({"type": "json_schema", "json_schema": inner})
        }
    }
}

#[tokio::test]
async fn evolution_requests_are_upstreams_own() {
    let Some(side) = mb_core::test_data::UpstreamPython::find() else {
        return;
    };
    let cases = cases();
    let input: Vec<Value> = cases
        .iter()
        .map(|(new, neighbours)| {
            json!({"note": as_json(new), "neighbours": neighbours.iter().map(as_json).collect::<Vec<_>>()})
        })
        .collect();
    let mut command = side.script(PROCESS_MEMORY_PY);
    let theirs = mb_core::test_data::run_json(&mut command, &Value::from(input).to_string());

    let scripted =
        ScriptedProvider::then_always(&[], "{\"should_evolve\": false, \"actions\": []}");
    let wording = Wording::upstream(Upstream::open(&side.checkout).unwrap());
    let backend =
        Backend::model(scripted.clone(), OutputHandling::Upstream, 0).with_wording(wording.clone());
    for (index, (new, neighbours)) in cases.into_iter().enumerate() {
        let op = EvolveNote::new(new, neighbours);
        let evolution = backend.run(&op, Lang::Zh).await.unwrap();
        assert!(!evolution.should_evolve);
        let sent = theirs[index].as_array().unwrap();
        assert_eq!(sent.len(), 1, "case {index}: upstream sent {sent:?}");
        let sent = &sent[0];
        let ours = scripted.requests().pop().unwrap();
        let messages = serde_json::to_value(&ours.messages).unwrap();
        assert_eq!(messages, sent["messages"], "case {index}");
        assert_eq!(
            wire(ours.response_format.as_ref().unwrap()),
            sent["response_format"],
            "case {index}"
        );
        assert_eq!(
            json!(ours.sampling.temperature),
            sent["temperature"],
            "case {index}"
        );
        assert_eq!(
            json!(ours.sampling.max_tokens),
            sent["max_tokens"],
            "case {index}"
        );
        assert_eq!(ours.sampling.top_p, None, "upstream sends no top_p");
        assert!(sent.get("top_p").is_none());
    }
    assert!(wording.paraphrased_prompts().is_empty());
}
