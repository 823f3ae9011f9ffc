//! Progress of model-backed work a person can follow: dialogs memorized or cases answered, with
//! the model calls, tokens and fallbacks the work has taken so far.
//!
//! A memory system on a slow model can spend minutes on one dialog, so the counts are refreshed
//! twice a second from the run's ledger and fallback counts (read, never reset: the run's
//! accounting goes on), not only when a dialog or case is done. Bars draw on standard error and
//! are hidden when it is not a terminal; a hidden bar, or a run without any model, starts no
//! refreshing. With `--progress-file` every bar's counts also go to that file
//! ([`crate::run::progress_file`]), hidden or not.

use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use mb_llm::{LlmStack, ModelUsage};

use crate::run::progress_file::BarEvents;

/// How often the model counts are refreshed.
const REFRESH: Duration = Duration::from_millis(500);

/// A bar over `length` units of work (`unit`: "dialogs", "cases") labelled `label`, showing
/// `llm`'s model usage since the bar started. Cleared when dropped.
pub struct ModelProgress {
    bar: ProgressBar,
    /// The stack whose usage is shown, and its usage when the bar started; `None` when nothing
    /// is shown (hidden bar, no model).
    shown: Option<(Arc<LlmStack>, ModelUsage)>,
    /// The bar's events in the progress file, when one is recorded.
    events: Option<Arc<BarEvents>>,
}

impl ModelProgress {
    /// Starts the bar.
    pub fn new(length: u64, label: &str, unit: &str, llm: &Arc<LlmStack>) -> ModelProgress {
        let template = format!(
            "{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{elapsed}} (eta {{eta}}) {{msg}}"
        );
        let events = BarEvents::start(label, unit, Some(length));
        ModelProgress::start(ProgressBar::new(length), &template, label, llm, events)
    }

    /// Starts a counter for work of unknown length (a file read as it streams).
    pub fn open_ended(label: &str, unit: &str, llm: &Arc<LlmStack>) -> ModelProgress {
        let template = format!("{{prefix}} {{pos}} {unit} {{elapsed}} {{msg}}");
        let events = BarEvents::start(label, unit, None);
        ModelProgress::start(ProgressBar::no_length(), &template, label, llm, events)
    }

    fn start(
        bar: ProgressBar,
        template: &str,
        label: &str,
        llm: &Arc<LlmStack>,
        events: Option<BarEvents>,
    ) -> ModelProgress {
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label.to_string());
        let events = events.map(Arc::new);
        let watched = !bar.is_hidden() || events.is_some();
        let shown = (watched && llm.uses_a_model()).then(|| {
            let start = llm.usage_so_far();
            let (bar, watched, from) = (bar.clone(), llm.clone(), start.clone());
            let events = events.clone();
            std::thread::spawn(move || {
                while !bar.is_finished() {
                    let usage = since(&watched.usage_so_far(), &from);
                    if let Some(events) = &events {
                        events.tick(bar.position(), &usage, false);
                    }
                    bar.set_message(describe(&usage));
                    std::thread::sleep(REFRESH);
                }
            });
            (llm.clone(), start)
        });
        ModelProgress { bar, shown, events }
    }

    /// The usage since the bar started (none without a model).
    fn usage(&self) -> ModelUsage {
        match &self.shown {
            Some((llm, start)) => since(&llm.usage_so_far(), start),
            None => ModelUsage::default(),
        }
    }

    /// One more unit done.
    pub fn inc(&self) {
        let usage = self.usage();
        if self.shown.is_some() {
            self.bar.set_message(describe(&usage));
        }
        self.bar.inc(1);
        if let Some(events) = &self.events {
            let pos = self.bar.position();
            events.tick(pos, &usage, self.bar.length() == Some(pos));
        }
    }
}

impl Drop for ModelProgress {
    fn drop(&mut self) {
        // Finished first, so that the refreshing thread writes no tick after the end.
        let pos = self.bar.position();
        self.bar.finish_and_clear();
        if let Some(events) = &self.events {
            events.tick(pos, &self.usage(), true);
            events.end(pos);
        }
    }
}

/// The usage between `start` and `now` (zero where a count was reset in between).
fn since(now: &ModelUsage, start: &ModelUsage) -> ModelUsage {
    ModelUsage {
        calls: now.calls.saturating_sub(start.calls),
        input_tokens: now.input_tokens.saturating_sub(start.input_tokens),
        output_tokens: now.output_tokens.saturating_sub(start.output_tokens),
        offline_operations: now
            .offline_operations
            .saturating_sub(start.offline_operations),
        fallbacks: now
            .fallbacks
            .iter()
            .map(|(operation, &count)| {
                let before = start.fallbacks.get(operation).copied().unwrap_or(0);
                (operation.clone(), count.saturating_sub(before))
            })
            .filter(|&(_, count)| count > 0)
            .collect(),
    }
}

/// The bar's message: calls, tokens in and out, and fallbacks with the operations that fell
/// back most.
fn describe(usage: &ModelUsage) -> String {
    let mut text = format!(
        "{} model calls, {} tokens in, {} out, {} fallbacks",
        usage.calls,
        compact(usage.input_tokens),
        compact(usage.output_tokens),
        usage.fallback_count()
    );
    let mut by_count: Vec<(&String, &u64)> = usage.fallbacks.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    if !by_count.is_empty() {
        let shown: Vec<String> = by_count
            .iter()
            .take(2)
            .map(|(operation, count)| format!("{operation} {count}"))
            .collect();
        let more = if by_count.len() > 2 { ", …" } else { "" };
        text.push_str(&format!(" ({}{more})", shown.join(", ")));
    }
    text
}

/// A count in at most about four characters: 950, 12.3k, 4.5M.
fn compact(n: u64) -> String {
    match n {
        0..=9_999 => n.to_string(),
        10_000..=999_999 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A progress bar with a label, elapsed time and ETA.
pub fn progress(length: u64, message: &str) -> ProgressBar {
    let bar = ProgressBar::new(length);
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} {elapsed} (eta {eta})")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message.to_string());
    bar
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn usage(calls: u64, input: u64, output: u64, fallbacks: &[(&str, u64)]) -> ModelUsage {
        ModelUsage {
            calls,
            input_tokens: input,
            output_tokens: output,
            offline_operations: 0,
            fallbacks: fallbacks
                .iter()
                .map(|(operation, count)| (operation.to_string(), *count))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn the_message_shows_calls_tokens_and_fallbacks_since_the_bar_started() {
        let start = usage(3, 900, 40, &[("memory/meta_summary", 1)]);
        let now = usage(
            58,
            123_456,
            2_000_000,
            &[
                ("memory/meta_summary", 4),
                ("memory/update_profile", 1),
                ("memory/extract_knowledge", 2),
            ],
        );
        assert_eq!(
            describe(&since(&now, &start)),
            "55 model calls, 122.6k tokens in, 2.0M out, 6 fallbacks \
             (memory/meta_summary 3, memory/extract_knowledge 2, …)"
        );
        assert_eq!(
            describe(&usage(2, 80, 9, &[])),
            "2 model calls, 80 tokens in, 9 out, 0 fallbacks"
        );
        // A count reset between (the run's accounting took it) shows no negative numbers.
        assert_eq!(
            describe(&since(&usage(1, 10, 1, &[]), &start)),
            "0 model calls, 0 tokens in, 0 out, 0 fallbacks"
        );
    }
}
