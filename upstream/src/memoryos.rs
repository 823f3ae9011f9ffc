//! MemoryOS's answer prompt, assembled as upstream's `Memoryos.get_user_prompt` assembles it
//! (the `memoryos_chromadb` copy MemoryBench runs), from upstream's own pieces: the role
//! paragraph with the assistant's knowledge and the conversation metadata, three newlines, then
//! the short-term history, the retrieved pages with their dialogue-chain information, the
//! profile and user knowledge, and the query. The whole goes out as one user message. Also
//! MemoryOS's memory operations (continuity, chain summary, profile analysis, knowledge
//! extraction, multi-topic summary) as its helpers fill them, and upstream's reading of a
//! knowledge extraction's reply.

use mb_core::{Lang, Message};

use crate::catalog::{MemoryOsPart, Prompt};
use crate::checkout::request;
use crate::python::{profile_argument, profile_text};
use crate::{Upstream, UpstreamError};

/// One exchange of the short-term queue.
#[derive(Debug, Clone)]
pub struct MemoryOsExchange {
    /// The user's words.
    pub user: String,
    /// The assistant's answer.
    pub assistant: String,
    /// When it happened, as the memory recorded it.
    pub timestamp: String,
}

/// One retrieved mid-term page.
#[derive(Debug, Clone)]
pub struct MemoryOsPage {
    /// The user's words.
    pub user: String,
    /// The assistant's answer.
    pub assistant: String,
    /// Its dialogue-chain information (empty: none).
    pub meta: String,
}

/// What MemoryOS shows the answer model, as its memory gathered it.
#[derive(Debug, Clone)]
pub struct MemoryOsAnswer<'a> {
    /// The prompt's language (upstream's `lang`).
    pub lang: Lang,
    /// The short-term queue, oldest first.
    pub history: &'a [MemoryOsExchange],
    /// The retrieved pages, in retrieval order.
    pub pages: &'a [MemoryOsPage],
    /// The profile as the model last wrote it (JSON, or text upstream wraps), if any.
    pub profile: Option<&'a str>,
    /// Retrieved user knowledge.
    pub user_knowledge: &'a [String],
    /// Retrieved assistant knowledge.
    pub assistant_knowledge: &'a [String],
    /// The user's query.
    pub query: &'a str,
}

/// The role upstream's MemoryBench leaves at its default.
const RELATIONSHIP: &str = "friend";

impl Upstream {
    /// MemoryOS's continuity check of the exchange `current` after `previous` (each the
    /// user's words and the assistant's): the request, its system message and its prompt.
    pub fn memoryos_continuity(
        &self,
        previous: (&str, &str),
        current: (&str, &str),
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::MemoryOsContinuitySystem)?.text()?;
        let prompt = self.render(
            Prompt::MemoryOsContinuityUser,
            &[
                ("prev_user", previous.0),
                ("prev_agent", previous.1),
                ("curr_user", current.0),
                ("curr_agent", current.1),
            ],
        )?;
        Ok(request(system, prompt))
    }

    /// MemoryOS's chain summary after the exchange (`user`, `assistant`), given the chain's
    /// summary so far (`None`, or empty: the chain begins): the request, its system message and its prompt.
    pub fn memoryos_meta_summary(
        &self,
        previous: Option<&str>,
        user: &str,
        assistant: &str,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::MemoryOsMetaSystem)?.text()?;
        let dialogue = self.render(
            Prompt::MemoryOsMetaDialogue,
            &[
                ("current_page.get('user_input', '')", user),
                ("current_page.get('agent_response', '')", assistant),
            ],
        )?;
        let beginning;
        let last = match previous.filter(|summary| !summary.is_empty()) {
            Some(summary) => summary,
            None => {
                beginning = self.template(Prompt::MemoryOsMetaBeginning)?.text()?;
                &beginning
            }
        };
        let prompt = self.render(
            Prompt::MemoryOsMetaUser,
            &[("last_meta", last), ("new_dialogue", &dialogue)],
        )?;
        Ok(request(system, prompt))
    }

    /// MemoryOS's profile analysis of `pages` (each the user's words and the assistant's),
    /// given the `stored` profile (the model's last reply): the request, its system message and its prompt.
    pub fn memoryos_profile_analysis(
        &self,
        pages: &[(&str, &str)],
        stored: Option<&str>,
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::MemoryOsProfileSystem)?.text()?;
        let conversation = self.memoryos_pages(pages)?;
        let prompt = self.render(
            Prompt::MemoryOsProfileUser,
            &[
                ("conversation", &conversation),
                ("existing_user_profile", &profile_argument(stored)),
            ],
        )?;
        Ok(request(system, prompt))
    }

    /// MemoryOS's knowledge extraction from `pages` (each the user's words and the
    /// assistant's, joined as for the profile analysis): the request, its system message and its prompt.
    pub fn memoryos_knowledge_extraction(
        &self,
        pages: &[(&str, &str)],
    ) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::MemoryOsKnowledgeSystem)?.text()?;
        let conversation = self.memoryos_pages(pages)?;
        let prompt = self.render(
            Prompt::MemoryOsKnowledgeUser,
            &[("conversation", &conversation)],
        )?;
        Ok(request(system, prompt))
    }

    /// MemoryOS's multi-topic summary of `text`: the request, its system message and its prompt.
    pub fn memoryos_topics(&self, text: &str) -> Result<Vec<Message>, UpstreamError> {
        let system = self.template(Prompt::MemoryOsTopicsSystem)?.text()?;
        let prompt = self.render(Prompt::MemoryOsTopicsUser, &[("text", text)])?;
        Ok(request(system, prompt))
    }

    /// The two headings of a knowledge extraction's reply: before the user's private data,
    /// and before the assistant's knowledge.
    pub fn memoryos_knowledge_markers(&self) -> Result<(String, String), UpstreamError> {
        Ok((
            self.template(Prompt::MemoryOsKnowledgeUserMarker)?.text()?,
            self.template(Prompt::MemoryOsKnowledgeAssistantMarker)?
                .text()?,
        ))
    }

    /// Pages as MemoryOS joins them for its profile and knowledge analyses.
    fn memoryos_pages(&self, pages: &[(&str, &str)]) -> Result<String, UpstreamError> {
        Ok(pages
            .iter()
            .map(|(user, assistant)| {
                self.render(
                    Prompt::MemoryOsProfilePage,
                    &[
                        ("p.get('user_input', '')", user),
                        ("p.get('agent_response', '')", assistant),
                    ],
                )
            })
            .collect::<Result<Vec<_>, _>>()?
            .join("\n"))
    }

    /// MemoryOS's answer prompt for `answer`, in upstream's words.
    pub fn memoryos_answer(&self, answer: &MemoryOsAnswer<'_>) -> Result<String, UpstreamError> {
        use MemoryOsPart::*;
        let en = answer.lang == Lang::En;
        let pick = |english, chinese| if en { english } else { chinese };
        let text = |part| self.template(Prompt::MemoryOs(part))?.text();
        let render = |part, values: &[(&str, &str)]| self.render(Prompt::MemoryOs(part), values);

        let history = answer
            .history
            .iter()
            .map(|qa| {
                render(
                    pick(HistoryEn, HistoryZh),
                    &[
                        ("qa.get('user_input', '')", &qa.user),
                        ("qa.get('agent_response', '')", &qa.assistant),
                        ("qa.get('timestamp', '')", &qa.timestamp),
                    ],
                )
            })
            .collect::<Result<Vec<_>, _>>()?
            .join("\n");

        let mut pages = Vec::with_capacity(answer.pages.len());
        for page in answer.pages {
            let mut text = render(
                pick(PageEn, PageZh),
                &[
                    ("p.get('user_input', '')", &page.user),
                    ("p.get('agent_response', '')", &page.assistant),
                ],
            )?;
            if !page.meta.is_empty() {
                text += &render(pick(ChainEn, ChainZh), &[("meta_info", &page.meta)])?;
            }
            pages.push(text);
        }
        let retrieval = text(pick(MemoryHeaderEn, MemoryHeaderZh))? + &pages.join("\n\n");

        let profile = match answer.profile.and_then(profile_text) {
            Some(profile) => profile,
            None => text(NoProfile)?,
        };
        let mut user_knowledge = String::new();
        if !answer.user_knowledge.is_empty() {
            user_knowledge = text(pick(UserKnowledgeHeaderEn, UserKnowledgeHeaderZh))?;
            for entry in answer.user_knowledge {
                user_knowledge += &render(UserKnowledgeLine, &[("kn_entry['text']", entry)])?;
            }
        }
        let background = render(
            pick(BackgroundEn, BackgroundZh),
            &[
                ("user_profile_text", &profile),
                ("user_knowledge_background", &user_knowledge),
            ],
        )?;

        let mut assistant_knowledge =
            text(pick(AssistantKnowledgeHeaderEn, AssistantKnowledgeHeaderZh))?;
        if answer.assistant_knowledge.is_empty() {
            assistant_knowledge += &text(pick(NoAssistantKnowledgeEn, NoAssistantKnowledgeZh))?;
        }
        for entry in answer.assistant_knowledge {
            assistant_knowledge += &render(AssistantKnowledgeLine, &[("ak_entry['text']", entry)])?;
        }
        let metadata = text(pick(MetadataHeaderEn, MetadataHeaderZh))?
            + &text(pick(NoMetadataEn, NoMetadataZh))?;

        let system = render(
            pick(SystemEn, SystemZh),
            &[
                ("relationship", RELATIONSHIP),
                ("assistant_knowledge_text", &assistant_knowledge),
                ("meta_data_text", &metadata),
            ],
        )?;
        let user = render(
            pick(UserEn, UserZh),
            &[
                ("history_text", &history),
                ("retrieval_text", &retrieval),
                ("background", &background),
                ("relationship", RELATIONSHIP),
                ("query", answer.query),
            ],
        )?;
        Ok(system + &text(Joiner)? + &user)
    }
}

/// Upstream's reading of a knowledge extraction's reply (`gpt_knowledge_extraction`): the text
/// after the first `user_marker` (up to the first `assistant_marker`, when there is one) is
/// the user's private data, the text after the first `assistant_marker` the assistant's
/// knowledge, each stripped; `"None"` where a part is missing or empty, as upstream returns it.
pub fn read_marked_knowledge(
    reply: &str,
    user_marker: &str,
    assistant_marker: &str,
) -> (String, String) {
    let after = |at: usize, marker: &str| reply[at + marker.len()..].trim().to_string();
    let (mut private, mut assistant) = (String::new(), String::new());
    match (reply.find(user_marker), reply.find(assistant_marker)) {
        (Some(user_at), Some(assistant_at)) => {
            let start = user_at + user_marker.len();
            // Python's slice of an end before its start is empty.
            private = reply
                .get(start..assistant_at.max(start))
                .unwrap_or_default()
                .trim()
                .to_string();
            assistant = after(assistant_at, assistant_marker);
        }
        (Some(user_at), None) => private = after(user_at, user_marker),
        (None, Some(assistant_at)) => assistant = after(assistant_at, assistant_marker),
        (None, None) => {}
    }
    let or_none = |text: String| {
        if text.is_empty() {
            "None".to_string()
        } else {
            text
        }
    };
    (or_none(private), or_none(assistant))
}
