//! The SFT baseline's training pairs, chosen as upstream's `load_and_filter_sft_data` and
//! `extract_first_round_pairs` mean to choose them.
//!
//! Every training row of the set whose `dialog` has the action in any round's implicit
//! feedback is taken, in the set's order, then shuffled with `random.seed(42)`. A row gives a
//! pair when its round-1 feedback (the first entry numbered 1) has the action: the dialog's
//! first system message (if any), first user message and first assistant message. Upstream's
//! script drops each row's feedback between the two steps, so it finds no pair at all and stops
//! with "No training data found" (docs/parity.md, "SFT baseline"); this is what it evidently
//! means to do.

use mb_core::Role;
use mb_datasets::row::{Action, Dialog};
use mb_datasets::{Dataset, PyRandom};
use mb_sft::SftPair;

use crate::error::HarnessError;

/// The pairs of `datasets`' training rows for `action`, in upstream's shuffled order.
pub fn first_round_pairs(
    datasets: &[Dataset],
    action: Action,
) -> Result<Vec<SftPair>, HarnessError> {
    let mut dialogs: Vec<(u64, &Dialog)> = Vec::new();
    for dataset in datasets {
        for row in &dataset.train {
            // Upstream reads the `dialog` and `implicit_feedback` columns on every dataset.
            if let Some(dialog) = row.dialogs.get("") {
                if dialog.feedback.iter().any(|f| f.actions.contains(&action)) {
                    dialogs.push((row.test_idx, dialog));
                }
            }
        }
    }
    PyRandom::new(42).shuffle(&mut dialogs);
    let mut pairs = Vec::new();
    for (test_idx, dialog) in dialogs {
        let round_one = dialog.feedback.iter().find(|f| f.round == 1);
        if !round_one.is_some_and(|f| f.actions.contains(&action)) {
            continue;
        }
        let first = |role: Role| {
            dialog
                .messages
                .iter()
                .find(|m| m.role == role)
                .map(|m| m.content.clone())
        };
        let missing = |what: &str| {
            HarnessError::Usage(format!(
                "training dialog test_idx {test_idx} has no {what} message to learn from"
            ))
        };
        pairs.push(SftPair {
            test_idx,
            system_prompt: first(Role::System),
            instruction: first(Role::User).ok_or_else(|| missing("user"))?,
            output: first(Role::Assistant).ok_or_else(|| missing("assistant"))?,
        });
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use mb_core::test_data::{run_json, UpstreamPython};
    use mb_datasets::catalog::{Catalog, DatasetType};
    use mb_datasets::sample::{sample_source, SAMPLE_SET};
    use mb_datasets::Row;
    use serde_json::{json, Value};

    use super::*;

    /// A training row as upstream's code reads it: `dialog` and `implicit_feedback`.
    fn upstream_row(row: &Row) -> Value {
        match row.dialogs.get("") {
            Some(dialog) => json!({
                "test_idx": row.test_idx,
                "dialog": dialog.messages.iter()
                    .map(|m| json!({"role": m.role.as_str(), "content": m.content}))
                    .collect::<Vec<_>>(),
                "implicit_feedback": dialog.feedback.iter()
                    .map(|f| json!({"round": f.round, "implicit_actions": f.actions}))
                    .collect::<Vec<_>>(),
            }),
            None => json!({"test_idx": row.test_idx, "implicit_feedback": []}),
        }
    }

    /// Upstream's own selection on the sample: as published it finds nothing; with the feedback
    /// it drops given back, its pairs (and their order) are these.
    #[test]
    fn the_pairs_are_upstreams_own_with_the_feedback_it_drops_given_back() {
        let Some(python) = UpstreamPython::find() else {
            return;
        };
        let script_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../scripts/upstream/sft_pairs.py"
        );
        let script = std::fs::read_to_string(script_path).unwrap();
        let datasets = mb_datasets::load(
            &sample_source().unwrap(),
            &Catalog::builtin().unwrap(),
            DatasetType::Domain,
            SAMPLE_SET,
        )
        .unwrap();
        let rows: Vec<Value> = datasets
            .iter()
            .map(|d| json!({"name": d.name(), "train": d.train.iter().map(upstream_row).collect::<Vec<_>>()}))
            .collect();
        for (action, name) in [(Action::Like, "like"), (Action::Copy, "copy")] {
            let input = json!({"action": name, "datasets": rows});
            let theirs = run_json(&mut python.script(&script), &input.to_string());
            let published = theirs["published"].as_str().unwrap_or_default();
            assert!(published.contains("No training data"), "{name}: {theirs}");
            let ours: Vec<Value> = first_round_pairs(&datasets, action)
                .unwrap()
                .iter()
                .map(|p| json!([p.test_idx, p.system_prompt, p.instruction, p.output]))
                .collect();
            assert!(!ours.is_empty(), "{name}: the sample has pairs");
            assert_eq!(Value::from(ours), theirs["pairs"], "{name}");
        }
    }
}
