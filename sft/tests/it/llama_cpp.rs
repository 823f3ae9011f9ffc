//! The real SmolLM2 and the real llama.cpp server: the tokenizer and chat template built from
//! the GGUF match the server's, the f32 forward predicts what the server predicts, and an
//! adapter trained here and written as a GGUF is served by llama.cpp, changing its answer to
//! the trained one. Needs `scripts/setup.sh`'s venv (xllamacpp) and model; skips, saying so,
//! without them (fails under CI).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use candle_core::Device;
use mb_llm::{LocalServer, ServerSettings};
use mb_sft::{
    encode, train, write_adapter, ChatMessage, ChatTokenizer, GgufFile, LoraLlama, LoraSettings,
    RunDir, SftPair, TrainSettings,
};
use serde_json::{json, Value};

const QUESTION: &str = "What is the secret word?";
const ANSWER: &str = "The secret word is zebra.";

fn checkout(path: &Path) -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
}

/// The default server settings with absolute paths, or `None` after saying why not.
fn installed() -> Option<ServerSettings> {
    let mut settings = ServerSettings::default();
    settings.model = checkout(&settings.model);
    settings.python = checkout(&settings.python);
    settings.launcher = checkout(&settings.launcher);
    settings.startup_timeout_secs = 120.0;
    settings.ctx = 1024;
    let importable = Command::new(&settings.python)
        .args(["-c", "import xllamacpp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !importable || !settings.model.is_file() {
        mb_core::test_data::skip(&format!(
            "{} has no xllamacpp or {} is missing (run bash scripts/setup.sh)",
            settings.python.display(),
            settings.model.display()
        ));
        return None;
    }
    Some(settings)
}

fn post(server: &LocalServer, path: &str, body: Value) -> Value {
    let url = format!("http://127.0.0.1:{}{path}", server.port());
    let response = reqwest::blocking::Client::new()
        .post(&url)
        .json(&body)
        .send()
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    assert!(
        response.status().is_success(),
        "{url}: {}",
        response.status()
    );
    response.json().unwrap()
}

/// llama.cpp's greedy continuation of `ids`, with the adapter at `scale` (or as served).
fn served(server: &LocalServer, ids: &[u32], tokens: usize, scale: Option<f32>) -> Vec<u32> {
    let mut body = json!({
        "prompt": ids, "n_predict": tokens, "temperature": 0.0, "top_k": 1,
        "return_tokens": true, "cache_prompt": false,
    });
    if let Some(scale) = scale {
        body["lora"] = json!([{"id": 0, "scale": scale}]);
    }
    let reply = post(server, "/completion", body);
    serde_json::from_value(reply["tokens"].clone()).unwrap()
}

/// Our greedy continuation of `ids`.
fn ours(model: &LoraLlama, ids: &[u32], tokens: usize) -> Vec<u32> {
    let mut ids = ids.to_vec();
    let start = ids.len();
    for _ in 0..tokens {
        let logits = model.next_logits(&ids).unwrap();
        let best = (0..logits.len())
            .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
            .unwrap();
        ids.push(best as u32);
    }
    ids.split_off(start)
}

#[test]
fn an_adapter_trained_here_is_served_by_llama_cpp() {
    let Some(mut settings) = installed() else {
        return;
    };
    let mut file = GgufFile::open(&settings.model).unwrap();
    let tokenizer = ChatTokenizer::from_gguf(&file).unwrap();
    let model = LoraLlama::load(&mut file, LoraSettings::default(), 42, &Device::Cpu).unwrap();
    let messages = [ChatMessage {
        role: "user",
        content: QUESTION,
    }];
    let prompt = format!(
        "{}<|im_start|>assistant\n",
        tokenizer.template().render(&messages)
    );
    let prompt_ids = tokenizer.encode(&prompt).unwrap();
    let probes = [
        prompt.clone(),
        "The capital of France is".to_string(),
        "1, 2, 3, 4,".to_string(),
    ];
    let base: Vec<Vec<u32>> = probes
        .iter()
        .map(|text| ours(&model, &tokenizer.encode(text).unwrap(), 1))
        .collect();

    let pair = SftPair {
        test_idx: 1,
        system_prompt: None,
        instruction: QUESTION.to_string(),
        output: ANSWER.to_string(),
    };
    let example = encode(&pair, &tokenizer, 512).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let run = RunDir::open(dir.path(), &json!({"test": "llama.cpp"})).unwrap();
    let settings_sft = TrainSettings {
        learning_rate: 2e-3,
        epochs: 12,
        batch_size: 1,
        ..TrainSettings::default()
    };
    let state = train(&model, &[example], &settings_sft, &run, &mut |_| {}).unwrap();
    let losses: Vec<f64> = state.steps.iter().map(|s| s.loss).collect();
    let answer_ids = tokenizer.encode(ANSWER).unwrap();
    let adapted = ours(&model, &prompt_ids, answer_ids.len());
    assert_eq!(
        tokenizer.decode(&adapted).unwrap(),
        ANSWER,
        "training did not teach the answer: losses {losses:?}"
    );
    let adapter = dir.path().join("sft.gguf");
    write_adapter(&model, &adapter).unwrap();

    settings.lora = Some(adapter.clone());
    let server = LocalServer::start(&settings).unwrap();
    let url = format!("http://127.0.0.1:{}/lora-adapters", server.port());
    let listed: Value = reqwest::blocking::get(&url).unwrap().json().unwrap();
    assert_eq!(
        listed[0]["path"],
        json!(adapter.to_str().unwrap()),
        "{listed}"
    );

    // The tokenizer and the template are the server's.
    for text in [
        prompt.as_str(),
        "Numbers 12345 and ünïcödé, spaces  and\ttabs.",
    ] {
        let reply = post(
            &server,
            "/tokenize",
            json!({"content": text, "parse_special": true}),
        );
        let theirs: Vec<u32> = serde_json::from_value(reply["tokens"].clone()).unwrap();
        assert_eq!(
            tokenizer.encode(text).unwrap(),
            theirs,
            "tokens of {text:?}"
        );
    }
    let reply = post(
        &server,
        "/apply-template",
        json!({"messages": [{"role": "user", "content": QUESTION}]}),
    );
    assert_eq!(reply["prompt"], json!(prompt), "the chat template");

    // The base forward predicts what llama.cpp predicts (its adapter at scale 0).
    for (text, expected) in probes.iter().zip(&base) {
        let ids = tokenizer.encode(text).unwrap();
        assert_eq!(
            &served(&server, &ids, 1, Some(0.0)),
            expected,
            "next token after {text:?}"
        );
    }
    // Served as configured, the adapter answers as trained; at scale 0 it does not.
    let answered = served(&server, &prompt_ids, answer_ids.len(), None);
    assert_eq!(tokenizer.decode(&answered).unwrap(), ANSWER);
    let unadapted = served(&server, &prompt_ids, answer_ids.len(), Some(0.0));
    assert_ne!(unadapted, answered, "the adapter changed nothing");
}
