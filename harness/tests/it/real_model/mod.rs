//! Every model-backed path through a real model: llama.cpp's server with SmolLM2-135M, started
//! as `--llm local` starts it, and the shipped `configs/llm/local.toml` with small output caps.
//! One server serves the tests that do not stop it, behind a counting proxy per test: the
//! tokens the harness records must be the ones the server reported. A 135M model's answers say
//! nothing about memory; these tests check the plumbing, the accounting and that messy output
//! ends in counted fallbacks. They skip, saying so, when `scripts/setup.sh` has not installed
//! xllamacpp and the model.

mod off_policy;
mod serving;
mod sft;
mod simulator_and_judge;
