//! LongMemEval's question-answering score: accuracy overall, per question type, and averaged
//! over the six types as the official `print_qa_metrics.py` prints it. The reading prompt is in
//! [`super::reading`], the judge in [`super::judge`].

use std::collections::BTreeMap;

use mb_datasets::longmemeval::QuestionType;

/// QA accuracy: overall, per question type, and averaged over the six types (each type weighs
/// the same), from `(type, correct)` pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Accuracy {
    /// Share correct over all questions.
    pub overall: f64,
    /// Share correct per type.
    pub per_type: BTreeMap<QuestionType, f64>,
    /// Mean of the six types' shares; `None` unless every type has a question (the official
    /// script's mean over six types is then undefined, NaN).
    pub task_averaged: Option<f64>,
}

/// Accuracy of `judged` (`(type, correct)` per question); `None` when empty.
pub fn accuracy(judged: &[(QuestionType, bool)]) -> Option<Accuracy> {
    if judged.is_empty() {
        return None;
    }
    let share = |items: &[bool]| items.iter().filter(|c| **c).count() as f64 / items.len() as f64;
    let mut by_type: BTreeMap<QuestionType, Vec<bool>> = BTreeMap::new();
    for (t, correct) in judged {
        by_type.entry(*t).or_default().push(*correct);
    }
    let per_type: BTreeMap<QuestionType, f64> = by_type
        .iter()
        .map(|(t, items)| (*t, share(items)))
        .collect();
    let all: Vec<bool> = judged.iter().map(|(_, c)| *c).collect();
    Some(Accuracy {
        overall: share(&all),
        task_averaged: (per_type.len() == QuestionType::ALL.len())
            .then(|| per_type.values().sum::<f64>() / per_type.len() as f64),
        per_type,
    })
}
