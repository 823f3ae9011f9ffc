//! LongMemEval (Wu et al., ICLR 2025) as a dataset: its released files read instance by
//! instance ([`data`]), the official retrieval evaluation ([`retrieval`]), and question
//! answering: the reading prompt ([`reading`]), the judge ([`judge`]) and the accuracy
//! ([`qa`]). The data is published on the Hugging Face hub only;
//! tests use small fixtures in the exact format.

pub mod data;
pub mod judge;
pub mod qa;
pub mod reading;
pub mod retrieval;

pub use data::{
    for_each_instance, for_each_instance_in, variant, Instance, LmeSession, LmeTurn,
    LongMemEvalError, QuestionType,
};
