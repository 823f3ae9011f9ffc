//! The three judge calls LimitGen makes about each generated limitation: does it concern the
//! planted aspect, which of the aspect's subtypes is it, and how close is it to the ground
//! truth. Each is sent once per evaluation attempt, read as upstream reads the reply.

use mb_core::Lang;
use mb_llm::ops::{Operation, Patience};
use mb_llm::{extract_json, Message, Sampling};
use mb_upstream::{LimitAspect, Upstream, UpstreamError};
use serde_json::Value;

use super::fenced_json;

/// Upstream's LimitGen judge client: temperature 0.8 and 4 096 tokens set, top-p its default
/// 0.1.
fn judge_sampling() -> Sampling {
    Sampling::new(0.8, 0.1, 4096)
}

/// Is a limitation about the aspect? (A reply starting with "yes".)
pub(super) struct AspectCheck<'a> {
    pub(super) aspect: &'a str,
    pub(super) group: LimitAspect,
    pub(super) limitation: &'a str,
}

impl Operation for AspectCheck<'_> {
    type Output = bool;

    fn name(&self) -> &'static str {
        "judge_limitation_aspect"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![
            Message::system(format!(
                "Does the following limitation of a scientific paper concern its {}? Answer \"yes\" or \"no\" only.",
                self.aspect
            )),
            Message::user(self.limitation),
        ]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.limitgen_aspect_check(self.group, self.limitation))
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    fn parse(&self, text: &str) -> Option<bool> {
        Some(text.to_lowercase().starts_with("yes"))
    }

    /// LimitGen's evaluation is tried up to five times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 5 }
    }

    fn fallback(&self) -> bool {
        false
    }

    fn offline(&self, _lang: Lang) -> bool {
        self.fallback()
    }
}

/// Which subtype of the aspect is a limitation? (The label of the reply's leading number, or
/// the reply itself, as upstream keeps it.)
pub(super) struct SubtypeCheck<'a> {
    pub(super) subtypes: &'a [(&'a str, &'a str)],
    pub(super) group: LimitAspect,
    pub(super) limitation: &'a str,
}

impl Operation for SubtypeCheck<'_> {
    type Output = String;

    fn name(&self) -> &'static str {
        "judge_limitation_subtype"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let list: String = self
            .subtypes
            .iter()
            .enumerate()
            .map(|(i, (label, description))| format!("{}. {label}: {description}\n", i + 1))
            .collect();
        vec![
            Message::system(format!(
                "Which of these kinds is the following limitation of a scientific paper?\n{list}\nAnswer with the number only."
            )),
            Message::user(self.limitation),
        ]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.limitgen_subtypes(self.group, self.limitation))
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    fn parse(&self, text: &str) -> Option<String> {
        let label = text
            .trim()
            .chars()
            .next()
            .and_then(|c| c.to_digit(10))
            .and_then(|n| (n as usize).checked_sub(1))
            .and_then(|i| self.subtypes.get(i))
            .map(|(label, _)| label.to_string());
        Some(label.unwrap_or_else(|| text.to_string()))
    }

    /// LimitGen's evaluation is tried up to five times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 5 }
    }

    fn fallback(&self) -> String {
        String::new()
    }

    fn offline(&self, _lang: Lang) -> String {
        self.fallback()
    }
}

/// How close is an accurate limitation to the ground truth? (`{"explanation", "rating"}`;
/// unreadable: rating 0, "Invalid Message".)
pub(super) struct RatingCheck<'a> {
    pub(super) ground_truth: &'a str,
    pub(super) limitation: &'a str,
}

impl Operation for RatingCheck<'_> {
    type Output = (i64, String);

    fn name(&self) -> &'static str {
        "judge_limitation_rating"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![
            Message::system(
                "Rate how closely a generated limitation of a scientific paper matches the true one, \
                 from 1 to 5: 5 the same point in as much detail; 4 the same point with less detail; \
                 3 related but different; 2 loosely related; 1 unrelated. Reply with JSON: \
                 {\"explanation\": \"<brief>\", \"rating\": <1-5>}.",
            ),
            Message::user(format!(
                "True limitation:\n{}\n\nGenerated limitation:\n{}\n\nExplain briefly, then rate (1-5).",
                self.ground_truth, self.limitation
            )),
        ]
    }

    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.limitgen_rating(self.ground_truth, self.limitation))
    }

    fn sampling(&self) -> Sampling {
        judge_sampling()
    }

    fn parse(&self, text: &str) -> Option<(i64, String)> {
        let parsed = serde_json::from_str::<Value>(fenced_json(text))
            .ok()
            .or_else(|| extract_json(text));
        let rating = parsed.as_ref().and_then(|v| match &v["rating"] {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        });
        Some(match (rating, parsed) {
            (Some(rating), Some(v)) => (
                rating,
                v["explanation"].as_str().unwrap_or_default().to_string(),
            ),
            _ => self.fallback(),
        })
    }

    /// LimitGen's evaluation is tried up to five times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 5 }
    }

    fn fallback(&self) -> (i64, String) {
        (0, "Invalid Message".to_string())
    }

    fn offline(&self, _lang: Lang) -> (i64, String) {
        self.fallback()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::limitgen::{aspect, planted_subtype};

    /// LimitGen's judge checks never panic on hostile replies (`MB_FUZZ_CASES` runs more).
    #[test]
    fn hostile_replies_never_panic_a_check() {
        let subtypes = [("data", "too little data"), ("method", "weak baseline")];
        let aspect = AspectCheck {
            aspect: "data",
            group: LimitAspect::Methodology,
            limitation: "small sample",
        };
        let subtype = SubtypeCheck {
            subtypes: &subtypes,
            group: LimitAspect::Methodology,
            limitation: "small sample",
        };
        let rating = RatingCheck {
            ground_truth: "the sample is small",
            limitation: "small sample",
        };
        let mut texts = mb_llm::testing::HostileText::new(61);
        for _ in 0..mb_llm::testing::fuzz_cases(2_000) {
            let reply = texts.next_text();
            let _ = aspect.parse(&reply);
            let _ = subtype.parse(&reply);
            let _ = rating.parse(&reply);
        }
    }

    #[test]
    fn subtype_numbers_map_to_labels() {
        let (_, subtypes) = aspect("dataset").unwrap();
        let check = SubtypeCheck {
            subtypes,
            group: LimitAspect::ExperimentalDesign,
            limitation: "l",
        };
        assert_eq!(
            check.parse(" 2. Limited datasets").as_deref(),
            Some("limited datasets")
        );
        assert_eq!(check.parse("9").as_deref(), Some("9"));
        assert_eq!(
            check.parse("Limited datasets").as_deref(),
            Some("Limited datasets")
        );
        assert_eq!(planted_subtype("dataset"), Some("limited datasets"));
        let rating = RatingCheck {
            ground_truth: "g",
            limitation: "l",
        };
        assert_eq!(
            rating.parse("```json\n{\"explanation\": \"close\", \"rating\": 4}\n```"),
            Some((4, "close".into()))
        );
        assert_eq!(rating.parse("no idea"), Some((0, "Invalid Message".into())));
    }
}
