//! A Hugging Face safetensors model trains as the GGUF made of it: the toy model written both
//! ways (the safetensors with the query and key rows in Hugging Face's order, as
//! `convert_hf_to_gguf.py` reads them) gives the same tokens, logits and trained adapters.

use std::path::Path;

use candle_core::{Device, Tensor};
use mb_sft::{
    to_halves, train, ChatTokenizer, GgufFile, LoraLlama, LoraSettings, RunDir, SafetensorsModel,
    SftPair, TrainSettings, Weights,
};

use crate::toy;

/// Writes the toy GGUF `gguf`'s model as a Hugging Face directory `dir`.
fn write_hf(gguf: &Path, dir: &Path) {
    let mut file = GgufFile::open(gguf).unwrap();
    let tokenizer = ChatTokenizer::from_gguf(&file).unwrap();
    let mut tensors = std::collections::HashMap::new();
    let mut put = |file: &mut GgufFile, ours: &str, theirs: String, heads: Option<usize>| {
        let t = Weights::tensor_f32(file, ours, &Device::Cpu).unwrap();
        let t = match heads {
            Some(heads) => to_halves(&t, heads).unwrap(),
            None => t,
        };
        tensors.insert(theirs, t);
    };
    put(
        &mut file,
        "token_embd.weight",
        "model.embed_tokens.weight".into(),
        None,
    );
    put(
        &mut file,
        "output_norm.weight",
        "model.norm.weight".into(),
        None,
    );
    for layer in 0..toy::LAYERS {
        let hf = |part: &str| format!("model.layers.{layer}.{part}.weight");
        let ours = |part: &str| format!("blk.{layer}.{part}.weight");
        for (gguf_part, hf_part, heads) in [
            ("attn_norm", "input_layernorm", None),
            ("attn_q", "self_attn.q_proj", Some(toy::HEADS)),
            ("attn_k", "self_attn.k_proj", Some(toy::KV_HEADS)),
            ("attn_v", "self_attn.v_proj", None),
            ("attn_output", "self_attn.o_proj", None),
            ("ffn_norm", "post_attention_layernorm", None),
            ("ffn_gate", "mlp.gate_proj", None),
            ("ffn_up", "mlp.up_proj", None),
            ("ffn_down", "mlp.down_proj", None),
        ] {
            put(&mut file, &ours(gguf_part), hf(hf_part), heads);
        }
    }
    candle_core::safetensors::save(&tensors, dir.join("model.safetensors")).unwrap();
    let config = serde_json::json!({
        "model_type": "llama", "vocab_size": toy::vocab(), "hidden_size": toy::HIDDEN,
        "num_hidden_layers": toy::LAYERS, "intermediate_size": toy::FFN,
        "num_attention_heads": toy::HEADS, "num_key_value_heads": toy::KV_HEADS,
        "rope_theta": 10000.0, "rms_norm_eps": 1e-5,
    });
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
    tokenizer
        .inner()
        .save(dir.join("tokenizer.json"), false)
        .unwrap();
    let tokenizer_config = serde_json::json!({
        "eos_token": toy::SPECIALS[2], "chat_template": toy::TEMPLATE,
    });
    std::fs::write(
        dir.join("tokenizer_config.json"),
        tokenizer_config.to_string(),
    )
    .unwrap();
}

fn values(t: &Tensor) -> Vec<f32> {
    t.flatten_all().unwrap().to_vec1().unwrap()
}

fn max_difference(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn a_safetensors_model_trains_as_its_gguf() {
    let dir = tempfile::tempdir().unwrap();
    let gguf = dir.path().join("toy.gguf");
    toy::write(&gguf, 11);
    let hf = dir.path().join("hf");
    std::fs::create_dir(&hf).unwrap();
    write_hf(&gguf, &hf);

    let from_gguf = ChatTokenizer::for_model(&gguf).unwrap();
    let from_hf = ChatTokenizer::for_model(&hf).unwrap();
    let pair = SftPair {
        test_idx: 1,
        system_prompt: None,
        instruction: "Count: 1 2 3".to_string(),
        output: "4 5 6".to_string(),
    };
    let example = mb_sft::encode(&pair, &from_gguf, 512).unwrap();
    let same = mb_sft::encode(&pair, &from_hf, 512).unwrap();
    assert_eq!(example.ids, same.ids, "the two tokenizers");
    assert_eq!(example.targets.tokens, same.targets.tokens);

    let lora = LoraSettings {
        dropout: 0.0,
        ..LoraSettings::default()
    };
    let a = LoraLlama::load(&mut GgufFile::open(&gguf).unwrap(), lora, 3, &Device::Cpu).unwrap();
    let b = LoraLlama::load(
        &mut SafetensorsModel::open(&hf).unwrap(),
        lora,
        3,
        &Device::Cpu,
    )
    .unwrap();
    let logits = max_difference(
        &a.next_logits(&example.ids).unwrap(),
        &b.next_logits(&example.ids).unwrap(),
    );
    assert!(logits < 1e-4, "logits differ by {logits}");

    let settings = TrainSettings {
        learning_rate: 1e-2,
        epochs: 3,
        batch_size: 1,
        lora,
        ..TrainSettings::default()
    };
    let config = serde_json::json!({"toy": true});
    for (model, name) in [(&a, "a"), (&b, "b")] {
        let run = RunDir::open(&dir.path().join(name), &config).unwrap();
        let examples = [mb_sft::encode(&pair, &from_gguf, 512).unwrap()];
        train(model, &examples, &settings, &run, &mut |_| {}).unwrap();
    }
    for ((name, left), (_, right)) in a.adapters().iter().zip(b.adapters()) {
        for (x, y) in [(&left.a, &right.a), (&left.b, &right.b)] {
            let difference = max_difference(&values(x.as_tensor()), &values(y.as_tensor()));
            assert!(
                difference < 1e-4,
                "{name}: trained adapters differ by {difference}"
            );
        }
    }
    let b_trained = values(a.adapters()[0].1.b.as_tensor());
    assert!(
        b_trained.iter().any(|v| *v != 0.0),
        "training changed nothing"
    );
}
