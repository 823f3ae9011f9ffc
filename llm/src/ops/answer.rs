//! Answering the user from a prompt the memory system assembled.

use std::collections::HashMap;

use mb_core::Lang;
use mb_upstream::{Upstream, UpstreamError};

use super::text::{sentences, term_set, terms};
use super::Operation;
use crate::{Message, Role, Sampling};

/// Answers a conversation whose last message carries the memory context and the question.
///
/// Offline, the answer is extractive: the retrieved sentence (questions excluded) that best
/// covers the question's terms, each weighted by its rarity among the candidates, or "I don't
/// know" when none shares a term with it.
#[derive(Debug, Clone)]
pub struct Answer {
    messages: Vec<Message>,
    evidence: Option<(String, Vec<String>)>,
    max_tokens: Option<u32>,
}

impl Answer {
    /// An answer to `messages`, sent to the model as they are.
    pub fn new(messages: Vec<Message>) -> Answer {
        Answer {
            messages,
            evidence: None,
            max_tokens: None,
        }
    }

    /// Caps the answer's output tokens (upstream's 2 048 otherwise; LongMemEval's reading
    /// allows 800).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Answer {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Tells the offline backend what the question and the retrieved memories are (otherwise
    /// it takes the last user message as the question and everything before it as evidence).
    pub fn with_evidence(mut self, question: impl Into<String>, retrieved: Vec<String>) -> Answer {
        self.evidence = Some((question.into(), retrieved));
        self
    }

    fn question_and_candidates(&self) -> (String, Vec<String>) {
        if let Some((question, retrieved)) = &self.evidence {
            return (
                question.clone(),
                retrieved.iter().flat_map(|r| sentences(r)).collect(),
            );
        }
        let last_user = self.messages.iter().rposition(|m| m.role == Role::User);
        let question = last_user.map_or_else(String::new, |i| self.messages[i].content.clone());
        let earlier = last_user.map_or(&self.messages[..], |i| &self.messages[..i]);
        let candidates = earlier
            .iter()
            .filter(|m| m.role != Role::System)
            .flat_map(|m| sentences(&m.content))
            .collect();
        (question, candidates)
    }
}

impl Operation for Answer {
    type Output = String;

    fn name(&self) -> &'static str {
        "answer"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        self.messages.clone()
    }

    /// The caller wrote the conversation and chose its words (a memory system's answer prompt
    /// notes its own paraphrase), so it goes out as given.
    fn upstream_messages(
        &self,
        _upstream: &Upstream,
        _lang: Lang,
    ) -> Option<std::result::Result<Vec<Message>, UpstreamError>> {
        Some(Ok(self.messages.clone()))
    }

    fn sampling(&self) -> Sampling {
        let default = Sampling::default();
        Sampling {
            max_tokens: self.max_tokens.unwrap_or(default.max_tokens),
            ..default
        }
    }

    fn parse(&self, text: &str) -> Option<String> {
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    fn fallback(&self) -> String {
        String::new()
    }

    fn offline(&self, lang: Lang) -> String {
        let (question, mut candidates) = self.question_and_candidates();
        // A question is no answer.
        candidates.retain(|c| !c.ends_with('?') && !c.ends_with('？'));
        // Sorted, so that the score sums add up in the same order on every run.
        let mut asked: Vec<String> = term_set(&question, lang).into_iter().collect();
        asked.sort();
        let candidate_terms: Vec<_> = candidates.iter().map(|c| term_set(c, lang)).collect();
        let mut document_frequency: HashMap<&str, usize> = HashMap::new();
        for set in &candidate_terms {
            for term in set {
                *document_frequency.entry(term.as_str()).or_default() += 1;
            }
        }
        let n = candidates.len() as f64;
        let best = candidate_terms
            .iter()
            .zip(&candidates)
            .map(|(set, sentence)| {
                let covered: f64 = asked
                    .iter()
                    .filter(|t| set.contains(t.as_str()))
                    .map(|t| {
                        let df = document_frequency.get(t.as_str()).copied().unwrap_or(1);
                        (1.0 + n / df as f64).ln()
                    })
                    .sum();
                let length = terms(sentence, lang).len().max(1) as f64;
                (covered / length.sqrt(), sentence)
            })
            .filter(|(score, _)| *score > 0.0)
            // Highest score; the earliest sentence wins ties, so the result is deterministic.
            .fold(
                None::<(f64, &String)>,
                |best, (score, sentence)| match best {
                    Some((top, _)) if top >= score => best,
                    _ => Some((score, sentence)),
                },
            );
        match (best, lang) {
            (Some((_, sentence)), _) => sentence.clone(),
            (None, Lang::En) => "I don't know.".to_string(),
            (None, Lang::Zh) => "我不知道。".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offline_picks_the_sentence_that_covers_the_question() {
        let answer = Answer::new(vec![Message::user("ignored")]).with_evidence(
            "What is the name of Maya's dog?",
            vec![
                "Maya went hiking. Maya adopted a dog named Pixel.".to_string(),
                "Jon makes bowls for the wedding.".to_string(),
            ],
        );
        assert_eq!(answer.offline(Lang::En), "Maya adopted a dog named Pixel.");
    }

    #[test]
    fn offline_without_evidence_uses_the_conversation() {
        let answer = Answer::new(vec![
            Message::system("You are helpful."),
            Message::user("I moved to Lisbon in May."),
            Message::assistant("Nice!"),
            Message::user("Where was I when I moved?"),
        ]);
        assert_eq!(answer.offline(Lang::En), "I moved to Lisbon in May.");
        let unrelated = Answer::new(vec![Message::user("Quantum chromodynamics?")]);
        assert_eq!(unrelated.offline(Lang::En), "I don't know.");
    }

    #[test]
    fn empty_model_output_is_unusable() {
        let answer = Answer::new(vec![]);
        assert_eq!(answer.parse("  Paris "), Some("Paris".to_string()));
        assert_eq!(answer.parse("  \n"), None);
    }
}
