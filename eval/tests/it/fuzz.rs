//! Fuzzing with seeded hostile text (`mb_llm::testing::HostileText`; `MB_FUZZ_CASES` runs more):
//! the judges' reply parsers never panic.

use mb_eval::{ChecklistJudge, CriticJudge, MatchJudge, MergedRubric, OverallJudge, RubricJudge};
use mb_llm::ops::Operation;
use mb_llm::testing::{fuzz_cases, HostileText};
use serde_json::json;

#[test]
fn hostile_judge_replies_never_panic_a_parser() {
    let judges = (
        MatchJudge {
            question: "Who?".into(),
            golden: "Ross".into(),
            prediction: "Ross".into(),
        },
        RubricJudge {
            question: "Why?".into(),
            answer: "Because.".into(),
        },
        ChecklistJudge {
            instruction: "Explain".into(),
            response: "An explanation".into(),
            checklist: vec![json!("clear"), json!("correct")],
        },
        CriticJudge {
            query: "Write".into(),
            response: "Text".into(),
            criteria: json!({"name": "style", "criteria_description": "good"}),
        },
        OverallJudge {
            rubric: MergedRubric::JreL,
            input: "Summarize".into(),
            output: "A summary".into(),
            reference: "The summary".into(),
            metrics: MergedRubric::JreL.metrics("A summary", "The summary"),
            upstream_fields: MergedRubric::JreL.upstream_fields("A summary", "The summary"),
        },
    );
    let mut texts = HostileText::new(41);
    for _ in 0..fuzz_cases(2_000) {
        let reply = texts.next_text();
        let _ = judges.0.parse(&reply);
        let _ = judges.1.parse(&reply);
        let _ = judges.2.parse(&reply);
        let _ = judges.3.parse(&reply);
        let _ = judges.4.parse(&reply);
    }
}
