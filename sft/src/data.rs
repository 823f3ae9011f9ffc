//! Training examples as upstream builds them (`SFTDataset` of `train_sft_lora.py`): the pair's
//! messages rendered with the chat template, encoded without added tokens, an end-of-sequence
//! token appended when the text does not end in one, and only the answer learned.
//!
//! The answer starts where its text first occurs in the rendered conversation (upstream's
//! `text.find(output)`: an answer that also occurs in the question starts there), counted in
//! the tokens of the text before it. An example with no answer token left to learn is refused
//! by name: upstream trains it as a step whose loss is NaN, and that step is skipped.

use serde::{Deserialize, Serialize};

use crate::chat::ChatMessage;
use crate::error::{Result, SftError};
use crate::model::Targets;
use crate::tokenizer::ChatTokenizer;

/// Longest `max_length` accepted (attention grows with its square).
pub const MAX_LENGTH_LIMIT: usize = 1 << 17;

/// A first-round (question, answer) pair of a dialog whose user liked or copied the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SftPair {
    /// The dialog's `test_idx`.
    pub test_idx: u64,
    /// The dialog's first system message, if it has one.
    pub system_prompt: Option<String>,
    /// The first user message.
    pub instruction: String,
    /// The first assistant message.
    pub output: String,
}

/// An encoded example: its tokens and the answer tokens learned.
pub struct Example {
    /// The dialog's `test_idx`.
    pub test_idx: u64,
    /// Every token, truncated to `max_length`.
    pub ids: Vec<u32>,
    /// The positions whose next token is learned.
    pub targets: Targets,
}

impl Example {
    /// Tokens learned.
    pub fn learned(&self) -> usize {
        self.targets.tokens.len()
    }
}

/// Every pair encoded; the first pair with nothing to learn is an error, as is no pair at all.
pub fn encode_all(
    pairs: &[SftPair],
    tokenizer: &ChatTokenizer,
    max_length: usize,
) -> Result<Vec<Example>> {
    if pairs.is_empty() {
        return Err(SftError::NoTrainingData(
            "no training dialog has the action in its first round's feedback".to_string(),
        ));
    }
    pairs
        .iter()
        .map(|pair| encode(pair, tokenizer, max_length))
        .collect()
}

/// `pair` encoded for training with at most `max_length` tokens.
pub fn encode(pair: &SftPair, tokenizer: &ChatTokenizer, max_length: usize) -> Result<Example> {
    if !(2..=MAX_LENGTH_LIMIT).contains(&max_length) {
        return Err(SftError::Setting {
            field: "max_length",
            reason: format!("{max_length} is not within 2..={MAX_LENGTH_LIMIT}"),
        });
    }
    let nothing = |reason: String| SftError::NothingToLearn {
        test_idx: pair.test_idx,
        reason,
    };
    if pair.output.is_empty() {
        // Upstream's `text.find("")` is 0: it would learn the whole conversation as the answer.
        return Err(nothing("its answer is empty".to_string()));
    }
    let mut messages = Vec::with_capacity(3);
    if let Some(system) = &pair.system_prompt {
        messages.push(ChatMessage {
            role: "system",
            content: system,
        });
    }
    messages.push(ChatMessage {
        role: "user",
        content: &pair.instruction,
    });
    messages.push(ChatMessage {
        role: "assistant",
        content: &pair.output,
    });
    let text = tokenizer.template().render(&messages);
    let mut ids = tokenizer.encode(&text)?;
    if ids.last() != Some(&tokenizer.eos()) {
        ids.push(tokenizer.eos());
    }
    let start = text.find(&pair.output).ok_or_else(|| {
        nothing("its answer does not occur in the rendered conversation".to_string())
    })?;
    let answer_start = tokenizer.encode(&text[..start])?.len();
    ids.truncate(max_length);
    // The loss at position p predicts token p+1: learned where p+1 is in the answer.
    let (positions, tokens): (Vec<u32>, Vec<u32>) = (answer_start.max(1)..ids.len())
        .map(|next| ((next - 1) as u32, ids[next]))
        .unzip();
    if tokens.is_empty() {
        return Err(nothing(format!(
            "its prompt is {answer_start} tokens and max_length {max_length} keeps none of its \
             answer (raise --max-length)"
        )));
    }
    Ok(Example {
        test_idx: pair.test_idx,
        ids,
        targets: Targets { positions, tokens },
    })
}
