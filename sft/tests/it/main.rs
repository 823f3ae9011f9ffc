//! mb-sft's tests: training on a toy model, the examples upstream's script builds and refuses,
//! and the adapter served by the real llama.cpp server on the real SmolLM2.

mod examples;
mod llama_cpp;
mod safetensors;
mod toy;
mod training;
