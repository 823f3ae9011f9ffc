//! Role settings from configuration files, and the stack built from them.

use std::path::PathBuf;
use std::sync::Arc;

use mb_engine::{Engine, EngineOptions};
use mb_llm::ops::{Answer, Lang};
use mb_llm::{CacheMode, LlmError, LlmSettings, LlmStack, Message, RoleSettings};
use serde_json::json;
use tiny_http::{Response, Server};

fn config(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../configs/llm")
        .join(name)
}

#[test]
fn shipped_configurations_parse() {
    let offline = LlmSettings::from_file(&config("offline.toml")).unwrap();
    assert!(offline.is_offline());
    assert_eq!(offline, LlmSettings::default());

    let paper = LlmSettings::from_file(&config("paper.toml")).unwrap();
    assert!(!paper.is_offline());
    match (&paper.answer, &paper.simulator, &paper.judge) {
        (RoleSettings::Openai(a), RoleSettings::Openai(s), RoleSettings::Openai(j)) => {
            assert_eq!(a.model, "Qwen/Qwen3-8B");
            assert_eq!(a.base_url, "http://localhost:12366/v1");
            assert_eq!(s.model, "Qwen/Qwen3-32B");
            assert_eq!(j.api_key_env.as_deref(), Some("EVALUATE_API_KEY"));
            assert_eq!(j.max_concurrency, 8);
            assert_eq!(a.max_retries, 6, "unset fields keep their defaults");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn mistakes_name_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llm.toml");
    for (text, expected) in [
        (
            "[answer]\nprovider = \"vllm\"\nbase_ur1 = \"http://x\"\n",
            "base_ur1",
        ),
        ("reasks = \"two\"\n", "line 1"),
        ("[answer]\nprovider = \"gpt\"\n", "gpt"),
        ("[answr]\nprovider = \"offline\"\n", "answr"),
        ("[server]\nmodle = \"x.gguf\"\n", "modle"),
    ] {
        std::fs::write(&path, text).unwrap();
        let error = LlmSettings::from_file(&path).unwrap_err().to_string();
        assert!(error.contains("llm.toml"), "{error}");
        assert!(error.contains(expected), "{text:?}: {error}");
    }
    let missing = LlmSettings::from_file(&dir.path().join("nope.toml")).unwrap_err();
    assert!(missing.to_string().contains("nope.toml"));
}

#[tokio::test]
async fn a_stack_records_meters_and_replays() {
    let server = Server::http("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", server.server_addr().to_ip().unwrap());
    std::thread::spawn(move || {
        for request in server.incoming_requests() {
            let body = json!({"choices": [{"message": {"content": "Pixel."}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 30, "completion_tokens": 2}});
            let _ = request.respond(Response::from_string(body.to_string()));
        }
    });
    let settings: LlmSettings = toml::from_str(&format!(
        "[answer]\nprovider = \"vllm\"\nbase_url = \"{base}\"\nmodel = \"Qwen/Qwen3-8B\"\n"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let stack = LlmStack::build(&settings, CacheMode::Record, Some(engine.clone())).unwrap();
    assert!(stack.memory.is_offline() && !stack.answer.is_offline());

    let question = Answer::new(vec![Message::user("What is Maya's dog called?")]);
    assert_eq!(
        stack.answer.run(&question, Lang::En).await.unwrap(),
        "Pixel."
    );
    assert_eq!(
        stack.answer.run(&question, Lang::En).await.unwrap(),
        "Pixel."
    );
    let stats = stack.ledger.snapshot();
    assert_eq!(stats.len(), 1);
    assert_eq!(
        (stats[0].role.as_str(), stats[0].operation.as_str()),
        ("answer", "answer")
    );
    assert_eq!(
        (stats[0].calls, stats[0].replayed, stats[0].input_tokens),
        (2, 1, 60)
    );

    let replay = LlmStack::build(&settings, CacheMode::Replay, Some(engine)).unwrap();
    assert_eq!(
        replay.answer.run(&question, Lang::En).await.unwrap(),
        "Pixel."
    );
    let other = Answer::new(vec![Message::user("Something never asked")]);
    assert!(matches!(
        replay.answer.run(&other, Lang::En).await,
        Err(LlmError::ReplayMiss { .. })
    ));

    let bad_tokenizer = LlmSettings {
        tokenizer: Some(PathBuf::from("no/tokenizer.json")),
        ..settings.clone()
    };
    let error = LlmStack::build(&bad_tokenizer, CacheMode::Off, None)
        .err()
        .unwrap();
    assert!(error.to_string().contains("no/tokenizer.json"), "{error}");

    let no_engine = LlmStack::build(&settings, CacheMode::Record, None);
    assert!(matches!(
        no_engine,
        Err(LlmError::Config {
            field: "llm cache",
            ..
        })
    ));
    assert!(LlmStack::build(&LlmSettings::default(), CacheMode::Record, None).is_ok());
}
