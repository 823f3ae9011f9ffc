//! The hybrid memory's key expansion: the facts an exchange states about its speakers, written
//! so that a later question about them finds the exchange (LongMemEval's "K = V + fact").

use std::collections::HashSet;

use mb_core::Lang;

use mb_llm::ops::shape::{list_field, strings};
use mb_llm::ops::text::is_first_person;
use mb_llm::ops::text::sentences;
use mb_llm::ops::Operation;
use mb_llm::Message;

/// Facts stated in one exchange (`{"facts": [...]}`), each a short third-person sentence that
/// names the person it is about, to be merged into the exchange's indexed text.
///
/// Offline: every first-person statement (not a question) rewritten in the third person with
/// the speaker's name (`I adopted a dog` → `Maya adopted a dog`), which puts the names a
/// question uses into the key. Fallback on unusable output: no facts (the key is the exchange
/// alone).
#[derive(Debug, Clone)]
pub struct KeyFacts {
    /// `(speaker, text)` lines of the exchange, in order.
    lines: Vec<(String, String)>,
    /// When it happened, as the corpus writes it.
    date: String,
}

impl KeyFacts {
    /// Facts of the exchange `lines` (`(speaker, text)`), said on `date`.
    pub fn new(lines: Vec<(String, String)>, date: impl Into<String>) -> KeyFacts {
        KeyFacts {
            lines,
            date: date.into(),
        }
    }
}

impl Operation for KeyFacts {
    type Output = Vec<String>;

    fn name(&self) -> &'static str {
        "key_facts"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let transcript: String = self
            .lines
            .iter()
            .map(|(speaker, text)| format!("{speaker}: {text}\n"))
            .collect();
        let system = match lang {
            Lang::En => format!(
                "You index a conversation so that questions about it can be looked up later. \
                 From the exchange below (it took place {date}), list every fact it states \
                 about the people speaking: events, plans, possessions, relationships, \
                 preferences, opinions. Write each fact as one short sentence in the third \
                 person that names the person (never \"I\" or \"you\"), and turn relative \
                 times into dates when the date allows. Leave out greetings and questions.\n\
                 Reply with JSON only: {{\"facts\": [\"...\"]}}, or {{\"facts\": []}}.",
                date = self.date
            ),
            Lang::Zh => format!(
                "你为一段对话建立索引，便于以后查找与之相关的问题。从下面这段交流（发生于 {date}）\
                 中列出它陈述的关于说话人的每一条事实：事件、计划、物品、关系、喜好、观点。每条事实\
                 写成一句简短的第三人称句子，并写出人名（不用“我”或“你”）；能换算时把相对时间写成\
                 日期。不要寒暄和提问。\n只回复 JSON：{{\"facts\": [\"...\"]}}，没有时回复 \
                 {{\"facts\": []}}。",
                date = self.date
            ),
        };
        vec![Message::system(system), Message::user(transcript)]
    }

    fn parse(&self, text: &str) -> Option<Vec<String>> {
        strings(&list_field(text, "facts")?)
    }

    fn fallback(&self) -> Vec<String> {
        Vec::new()
    }

    fn offline(&self, lang: Lang) -> Vec<String> {
        let mut seen = HashSet::new();
        self.lines
            .iter()
            .flat_map(|(speaker, text)| {
                sentences(text)
                    .into_iter()
                    .filter(|s| !s.ends_with('?') && !s.ends_with('？'))
                    .filter(|s| is_first_person(s, lang))
                    .map(|s| third_person(&s, speaker, lang))
                    .collect::<Vec<_>>()
            })
            .filter(|s| seen.insert(s.clone()))
            .collect()
    }
}

/// `sentence` with the speaker's first-person words replaced by their name (English), or
/// 我 by the name (Chinese).
fn third_person(sentence: &str, speaker: &str, lang: Lang) -> String {
    if lang == Lang::Zh {
        return sentence.replace('我', speaker);
    }
    sentence
        .split(' ')
        .map(|word| {
            let start = word
                .find(|c: char| c.is_alphanumeric())
                .unwrap_or(word.len());
            let end = word
                .rfind(|c: char| c.is_alphanumeric())
                .map_or(start, |i| i + 1)
                .max(start);
            let core = word[start..end].replace('’', "'").to_lowercase();
            let replaced = match core.as_str() {
                "i" | "me" | "myself" => speaker.to_string(),
                "my" | "mine" => format!("{speaker}'s"),
                "i'm" => format!("{speaker} is"),
                "i've" => format!("{speaker} has"),
                "i'll" => format!("{speaker} will"),
                "i'd" => format!("{speaker} would"),
                "am" => "is".to_string(),
                _ => return word.to_string(),
            };
            format!("{}{replaced}{}", &word[..start], &word[end..])
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_facts_name_the_speaker() {
        let op = KeyFacts::new(
            vec![
                (
                    "Maya".into(),
                    "I adopted a dog last weekend! My dog is called Pixel. How are you?".into(),
                ),
                ("Jon".into(), "I'm fine, I’ve started pottery.".into()),
            ],
            "8 May 2023",
        );
        assert_eq!(
            op.offline(Lang::En),
            [
                "Maya adopted a dog last weekend!",
                "Maya's dog is called Pixel.",
                "Jon is fine, Jon has started pottery."
            ]
        );
        assert_eq!(third_person("I am here.", "Al", Lang::En), "Al is here.");
        assert_eq!(third_person("我喜欢猫。", "小王", Lang::Zh), "小王喜欢猫。");
    }

    #[test]
    fn parses_facts_and_falls_back_to_none() {
        let op = KeyFacts::new(vec![("A".into(), "hi".into())], "today");
        assert_eq!(
            op.parse("```json\n{\"facts\": [\"A likes tea\"]}\n```"),
            Some(vec!["A likes tea".to_string()])
        );
        assert_eq!(op.parse("no idea"), None);
        assert!(op.fallback().is_empty());
        let prompt = op.messages(Lang::En);
        assert!(prompt[0].content.contains("today") && prompt[1].content.contains("A: hi"));
    }
}
