//! A-Mem's model operations: note construction and memory evolution, and the keywords a
//! question is searched by ([`QueryKeywords`]).

mod keywords;

pub use keywords::QueryKeywords;

use mb_core::Lang;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::prompt::language_line;
use mb_llm::ops::shape::strings;
use mb_llm::ops::text::{jaccard, lead, term_set, top_terms};
use mb_llm::ops::Operation;
use mb_llm::{extract_json, Message, ResponseFormat, Sampling};
use mb_upstream::{AMemNote, Upstream, UpstreamError};

/// What upstream's A-Mem client (`VllmController.get_completion`) sends: temperature 0.7,
/// 2000 tokens, and no top-p (the server's default).
const AMEM_SAMPLING: Sampling = Sampling::without_top_p(0.7, 2000);

/// What A-Mem attaches to a note: keywords, a one-sentence context and broad tags.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteAttributes {
    /// Specific keywords, most important first.
    pub keywords: Vec<String>,
    /// One sentence on the topic, key points and audience.
    pub context: String,
    /// Broad categories.
    pub tags: Vec<String>,
}

/// A-Mem's note construction (`{"keywords", "context", "tags"}`).
///
/// Offline: the five most frequent content terms as keywords, the first sentence as context,
/// the three most frequent as tags. Fallback on unusable output: no keywords or tags and the
/// context "General", as A-Mem.
#[derive(Debug, Clone)]
pub struct AnalyzeNote {
    content: String,
}

impl AnalyzeNote {
    /// Attributes of a note with this content.
    pub fn new(content: impl Into<String>) -> AnalyzeNote {
        AnalyzeNote {
            content: content.into(),
        }
    }
}

impl Operation for AnalyzeNote {
    type Output = NoteAttributes;

    fn name(&self) -> &'static str {
        "analyze_note"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        vec![
            Message::system("Reply with one JSON object and nothing else."),
            Message::user(format!(
                "Index this memory note for later retrieval.\n\
                 - keywords: at least three specific terms (people, objects, places, events, \
                 concepts), most important first; leave out speaker names and times.\n\
                 - context: one sentence saying what the note is about, its key points and who \
                 it concerns.\n\
                 - tags: at least three broad categories that would group it with related \
                 notes.\n{language}\n\nNote:\n{content}\n\n\
                 Format: {{\"keywords\": [\"...\"], \"context\": \"...\", \"tags\": [\"...\"]}}",
                language = language_line(lang),
                content = self.content
            )),
        ]
    }

    /// Upstream's client system message and analysis prompt, the content appended (one
    /// English prompt for every language).
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.amem_analyze_note(&self.content))
    }

    fn sampling(&self) -> Sampling {
        AMEM_SAMPLING
    }

    fn response_format(&self) -> Option<ResponseFormat> {
        Some(ResponseFormat::JsonSchema {
            // Upstream's name and schema (no required keys; the reading requires them).
            name: "response".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "keywords": {"type": "array", "items": {"type": "string"}},
                    "context": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                },
            }),
            strict: false,
        })
    }

    fn parse(&self, text: &str) -> Option<NoteAttributes> {
        let value = extract_json(text)?;
        Some(NoteAttributes {
            keywords: strings(value.get("keywords")?)?,
            context: value.get("context")?.as_str()?.trim().to_string(),
            tags: strings(value.get("tags")?)?,
        })
    }

    fn fallback(&self) -> NoteAttributes {
        NoteAttributes {
            keywords: Vec::new(),
            context: "General".to_string(),
            tags: Vec::new(),
        }
    }

    fn offline(&self, lang: Lang) -> NoteAttributes {
        let keywords = top_terms(&self.content, lang, 5);
        NoteAttributes {
            tags: keywords.iter().take(3).cloned().collect(),
            context: lead(&self.content, 1),
            keywords,
        }
    }
}

/// A note as the evolution step sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteView {
    /// The note's text.
    pub content: String,
    /// Its context sentence.
    pub context: String,
    /// Its keywords.
    pub keywords: Vec<String>,
    /// Its tags.
    pub tags: Vec<String>,
    /// When it was written.
    pub timestamp: String,
}

impl NoteView {
    /// The note as upstream's wording shows it.
    fn upstream(&self) -> AMemNote<'_> {
        AMemNote {
            content: &self.content,
            context: &self.context,
            keywords: &self.keywords,
            tags: &self.tags,
            timestamp: &self.timestamp,
        }
    }
}

/// What evolution does to the new note and its neighbours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evolution {
    /// Whether anything changes.
    pub should_evolve: bool,
    /// Link the new note to these neighbours (indices into the neighbour list) and give it
    /// `tags_to_update`.
    pub strengthen: Option<Strengthen>,
    /// Replace neighbours' context and tags (one entry per neighbour, in order).
    pub update_neighbours: Option<Vec<NeighbourUpdate>>,
}

/// The `strengthen` action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Strengthen {
    /// Neighbour indices to link to.
    pub connections: Vec<usize>,
    /// The new note's tags afterwards.
    pub tags: Vec<String>,
}

/// The `update_neighbor` action for one neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NeighbourUpdate {
    /// The neighbour's new context.
    pub context: String,
    /// The neighbour's new tags.
    pub tags: Vec<String>,
}

/// A-Mem's memory evolution: given a new note and its nearest neighbours, decide whether to
/// link them and refresh their descriptions.
///
/// Offline: link the neighbours sharing at least a fifth of their content terms with the note,
/// keep every tag as it is. Fallback on unusable output: no evolution.
#[derive(Debug, Clone)]
pub struct EvolveNote {
    note: NoteView,
    neighbours: Vec<NoteView>,
}

impl EvolveNote {
    /// Evolution of `note` against its `neighbours` (nearest first).
    pub fn new(note: NoteView, neighbours: Vec<NoteView>) -> EvolveNote {
        EvolveNote { note, neighbours }
    }
}

impl Operation for EvolveNote {
    type Output = Evolution;

    fn name(&self) -> &'static str {
        "evolve_note"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let neighbours: String = self
            .neighbours
            .iter()
            .enumerate()
            .map(|(i, n)| {
                format!(
                    "[{i}] ({}) {}\n    context: {}\n    keywords: {:?}\n    tags: {:?}\n",
                    n.timestamp, n.content, n.context, n.keywords, n.tags
                )
            })
            .collect();
        let n = self.neighbours.len();
        vec![
            Message::system("Reply with one JSON object and nothing else."),
            Message::user(format!(
                "You curate a network of memory notes. A new note arrived; below are its \
                 {n} closest existing notes. Decide whether the network should change.\n\
                 - \"strengthen\": the new note belongs with some neighbours; list their indices \
                 in suggested_connections and give the new note's tags in tags_to_update.\n\
                 - \"update_neighbor\": the new note changes how neighbours should be described; \
                 give, in neighbour order, {n} contexts in new_context_neighborhood and {n} tag \
                 lists in new_tags_neighborhood (repeat the old ones where nothing changes).\n\
                 {language}\n\nNew note ({time}): {content}\n    context: {context}\n    \
                 keywords: {keywords:?}\n\nNeighbours:\n{neighbours}\n\
                 Format: {{\"should_evolve\": true, \"actions\": [\"strengthen\", \
                 \"update_neighbor\"], \"suggested_connections\": [0], \"tags_to_update\": [\"...\"], \
                 \"new_context_neighborhood\": [\"...\"], \"new_tags_neighborhood\": [[\"...\"]]}}",
                language = language_line(lang),
                time = self.note.timestamp,
                content = self.note.content,
                context = self.note.context,
                keywords = self.note.keywords,
            )),
        ]
    }

    /// Upstream's client system message and evolution prompt, each neighbour shown as
    /// upstream's `find_related_memories` shows it. One English prompt for every language.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let neighbours: Vec<AMemNote<'_>> =
            self.neighbours.iter().map(NoteView::upstream).collect();
        Some(upstream.amem_evolve(&self.note.upstream(), &neighbours))
    }

    fn sampling(&self) -> Sampling {
        AMEM_SAMPLING
    }

    fn response_format(&self) -> Option<ResponseFormat> {
        let strings = serde_json::json!({"type": "array", "items": {"type": "string"}});
        Some(ResponseFormat::JsonSchema {
            // Upstream's name and schema.
            name: "response".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {
                    "should_evolve": {"type": "boolean"},
                    "actions": strings,
                    "suggested_connections": strings,
                    "new_context_neighborhood": strings,
                    "tags_to_update": strings,
                    "new_tags_neighborhood": {"type": "array", "items": strings},
                },
                "required": ["should_evolve", "actions", "suggested_connections",
                    "tags_to_update", "new_context_neighborhood", "new_tags_neighborhood"],
                "additionalProperties": false,
            }),
            strict: true,
        })
    }

    fn parse(&self, text: &str) -> Option<Evolution> {
        let value = extract_json(text)?;
        let should_evolve = value.get("should_evolve")?.as_bool()?;
        let actions = strings(value.get("actions").unwrap_or(&Value::Array(vec![])))?;
        let n = self.neighbours.len();
        let strengthen = if actions.iter().any(|a| a == "strengthen") {
            let connections: Vec<usize> = value
                .get("suggested_connections")?
                .as_array()?
                .iter()
                .filter_map(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
                .map(|i| i as usize)
                .filter(|&i| i < n)
                .collect();
            Some(Strengthen {
                connections,
                tags: strings(value.get("tags_to_update")?)?,
            })
        } else {
            None
        };
        let update_neighbours = if actions.iter().any(|a| a == "update_neighbor") {
            let contexts = strings(value.get("new_context_neighborhood")?)?;
            let tags: Vec<Vec<String>> = value
                .get("new_tags_neighborhood")?
                .as_array()?
                .iter()
                .map(strings)
                .collect::<Option<_>>()?;
            // Neighbours past the lists the model gave keep their descriptions.
            let count = n.min(contexts.len()).min(tags.len());
            Some(
                contexts
                    .into_iter()
                    .zip(tags)
                    .take(count)
                    .map(|(context, tags)| NeighbourUpdate { context, tags })
                    .collect(),
            )
        } else {
            None
        };
        Some(Evolution {
            should_evolve,
            strengthen,
            update_neighbours,
        })
    }

    fn fallback(&self) -> Evolution {
        Evolution {
            should_evolve: false,
            strengthen: None,
            update_neighbours: None,
        }
    }

    fn offline(&self, lang: Lang) -> Evolution {
        let note = term_set(&self.note.content, lang);
        let connections: Vec<usize> = self
            .neighbours
            .iter()
            .enumerate()
            .filter(|(_, n)| jaccard(&note, &term_set(&n.content, lang)) >= 0.2)
            .map(|(i, _)| i)
            .collect();
        if connections.is_empty() {
            return self.fallback();
        }
        Evolution {
            should_evolve: true,
            strengthen: Some(Strengthen {
                connections,
                tags: self.note.tags.clone(),
            }),
            update_neighbours: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(content: &str) -> NoteView {
        NoteView {
            content: content.to_string(),
            context: String::new(),
            keywords: vec![],
            tags: vec!["pets".to_string()],
            timestamp: "2024-05-01 10:00".to_string(),
        }
    }

    #[test]
    fn note_attributes_parse_and_offline() {
        let op = AnalyzeNote::new("Maya adopted a border collie. The collie chews shoes.");
        let parsed = op
            .parse(
                "{\"keywords\": [\"collie\"], \"context\": \"A new dog.\", \"tags\": [\"pets\"]}",
            )
            .unwrap();
        assert_eq!(parsed.context, "A new dog.");
        assert_eq!(op.parse("{\"keywords\": [\"collie\"]}"), None);
        let offline = op.offline(Lang::En);
        assert_eq!(offline.keywords[0], "collie");
        assert_eq!(offline.context, "Maya adopted a border collie.");
        assert_eq!(offline.tags.len(), 3);
        assert_eq!(op.fallback().context, "General");
    }

    #[test]
    fn evolution_parses_actions_and_bounds_indices() {
        let op = EvolveNote::new(
            view("Pixel the collie ate socks"),
            vec![
                view("Pixel the collie chewed shoes"),
                view("Jon started pottery"),
            ],
        );
        let text = r#"{"should_evolve": true, "actions": ["strengthen", "update_neighbor"],
            "suggested_connections": [0, "1", 7], "tags_to_update": ["pets", "dogs"],
            "new_context_neighborhood": ["Dog mischief"],
            "new_tags_neighborhood": [["pets"], ["hobbies"]]}"#;
        let evolution = op.parse(text).unwrap();
        let strengthen = evolution.strengthen.unwrap();
        assert_eq!(strengthen.connections, vec![0, 1]);
        assert_eq!(strengthen.tags, vec!["pets", "dogs"]);
        assert_eq!(evolution.update_neighbours.unwrap().len(), 1);
        assert_eq!(op.parse("{\"actions\": []}"), None);

        let offline = op.offline(Lang::En);
        assert!(offline.should_evolve);
        assert_eq!(offline.strengthen.unwrap().connections, vec![0]);
    }
}
