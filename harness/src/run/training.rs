//! The set's training dialogs in upstream's shuffled order, and their measured memorization.

use mb_baselines::{MemoryError, MemorySystem, SystemSpec, TrainingDialog};
use mb_datasets::row::{Dialog, Row};
use mb_datasets::{Dataset, PyRandom};

use crate::error::HarnessError;
use crate::run::cost::{Cost, DialogCost, MemoryBuilt};
use crate::run::progress::ModelProgress;

/// Each memorized training dialog's cost, in a run directory.
pub const MEMORIZATION: &str = "memorization.json";

/// A training dialog of the set: its row, dataset and recorded conversation.
pub type SetDialog<'a> = (&'a Row, &'a str, &'a Dialog);

/// The set's training dialogs for `spec` (`dialog`, or `dialog_<stem>` on corpus datasets),
/// shuffled as upstream's `random.seed(42); random.shuffle(...)`. Rows without the column are
/// skipped.
pub fn training_dialogs<'a>(spec: &SystemSpec, datasets: &'a [Dataset]) -> Vec<SetDialog<'a>> {
    training_dialogs_where(spec, datasets, |_| true)
}

/// [`training_dialogs`] that `keep` accepts, chosen before the shuffle (upstream's action
/// feedback shuffles the dialogs it kept).
pub fn training_dialogs_where<'a>(
    spec: &SystemSpec,
    datasets: &'a [Dataset],
    keep: impl Fn(&Dialog) -> bool,
) -> Vec<SetDialog<'a>> {
    let mut dialogs = Vec::new();
    if !spec.memoryless {
        for dataset in datasets {
            let stem = if dataset.corpus.is_some() {
                spec.dialog_stem
            } else {
                ""
            };
            for row in &dataset.train {
                if let Some(dialog) = row.dialogs.get(stem).filter(|d| keep(d)) {
                    dialogs.push((row, dataset.name(), dialog));
                }
            }
        }
    }
    PyRandom::new(42).shuffle(&mut dialogs);
    dialogs
}

/// The training dialog a set dialog gives the memory.
pub fn as_training<'a>((row, dataset, dialog): &SetDialog<'a>) -> TrainingDialog<'a> {
    TrainingDialog {
        test_idx: row.test_idx,
        dataset,
        lang: row.lang,
        messages: &dialog.messages,
        metadata: None,
    }
}

/// Memorizes `dialogs` in order, measuring each, and skipping (and counting) those the system
/// cannot take; a progress bar shows the dialogs memorized and the model calls they took.
pub async fn memorize(
    system: &dyn MemorySystem,
    label: &str,
    dialogs: &[TrainingDialog<'_>],
) -> Result<MemoryBuilt, HarnessError> {
    let bar = ModelProgress::new(
        dialogs.len() as u64,
        label,
        "dialogs",
        &system.context().llm,
    );
    let mut built = MemoryBuilt {
        dialogs: dialogs.len(),
        ..MemoryBuilt::default()
    };
    for &dialog in dialogs {
        let (outcome, cost) = Cost::measure(system, system.memorize_dialog(dialog)).await?;
        let skipped = match outcome {
            Ok(()) => false,
            Err(error @ MemoryError::BadDialog { .. }) => {
                tracing::warn!("{}: skipped: {error}", dialog.dataset);
                true
            }
            Err(other) => return Err(other.into()),
        };
        built.skipped += usize::from(skipped);
        built.total.add(&cost);
        built.per_dialog.push(DialogCost {
            dataset: dialog.dataset.to_string(),
            test_idx: dialog.test_idx,
            skipped,
            cost,
        });
        bar.inc();
    }
    Ok(built)
}
