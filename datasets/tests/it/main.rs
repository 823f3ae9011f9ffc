//! Integration tests of `mb-datasets`, one binary: loading, importers, corpora, LongMemEval's
//! files and retrieval evaluation, parity with upstream's Python.

mod corpora;
mod fuzz;
mod importers;
mod loading;
mod longmemeval;
mod pyliteral_parity;
mod pyrandom_parity;
