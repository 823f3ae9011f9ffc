//! Integration tests of `mb-datasets`, one binary: loading, importers, corpora, parity with
//! upstream's Python.

mod atomic_results;
mod common;
mod corpora;
mod evaluation;
mod fuzz;
mod importers;
mod loading;
mod longmemeval;
mod meteor_parity;
mod porter_parity;
mod pyliteral_parity;
mod pyrandom_parity;
mod readability_parity;
mod rouge_parity;
