//! A toy Llama written as a GGUF the way a converted model is: random weights, a byte-level
//! vocabulary (every byte a token, no merges) with ChatML's special tokens and template.

use std::path::Path;

use candle_core::quantized::gguf_file::{self, Value};
use candle_core::quantized::{GgmlDType, QTensor};
use candle_core::{Device, Tensor};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

pub const SPECIALS: [&str; 3] = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"];
pub const HIDDEN: usize = 32;
pub const HEADS: usize = 4;
pub const KV_HEADS: usize = 2;
pub const FFN: usize = 64;
pub const LAYERS: usize = 2;
pub const TEMPLATE: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] \
    != 'system' %}{{ '<|im_start|>system\nYou are a toy.<|im_end|>\n' }}{% endif %}\
    {{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}\
    {% endfor %}";

/// GPT-2's printable stand-ins for the 256 bytes.
fn byte_chars() -> Vec<char> {
    let mut printable: Vec<u32> = (u32::from('!')..=u32::from('~'))
        .chain(u32::from('¡')..=u32::from('¬'))
        .chain(u32::from('®')..=u32::from('ÿ'))
        .collect();
    let mut chars: Vec<u32> = printable.clone();
    let mut extra = 0;
    for byte in 0..256u32 {
        if !printable.contains(&byte) {
            printable.push(byte);
            chars.push(256 + extra);
            extra += 1;
        }
    }
    let mut by_byte = vec!['\0'; 256];
    for (byte, c) in printable.iter().zip(&chars) {
        by_byte[*byte as usize] = char::from_u32(*c).unwrap();
    }
    by_byte
}

pub fn vocab() -> usize {
    SPECIALS.len() + 256
}

/// Writes the toy model to `path`, its weights drawn from `seed`.
pub fn write(path: &Path, seed: u64) {
    let tokens: Vec<Value> = SPECIALS
        .iter()
        .map(|s| s.to_string())
        .chain(byte_chars().into_iter().map(String::from))
        .map(Value::String)
        .collect();
    let types: Vec<Value> = (0..tokens.len())
        .map(|i| Value::I32(if i < SPECIALS.len() { 3 } else { 1 }))
        .collect();
    let metadata: Vec<(&str, Value)> = vec![
        ("general.architecture", Value::String("llama".into())),
        ("llama.embedding_length", Value::U32(HIDDEN as u32)),
        ("llama.block_count", Value::U32(LAYERS as u32)),
        ("llama.feed_forward_length", Value::U32(FFN as u32)),
        ("llama.attention.head_count", Value::U32(HEADS as u32)),
        ("llama.attention.head_count_kv", Value::U32(KV_HEADS as u32)),
        ("llama.rope.freq_base", Value::F32(10_000.0)),
        ("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
        ("tokenizer.ggml.model", Value::String("gpt2".into())),
        ("tokenizer.ggml.pre", Value::String("smollm".into())),
        ("tokenizer.ggml.tokens", Value::Array(tokens)),
        ("tokenizer.ggml.token_type", Value::Array(types)),
        ("tokenizer.ggml.merges", Value::Array(Vec::new())),
        ("tokenizer.ggml.eos_token_id", Value::U32(2)),
        ("tokenizer.chat_template", Value::String(TEMPLATE.into())),
    ];
    let mut rng = StdRng::seed_from_u64(seed);
    let mut random = |rows: usize, cols: usize| {
        let values: Vec<f32> = (0..rows * cols)
            .map(|_| rng.random_range(-0.3..0.3))
            .collect();
        Tensor::from_vec(values, (rows, cols), &Device::Cpu).unwrap()
    };
    let ones = |n: usize| Tensor::ones(n, candle_core::DType::F32, &Device::Cpu).unwrap();
    let kv = HIDDEN / HEADS * KV_HEADS;
    let mut tensors = vec![
        ("token_embd.weight".to_string(), random(vocab(), HIDDEN)),
        ("output_norm.weight".to_string(), ones(HIDDEN)),
    ];
    for layer in 0..LAYERS {
        let name = |part: &str| format!("blk.{layer}.{part}.weight");
        tensors.extend([
            (name("attn_norm"), ones(HIDDEN)),
            (name("attn_q"), random(HIDDEN, HIDDEN)),
            (name("attn_k"), random(kv, HIDDEN)),
            (name("attn_v"), random(kv, HIDDEN)),
            (name("attn_output"), random(HIDDEN, HIDDEN)),
            (name("ffn_norm"), ones(HIDDEN)),
            (name("ffn_gate"), random(FFN, HIDDEN)),
            (name("ffn_up"), random(FFN, HIDDEN)),
            (name("ffn_down"), random(HIDDEN, FFN)),
        ]);
    }
    let quantized: Vec<(String, QTensor)> = tensors
        .into_iter()
        .map(|(name, t)| (name, QTensor::quantize(&t, GgmlDType::F32).unwrap()))
        .collect();
    let tensors: Vec<(&str, &QTensor)> = quantized.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let metadata: Vec<(&str, &Value)> = metadata.iter().map(|(k, v)| (*k, v)).collect();
    let mut file = std::fs::File::create(path).unwrap();
    gguf_file::write(&mut file, &metadata, &tensors).unwrap();
}
