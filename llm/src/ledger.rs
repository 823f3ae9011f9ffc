//! Accounting of LLM calls per role and operation.
//!
//! Comparing memory systems means comparing what they cost, not only what they score. Every
//! call through a [`MeteredProvider`] lands in a [`Ledger`] under its role (answer, memory,
//! simulator, judge) and operation (`extract_facts`, `answer`, …): calls, failures, retries,
//! replays from the record cache, input and output tokens (the server's usage, else counted with
//! a [`TokenCounter`]) and latencies, totalled per run. [`usage_of`] attributes calls, tokens,
//! offline operations and fallbacks to one piece of work instead: a test case, a memorized
//! dialog.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::error::{LlmError, Result};
use crate::{ChatProvider, ChatRequest, Completion};

/// Counts tokens when a server reports no usage.
pub enum TokenCounter {
    /// About four characters per token, the usual figure for English BPE vocabularies.
    Heuristic,
    /// A Hugging Face tokenizer (`tokenizer.json`), exact for the model it belongs to.
    Tokenizer(Box<tokenizers::Tokenizer>),
}

impl TokenCounter {
    /// A counter using the `tokenizer.json` at `path`.
    pub fn from_file(path: &Path) -> Result<TokenCounter> {
        tokenizers::Tokenizer::from_file(path)
            .map(|t| TokenCounter::Tokenizer(Box::new(t)))
            .map_err(|e| LlmError::Config {
                field: "tokenizer",
                reason: format!("{}: {e}", path.display()),
            })
    }

    /// Tokens in `text`.
    pub fn count(&self, text: &str) -> u64 {
        match self {
            TokenCounter::Heuristic => text.chars().count().div_ceil(4) as u64,
            TokenCounter::Tokenizer(t) => t
                .encode(text, false)
                .map_or_else(|_| text.chars().count().div_ceil(4), |e| e.len())
                as u64,
        }
    }
}

/// Totals of one (role, operation).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperationStats {
    /// Role of the model (answer, memory, simulator, judge).
    pub role: String,
    /// Operation name.
    pub operation: String,
    /// Calls made, replays included.
    pub calls: u64,
    /// Calls answered from the record cache.
    pub replayed: u64,
    /// Calls that ended in an error.
    pub failures: u64,
    /// Retries the calls needed.
    pub retries: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Calls whose tokens were counted locally because the server reported no usage.
    pub estimated_token_calls: u64,
    /// Total latency, milliseconds.
    pub latency_sum_ms: f64,
    /// Median latency, milliseconds.
    pub latency_p50_ms: f64,
    /// 95th-percentile latency, milliseconds.
    pub latency_p95_ms: f64,
}

#[derive(Default)]
struct Tally {
    calls: u64,
    replayed: u64,
    failures: u64,
    retries: u64,
    input_tokens: u64,
    output_tokens: u64,
    estimated_token_calls: u64,
    latencies_ms: Vec<f64>,
}

/// Model calls and tokens of one piece of work (a test case, a memorized dialog), over every
/// role it used, with the operations answered offline and those that fell back: what
/// [`usage_of`] reports.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelUsage {
    /// Calls made, failed and replayed ones included.
    pub calls: u64,
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Generated tokens.
    pub output_tokens: u64,
    /// Operations answered by their offline implementation (each stands in for one call).
    pub offline_operations: u64,
    /// Operations whose model output stayed unusable, replaced by upstream's fallback, by
    /// operation name.
    pub fallbacks: BTreeMap<String, u64>,
}

impl ModelUsage {
    /// The LLM calls the work took: model calls (re-asks and failures included) and offline
    /// operations.
    pub fn llm_calls(&self) -> u64 {
        self.calls + self.offline_operations
    }

    /// Fallbacks over every operation.
    pub fn fallback_count(&self) -> u64 {
        self.fallbacks.values().sum()
    }

    fn add(&mut self, other: &ModelUsage) {
        self.calls += other.calls;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.offline_operations += other.offline_operations;
        for (operation, count) in &other.fallbacks {
            *self.fallbacks.entry(operation.clone()).or_default() += count;
        }
    }
}

/// Runs `work` and reports the model usage of the metered calls it made, those of nested
/// `usage_of` scopes included. Concurrent scopes polled by one task (e.g. a buffered stream of
/// test cases) are kept apart; work moved to another task with `tokio::spawn` is not seen.
pub async fn usage_of<F: Future>(work: F) -> (F::Output, ModelUsage) {
    let parent = SCOPE.try_with(Arc::clone).ok();
    let scope = Arc::new(Scope {
        usage: Mutex::new(ModelUsage::default()),
        parent,
    });
    let output = SCOPE.scope(scope.clone(), work).await;
    let usage = scope.usage.lock().clone();
    (output, usage)
}

/// A `usage_of` scope: its running total and the scope it is nested in.
struct Scope {
    usage: Mutex<ModelUsage>,
    parent: Option<Arc<Scope>>,
}

tokio::task_local! {
    static SCOPE: Arc<Scope>;
}

/// Adds `usage` to the current scope and every scope around it.
fn charge(usage: ModelUsage) {
    let _ = SCOPE.try_with(|scope| {
        let mut current = Some(scope);
        while let Some(scope) = current {
            scope.usage.lock().add(&usage);
            current = scope.parent.as_ref();
        }
    });
}

/// Charges an operation answered offline to the current scopes.
pub(crate) fn charge_offline_operation() {
    charge(ModelUsage {
        offline_operations: 1,
        ..ModelUsage::default()
    });
}

/// Charges a fallback of `operation` to the current scopes.
pub(crate) fn charge_fallback(operation: &str) {
    charge(ModelUsage {
        fallbacks: BTreeMap::from([(operation.to_string(), 1)]),
        ..ModelUsage::default()
    });
}

/// Per-(role, operation) totals, shared by every metered provider of a run.
#[derive(Default)]
pub struct Ledger {
    tallies: Mutex<BTreeMap<(String, String), Tally>>,
}

impl Ledger {
    /// An empty ledger.
    pub fn new() -> Arc<Ledger> {
        Arc::new(Ledger::default())
    }

    /// Current totals, sorted by role then operation.
    pub fn snapshot(&self) -> Vec<OperationStats> {
        summarize(&self.tallies.lock())
    }

    /// Current totals, and a fresh start (per-test-case accounting).
    pub fn take(&self) -> Vec<OperationStats> {
        summarize(&std::mem::take(&mut *self.tallies.lock()))
    }

    fn record(&self, role: &str, operation: &str, entry: Entry) {
        let mut tallies = self.tallies.lock();
        let tally = tallies
            .entry((role.to_string(), operation.to_string()))
            .or_default();
        tally.calls += 1;
        tally.latencies_ms.push(entry.latency_ms);
        tally.retries += entry.retries;
        match entry.tokens {
            Some((input, output, estimated)) => {
                tally.input_tokens += input;
                tally.output_tokens += output;
                tally.estimated_token_calls += u64::from(estimated);
            }
            None => tally.failures += 1,
        }
        tally.replayed += u64::from(entry.replayed);
    }
}

struct Entry {
    latency_ms: f64,
    retries: u64,
    /// (input, output, estimated) for a success; `None` for a failure.
    tokens: Option<(u64, u64, bool)>,
    replayed: bool,
}

fn summarize(tallies: &BTreeMap<(String, String), Tally>) -> Vec<OperationStats> {
    tallies
        .iter()
        .map(|((role, operation), t)| {
            let mut sorted = t.latencies_ms.clone();
            sorted.sort_by(f64::total_cmp);
            OperationStats {
                role: role.clone(),
                operation: operation.clone(),
                calls: t.calls,
                replayed: t.replayed,
                failures: t.failures,
                retries: t.retries,
                input_tokens: t.input_tokens,
                output_tokens: t.output_tokens,
                estimated_token_calls: t.estimated_token_calls,
                latency_sum_ms: sorted.iter().sum(),
                latency_p50_ms: percentile(&sorted, 0.50),
                latency_p95_ms: percentile(&sorted, 0.95),
            }
        })
        .collect()
}

/// Nearest-rank percentile of sorted values (0 for none).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// A provider whose every call is entered in a ledger under a role.
pub struct MeteredProvider<P> {
    inner: P,
    role: String,
    ledger: Arc<Ledger>,
    counter: TokenCounter,
}

impl<P: ChatProvider> MeteredProvider<P> {
    /// Meters `inner` as `role` into `ledger`, counting tokens with `counter` when the server
    /// reports none.
    pub fn new(
        inner: P,
        role: impl Into<String>,
        ledger: Arc<Ledger>,
        counter: TokenCounter,
    ) -> MeteredProvider<P> {
        MeteredProvider {
            inner,
            role: role.into(),
            ledger,
            counter,
        }
    }
}

#[async_trait]
impl<P: ChatProvider> ChatProvider for MeteredProvider<P> {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn model(&self) -> &str {
        self.inner.model()
    }

    async fn complete(&self, request: &ChatRequest) -> Result<Completion> {
        let start = Instant::now();
        let outcome = self.inner.complete(request).await;
        let latency_ms = start.elapsed().as_secs_f64() * 1e3;
        let entry = match &outcome {
            Ok(completion) => {
                let tokens = match completion.usage {
                    Some(usage) => (usage.input_tokens, usage.output_tokens, false),
                    None => {
                        let input = request
                            .messages
                            .iter()
                            .map(|m| self.counter.count(&m.content))
                            .sum();
                        (input, self.counter.count(&completion.text), true)
                    }
                };
                Entry {
                    latency_ms,
                    retries: u64::from(completion.retries),
                    tokens: Some(tokens),
                    replayed: completion.replayed,
                }
            }
            Err(error) => Entry {
                latency_ms,
                retries: match error {
                    LlmError::Exhausted { attempts, .. } => u64::from(attempts.saturating_sub(1)),
                    _ => 0,
                },
                tokens: None,
                replayed: false,
            },
        };
        let (input_tokens, output_tokens) = entry.tokens.map_or((0, 0), |(i, o, _)| (i, o));
        charge(ModelUsage {
            calls: 1,
            input_tokens,
            output_tokens,
            ..ModelUsage::default()
        });
        self.ledger.record(&self.role, &request.operation, entry);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&values, 0.5), 10.0);
        assert_eq!(percentile(&values, 0.95), 19.0);
        assert_eq!(percentile(&[7.0], 0.95), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
