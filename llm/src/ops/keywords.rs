//! Keywords of a query or a note, for keyword-aware retrieval (A-Mem, MemoryOS).

use mb_core::Lang;

use super::shape::{list_field, strings};
use super::text::top_terms;
use super::Operation;
use crate::{Message, ResponseFormat};

/// The few words that best capture what a text is about (`{"keywords": [...]}`).
///
/// Offline: the most frequent content terms (stop words removed), earlier ones first on ties.
/// Fallback on unusable output: no keywords.
#[derive(Debug, Clone)]
pub struct QueryKeywords {
    text: String,
    max: usize,
}

impl QueryKeywords {
    /// At most `max` keywords of `text`.
    pub fn new(text: impl Into<String>, max: usize) -> QueryKeywords {
        QueryKeywords {
            text: text.into(),
            max,
        }
    }
}

impl Operation for QueryKeywords {
    type Output = Vec<String>;

    fn name(&self) -> &'static str {
        "query_keywords"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let prompt = match lang {
            Lang::En => format!(
                "List at most {max} keywords that capture what the following text is about: \
                 the people, things, places, events and topics that a search for related \
                 memories should match. Most important first; no stop words.\n\nText:\n{text}\n\n\
                 Reply with JSON only: {{\"keywords\": [\"...\"]}}",
                max = self.max,
                text = self.text
            ),
            Lang::Zh => format!(
                "列出最多 {max} 个能概括下面文本内容的关键词：检索相关记忆时应匹配的人物、事物、地点、\
                 事件和话题。按重要性排序，不要停用词。\n\n文本：\n{text}\n\n只回复 JSON：\
                 {{\"keywords\": [\"...\"]}}",
                max = self.max,
                text = self.text
            ),
        };
        vec![Message::user(prompt)]
    }

    fn response_format(&self) -> Option<ResponseFormat> {
        Some(ResponseFormat::JsonSchema {
            name: "keywords".to_string(),
            schema: serde_json::json!({
                "type": "object",
                "properties": {"keywords": {"type": "array", "items": {"type": "string"}}},
                "required": ["keywords"],
            }),
        })
    }

    fn parse(&self, text: &str) -> Option<Vec<String>> {
        let mut keywords = strings(&list_field(text, "keywords")?)?;
        keywords.truncate(self.max);
        Some(keywords)
    }

    fn fallback(&self) -> Vec<String> {
        Vec::new()
    }

    fn offline(&self, lang: Lang) -> Vec<String> {
        top_terms(&self.text, lang, self.max)
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
        assert_eq!(op.offline(Lang::En), vec!["pixel", "dog", "chewed"]);
    }

    #[test]
    fn parses_and_truncates() {
        let op = QueryKeywords::new("", 2);
        assert_eq!(
            op.parse("{\"keywords\": [\"cat\", \"\", \"Miso\", \"pet\"]}"),
            Some(vec!["cat".to_string(), "Miso".to_string()])
        );
        assert_eq!(op.parse("cat, Miso"), None);
    }
}
