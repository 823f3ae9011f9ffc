//! What work cost: the time, LLM operations, model tokens and fallbacks of memory processing
//! (measured per memorized dialog and per corpus) and their share in each test case.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Instant;

use mb_baselines::{MemoryError, MemorySystem};
use mb_llm::usage_of;
use serde::{Deserialize, Serialize};

use crate::error::HarnessError;

/// The cost of one piece of memory processing.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Cost {
    /// Wall-clock seconds.
    pub seconds: f64,
    /// LLM operations the memory ran, offline ones included (those make no model calls).
    pub llm_operations: u64,
    /// Prompt tokens of the model calls made.
    pub input_tokens: u64,
    /// Generated tokens of the model calls made.
    pub output_tokens: u64,
    /// Operations whose model output stayed unusable and fell back, by operation.
    pub fallbacks: BTreeMap<String, u64>,
}

impl Cost {
    /// Runs `work` on `system` and measures it.
    pub async fn measure<T>(
        system: &dyn MemorySystem,
        work: impl Future<Output = Result<T, MemoryError>>,
    ) -> Result<(Result<T, MemoryError>, Cost), HarnessError> {
        let operations = system.stats()?.llm_operations;
        let started = Instant::now();
        let (outcome, usage) = usage_of(work).await;
        let cost = Cost {
            seconds: started.elapsed().as_secs_f64(),
            llm_operations: system.stats()?.llm_operations.saturating_sub(operations),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            fallbacks: usage.fallbacks,
        };
        Ok((outcome, cost))
    }

    /// Adds `other` to this cost.
    pub fn add(&mut self, other: &Cost) {
        self.seconds += other.seconds;
        self.llm_operations += other.llm_operations;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        for (operation, count) in &other.fallbacks {
            *self.fallbacks.entry(operation.clone()).or_default() += count;
        }
    }

    /// A test case's share when the cost serves `cases` cases, as memorized dialogs.
    pub fn dialogs_share(&self, cases: f64) -> CaseTiming {
        let cases = cases.max(1.0);
        CaseTiming {
            memory_dialogs: self.seconds / cases,
            ..self.share(cases)
        }
    }

    /// A test case's share when the cost serves `cases` cases, as corpus ingestion.
    pub fn corpus_share(&self, cases: f64) -> CaseTiming {
        let cases = cases.max(1.0);
        CaseTiming {
            memory_corpus: self.seconds / cases,
            ..self.share(cases)
        }
    }

    fn share(&self, cases: f64) -> CaseTiming {
        CaseTiming {
            llm_calls_memory: self.llm_operations as f64 / cases,
            input_tokens_memory: self.input_tokens as f64 / cases,
            output_tokens_memory: self.output_tokens as f64 / cases,
            fallbacks_memory: self.fallbacks.values().sum::<u64>() as f64 / cases,
            ..CaseTiming::default()
        }
    }
}

/// The cost of memorizing one training dialog (`memorization.json` lists them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DialogCost {
    /// Its dataset.
    pub dataset: String,
    /// Its row.
    pub test_idx: u64,
    /// The system could not take it (e.g. no user message); it was skipped.
    #[serde(default)]
    pub skipped: bool,
    /// What memorizing it cost.
    pub cost: Cost,
}

/// The memorization of a sequence of training dialogs.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MemoryBuilt {
    /// Dialogs memorized.
    pub dialogs: usize,
    /// Dialogs the system could not take (counted, skipped).
    pub skipped: usize,
    /// Their total cost.
    pub total: Cost,
    /// Each dialog's cost, in memorization order.
    pub per_dialog: Vec<DialogCost>,
}

/// Where one case's time went, in seconds, and how many LLM operations and model tokens it
/// took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CaseTiming {
    /// The memorization of training dialogs, divided by the test cases it serves.
    pub memory_dialogs: f64,
    /// The dataset's corpus ingestion, divided by its test cases.
    pub memory_corpus: f64,
    /// Retrieval and prompt assembly.
    pub predict_memory: f64,
    /// Waiting for the answer model.
    pub predict_llm: f64,
    /// LLM operations of memory processing (dialogs and corpus), amortised like its time.
    pub llm_calls_memory: f64,
    /// LLM operations of prediction: the memory's (e.g. query keywords) and the answer.
    pub llm_calls_predict: f64,
    /// Prompt tokens of memory processing, amortised like its time.
    pub input_tokens_memory: f64,
    /// Generated tokens of memory processing, amortised like its time.
    pub output_tokens_memory: f64,
    /// Prompt tokens of prediction (the memory's model calls and the answer).
    pub input_tokens_predict: f64,
    /// Generated tokens of prediction.
    pub output_tokens_predict: f64,
    /// Fallbacks (unusable model output replaced by upstream's fallback) of memory processing,
    /// amortised like its time.
    pub fallbacks_memory: f64,
    /// Fallbacks of prediction.
    pub fallbacks_predict: f64,
}

impl CaseTiming {
    /// The sum of two shares (e.g. a dataset's dialogs and its corpus).
    pub fn plus(self, other: CaseTiming) -> CaseTiming {
        CaseTiming {
            memory_dialogs: self.memory_dialogs + other.memory_dialogs,
            memory_corpus: self.memory_corpus + other.memory_corpus,
            predict_memory: self.predict_memory + other.predict_memory,
            predict_llm: self.predict_llm + other.predict_llm,
            llm_calls_memory: self.llm_calls_memory + other.llm_calls_memory,
            llm_calls_predict: self.llm_calls_predict + other.llm_calls_predict,
            input_tokens_memory: self.input_tokens_memory + other.input_tokens_memory,
            output_tokens_memory: self.output_tokens_memory + other.output_tokens_memory,
            input_tokens_predict: self.input_tokens_predict + other.input_tokens_predict,
            output_tokens_predict: self.output_tokens_predict + other.output_tokens_predict,
            fallbacks_memory: self.fallbacks_memory + other.fallbacks_memory,
            fallbacks_predict: self.fallbacks_predict + other.fallbacks_predict,
        }
    }

    /// This timing divided by `n` (a mean over `n` cases).
    pub fn over(self, n: f64) -> CaseTiming {
        let n = n.max(1.0);
        CaseTiming {
            memory_dialogs: self.memory_dialogs / n,
            memory_corpus: self.memory_corpus / n,
            predict_memory: self.predict_memory / n,
            predict_llm: self.predict_llm / n,
            llm_calls_memory: self.llm_calls_memory / n,
            llm_calls_predict: self.llm_calls_predict / n,
            input_tokens_memory: self.input_tokens_memory / n,
            output_tokens_memory: self.output_tokens_memory / n,
            input_tokens_predict: self.input_tokens_predict / n,
            output_tokens_predict: self.output_tokens_predict / n,
            fallbacks_memory: self.fallbacks_memory / n,
            fallbacks_predict: self.fallbacks_predict / n,
        }
    }

    /// Seconds of memory processing.
    pub fn memory_seconds(&self) -> f64 {
        self.memory_dialogs + self.memory_corpus
    }

    /// Seconds of prediction.
    pub fn prediction_seconds(&self) -> f64 {
        self.predict_memory + self.predict_llm
    }

    /// LLM operations, memory and prediction.
    pub fn llm_calls(&self) -> f64 {
        self.llm_calls_memory + self.llm_calls_predict
    }

    /// Fallbacks, memory and prediction.
    pub fn fallbacks(&self) -> f64 {
        self.fallbacks_memory + self.fallbacks_predict
    }

    /// Model tokens, prompt and generated, memory and prediction.
    pub fn tokens(&self) -> f64 {
        self.input_tokens_memory
            + self.output_tokens_memory
            + self.input_tokens_predict
            + self.output_tokens_predict
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_divide_a_cost_over_the_cases_it_serves() {
        let cost = Cost {
            seconds: 4.0,
            llm_operations: 8,
            input_tokens: 400,
            output_tokens: 40,
            fallbacks: BTreeMap::from([("extract_facts".to_string(), 6), ("x".to_string(), 2)]),
        };
        let dialogs = cost.dialogs_share(4.0);
        assert_eq!((dialogs.memory_dialogs, dialogs.memory_corpus), (1.0, 0.0));
        assert_eq!(dialogs.llm_calls_memory, 2.0);
        assert_eq!(dialogs.fallbacks(), 2.0);
        assert_eq!(dialogs.tokens(), 110.0);
        let corpus = cost.corpus_share(2.0);
        assert_eq!((corpus.memory_dialogs, corpus.memory_corpus), (0.0, 2.0));
        let both = dialogs.plus(corpus);
        assert_eq!(both.memory_seconds(), 3.0);
        assert_eq!(both.over(3.0).memory_seconds(), 1.0);
        // No cases: nothing is divided by zero.
        assert_eq!(cost.dialogs_share(0.0).memory_dialogs, 4.0);
    }
}
