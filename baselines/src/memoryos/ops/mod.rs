//! MemoryOS's page chaining, summaries, user profile and knowledge extraction.

use mb_core::Lang;
use serde::{Deserialize, Serialize};

use crate::prompt::language_line;
use mb_llm::ops::handling::{read_json, JsonReading};
use mb_llm::ops::shape::{list_field, strings};
use mb_llm::ops::text::{jaccard, lead, sentences, term_set, top_terms};
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};

/// One user/assistant exchange (a MemoryOS page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exchange {
    /// What the user said.
    pub user: String,
    /// What the assistant answered.
    pub assistant: String,
}

impl Exchange {
    /// `User: …\nAssistant: …`, as MemoryOS renders pages.
    pub fn render(&self) -> String {
        format!("User: {}\nAssistant: {}", self.user, self.assistant)
    }
}

/// Whether an exchange continues the topic of the previous one (the model answers
/// `true`/`false`; anything else counts as `false`, as upstream).
///
/// Offline: true when the two exchanges share at least 15 % of their content terms.
#[derive(Debug, Clone)]
pub struct IsContinuous {
    previous: Exchange,
    current: Exchange,
}

impl IsContinuous {
    /// Continuity of `current` after `previous`.
    pub fn new(previous: Exchange, current: Exchange) -> IsContinuous {
        IsContinuous { previous, current }
    }
}

impl Operation for IsContinuous {
    type Output = bool;

    fn name(&self) -> &'static str {
        "is_continuous"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![Message::user(format!(
            "Do these two consecutive exchanges belong to one continuing conversation thread \
             (the second follows up on the first's topic), rather than starting something new?\n\n\
             First:\n{}\n\nSecond:\n{}\n\nAnswer with the single word true or false.",
            self.previous.render(),
            self.current.render()
        ))]
    }

    fn sampling(&self) -> Sampling {
        let mut sampling = Sampling::default();
        sampling.temperature = 0.0;
        sampling
    }

    fn parse(&self, text: &str) -> Option<bool> {
        Some(
            text.trim()
                .trim_end_matches('.')
                .eq_ignore_ascii_case("true"),
        )
    }

    /// MemoryOS's reading: the whole reply, lower-cased, is `true` (so `True.` is false).
    fn parse_as_upstream(&self, text: &str) -> Option<bool> {
        Some(text.trim().to_lowercase() == "true")
    }

    fn fallback(&self) -> bool {
        false
    }

    fn offline(&self, lang: Lang) -> bool {
        let a = term_set(&self.previous.render(), lang);
        let b = term_set(&self.current.render(), lang);
        jaccard(&a, &b) >= 0.15
    }
}

/// A running one-or-two-sentence summary of a conversation chain, updated with a new exchange
/// (or started from it).
///
/// Offline: the previous summary's first sentence followed by the exchange's first user
/// sentence. Fallback on an empty reply: the previous summary.
#[derive(Debug, Clone)]
pub struct MetaSummary {
    previous: Option<String>,
    exchange: Exchange,
}

impl MetaSummary {
    /// The chain summary after `exchange`, given the summary so far (`None` at the start).
    pub fn new(previous: Option<String>, exchange: Exchange) -> MetaSummary {
        MetaSummary { previous, exchange }
    }
}

impl Operation for MetaSummary {
    type Output = String;

    fn name(&self) -> &'static str {
        "meta_summary"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let so_far = match &self.previous {
            Some(summary) => format!("Summary so far:\n{summary}\n\n"),
            None => "This exchange begins the conversation.\n\n".to_string(),
        };
        vec![Message::user(format!(
            "{so_far}New exchange:\n{}\n\nWrite an updated summary of the whole conversation \
             thread in one or two sentences: who is involved, what is being discussed, and \
             what has been established. {} Reply with the summary only.",
            self.exchange.render(),
            language_line(lang)
        ))]
    }

    fn sampling(&self) -> Sampling {
        let mut sampling = Sampling::default();
        sampling.temperature = 0.3;
        sampling
    }

    fn parse(&self, text: &str) -> Option<String> {
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    fn fallback(&self) -> String {
        self.previous.clone().unwrap_or_default()
    }

    fn offline(&self, _lang: Lang) -> String {
        let start = self.previous.as_deref().map(|p| lead(p, 1));
        let new = lead(&self.exchange.user, 1);
        match start {
            Some(start) if !start.is_empty() && start != new => {
                // An unterminated first sentence stays a line of its own, so the next summary's
                // first sentence is still this one: a chain's summary stays two sentences long.
                let ended = start.ends_with(['.', '!', '?', '。', '！', '？']);
                format!("{start}{}{new}", if ended { " " } else { "\n" })
            }
            _ => new,
        }
    }
}

/// One topic of a conversation excerpt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    /// Short title.
    pub theme: String,
    /// Keywords.
    pub keywords: Vec<String>,
    /// What was said about it.
    pub content: String,
}

/// The topics of a conversation excerpt (the prompt asks for at most two; every one given is
/// kept, as upstream keeps them), each with keywords and a summary.
///
/// Offline: one topic named after the most frequent content term, with the five most frequent
/// as keywords and the first two sentences as content. Fallback on unusable output: no topics.
#[derive(Debug, Clone)]
pub struct MultiTopicSummary {
    text: String,
}

impl MultiTopicSummary {
    /// Topics of `text` (`User: …\nAssistant: …` lines, or a query).
    pub fn new(text: impl Into<String>) -> MultiTopicSummary {
        MultiTopicSummary { text: text.into() }
    }
}

impl Operation for MultiTopicSummary {
    type Output = Vec<Topic>;

    fn name(&self) -> &'static str {
        "multi_topic_summary"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        vec![Message::user(format!(
            "Find the main topics of the text below, at most two. For each, give a short theme, \
             a few keywords, and a summary of what was said. {}\n\nText:\n{}\n\n\
             Reply with a JSON array only: [{{\"theme\": \"...\", \"keywords\": [\"...\"], \
             \"content\": \"...\"}}]",
            language_line(lang),
            self.text
        ))]
    }

    fn parse(&self, text: &str) -> Option<Vec<Topic>> {
        topics(list_field(text, "topics")?)
    }

    /// MemoryOS's reading: `json.loads` of the whole reply (no fence removed), a list.
    fn parse_as_upstream(&self, text: &str) -> Option<Vec<Topic>> {
        topics(read_json(text, JsonReading::Plain)?)
    }

    fn fallback(&self) -> Vec<Topic> {
        Vec::new()
    }

    fn offline(&self, lang: Lang) -> Vec<Topic> {
        let keywords = top_terms(&self.text, lang, 5);
        let Some(theme) = keywords.first().cloned() else {
            return Vec::new();
        };
        vec![Topic {
            theme,
            keywords,
            content: lead(&self.text, 2),
        }]
    }
}

/// The topics of a multi-topic summary list, every one the model gave (MemoryOS keeps them
/// all); `None` when an item lacks a theme, keywords or content.
fn topics(list: serde_json::Value) -> Option<Vec<Topic>> {
    let items: Vec<serde_json::Value> = serde_json::from_value(list).ok()?;
    items
        .iter()
        .map(|t| {
            Some(Topic {
                theme: t.get("theme")?.as_str()?.trim().to_string(),
                keywords: strings(t.get("keywords")?)?,
                content: t.get("content")?.as_str()?.trim().to_string(),
            })
        })
        .collect()
}

/// The user's profile (personality, preferences, circumstances) revised with new exchanges.
///
/// Offline: the existing profile followed by the user's first-person statements not yet in it.
/// Fallback on an empty reply: the existing profile.
#[derive(Debug, Clone)]
pub struct UpdateProfile {
    existing: Option<String>,
    exchanges: Vec<Exchange>,
}

impl UpdateProfile {
    /// The profile after `exchanges`, given the current one.
    pub fn new(existing: Option<String>, exchanges: Vec<Exchange>) -> UpdateProfile {
        UpdateProfile {
            existing,
            exchanges,
        }
    }
}

/// The longest profile the offline backend keeps, in bytes (about 500 tokens: what a model
/// asked for "the complete updated profile" writes).
pub const OFFLINE_PROFILE_CHARS: usize = 2_000;

impl Operation for UpdateProfile {
    type Output = String;

    fn name(&self) -> &'static str {
        "update_profile"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let dialogue: Vec<String> = self.exchanges.iter().map(Exchange::render).collect();
        let existing = self.existing.as_deref().unwrap_or("(no profile yet)");
        vec![Message::user(format!(
            "Maintain a profile of the user from their conversations: personality and \
             communication style, interests and preferences, values, circumstances (work, \
             family, places), goals and recurring needs. Keep what still holds, revise what the \
             new conversation changes, add what it reveals; state only what the dialogue \
             supports. {}\n\nCurrent profile:\n{existing}\n\nNew conversation:\n{}\n\n\
             Reply with the complete updated profile.",
            language_line(lang),
            dialogue.join("\n\n")
        ))]
    }

    fn parse(&self, text: &str) -> Option<String> {
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    fn fallback(&self) -> String {
        self.existing.clone().unwrap_or_default()
    }

    /// The user's statements, one per line, newest last; the oldest lines give way beyond
    /// [`OFFLINE_PROFILE_CHARS`], as a model's rewrite stays within its output limit.
    fn offline(&self, lang: Lang) -> String {
        let mut lines: Vec<String> = self
            .existing
            .as_deref()
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect();
        for statement in user_statements(&self.exchanges, lang) {
            if !lines.contains(&statement) {
                lines.push(statement);
            }
        }
        let mut kept = 0;
        let mut length = 0;
        for line in lines.iter().rev() {
            // The newest line stays whatever its length.
            if kept > 0 && length + line.len() + 1 > OFFLINE_PROFILE_CHARS {
                break;
            }
            length += line.len() + 1;
            kept += 1;
        }
        lines[lines.len() - kept..].join("\n")
    }
}

/// Knowledge worth keeping from exchanges: private facts about the user, and general knowledge
/// the assistant stated.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Knowledge {
    /// Facts about the user, if any.
    pub user_private: Option<String>,
    /// Knowledge from the assistant's answers, if any.
    pub assistant: Option<String>,
}

const USER_SECTION: &str = "[USER DATA]";
const ASSISTANT_SECTION: &str = "[ASSISTANT KNOWLEDGE]";

/// Splits exchanges into private user facts and assistant knowledge (two marked sections,
/// `None` written where a section is empty).
///
/// Offline: the user's first-person statements, and the first two sentences of the assistant's
/// answers. Fallback when the sections are missing: nothing.
#[derive(Debug, Clone)]
pub struct ExtractKnowledge {
    exchanges: Vec<Exchange>,
}

impl ExtractKnowledge {
    /// Knowledge in `exchanges`.
    pub fn new(exchanges: Vec<Exchange>) -> ExtractKnowledge {
        ExtractKnowledge { exchanges }
    }
}

impl Operation for ExtractKnowledge {
    type Output = Knowledge;

    fn name(&self) -> &'static str {
        "extract_knowledge"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let dialogue: Vec<String> = self.exchanges.iter().map(Exchange::render).collect();
        vec![Message::user(format!(
            "From the conversation below, collect two kinds of knowledge. {}\n\
             {USER_SECTION}: facts about the user personally (identity, relationships, \
             possessions, events in their life, stated preferences), one per line.\n\
             {ASSISTANT_SECTION}: general, reusable knowledge the assistant provided, one per \
             line.\nWrite None under a heading with nothing to report.\n\n\
             Conversation:\n{}\n\nReply in exactly this layout:\n{USER_SECTION}\n...\n\
             {ASSISTANT_SECTION}\n...",
            language_line(lang),
            dialogue.join("\n\n")
        ))]
    }

    fn parse(&self, text: &str) -> Option<Knowledge> {
        let user_at = text.find(USER_SECTION)?;
        let assistant_at = text.find(ASSISTANT_SECTION)?;
        let section = |start: usize, end: usize| {
            let body = text.get(start..end)?.trim();
            (!body.is_empty() && !body.eq_ignore_ascii_case("none")).then(|| body.to_string())
        };
        let (user, assistant) = if user_at < assistant_at {
            (
                section(user_at + USER_SECTION.len(), assistant_at),
                section(assistant_at + ASSISTANT_SECTION.len(), text.len()),
            )
        } else {
            (
                section(user_at + USER_SECTION.len(), text.len()),
                section(assistant_at + ASSISTANT_SECTION.len(), user_at),
            )
        };
        Some(Knowledge {
            user_private: user,
            assistant,
        })
    }

    fn fallback(&self) -> Knowledge {
        Knowledge::default()
    }

    fn offline(&self, lang: Lang) -> Knowledge {
        let user = user_statements(&self.exchanges, lang).join("\n");
        let assistant: Vec<String> = self
            .exchanges
            .iter()
            .map(|e| lead(&e.assistant, 2))
            .filter(|s| !s.is_empty())
            .collect();
        let non_empty = |s: String| (!s.is_empty()).then_some(s);
        Knowledge {
            user_private: non_empty(user),
            assistant: non_empty(assistant.join("\n")),
        }
    }
}

/// The user's first-person, non-question sentences across exchanges, without repeats.
fn user_statements(exchanges: &[Exchange], lang: Lang) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    exchanges
        .iter()
        .flat_map(|e| sentences(&e.user))
        .filter(|s| !s.ends_with('?') && !s.ends_with('？'))
        .filter(|s| mb_llm::ops::text::is_first_person(s, lang))
        .filter(|s| seen.insert(s.clone()))
        .collect()
}

#[cfg(test)]
mod tests;
