//! What can go wrong reading upstream's wording.

use std::path::PathBuf;

/// Why upstream's wording could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// The folder is not an upstream checkout of the kind asked for.
    #[error("{dir} is not a {kind} checkout: {reason}")]
    NotACheckout {
        /// The folder named.
        dir: PathBuf,
        /// `THUIR/MemoryBench` or `xiaowu0162/LongMemEval`.
        kind: &'static str,
        /// What is missing.
        reason: String,
    },
    /// A source file could not be read.
    #[error("reading {file}: {message}")]
    Read {
        /// The file.
        file: PathBuf,
        /// Why it could not be read.
        message: String,
    },
    /// One or more templates are not those of the known upstream version.
    #[error("upstream's wording differs from the known version ({} template(s)):\n{}", .0.len(), .0.iter().map(|m| format!("  {m}")).collect::<Vec<_>>().join("\n"))]
    Changed(Vec<Mismatch>),
    /// Upstream's own code raises here before it sends the request (a dataset name its
    /// factory does not know, a row field of a type its code cannot read), and its caller
    /// catches the exception with a fixed fallback: the request is not sent, the fallback is
    /// what upstream would use.
    #[error("upstream's code raises before sending {request}: {reason}")]
    Raises {
        /// The request upstream does not send.
        request: &'static str,
        /// What upstream's code raises on.
        reason: String,
    },
    /// A template was filled with the wrong fields (a bug of the caller).
    #[error("prompt {prompt}: {message}")]
    Field {
        /// The catalog name.
        prompt: &'static str,
        /// What was wrong.
        message: String,
    },
}

/// One template that could not be taken from the checkout as the known version has it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}, {scope}: {prompt}: {problem}")]
pub struct Mismatch {
    /// The catalog name of the prompt.
    pub prompt: &'static str,
    /// The file, relative to the checkout.
    pub file: &'static str,
    /// The function or class (`Class.method`), or `module level`.
    pub scope: String,
    /// What differs.
    pub problem: String,
}
