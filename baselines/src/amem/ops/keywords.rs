//! Keywords of a query, for A-Mem's keyword-aware retrieval.

use mb_core::Lang;

use mb_llm::ops::handling::{read_json, JsonReading};
use mb_llm::ops::shape::{list_field, strings};
use mb_llm::ops::text::top_terms;
use mb_llm::ops::{Operation, Patience};
use mb_llm::{Message, ResponseFormat};
use mb_upstream::{Upstream, UpstreamError};

/// Longest keyword text kept from a reply, in characters (a model may ramble inside the JSON
/// string; the keywords are embedded as one probe).
const MAX_CHARS: usize = 1_000;

/// The few words that best capture what a query is about, as one comma-separated text
/// (`{"keywords": "a, b, c"}`, upstream A-Mem's schema), which A-Mem embeds as written.
///
/// Upstream sends the request again until the reply parses ([`Patience::UntilParsed`]); the
/// tolerant reading also takes a list (`{"keywords": ["a", "b"]}`), joined with commas.
/// Offline: the most frequent content terms (stop words removed), earlier ones first on ties.
/// Fallback: the query itself (A-Mem then embeds it).
#[derive(Debug, Clone)]
pub struct QueryKeywords {
    text: String,
    max: usize,
}

impl QueryKeywords {
    /// About `max` keywords of `text`.
    pub fn new(text: impl Into<String>, max: usize) -> QueryKeywords {
        QueryKeywords {
            text: text.into(),
            max,
        }
    }
}

/// `text` cut to [`MAX_CHARS`], trimmed; `None` when blank.
fn probe(text: &str) -> Option<String> {
    let text: String = text.trim().chars().take(MAX_CHARS).collect();
    (!text.trim().is_empty()).then(|| text.trim().to_string())
}

impl Operation for QueryKeywords {
    type Output = String;

    fn name(&self) -> &'static str {
        "query_keywords"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let prompt = match lang {
            Lang::En => format!(
                "Give up to {max} keywords that capture what the following text is about: the \
                 people, things, places, events and topics that a search for related memories \
                 should match, most important first, separated by commas.\n\nText:\n{text}\n\n\
                 Reply with JSON only: {{\"keywords\": \"keyword, keyword, ...\"}}",
                max = self.max,
                text = self.text
            ),
            Lang::Zh => format!(
                "给出最多 {max} 个能概括下面文本内容的关键词：检索相关记忆时应匹配的人物、事物、地点、\
                 事件和话题，按重要性排序，用逗号分隔。\n\n文本：\n{text}\n\n只回复 JSON：\
                 {{\"keywords\": \"关键词, 关键词, ...\"}}",
                max = self.max,
                text = self.text
            ),
        };
        vec![Message::user(prompt)]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(
            upstream
                .amem_query_keywords(&self.text)
                .map(|prompt| vec![Message::user(prompt)]),
        )
    }

    fn response_format(&self) -> Option<ResponseFormat> {
        Some(ResponseFormat::JsonSchema {
            // Upstream's schema name.
            name: "response".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {"keywords": {"type": "string"}},
                "required": ["keywords"],
                "additionalProperties": false,
            }),
            strict: true,
        })
    }

    fn parse(&self, text: &str) -> Option<String> {
        match list_field(text, "keywords")? {
            serde_json::Value::String(keywords) => probe(&keywords),
            list => {
                let mut keywords = strings(&list)?;
                keywords.truncate(self.max);
                probe(&keywords.join(", "))
            }
        }
    }

    /// Upstream's reading: the whole reply is a JSON object whose `keywords` is a string, kept
    /// as written (an empty one too: upstream then searches with it).
    fn parse_as_upstream(&self, text: &str) -> Option<String> {
        let keywords = read_json(text, JsonReading::Plain)?;
        Some(
            keywords
                .get("keywords")?
                .as_str()?
                .chars()
                .take(MAX_CHARS)
                .collect(),
        )
    }

    fn patience(&self) -> Patience {
        Patience::UntilParsed
    }

    /// The query itself, after [`mb_llm::ops::handling::RESEND_CAP`] unusable replies (where
    /// upstream would ask for ever).
    fn fallback(&self) -> String {
        self.text.clone()
    }

    /// The query's top terms, or the query itself when it has none.
    fn offline(&self, lang: Lang) -> String {
        let terms = top_terms(&self.text, lang, self.max);
        if terms.is_empty() {
            self.text.clone()
        } else {
            terms.join(", ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_keywords_rank_by_frequency_then_position() {
        let op = QueryKeywords::new(
            "Pixel the dog chewed my shoes; Pixel also chewed the socks of the dog walker",
            3,
        );
        assert_eq!(op.offline(Lang::En), "pixel, dog, chewed");
        // A query without content terms, and the fallback, search with the query itself.
        let bare = QueryKeywords::new("Is it?", 3);
        assert_eq!(bare.offline(Lang::En), "Is it?");
        assert_eq!(bare.fallback(), "Is it?");
    }

    #[test]
    fn the_tolerant_reading_takes_a_text_or_a_list() {
        let op = QueryKeywords::new("", 2);
        assert_eq!(
            op.parse("{\"keywords\": [\"cat\", \"\", \"Miso\", \"pet\"]}"),
            Some("cat, Miso".to_string())
        );
        assert_eq!(
            op.parse("```json\n{\"keywords\": \"cat, Miso, pet\"}\n```"),
            Some("cat, Miso, pet".to_string())
        );
        assert_eq!(op.parse("cat, Miso"), None);
        assert_eq!(op.parse("{\"keywords\": \"  \"}"), None);
    }

    #[test]
    fn upstream_reads_only_its_schema_and_embeds_the_text_as_written() {
        let op = QueryKeywords::new("", 2);
        assert_eq!(
            op.parse_as_upstream(" {\"keywords\": \"cat, Miso, pet\"}\n"),
            Some("cat, Miso, pet".to_string())
        );
        for unusable in [
            "{\"keywords\": [\"cat\"]}",
            "```json\n{\"keywords\": \"cat\"}\n```",
            "Keywords: cat",
        ] {
            assert_eq!(op.parse_as_upstream(unusable), None, "{unusable}");
        }
        // An empty text is upstream's answer too: it searches with it.
        assert_eq!(
            op.parse_as_upstream("{\"keywords\": \"\"}"),
            Some(String::new())
        );
        let long = format!("{{\"keywords\": \"{}\"}}", "k".repeat(5_000));
        assert_eq!(
            op.parse_as_upstream(&long).map(|k| k.len()),
            Some(MAX_CHARS)
        );
        assert_eq!(op.patience(), Patience::UntilParsed);
    }
}
