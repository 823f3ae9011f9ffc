//! `mb-upstream`: upstream MemoryBench's own prompt wording, read at run time.
//!
//! The project may not contain upstream's sentences, yet a run comparable with the paper must
//! send them word for word. So the words are read, when a run starts, from an upstream
//! checkout the user names (`--upstream DIR`): the Python sources are scanned without being
//! run ([`python`]), each prompt the project needs is found where the catalog says it stands
//! (a file, a function, the string assigned to a name), and its text is checked against the
//! hash of the known version. A changed upstream is reported by file and function and never
//! used. [`Wording`] carries the choice through a run: upstream's words, or the project's
//! own paraphrase, which results label as not comparable with the paper.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod amem;
mod catalog;
mod checkout;
mod error;
mod evaluation;
mod judges;
mod legal;
mod lexicon;
mod longmemeval;
mod memoryos;
pub mod python;
mod simulator;
mod template;
mod wording;

pub use amem::AMemNote;
pub use catalog::{
    AnswerOf, LimitAspect, LongMemEvalPrompt, MemoryOsPart, Prompt, SimulatorOf, SimulatorPart,
    UserPiece, KNOWN_COMMIT, LONGMEMEVAL_COMMIT,
};
pub use checkout::Upstream;
pub use error::{Mismatch, UpstreamError};
pub use evaluation::RuleFeedbackOf;
pub use judges::{ideabench_fields, jre_l_fields, judge_fields, MergedOf, JUDGE_METRICS};
pub use lexicon::{JudgeLexicon, KeywordCharges};
pub use longmemeval::{ChatTurn, Chunk, LongMemEval, Reader};
pub use memoryos::{read_marked_knowledge, MemoryOsAnswer, MemoryOsExchange, MemoryOsPage};
pub use simulator::{simulator_of, FeedbackSchema, SimulatorRequest};
pub use template::Template;
pub use wording::{Wording, PARAPHRASED};
