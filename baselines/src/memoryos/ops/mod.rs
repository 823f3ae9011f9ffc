//! MemoryOS's page chaining, summaries, user profile and knowledge extraction.

mod chain;

pub use chain::{IsContinuous, MetaSummary};

use mb_core::Lang;
use serde::{Deserialize, Serialize};

use crate::prompt::language_line;
use mb_llm::ops::handling::{read_json, JsonReading};
use mb_llm::ops::shape::{list_field, strings};
use mb_llm::ops::text::{lead, sentences, top_terms};
use mb_llm::ops::Operation;
use mb_llm::{Message, Sampling};
use mb_upstream::{read_marked_knowledge, Upstream, UpstreamError};

/// What upstream's MemoryOS client (`OpenAIClient.chat_completion`) sends unless a call sets
/// its own temperature: temperature 0.1, 2048 tokens, no top-p.
const MEMORYOS_SAMPLING: Sampling = Sampling::without_top_p(0.1, 2048);

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

    /// `User: … Assistant: …` on one line, as upstream's mid-term memory embeds a page and
    /// asks for its keywords.
    pub fn inline(&self) -> String {
        format!("User: {} Assistant: {}", self.user, self.assistant)
    }

    /// The user's words and the assistant's, as upstream's helpers take a page.
    pub fn sides(&self) -> (&str, &str) {
        (&self.user, &self.assistant)
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

    fn sampling(&self) -> Sampling {
        MEMORYOS_SAMPLING
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

    /// Upstream's prompt (one English prompt for every language) over the text as given.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.memoryos_topics(&self.text))
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

    fn sampling(&self) -> Sampling {
        MEMORYOS_SAMPLING
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

    /// Upstream's analysis over its 90 dimensions (one English prompt for every language),
    /// the stored profile given as upstream gives it.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let pages: Vec<(&str, &str)> = self.exchanges.iter().map(Exchange::sides).collect();
        Some(upstream.memoryos_profile_analysis(&pages, self.existing.as_deref()))
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
    upstream_markers: Option<(String, String)>,
}

impl ExtractKnowledge {
    /// Knowledge in `exchanges`.
    pub fn new(exchanges: Vec<Exchange>) -> ExtractKnowledge {
        ExtractKnowledge {
            exchanges,
            upstream_markers: None,
        }
    }

    /// The same extraction asked in upstream's words: the reply is read under upstream's two
    /// headings (user data, assistant knowledge), as upstream reads it.
    pub fn with_upstream_markers(mut self, markers: (String, String)) -> ExtractKnowledge {
        self.upstream_markers = Some(markers);
        self
    }
}

/// A knowledge part upstream returns, kept unless it is one of the texts upstream's long-term
/// memory refuses to store (`""`, `none`, `- none`, `- none.`, in any case).
fn kept(part: String) -> Option<String> {
    let lower = part.trim().to_lowercase();
    (!["", "none", "- none", "- none."].contains(&lower.as_str())).then_some(part)
}

impl Operation for ExtractKnowledge {
    type Output = Knowledge;

    fn name(&self) -> &'static str {
        "extract_knowledge"
    }

    fn sampling(&self) -> Sampling {
        MEMORYOS_SAMPLING
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

    /// Upstream's prompt (one English prompt for every language), the pages joined as upstream
    /// joins them.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let pages: Vec<(&str, &str)> = self.exchanges.iter().map(Exchange::sides).collect();
        Some(upstream.memoryos_knowledge_extraction(&pages))
    }

    fn parse(&self, text: &str) -> Option<Knowledge> {
        if let Some((user, assistant)) = &self.upstream_markers {
            let (private, knowledge) = read_marked_knowledge(text, user, assistant);
            return Some(Knowledge {
                user_private: kept(private),
                assistant: kept(knowledge),
            });
        }
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
