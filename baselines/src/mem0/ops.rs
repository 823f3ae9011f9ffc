//! Mem0's two memory-writing steps: extracting facts from a dialog, and deciding how they
//! change the stored memories.

use std::collections::HashSet;

use mb_core::Lang;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use mb_llm::ops::handling::{read_json, JsonReading};
use mb_llm::ops::shape::{list_field, strings};
use mb_llm::ops::text::{is_first_person, jaccard, sentences, term_set};
use mb_llm::ops::Operation;
use mb_llm::{Message, Role, Sampling};
use mb_upstream::{Upstream, UpstreamError};

/// Mem0's own LLM client (vendored `mem0/llms/vllm.py`) sends upstream's temperature and
/// top-p with its own output cap, 2000 tokens, and no `response_format`: that client drops the
/// `json_object` Mem0 asks for.
const MEM0_SAMPLING: Sampling = Sampling::new(0.1, 0.1, 2000);

/// Extracts short, self-contained facts from a dialog (`{"facts": [...]}`), taken from the
/// user's and the assistant's messages alike, as upstream's prompt asks (a LoCoMo corpus turn of
/// the second speaker arrives as an assistant message).
///
/// Offline: the first-person statements (sentences with I/my/me/we…, or 我/我的 in Chinese) of
/// user and assistant messages that are not questions. Fallback on unusable output: no facts,
/// as upstream.
#[derive(Debug, Clone)]
pub struct ExtractFacts {
    dialog: Vec<Message>,
    today: String,
}

impl ExtractFacts {
    /// Facts of `dialog`; `today` (e.g. `2023-05-08`, fixed for a run) lets the model resolve
    /// relative dates.
    pub fn new(dialog: Vec<Message>, today: impl Into<String>) -> ExtractFacts {
        ExtractFacts {
            dialog,
            today: today.into(),
        }
    }
}

impl ExtractFacts {
    /// The user message: the dialog as Mem0's `parse_messages` writes it, one `role: text`
    /// line per message, after `Input:`.
    fn input(&self) -> Message {
        let transcript: String = self
            .dialog
            .iter()
            .map(|m| format!("{}: {}\n", m.role.as_str(), m.content))
            .collect();
        Message::user(format!("Input:\n{transcript}"))
    }
}

impl Operation for ExtractFacts {
    type Output = Vec<String>;

    fn name(&self) -> &'static str {
        "extract_facts"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let system = match lang {
            Lang::En => format!(
                "You keep a notebook about a user so that an assistant can personalise later \
                 conversations. Read the conversation and write down what it reveals: \
                 preferences and dislikes, personal details and relationships, plans and goals, \
                 activities and experiences, health, work and studies, opinions. Take facts from \
                 the user's messages and from the assistant's messages alike; leave out system \
                 messages. Each fact is one short sentence that makes sense on its own; resolve \
                 relative dates using today's date, {today}. Ignore small talk. Write the facts in \
                 the language of the conversation.\n\
                 Reply with JSON only: {{\"facts\": [\"...\", \"...\"]}}, or {{\"facts\": []}} \
                 when there is nothing worth keeping.",
                today = self.today
            ),
            Lang::Zh => format!(
                "你负责为用户记录一本备忘录，帮助助手在以后的对话中提供个性化服务。阅读对话，记下其中\
                 透露的信息：喜好与厌恶、个人情况与人际关系、计划与目标、活动与经历、健康、工作与学习、\
                 观点。用户的消息和助手的消息都要提取事实，系统消息除外。每条事实是一句独立成立的短句；\
                 相对日期请按今天（{today}）换算。忽略寒暄。用对话所用的语言书写。\n只回复 JSON：\
                 {{\"facts\": [\"...\", \"...\"]}}；没有值得记录的内容时回复 {{\"facts\": []}}。",
                today = self.today
            ),
        };
        vec![Message::system(system), self.input()]
    }

    /// Upstream's one (English) fact-extraction prompt, whatever the dialog's language.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(
            upstream
                .mem0_fact_extraction(&self.today)
                .map(|system| vec![Message::system(system), self.input()]),
        )
    }

    fn sampling(&self) -> Sampling {
        MEM0_SAMPLING
    }

    fn parse(&self, text: &str) -> Option<Vec<String>> {
        strings(&list_field(text, "facts")?)
    }

    /// Mem0's reading: one surrounding code fence removed, then strict JSON with a `facts` list.
    fn parse_as_upstream(&self, text: &str) -> Option<Vec<String>> {
        strings(read_json(text, JsonReading::Fenced)?.get("facts")?)
    }

    fn fallback(&self) -> Vec<String> {
        Vec::new()
    }

    fn offline(&self, lang: Lang) -> Vec<String> {
        let mut seen = HashSet::new();
        self.dialog
            .iter()
            .filter(|m| m.role != Role::System)
            .flat_map(|m| sentences(&m.content))
            .filter(|s| !s.ends_with('?') && !s.ends_with('？'))
            .filter(|s| is_first_person(s, lang))
            .filter(|s| seen.insert(s.clone()))
            .collect()
    }
}

/// A memory already stored, as shown to the update step (ids are short temporary ones).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredMemory {
    /// Temporary id, e.g. `"0"`.
    pub id: String,
    /// The memory's text.
    pub text: String,
}

pub use crate::history::MemoryEventKind;

/// One decision of the update step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryEvent {
    /// The stored memory's temporary id (for ADD, a new id the caller replaces).
    pub id: String,
    /// The memory's text after the event.
    pub text: String,
    /// The decision.
    pub event: MemoryEventKind,
    /// The text before an UPDATE.
    #[serde(default)]
    pub old_memory: Option<String>,
}

/// Decides, for new facts, which memories to add, update, delete or keep
/// (`{"memory": [{"id", "text", "event", "old_memory"}]}`).
///
/// Offline: a fact nearly equal to a stored memory (term Jaccard ≥ 0.7) changes nothing, one
/// that overlaps it (≥ 0.3) updates it, any other is added; nothing is deleted. Fallback on
/// unusable output: no events, as upstream.
#[derive(Debug, Clone)]
pub struct DecideMemoryUpdates {
    existing: Vec<StoredMemory>,
    facts: Vec<String>,
}

impl DecideMemoryUpdates {
    /// Decisions for `facts` against the `existing` memories most similar to them.
    pub fn new(existing: Vec<StoredMemory>, facts: Vec<String>) -> DecideMemoryUpdates {
        DecideMemoryUpdates { existing, facts }
    }
}

impl Operation for DecideMemoryUpdates {
    type Output = Vec<MemoryEvent>;

    fn name(&self) -> &'static str {
        "decide_memory_updates"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let existing = if self.existing.is_empty() {
            match lang {
                Lang::En => "No memories are stored yet.".to_string(),
                Lang::Zh => "目前还没有任何记忆。".to_string(),
            }
        } else {
            serde_json::to_string_pretty(&self.existing).unwrap_or_default()
        };
        let facts = serde_json::to_string(&self.facts).unwrap_or_default();
        let prompt = match lang {
            Lang::En => format!(
                "You maintain a user's long-term memory. Compare the new facts with the stored \
                 memories and decide, for every stored memory and every new fact, one event:\n\
                 - ADD: the fact is new information; give it a new id.\n\
                 - UPDATE: the fact refines or corrects a stored memory; keep that memory's id, \
                 give the merged text and the previous text as old_memory.\n\
                 - DELETE: the fact contradicts a stored memory that should be forgotten.\n\
                 - NONE: the stored memory stays as it is (also when a fact repeats it).\n\n\
                 Stored memories:\n{existing}\n\nNew facts:\n{facts}\n\n\
                 Reply with JSON only: {{\"memory\": [{{\"id\": \"0\", \"text\": \"...\", \
                 \"event\": \"ADD|UPDATE|DELETE|NONE\", \"old_memory\": \"...\"}}]}}"
            ),
            Lang::Zh => format!(
                "你负责维护用户的长期记忆。把新事实与已存记忆比较，为每条已存记忆和每条新事实决定一个\
                 操作：\n- ADD：新信息，给出新的 id。\n- UPDATE：补充或更正某条已存记忆；沿用其 id，\
                 给出合并后的文本，并在 old_memory 中给出原文本。\n- DELETE：与某条应被遗忘的已存记忆\
                 矛盾。\n- NONE：已存记忆保持不变（新事实只是重复时也是如此）。\n\n已存记忆：\n\
                 {existing}\n\n新事实：\n{facts}\n\n只回复 JSON：{{\"memory\": [{{\"id\": \"0\", \
                 \"text\": \"...\", \"event\": \"ADD|UPDATE|DELETE|NONE\", \"old_memory\": \"...\"}}]}}"
            ),
        };
        vec![Message::user(prompt)]
    }

    /// Upstream's one (English) update prompt, whatever the facts' language.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let stored: Vec<(&str, &str)> = self
            .existing
            .iter()
            .map(|m| (m.id.as_str(), m.text.as_str()))
            .collect();
        let facts: Vec<&str> = self.facts.iter().map(String::as_str).collect();
        Some(
            upstream
                .mem0_update(&stored, &facts)
                .map(|prompt| vec![Message::user(prompt)]),
        )
    }

    fn sampling(&self) -> Sampling {
        MEM0_SAMPLING
    }

    fn parse(&self, text: &str) -> Option<Vec<MemoryEvent>> {
        events(list_field(text, "memory")?)
    }

    /// Mem0's reading: one surrounding code fence removed, then strict JSON with a `memory`
    /// list.
    fn parse_as_upstream(&self, text: &str) -> Option<Vec<MemoryEvent>> {
        events(read_json(text, JsonReading::Fenced)?.get("memory")?.clone())
    }

    fn fallback(&self) -> Vec<MemoryEvent> {
        Vec::new()
    }

    fn offline(&self, lang: Lang) -> Vec<MemoryEvent> {
        let stored: Vec<_> = self
            .existing
            .iter()
            .map(|m| term_set(&m.text, lang))
            .collect();
        let mut next_id = self.existing.len();
        let mut events = Vec::new();
        for fact in &self.facts {
            let terms = term_set(fact, lang);
            let closest = stored
                .iter()
                .enumerate()
                .map(|(i, s)| (jaccard(&terms, s), i))
                .fold(None::<(f64, usize)>, |best, (score, i)| match best {
                    Some((top, _)) if top >= score => best,
                    _ => Some((score, i)),
                });
            match closest {
                Some((score, _)) if score >= 0.7 => {}
                Some((score, i)) if score >= 0.3 => events.push(MemoryEvent {
                    id: self.existing[i].id.clone(),
                    text: fact.clone(),
                    event: MemoryEventKind::Update,
                    old_memory: Some(self.existing[i].text.clone()),
                }),
                _ => {
                    events.push(MemoryEvent {
                        id: next_id.to_string(),
                        text: fact.clone(),
                        event: MemoryEventKind::Add,
                        old_memory: None,
                    });
                    next_id += 1;
                }
            }
        }
        events
    }
}

/// The events of an update step's `memory` list; entries that do not read as events are
/// skipped, as upstream skips them one by one.
fn events(list: Value) -> Option<Vec<MemoryEvent>> {
    let events: Vec<Value> = serde_json::from_value(list).ok()?;
    Some(
        events
            .into_iter()
            .filter_map(|mut e| {
                if let Some(id) = e.get("id").and_then(Value::as_u64) {
                    e["id"] = Value::String(id.to_string());
                }
                serde_json::from_value::<MemoryEvent>(e).ok()
            })
            .filter(|e| !e.text.trim().is_empty())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_facts_are_first_person_statements_of_user_and_assistant() {
        let op = ExtractFacts::new(
            vec![
                Message::system("I am a system prompt."),
                Message::user("Hi! I adopted a border collie last week. Do you like dogs?"),
                Message::assistant("I love dogs. The weather is nice."),
                Message::user("My sister is getting married in June. The weather is nice."),
            ],
            "2024-05-01",
        );
        assert_eq!(
            op.offline(Lang::En),
            vec![
                "I adopted a border collie last week.".to_string(),
                "I love dogs.".to_string(),
                "My sister is getting married in June.".to_string(),
            ]
        );
        // A LoCoMo corpus turn of the second speaker arrives as the assistant's message alone.
        let turn = ExtractFacts::new(
            vec![Message::assistant(
                "Speaker Melaniesays : I went camping with my kids last weekend.",
            )],
            "2024-05-01",
        );
        assert_eq!(
            turn.offline(Lang::En),
            vec!["Speaker Melaniesays : I went camping with my kids last weekend.".to_string()]
        );
        let zh = ExtractFacts::new(
            vec![Message::user("我养了一只猫。你呢？天气很好。")],
            "2024-05-01",
        );
        assert_eq!(zh.offline(Lang::Zh), vec!["我养了一只猫。".to_string()]);
    }

    #[test]
    fn prompt_asks_for_facts_from_user_and_assistant_messages() {
        let op = ExtractFacts::new(vec![Message::assistant("I moved to Oslo.")], "2024-05-01");
        let en = op.messages(Lang::En)[0].content.clone();
        assert!(en.contains("from the user's messages and from the assistant's messages"));
        assert!(!en.contains("only by the assistant"));
        assert!(en.contains("2024-05-01"));
        let zh = op.messages(Lang::Zh)[0].content.clone();
        assert!(zh.contains("用户的消息和助手的消息都要提取事实"));
        assert!(!zh.contains("只有助手说过"));
        assert_eq!(
            op.messages(Lang::En)[1].content,
            "Input:\nassistant: I moved to Oslo.\n"
        );
    }

    #[test]
    fn parses_facts_in_several_shapes() {
        let op = ExtractFacts::new(vec![], "2024-05-01");
        assert_eq!(
            op.parse("```json\n{\"facts\": [\"Likes tea\", \" \"]}\n```"),
            Some(vec!["Likes tea".to_string()])
        );
        assert_eq!(
            op.parse("[\"Has a cat\"]"),
            Some(vec!["Has a cat".to_string()])
        );
        assert_eq!(op.parse("{\"facts\": [1, 2]}"), None);
        assert_eq!(op.parse("I could not find any facts."), None);
    }

    #[test]
    fn offline_updates_add_update_and_ignore() {
        let op = DecideMemoryUpdates::new(
            vec![
                StoredMemory {
                    id: "0".into(),
                    text: "Lives in Lisbon".into(),
                },
                StoredMemory {
                    id: "1".into(),
                    text: "Has a dog named Pixel".into(),
                },
            ],
            vec![
                "Lives in Lisbon".into(),
                "Has a dog named Pixel who likes socks".into(),
                "Works as a data engineer".into(),
            ],
        );
        let events = op.offline(Lang::En);
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].event, MemoryEventKind::Update);
        assert_eq!(events[0].id, "1");
        assert_eq!(
            events[0].old_memory.as_deref(),
            Some("Has a dog named Pixel")
        );
        assert_eq!(events[1].event, MemoryEventKind::Add);
        assert_eq!(events[1].id, "2");
    }

    #[test]
    fn parses_update_events_and_skips_bad_entries() {
        let op = DecideMemoryUpdates::new(vec![], vec![]);
        let text = r#"{"memory": [
            {"id": 0, "text": "Likes green tea", "event": "UPDATE", "old_memory": "Likes tea"},
            {"id": "1", "text": "Has a cat", "event": "ADD"},
            {"id": "2", "text": "", "event": "NONE"},
            {"id": "3", "text": "x", "event": "MAYBE"}
        ]}"#;
        let events = op.parse(text).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].id, "0");
        assert_eq!(events[0].event, MemoryEventKind::Update);
        assert_eq!(events[1].event, MemoryEventKind::Add);
        assert_eq!(op.parse("no json"), None);
    }
}
