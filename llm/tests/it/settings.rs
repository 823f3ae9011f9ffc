//! Role settings from configuration files, and the stack built from them.

use std::path::PathBuf;
use std::sync::Arc;

use mb_baselines::amem::ops::QueryKeywords;
use mb_baselines::mem0::ops::ExtractFacts;
use mb_core::Lang;
use mb_engine::{Engine, EngineOptions};
use mb_llm::ops::{Answer, OPERATION_NAMES};
use mb_llm::{
    AnswerStore, CacheMode, EngineAnswers, LlmError, LlmSettings, LlmStack, Message, RoleSettings,
};
use serde_json::{json, Value};
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

    // Upstream's 2025-12 feedback data: the same setup with Mistral as the simulator.
    let mistral = LlmSettings::from_file(&config("paper-mistral-simulator.toml")).unwrap();
    match &mistral.simulator {
        RoleSettings::Openai(s) => {
            assert_eq!(s.model, "mistralai/Mistral-Small-3.2-24B-Instruct-2506");
            assert_eq!(s.chat_template_kwargs, None, "no Qwen3 template arguments");
        }
        other => panic!("{other:?}"),
    }
    let mut qwen_simulator = mistral.clone();
    qwen_simulator.simulator = paper.simulator.clone();
    assert_eq!(
        qwen_simulator, paper,
        "everything but the simulator is paper.toml's"
    );
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
        "output_handling = \"tolerant\"\n\
         [answer]\nprovider = \"vllm\"\nbase_url = \"{base}\"\nmodel = \"Qwen/Qwen3-8B\"\n"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let stack = LlmStack::build(&settings, CacheMode::Record, Some(answers(&engine))).unwrap();
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

    // Unusable output ("Pixel." is no fact list): re-asked twice (tolerant handling, two
    // re-asks), then the fallback. A progress display reads calls, tokens and fallbacks without
    // resetting them.
    let facts = ExtractFacts::new(vec![Message::user("I have a dog.")], "2024-05-01");
    assert!(stack.answer.run(&facts, Lang::En).await.unwrap().is_empty());
    let usage = stack.usage_so_far();
    assert_eq!(
        (usage.calls, usage.input_tokens, usage.output_tokens),
        (5, 150, 10)
    );
    assert_eq!(
        usage.fallbacks,
        std::collections::BTreeMap::from([("answer/extract_facts".to_string(), 1)])
    );
    assert_eq!(stack.usage_so_far(), usage, "reading resets nothing");
    assert!(
        stack.uses_a_model()
            && !LlmStack::build(&LlmSettings::default(), CacheMode::Off, None)
                .unwrap()
                .uses_a_model()
    );

    // Upstream handling sends A-Mem's keyword request again until it parses, up to the cap;
    // each resend has its own record key, so recording replays none and a replay meets them
    // all.
    let mut upstream = settings.clone();
    upstream.output_handling = mb_llm::ops::OutputHandling::Upstream;
    let keywords = QueryKeywords::new("Maya's dog", 3);
    let recording = LlmStack::build(&upstream, CacheMode::Record, Some(answers(&engine))).unwrap();
    // After the cap, the query itself is searched with.
    assert_eq!(
        recording.answer.run(&keywords, Lang::En).await.unwrap(),
        "Maya's dog"
    );
    let sent = recording.ledger.take();
    assert_eq!((sent[0].calls, sent[0].replayed), (50, 0));
    assert_eq!(recording.take_cap_hits().len(), 1);
    let replaying = LlmStack::build(&upstream, CacheMode::Replay, Some(answers(&engine))).unwrap();
    assert_eq!(
        replaying.answer.run(&keywords, Lang::En).await.unwrap(),
        "Maya's dog"
    );
    assert_eq!(replaying.ledger.take()[0].replayed, 50);

    let replay = LlmStack::build(&settings, CacheMode::Replay, Some(answers(&engine))).unwrap();
    assert_eq!(
        replay.answer.run(&question, Lang::En).await.unwrap(),
        "Pixel."
    );
    let other = Answer::new(vec![Message::user("Something never asked")]);
    assert!(matches!(
        replay.answer.run(&other, Lang::En).await,
        Err(LlmError::ReplayMiss { .. })
    ));

    let bad_tokenizer = {
        let mut built = settings.clone();
        built.tokenizer = Some(PathBuf::from("no/tokenizer.json"));
        built
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

/// A server that answers every request with `reply` and fixed usage, keeping each request body.
fn recording_server(reply: &'static str) -> (String, Arc<std::sync::Mutex<Vec<Value>>>) {
    let server = Server::http("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", server.server_addr().to_ip().unwrap());
    let bodies = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = bodies.clone();
    std::thread::spawn(move || {
        for mut request in server.incoming_requests() {
            let mut body = String::new();
            request.as_reader().read_to_string(&mut body).unwrap();
            seen.lock()
                .unwrap()
                .push(serde_json::from_str::<Value>(&body).unwrap());
            let body = json!({"choices": [{"message": {"content": reply}, "finish_reason": "stop"}],
                              "usage": {"prompt_tokens": 41, "completion_tokens": 7}});
            let _ = request.respond(Response::from_string(body.to_string()));
        }
    });
    (base, bodies)
}

#[tokio::test]
async fn output_limits_cap_what_each_role_and_operation_asks_for() {
    let (base, bodies) = recording_server(r#"{"keywords": "dog"}"#);
    let endpoint = format!("provider = \"vllm\"\nbase_url = \"{base}\"\nmodel = \"m\"\n");
    let settings: LlmSettings = toml::from_str(&format!(
        "[answer]\n{endpoint}max_tokens = 128\n\
         [memory]\n{endpoint}max_tokens = 256\n\
         [memory.max_tokens_per_operation]\nquery_keywords = 64\n\
         [simulator]\n{endpoint}"
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let engine = Arc::new(Engine::open(dir.path().join("e"), EngineOptions::default()).unwrap());
    let stack = LlmStack::build(&settings, CacheMode::Record, Some(answers(&engine))).unwrap();
    let question = Answer::new(vec![Message::user("What is Maya's dog called?")]);
    let keywords = QueryKeywords::new("Maya's dog", 3);
    stack.answer.run(&question, Lang::En).await.unwrap();
    stack.memory.run(&keywords, Lang::En).await.unwrap();
    stack.memory.run(&question, Lang::En).await.unwrap();
    // No limit on the simulator role: upstream's 2048.
    let other = Answer::new(vec![Message::user("And the cat?")]);
    stack.simulator.run(&other, Lang::En).await.unwrap();
    let sent: Vec<Value> = bodies
        .lock()
        .unwrap()
        .iter()
        .map(|b| b["max_tokens"].clone())
        .collect();
    assert_eq!(sent, [json!(128), json!(64), json!(256), json!(2048)]);

    // The server's usage is what the ledger counts.
    let stats = stack.ledger.snapshot();
    let answer = stats.iter().find(|s| s.role == "answer").unwrap();
    assert_eq!(
        (
            answer.input_tokens,
            answer.output_tokens,
            answer.estimated_token_calls
        ),
        (41, 7, 0)
    );

    // The record cache keys on the capped request: the uncapped one was never recorded.
    let uncapped: LlmSettings = toml::from_str(&format!("[answer]\n{endpoint}")).unwrap();
    let replay = LlmStack::build(&uncapped, CacheMode::Replay, Some(answers(&engine))).unwrap();
    assert!(matches!(
        replay.answer.run(&question, Lang::En).await,
        Err(LlmError::ReplayMiss { .. })
    ));
    let replay = LlmStack::build(&settings, CacheMode::Replay, Some(answers(&engine))).unwrap();
    assert!(replay.answer.run(&question, Lang::En).await.is_ok());
}

#[test]
fn output_limit_mistakes_name_the_file_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local.toml");
    let role = "[memory]\nprovider = \"vllm\"\n";
    for (text, expected) in [
        (
            format!("{role}[memory.max_tokens_per_operation]\nextract_fact = 256\n"),
            "max_tokens_per_operation: ",
        ),
        (
            format!("{role}[memory.max_tokens_per_operation]\nanswer = 0\n"),
            "max_tokens_per_operation: ",
        ),
        (format!("{role}max_tokens = 0\n"), "max_tokens: "),
        (format!("{role}max_token = 10\n"), "max_token"),
    ] {
        std::fs::write(&path, &text).unwrap();
        let error = LlmSettings::from_file(&path).unwrap_err().to_string();
        assert!(error.contains("local.toml"), "{error}");
        assert!(error.contains(expected), "{text:?}: {error}");
        assert!(
            error.contains("[memory]") || expected == "max_token",
            "{error}"
        );
    }
    std::fs::write(
        &path,
        format!("{role}[memory.max_tokens_per_operation]\nextract_fact = 9\n"),
    )
    .unwrap();
    let error = LlmSettings::from_file(&path).unwrap_err().to_string();
    assert!(error.contains("\"extract_fact\""), "{error}");
}

/// Every operation's name, as its `name()` returns it in the source, is one limits may use.
#[test]
fn the_operation_list_names_every_operation() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut found = Vec::new();
    let mut files = Vec::new();
    let mut dirs = vec![
        root.join("llm/src/ops"),
        root.join("baselines/src"),
        root.join("eval/src/evaluate"),
        root.join("eval/src/longmemeval"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    for path in files {
        let text = std::fs::read_to_string(path).unwrap();
        let marker = "fn name(&self) -> &'static str {";
        for (at, _) in text.match_indices(marker) {
            let rest = text[at + marker.len()..].trim_start();
            if let Some(name) = rest.strip_prefix('"').and_then(|r| r.split('"').next()) {
                found.push(name.to_string());
            }
        }
    }
    assert!(found.len() >= 20, "{found:?}");
    for name in &found {
        assert!(
            OPERATION_NAMES.contains(&name.as_str()),
            "{name} is missing"
        );
    }
}

/// The record cache's store in `engine`.
fn answers(engine: &Arc<Engine>) -> Arc<dyn AnswerStore> {
    Arc::new(EngineAnswers::open(engine.clone()).unwrap())
}

/// An operation whose prompt names the language it was written in.
struct SaysItsLanguage;

impl mb_llm::ops::Operation for SaysItsLanguage {
    type Output = String;

    fn name(&self) -> &'static str {
        "says_its_language"
    }

    fn messages(&self, lang: mb_core::Lang) -> Vec<mb_llm::Message> {
        vec![mb_llm::Message::user(format!("{lang:?}"))]
    }

    fn parse(&self, text: &str) -> Option<String> {
        Some(text.to_string())
    }

    fn fallback(&self) -> String {
        String::new()
    }

    fn offline(&self, lang: mb_core::Lang) -> String {
        format!("{lang:?}")
    }
}

/// The memory role's own prompts are English for every dataset by default (upstream's memory
/// systems have only English prompts); `memory_prompt_language = "dataset"` gives Chinese rows
/// their Chinese prompts. Offline implementations always see the row's language.
#[tokio::test]
async fn memory_prompts_are_english_unless_the_dataset_language_is_asked_for() {
    use mb_llm::ops::{Backend, OutputHandling, PromptLanguage};
    let settings = mb_llm::LlmSettings::default();
    assert_eq!(settings.memory_prompt_language, PromptLanguage::English);
    for (language, sent) in [
        (PromptLanguage::English, "En"),
        (PromptLanguage::Dataset, "Zh"),
    ] {
        let model = mb_llm::testing::ScriptedProvider::new(&["ok"]);
        let backend = Backend::model(model.clone(), OutputHandling::Upstream, 0)
            .with_prompt_language(language);
        backend
            .run(&SaysItsLanguage, mb_core::Lang::Zh)
            .await
            .unwrap();
        assert_eq!(model.requests()[0].messages[0].content, sent);
        let offline = Backend::offline().with_prompt_language(language);
        assert_eq!(
            offline
                .run(&SaysItsLanguage, mb_core::Lang::Zh)
                .await
                .unwrap(),
            "Zh"
        );
    }
    let file = tempfile::tempdir().unwrap();
    let path = file.path().join("zh.toml");
    std::fs::write(&path, "memory_prompt_language = \"dataset\"\n").unwrap();
    let read = mb_llm::LlmSettings::from_file(&path).unwrap();
    assert_eq!(read.memory_prompt_language, PromptLanguage::Dataset);
}
