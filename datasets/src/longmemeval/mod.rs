//! LongMemEval (Wu et al., ICLR 2025) as a dataset: its released files read instance by
//! instance ([`data`]) and the official retrieval evaluation ([`retrieval`]). Question
//! answering (the reading prompt, the judge and the accuracy) needs a model and is
//! `mb_eval::longmemeval`'s. The data is published on the Hugging Face hub only; tests use
//! small fixtures in the exact format.

pub mod data;
pub mod retrieval;

pub use data::{
    for_each_instance, for_each_instance_in, variant, Instance, LmeSession, LmeTurn,
    LongMemEvalError, QuestionType,
};
