//! LongMemEval's question answering: the reading prompts and notes, the judge's prompts and
//! verdicts, and the accuracy over question types.

use mb_core::Lang;
use mb_datasets::longmemeval::QuestionType;
use mb_eval::longmemeval::judge::{JudgeWords, LongMemEvalJudge};
use mb_eval::longmemeval::qa::accuracy;
use mb_eval::longmemeval::reading::{reading_prompt, ReadingNote, ReadingStyle, EMPTY_NOTE};
use mb_llm::ops::Operation;
use serde_json::Value;

#[test]
fn reading_prompts_are_one_user_message_sorted_by_date() {
    let items = vec![
        (
            "2023/05/20 (Sat) 18:40".to_string(),
            "user: she is a border collie".to_string(),
        ),
        (
            "2023/05/01 (Mon) 09:15".to_string(),
            "user: pasta with mushrooms".to_string(),
        ),
    ];
    // The official plain reading: no system message, dated sessions in date order, no
    // instruction to say "I don't know".
    let plain = reading_prompt(ReadingStyle::Plain, &items, "2023/05/30", "What breed?");
    assert_eq!(plain.len(), 1);
    let text = &plain[0].content;
    assert!(text.find("pasta").unwrap() < text.find("collie").unwrap());
    assert!(text.contains(
        "### Session 1:\nSession Date: 2023/05/01 (Mon) 09:15\nSession Content:\nuser: pasta"
    ));
    assert!(
        text.contains("Current Date: 2023/05/30")
            && text.ends_with("Question: What breed?\nAnswer:")
    );
    assert!(!text.to_lowercase().contains("know"), "{text}");
    // Official Chain-of-Note: the items are notes; the answer is reasoned step by step.
    let con = reading_prompt(
        ReadingStyle::ChainOfNote,
        &items,
        "2023/05/30",
        "What breed?",
    );
    assert!(con[0].content.ends_with("Answer (step by step):"));
    assert!(
        ReadingStyle::ChainOfNote.takes_notes() && !ReadingStyle::ChainOfNoteOneCall.takes_notes()
    );
    // Ours in one call: the items as JSON, notes and reasoning in one reply.
    let one_call = reading_prompt(
        ReadingStyle::ChainOfNoteOneCall,
        &items,
        "2023/05/30",
        "What breed?",
    );
    let content = &one_call[0].content;
    let json_start = content.find('[').unwrap();
    let json_end = content.rfind(']').unwrap();
    let array: Vec<Value> = serde_json::from_str(&content[json_start..=json_end]).unwrap();
    assert_eq!(array[0]["date"], "2023/05/01 (Mon) 09:15");
    assert!(content.contains("note"));
}

#[test]
fn a_reading_note_covers_one_item_and_says_empty_when_nothing_bears_on_the_question() {
    let note = |content: &str| ReadingNote {
        date: "2023/05/20".into(),
        content: content.into(),
        question_date: "2023/05/30".into(),
        question: "What did I tell you about my collie?".into(),
        official: None,
    };
    let op = note("user: my dog is a border collie\nuser: I had pasta");
    let prompt = &op.messages(Lang::En)[0].content;
    assert!(
        prompt.contains("Session Date: 2023/05/20") && prompt.contains("Question Date: 2023/05/30")
    );
    assert_eq!(op.sampling().max_tokens, 500);
    assert_eq!(op.offline(Lang::En), "user: my dog is a border collie");
    assert_eq!(note("user: I had pasta").offline(Lang::En), EMPTY_NOTE);
}

#[test]
fn the_judge_picks_criteria_by_type_and_reads_yes() {
    let judge = |question_type, abstention| LongMemEvalJudge {
        question_type,
        abstention,
        question: "q".into(),
        answer: "a".into(),
        hypothesis: "h".into(),
        words: JudgeWords::Ours,
    };
    let text = |j: LongMemEvalJudge| j.messages(Lang::En)[0].content.clone();
    assert!(text(judge(QuestionType::TemporalReasoning, false)).contains("off-by-one"));
    let update = text(judge(QuestionType::KnowledgeUpdate, false));
    assert!(update.contains("updated answer"));
    // The official criteria only: nothing about outdated values or contradicting the user.
    assert!(!update.contains("outdated"), "{update}");
    let preference = text(judge(QuestionType::SingleSessionPreference, false));
    assert!(preference.contains("Rubric: a") && !preference.contains("contradicts"));
    let abstention = text(judge(QuestionType::MultiSession, true));
    assert!(abstention.contains("cannot be answered") && !abstention.contains("as if it knew"));
    assert!(text(judge(QuestionType::SingleSessionUser, false)).contains("Correct Answer: a"));
    for prompt in [update, preference, abstention] {
        assert!(prompt.ends_with("Answer yes or no only."), "{prompt}");
    }
    let j = judge(QuestionType::SingleSessionUser, false);
    assert_eq!(j.parse("Yes."), Some(true));
    assert_eq!(j.parse("no"), Some(false));
    assert_eq!(j.sampling().max_tokens, 10);

    let scored = accuracy(&[
        (QuestionType::MultiSession, true),
        (QuestionType::MultiSession, false),
        (QuestionType::TemporalReasoning, true),
    ])
    .unwrap();
    assert!((scored.overall - 2.0 / 3.0).abs() < 1e-12);
    // Averaged over the six types, as the official script: undefined with two of six.
    assert_eq!(scored.task_averaged, None);
    let six: Vec<(QuestionType, bool)> = QuestionType::ALL
        .iter()
        .enumerate()
        .flat_map(|(i, t)| [(*t, true), (*t, i % 2 == 0)])
        .collect();
    let scored = accuracy(&six).unwrap();
    assert_eq!(scored.task_averaged, Some(0.75));
    assert!(accuracy(&[]).is_none());
}

#[test]
fn the_offline_judge_is_a_lexical_proxy() {
    let judge = |abstention: bool, answer: &str, hypothesis: &str| {
        LongMemEvalJudge {
            question_type: QuestionType::SingleSessionUser,
            abstention,
            question: "Where did I buy my bike?".into(),
            answer: answer.into(),
            hypothesis: hypothesis.into(),
            words: JudgeWords::Ours,
        }
        .offline(Lang::En)
    };
    // At least half of the reference's words, stemmed: "Bikes" matches "bike".
    assert!(judge(
        false,
        "the Target store",
        "You bought it at a target."
    ));
    assert!(judge(false, "Rivendell Bikes shop", "At Rivendell Bikes."));
    assert!(!judge(false, "Rivendell Bikes shop", "At a shop downtown."));
    assert!(!judge(false, "Rivendell Bikes shop", "I don't know."));
    // Abstention: declining is correct, answering is not.
    assert!(judge(
        true,
        "You never said.",
        "I don\u{2019}t know which one."
    ));
    assert!(judge(true, "You never said.", "That was not mentioned."));
    assert!(!judge(true, "You never said.", "At Rivendell Bikes."));
}
