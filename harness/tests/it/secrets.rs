//! An API key reaches the server and nothing else: not the output, the logs, the results, the
//! store (recorded answers are keyed without it).

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::json;

use crate::common::{assert_ok, chat_server, in_dir};

const KEY: &str = "sk-mbtest-7f3a9c1e5b2d4f60a8e6c4b2d0f9e7a5";

/// Every file under `dir` whose bytes contain `needle`.
pub(crate) fn files_containing(dir: &Path, needle: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_containing(&path, needle));
        } else if let Ok(bytes) = std::fs::read(&path) {
            if bytes.windows(needle.len()).any(|w| w == needle) {
                found.push(path.display().to_string());
            }
        }
    }
    found
}

#[test]
fn an_api_key_is_sent_and_never_written() {
    // The key's use in the Authorization header is checked in the llm crate's provider tests.
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    let port = chat_server(move |sent| {
        seen.lock().unwrap().push(sent["model"].clone());
        json!({
            "choices": [{"message": {"role": "assistant", "content": "{\"facts\": []}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 2},
        })
    });
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("llm.toml");
    let role = format!(
        "provider = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\n\
         api_key_env = \"MB_TEST_SECRET_KEY\"\n"
    );
    std::fs::write(
        &settings,
        format!("[answer]\n{role}[memory]\n{role}[simulator]\n{role}[judge]\n{role}"),
    )
    .unwrap();
    let args = in_dir(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "mem0",
            "--limit",
            "2",
            "--llm",
            settings.to_str().unwrap(),
        ],
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(&args)
        .env("MB_TEST_SECRET_KEY", KEY)
        .env("RUST_LOG", "debug")
        .output()
        .unwrap();
    assert_ok(&out);
    assert!(!requests.lock().unwrap().is_empty(), "the model was asked");
    let printed = [out.stdout, out.stderr].concat();
    assert!(
        !printed.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the key was printed"
    );
    assert_eq!(
        files_containing(dir.path(), KEY.as_bytes()),
        Vec::<String>::new()
    );
}
