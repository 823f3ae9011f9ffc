//! The built-in sample: two small datasets written for this project, so every command runs
//! on a fresh machine with no download.
//!
//! `Sample-Locomo` is one LoCoMo-style conversation (six dated sessions) with thirty questions
//! of all five categories and their evidence turns; `Sample-Stories` is a short-story task
//! with pre-recorded training dialogs whose feedback shows one user's consistent taste. Both
//! are imported and split at run time by the same code as upstream's data
//! ([`crate::import`]), and form the domain `Sample` of the catalog.

use crate::error::DataError;
use crate::import::{self, ImportError, LocomoWords, Paraphrase};
use crate::source::{InMemorySource, StoredDataset};
use crate::split::test_ids;
use crate::split::SplitName;
use crate::table::parse_json_lines;

/// The catalog's name for the sample's domain.
pub const SAMPLE_SET: &str = "Sample";

/// The sample conversation in LoCoMo's raw format (`locomo10.json` schema).
pub const SAMPLE_LOCOMO_JSON: &str = include_str!("../sample/raw/sample_locomo.json");
const STORIES: &str = include_str!("../sample/raw/sample_stories.jsonl");

/// The sample's datasets, imported and split, LoCoMo's questions in the project's words.
pub fn sample_source() -> Result<InMemorySource, DataError> {
    sample_source_in(&Paraphrase)
}

/// The sample's datasets, LoCoMo's questions in `words` (upstream's, for a run comparable
/// with the paper).
pub fn sample_source_in(words: &dyn LocomoWords) -> Result<InMemorySource, DataError> {
    let mut source = InMemorySource::new("built-in sample");
    let imported = import::locomo(
        SAMPLE_LOCOMO_JSON,
        "sample_locomo.json",
        |_| "Sample-Locomo".into(),
        None,
        words,
    )
    .map_err(import_error("Sample-Locomo"))?;
    for (name, stored) in imported {
        source.insert(name, stored);
    }
    let rows =
        parse_json_lines(STORIES, "sample_stories.jsonl").map_err(|source| DataError::Table {
            dataset: "Sample-Stories".into(),
            split: SplitName::Train,
            source,
        })?;
    let ids: Vec<u64> = (0..rows.len() as u64).collect();
    let split = test_ids(&ids, None);
    let pick = |ids: &[u64]| {
        ids.iter()
            .filter_map(|&i| rows.get(i as usize).cloned())
            .collect()
    };
    source.insert(
        "Sample-Stories",
        StoredDataset {
            train: pick(&split.train),
            test: pick(&split.test),
            corpus: None,
        },
    );
    Ok(source)
}

fn import_error(dataset: &'static str) -> impl Fn(ImportError) -> DataError {
    move |error| DataError::Corpus {
        dataset: dataset.to_string(),
        detail: error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{Catalog, DatasetType};
    use crate::dataset::load;
    use crate::row::{Action, Input};

    #[test]
    fn the_sample_loads_as_the_sample_domain() {
        let source = sample_source().unwrap();
        let catalog = Catalog::builtin().unwrap();
        let datasets = load(&source, &catalog, DatasetType::Domain, SAMPLE_SET).unwrap();
        let names: Vec<&str> = datasets.iter().map(|d| d.name()).collect();
        assert_eq!(names, ["Sample-Locomo", "Sample-Stories"]);

        let locomo = &datasets[0];
        assert_eq!((locomo.train.len(), locomo.test.len()), (24, 6));
        let corpus = locomo.corpus.as_ref().unwrap();
        assert_eq!(corpus.sessions.len(), 6);
        // Every question's evidence names turns of the conversation.
        for row in locomo.train.iter().chain(&locomo.test) {
            let evidence = row.info["evidence"].as_array().unwrap();
            assert!(!evidence.is_empty(), "row {} has no evidence", row.test_idx);
            assert!(matches!(row.input, Input::Prompt(ref p) if p.contains("Question:")));
        }

        let stories = &datasets[1];
        assert_eq!((stories.train.len(), stories.test.len()), (16, 4));
        for row in stories.train.iter().chain(&stories.test) {
            let dialog = row.dialog_for("bm25").unwrap();
            assert!(dialog.messages.len() >= 2);
            let assistant_turns = dialog
                .messages
                .iter()
                .filter(|m| m.role == mb_core::Role::Assistant)
                .count();
            assert_eq!(
                dialog.feedback.len(),
                assistant_turns,
                "row {}",
                row.test_idx
            );
            assert!(row.golden_answer().is_some());
        }
        let actions: Vec<Action> = stories
            .train
            .iter()
            .flat_map(|r| {
                r.dialog_for("")
                    .unwrap()
                    .feedback
                    .iter()
                    .flat_map(|f| f.actions.clone())
            })
            .collect();
        assert!(actions.contains(&Action::Like) && actions.contains(&Action::Dislike));
    }
}
