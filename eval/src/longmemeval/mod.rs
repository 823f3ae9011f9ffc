//! LongMemEval's question answering (Wu et al., ICLR 2025): the reading prompt that shows the
//! retrieved history to the answer model ([`reading`]), the judge of its answers ([`judge`])
//! and the accuracy over question types ([`qa`]). The released files and the official
//! retrieval evaluation are `mb_datasets::longmemeval`'s.

pub mod judge;
pub mod qa;
pub mod reading;
