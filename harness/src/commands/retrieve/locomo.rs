//! `retrieve` on LoCoMo: every conversation memorized into its own namespace, every question of
//! categories 1–4 (category 5 is adversarial, its evidence a trap) asked with its plain text and
//! scored against the evidence turns the corpus holds.

use mb_datasets::corpus::locomo_conversation;
use mb_datasets::sample::SAMPLE_LOCOMO_JSON;
use serde_json::Value;
use std::collections::HashSet;

use super::report::{print_table, report, Ingestion};
use super::score::{score, TokenCounter};
use super::{RetrieveArgs, RetrieveSetup};
use crate::error::HarnessError;

/// How many units a question retrieves: enough for the largest cut-off and to fill the largest
/// budget with turn-sized units.
const MIN_DEPTH: usize = 50;

/// What counts as found, as the report says it.
const RELEVANCE: &str = "a retrieved unit is relevant when it covers an evidence turn (turn units: the turn itself; session units: a session containing it)";

/// Runs `retrieve` over a LoCoMo file (default: the built-in sample).
pub(super) fn run(args: &RetrieveArgs, setup: &RetrieveSetup) -> Result<(), HarnessError> {
    let text = match &args.locomo {
        Some(path) => {
            mb_core::files::read_text(path, mb_core::files::DATASET_LIMIT).map_err(|e| {
                HarnessError::File {
                    path: path.display().to_string(),
                    detail: e.to_string(),
                }
            })?
        }
        None => SAMPLE_LOCOMO_JSON.to_string(),
    };
    let origin = args
        .locomo
        .as_ref()
        .map_or("built-in sample".to_string(), |p| p.display().to_string());
    let samples: Vec<Value> = serde_json::from_str(&text).map_err(|e| HarnessError::File {
        path: origin.clone(),
        detail: format!("not a LoCoMo JSON array: {e}"),
    })?;
    let cutoffs = &setup.cutoffs;
    let depth = cutoffs.ks.last().copied().unwrap_or(10).max(MIN_DEPTH);
    let tokens = TokenCounter::new()?;
    let mut scored = Vec::new();
    let mut ingestion = Ingestion::default();
    for (index, sample) in samples.iter().enumerate() {
        let conversation =
            locomo_conversation(&sample["conversation"]).map_err(|e| HarnessError::File {
                path: format!("{origin}, sample {index}"),
                detail: e.to_string(),
            })?;
        let namespace = format!("retrieve/{}/{index}", setup.spec.name);
        let (system, memory) =
            setup.memorize(namespace, &args.date, &conversation, &mut ingestion)?;

        let corpus_turns: HashSet<&str> = memory
            .units
            .iter()
            .flat_map(|u| u.turns.iter().map(String::as_str))
            .collect();
        for qa in sample["qa"].as_array().into_iter().flatten() {
            let category = qa["category"].as_u64().unwrap_or(0);
            let Some(question) = qa["question"].as_str() else {
                continue;
            };
            if category == 5 {
                continue;
            }
            // The question's evidence turns that the corpus holds (a few LoCoMo ids are typos).
            let evidence: HashSet<&str> = qa["evidence"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|t| corpus_turns.contains(t))
                .collect();
            let relevant: HashSet<&str> = memory
                .units
                .iter()
                .filter(|u| u.turns.iter().any(|t| evidence.contains(t.as_str())))
                .map(|u| u.doc_id.as_str())
                .collect();
            let (retrieved, latency) = setup.retrieve(system.as_ref(), question, depth)?;
            scored.extend(score(
                category.to_string(),
                &retrieved,
                &evidence,
                &relevant,
                cutoffs,
                &tokens,
                latency,
            ));
        }
    }
    let report = report(setup.spec, cutoffs, RELEVANCE, &scored, &ingestion);
    setup.finish(args, report, |out, report| {
        print_table(out, report, cutoffs)
    })
}
