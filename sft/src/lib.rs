//! The SFT baseline of MemoryBench's action-feedback experiment
//! (`src/action_feedback/train_sft_lora.py`): LoRA fine-tuning of the local GGUF model on the
//! first-round answers users liked or copied, written as an adapter the same llama.cpp server
//! then serves (`mb-harness sft-train`, `mb-harness sft-predict`).
//!
//! The base model is read from its GGUF (dequantized to f32: SmolLM2-135M by default) or a
//! Hugging Face safetensors directory, with its own tokenizer and chat template; training runs on candle, on the CPU by default (the
//! `cuda` feature for a GPU).

mod adapter;
mod chat;
mod checkpoint;
mod config;
mod data;
mod error;
mod frozen;
mod gguf;
mod lora;
mod model;
mod optim;
mod schedule;
mod tokenizer;
mod train;
mod weights;

pub use adapter::{read_adapter, write_adapter};
pub use chat::{ChatMessage, ChatTemplate};
pub use checkpoint::{RunDir, RunState, StepRecord, ADAPTER, CONFIG, LOGS};
pub use config::{LlamaConfig, ARCHITECTURE};
pub use data::{encode, encode_all, Example, SftPair, MAX_LENGTH_LIMIT};
pub use error::{Result, SftError};
pub use gguf::GgufFile;
pub use lora::{Dropout, Lora, LoraSettings, MAX_RANK};
pub use model::{LoraLlama, Targets};
pub use optim::{AdamW, AdamWSettings};
pub use schedule::Schedule;
pub use tokenizer::ChatTokenizer;
pub use train::{train, TrainSettings, MAX_BATCH, MAX_EPOCHS};
pub use weights::{to_halves, SafetensorsModel, Weights};

/// The device training runs on: the first CUDA GPU with the `cuda` feature, else the CPU.
pub fn default_device() -> Result<candle_core::Device> {
    #[cfg(feature = "cuda")]
    {
        Ok(candle_core::Device::new_cuda(0)?)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Ok(candle_core::Device::Cpu)
    }
}
