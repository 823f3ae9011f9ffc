//! Integration tests of `mb-eval`, one binary: scoring the sample datasets, summaries, result
//! files surviving a crash, the judges' parsers under fuzzing, LongMemEval's question answering,
//! and the metrics' parity with upstream's Python packages.

mod atomic_results;
mod common;
mod evaluation;
mod fuzz;
mod judged_sets;
mod legal_parity;
mod longmemeval;
mod meteor_parity;
mod porter_parity;
mod readability_parity;
mod rouge_parity;
mod wordnet_parity;
