//! Counting tokens as GPT-4's tokenizer does (`cl100k_base`, shipped inside the `tiktoken-rs`
//! crate): what RAPTOR's chunks and token limits count (upstream counts with tiktoken's
//! `cl100k_base`), and what retrieval budgets mean in a prompt.

use crate::error::MemoryError;

/// A `cl100k_base` token counter.
pub struct TokenCounter(tiktoken_rs::CoreBPE);

impl TokenCounter {
    /// Loads the tokenizer (its ranks are inside the crate: nothing is downloaded).
    pub fn new() -> Result<TokenCounter, MemoryError> {
        tiktoken_rs::cl100k_base()
            .map(TokenCounter)
            .map_err(|e| MemoryError::Config(format!("cannot load the cl100k_base tokenizer: {e}")))
    }

    /// The tokens of `text`, special-token text counted as ordinary text.
    pub fn count(&self, text: &str) -> usize {
        self.0.encode_ordinary(text).len()
    }
}
