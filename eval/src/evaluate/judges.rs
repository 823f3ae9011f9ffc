//! The LLM-judge calls of upstream's metrics, as typed operations of the LLM layer.
//!
//! Each owns its prompt (our wording; the sampling, reply format and parsing follow upstream),
//! and its fallback is upstream's value after failed attempts. A judge cannot be imitated
//! without a model: evaluators refuse an offline judge before any of these runs (see
//! [`super::EvalError::NeedsJudge`]), so the offline answer only mirrors the fallback.

use mb_core::Lang;
use mb_llm::ops::{Operation, Patience};
use mb_llm::{extract_json, Message, Sampling};
use mb_upstream::python::{repr_json, strip_chars};
use mb_upstream::{Upstream, UpstreamError};
use serde_json::Value;

use crate::metrics::judged::{dialsim_verdict, nfcats_score};

/// DialSim: does a prediction match the true answer? (`Correct`/`Wrong`; false after three
/// unusable replies.)
#[derive(Debug, Clone)]
pub struct MatchJudge {
    /// The question.
    pub question: String,
    /// The gold answer.
    pub golden: String,
    /// The system's answer.
    pub prediction: String,
}

impl Operation for MatchJudge {
    type Output = bool;

    fn name(&self) -> &'static str {
        "judge_match"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![
            Message::system(
                "You grade answers to questions about a TV show. Decide whether the \
                 prediction means the same as the true answer. Reply with one word only: \
                 Correct or Wrong.",
            ),
            Message::user(format!(
                "Question:\n{}\n\nTrue answer:\n{}\n\nPrediction:\n{}",
                self.question, self.golden, self.prediction
            )),
        ]
    }

    /// Upstream's system message and prompt, its marks replaced as upstream replaces them.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.dialsim_judge(&self.question, &self.golden, &self.prediction))
    }

    fn sampling(&self) -> Sampling {
        Sampling::new(0.2, 0.1, 1024)
    }

    fn parse(&self, text: &str) -> Option<bool> {
        dialsim_verdict(text)
    }

    /// DialSim's judge is asked up to three times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 3 }
    }

    fn fallback(&self) -> bool {
        false
    }

    fn offline(&self, _lang: Lang) -> bool {
        self.fallback()
    }
}

/// NFCats: a 1–5 rating of an answer to a non-factoid question, read after the last
/// `###Score of the answer:` marker. `None` (counted as 0) after three unusable replies.
#[derive(Debug, Clone)]
pub struct RubricJudge {
    /// The question as asked.
    pub question: String,
    /// The system's answer.
    pub answer: String,
}

impl Operation for RubricJudge {
    type Output = Option<u8>;

    fn name(&self) -> &'static str {
        "judge_rubric"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        vec![Message::user(format!(
            "Rate how well the answer below serves the person who asked the non-factoid \
             question, on this scale:\n\
             1 - does not answer the question, or is wrong or harmful;\n\
             2 - touches the question but misses most of what was asked;\n\
             3 - a partial answer with noticeable gaps or errors;\n\
             4 - a good answer with minor gaps;\n\
             5 - a complete, accurate, well-organized answer.\n\n\
             Question:\n{}\n\nAnswer:\n{}\n\n\
             Explain your rating briefly, then end with a line of the form\n\
             ###Score of the answer: <1-5>",
            self.question, self.answer
        ))]
    }

    /// Upstream's system message and prompt, filled with the question and the answer.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.nfcats_judge(&self.question, &self.answer))
    }

    /// Upstream's judge client: temperature 0 and 1 024 tokens set, top-p its default 0.1.
    fn sampling(&self) -> Sampling {
        Sampling::new(0.0, 0.1, 1024)
    }

    fn parse(&self, text: &str) -> Option<Option<u8>> {
        nfcats_score(text).map(Some)
    }

    /// NFCats' judge is asked up to three times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 3 }
    }

    fn fallback(&self) -> Option<u8> {
        None
    }

    fn offline(&self, _lang: Lang) -> Option<u8> {
        self.fallback()
    }
}

/// HelloBench: every checklist item scored in {0, 0.25, 0.5, 0.75, 1}. The reply must list as
/// many items as the checklist has; an item whose score is unreadable counts 0; no usable
/// reply gives an empty list.
#[derive(Debug, Clone)]
pub struct ChecklistJudge {
    /// The instruction.
    pub instruction: String,
    /// The response, re-tokenised as upstream does.
    pub response: String,
    /// The checklist items as stored.
    pub checklist: Vec<Value>,
}

impl Operation for ChecklistJudge {
    type Output = Vec<Value>;

    fn name(&self) -> &'static str {
        "judge_checklist"
    }

    fn messages(&self, _lang: Lang) -> Vec<Message> {
        let checklist = serde_json::to_string(&self.checklist).unwrap_or_default();
        vec![
            Message::system(
                "You check responses of language models against a checklist of yes/no \
                 questions about what the user asked for.",
            ),
            Message::user(format!(
                "Score each checklist item for the response below with one of 0, 0.25, \
                 0.5, 0.75 or 1: 0 when the response fails the item, 0.25 when it meets a \
                 little of it, 0.5 when it is unclear, 0.75 when it meets most of it with \
                 small flaws, 1 only when it cannot be improved on that item. Be strict.\n\n\
                 Instruction:\n{}\n\nResponse (complete):\n{}\n\nChecklist:\n{}\n\n\
                 Reply with a JSON list of exactly {} objects, one per item in order: \
                 [{{\"checklist_id\": <n>, \"reason\": \"...\", \"evaluation_score\": <score>}}] \
                 and nothing else.",
                self.instruction,
                self.response,
                checklist,
                self.checklist.len()
            )),
        ]
    }

    /// Upstream's system message and prompt, the checklist as upstream's `json.dumps` writes
    /// it (each item's id before its content, as the published rows write them: the parsed
    /// items no longer know their order).
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        let checklist = mb_upstream::python::dumps_unicode(
            &Value::Array(self.checklist.clone()),
            &["checklist_id", "checklist_content"],
        );
        Some(upstream.hellobench_checklist(
            &self.instruction,
            &self.response,
            &checklist,
            self.checklist.len(),
        ))
    }

    fn sampling(&self) -> Sampling {
        Sampling::new(0.8, 0.1, 4096)
    }

    fn parse(&self, text: &str) -> Option<Vec<Value>> {
        // Upstream removes fences, newlines and backslashes before parsing.
        let cleaned = text
            .replace("```json", "")
            .replace("```python", "")
            .replace("```", "")
            .replace(['\n', '\\'], "");
        let items = extract_json(&cleaned)?.as_array()?.clone();
        (items.len() == self.checklist.len()).then_some(items)
    }

    /// HelloBench's judge is asked up to three times.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 3 }
    }

    fn fallback(&self) -> Vec<Value> {
        Vec::new()
    }

    fn offline(&self, _lang: Lang) -> Vec<Value> {
        self.fallback()
    }
}

/// WritingBench's critic: a 1–10 score of a response against the query's criteria, as
/// `{"score": n, "reason": "..."}`. `None` after the attempts (upstream raises).
#[derive(Debug, Clone)]
pub struct CriticJudge {
    /// The writing request.
    pub query: String,
    /// The system's text.
    pub response: String,
    /// The criteria list as stored.
    pub criteria: Value,
}

impl Operation for CriticJudge {
    type Output = Option<(u8, String)>;

    fn name(&self) -> &'static str {
        "judge_critic"
    }

    fn messages(&self, lang: Lang) -> Vec<Message> {
        let criteria = serde_json::to_string_pretty(&self.criteria).unwrap_or_default();
        let (system, user) = match lang {
            Lang::En => (
                "You are an expert judge of writing.",
                format!(
                    "Score the response to the writing request from 1 to 10 against the \
                     criteria. Reserve 9-10 for work with no real weakness; most competent \
                     work deserves 5-7.\n\nRequest:\n{}\n\nResponse:\n{}\n\nCriteria:\n{}\n\n\
                     Reply with JSON only: {{\"score\": <1-10>, \"reason\": \"...\"}}",
                    self.query, self.response, criteria
                ),
            ),
            Lang::Zh => (
                "你是一名写作评审专家。",
                format!(
                    "请依据评分标准，对回答给出 1 到 10 分。只有毫无明显缺点的作品才能得 9-10 分，\
                     多数合格作品应在 5-7 分。\n\n写作要求：\n{}\n\n回答：\n{}\n\n评分标准：\n{}\n\n\
                     只回复 JSON：{{\"score\": <1-10>, \"reason\": \"...\"}}",
                    self.query, self.response, criteria
                ),
            ),
        };
        vec![Message::system(system), Message::user(user)]
    }

    /// Upstream's system message and prompt, the criteria as Python's `str()` writes them.
    fn upstream_messages(
        &self,
        upstream: &Upstream,
        _lang: Lang,
    ) -> Option<Result<Vec<Message>, UpstreamError>> {
        Some(upstream.critic(&repr_json(&self.criteria), &self.query, &self.response))
    }

    fn sampling(&self) -> Sampling {
        Sampling::new(1.0, 0.95, 2048)
    }

    /// Upstream's reading: the reply stripped of the characters `json|`` ` at both ends must
    /// be a JSON object whose `score` equals an integer from 1 to 10 by Python's `==` (so
    /// `7.0` and `true` count, the string `"7"` does not) and whose `reason` is a string.
    fn parse(&self, text: &str) -> Option<Option<(u8, String)>> {
        let value: Value = serde_json::from_str(strip_chars(text, "json|`")).ok()?;
        let score = match &value["score"] {
            Value::Bool(true) => 1.0,
            Value::Number(n) => n.as_f64()?,
            _ => return None,
        };
        let reason = value["reason"].as_str()?.to_string();
        ((1.0..=10.0).contains(&score) && score.fract() == 0.0)
            .then_some(Some((score as u8, reason)))
    }

    /// WritingBench's critic: up to five calls per attempt, three attempts.
    fn patience(&self) -> Patience {
        Patience::Resend { attempts: 15 }
    }

    fn fallback(&self) -> Option<(u8, String)> {
        None
    }

    fn offline(&self, _lang: Lang) -> Option<(u8, String)> {
        self.fallback()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replies_are_read_as_upstream_reads_them() {
        let checklist = ChecklistJudge {
            instruction: "i".into(),
            response: "r".into(),
            checklist: vec![json!("a?"), json!("b?")],
        };
        let reply = "```json\n[{\"checklist_id\": 1, \"reason\": \"x\", \"evaluation_score\": 0.75},\n{\"checklist_id\": 2, \"reason\": \"y\", \"evaluation_score\": \"1\"}]\n```";
        assert_eq!(checklist.parse(reply).map(|v| v.len()), Some(2));
        assert_eq!(checklist.parse("[{\"checklist_id\": 1}]"), None);

        let critic = CriticJudge {
            query: "q".into(),
            response: "r".into(),
            criteria: json!([]),
        };
        assert_eq!(
            critic.parse("```json\n{\"score\": 7.0, \"reason\": \"fine\"}\n```"),
            Some(Some((7, "fine".to_string())))
        );
        assert_eq!(
            critic.parse("{\"score\": true, \"reason\": \"\"}"),
            Some(Some((1, String::new())))
        );
        // Upstream rejects a score written as a string, a missing reason, and prose around.
        assert_eq!(
            critic.parse("{\"score\": \"7\", \"reason\": \"fine\"}"),
            None
        );
        assert_eq!(critic.parse("{\"score\": 7}"), None);
        assert_eq!(
            critic.parse("Score: {\"score\": 7, \"reason\": \"x\"}"),
            None
        );
        assert_eq!(critic.parse("{\"score\": 11, \"reason\": \"x\"}"), None);
        assert_eq!(critic.parse("{\"score\": 6.5, \"reason\": \"x\"}"), None);

        let rubric = RubricJudge {
            question: "q".into(),
            answer: "a".into(),
        };
        assert_eq!(rubric.parse("ok\n###Score of the answer: 4"), Some(Some(4)));
        assert_eq!(rubric.parse("no score"), None);
    }
}
