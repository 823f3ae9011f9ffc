//! Both providers against a local server that speaks their wire formats, started by the test.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mb_llm::{
    extract_json, AnthropicProvider, ChatProvider, ChatRequest, EndpointConfig, LlmError, Message,
    OpenAiProvider, ResponseFormat,
};
use serde_json::{json, Value};
use tiny_http::{Header, Response, Server};

/// What the server answers to one request.
pub(crate) enum Reply {
    /// 200 with this JSON body.
    Json(Value),
    /// This status and body, with an optional Retry-After.
    Status(u16, String, Option<&'static str>),
    /// 200 with a raw (possibly broken) body.
    Raw(&'static str),
    /// Wait, then answer with the inner reply.
    After(Duration, Box<Reply>),
}

/// What the server saw: request bodies and the most requests it held at once.
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) bodies: Mutex<Vec<Value>>,
    pub(crate) headers: Mutex<Vec<Vec<(String, String)>>>,
    pub(crate) in_flight: AtomicUsize,
    pub(crate) max_in_flight: AtomicUsize,
}

/// Serves on a free port, one thread per request; `script(n, body)` picks the reply.
pub(crate) fn serve(
    script: impl Fn(usize, &Value) -> Reply + Send + Sync + 'static,
) -> (String, Arc<Seen>) {
    let server = Arc::new(Server::http("127.0.0.1:0").unwrap());
    let base = format!("http://{}", server.server_addr().to_ip().unwrap());
    let seen = Arc::new(Seen::default());
    let script = Arc::new(script);
    let count = Arc::new(AtomicUsize::new(0));
    let (s, seen2) = (server.clone(), seen.clone());
    std::thread::spawn(move || {
        for mut request in s.incoming_requests() {
            let (seen, script, count) = (seen2.clone(), script.clone(), count.clone());
            std::thread::spawn(move || {
                let now = seen.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                seen.max_in_flight.fetch_max(now, Ordering::SeqCst);
                let mut body = String::new();
                request.as_reader().read_to_string(&mut body).unwrap();
                let body: Value = serde_json::from_str(&body).unwrap();
                seen.headers.lock().unwrap().push(
                    request
                        .headers()
                        .iter()
                        .map(|h| (h.field.to_string().to_lowercase(), h.value.to_string()))
                        .collect(),
                );
                seen.bodies.lock().unwrap().push(body.clone());
                let mut reply = script(count.fetch_add(1, Ordering::SeqCst), &body);
                while let Reply::After(wait, inner) = reply {
                    std::thread::sleep(wait);
                    reply = *inner;
                }
                let response = match reply {
                    Reply::Json(v) => Response::from_string(v.to_string()),
                    Reply::Raw(text) => Response::from_string(text),
                    Reply::Status(code, text, retry_after) => {
                        let mut r = Response::from_string(text).with_status_code(code);
                        if let Some(s) = retry_after {
                            r.add_header(Header::from_bytes("Retry-After", s).unwrap());
                        }
                        r
                    }
                    Reply::After(..) => unreachable!(),
                };
                seen.in_flight.fetch_sub(1, Ordering::SeqCst);
                let _ = request.respond(response);
            });
        }
    });
    (base, seen)
}

pub(crate) fn openai_reply(text: &str) -> Reply {
    Reply::Json(json!({
        "id": "x", "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
    }))
}

fn anthropic_reply(text: &str) -> Reply {
    Reply::Json(json!({
        "id": "msg", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 4}
    }))
}

pub(crate) fn config(base: &str) -> EndpointConfig {
    {
        let mut built = EndpointConfig::default();
        built.base_url = base.to_string();
        built.model = "test-model".to_string();
        built.api_key_env = None;
        built.timeout_secs = 2.0;
        built.max_retries = 3;
        built.initial_backoff_secs = 0.01;
        built.max_backoff_secs = 0.05;
        built.max_concurrency = 4;
        built
    }
}

pub(crate) fn request() -> ChatRequest {
    ChatRequest::new(vec![
        Message::system("Answer briefly."),
        Message::user("What is the capital of France?"),
    ])
}

#[tokio::test]
async fn openai_wire_format_and_think_blocks() {
    let (base, seen) = serve(|_, _| openai_reply("<think>Paris, obviously.</think>\n\nParis"));
    let provider = OpenAiProvider::new(config(&format!("{base}/v1"))).unwrap();
    let mut req = request();
    req.response_format = Some(ResponseFormat::JsonSchema {
        name: "answer".into(),
        schema: json!({"type": "object"}),
        strict: true,
    });
    let completion = provider.complete(&req).await.unwrap();
    assert_eq!(completion.text, "Paris");
    assert_eq!(completion.usage.unwrap().input_tokens, 12);
    assert_eq!(completion.finish_reason.as_deref(), Some("stop"));
    assert_eq!(completion.retries, 0);
    let body = seen.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["model"], "test-model");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(
        body["messages"][1]["content"],
        "What is the capital of France?"
    );
    assert_eq!(
        body["temperature"].to_string(),
        "0.1",
        "sent as upstream writes it"
    );
    assert_eq!(body["top_p"].to_string(), "0.1");
    assert_eq!(body["max_tokens"], 2048);
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["name"], "answer");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert!(body.get("chat_template_kwargs").is_none());
}

#[tokio::test]
async fn anthropic_wire_format() {
    let (base, seen) = serve(|_, _| anthropic_reply("Paris."));
    let provider = AnthropicProvider::new(config(&base)).unwrap();
    let completion = provider.complete(&request()).await.unwrap();
    assert_eq!(completion.text, "Paris.");
    assert_eq!(completion.usage.unwrap().output_tokens, 4);
    assert_eq!(completion.finish_reason.as_deref(), Some("end_turn"));
    let body = seen.bodies.lock().unwrap()[0].clone();
    assert_eq!(body["system"], "Answer briefly.");
    assert_eq!(body["messages"].as_array().unwrap().len(), 1);
    assert_eq!(body["messages"][0]["role"], "user");
    let headers = seen.headers.lock().unwrap()[0].clone();
    assert!(headers.contains(&("anthropic-version".into(), "2023-06-01".into())));
}

#[tokio::test]
async fn retries_429_with_retry_after_and_500_then_succeeds() {
    let (base, seen) = serve(|n, _| match n {
        0 => Reply::Status(429, "rate limited".into(), Some("0")),
        1 => Reply::Status(500, "internal error".into(), None),
        2 => Reply::Raw("{\"choices\": [{\"message\": "), // truncated body
        _ => openai_reply("ok"),
    });
    let provider = OpenAiProvider::new(config(&base)).unwrap();
    let completion = provider.complete(&request()).await.unwrap();
    assert_eq!(completion.text, "ok");
    assert_eq!(completion.retries, 3);
    assert_eq!(seen.bodies.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn an_absurd_retry_after_waits_no_longer_than_the_longest_backoff() {
    let (base, seen) = serve(|n, _| match n {
        0 => Reply::Status(429, "rate limited".into(), Some("1e20")),
        _ => openai_reply("ok"),
    });
    let provider = OpenAiProvider::new(config(&base)).unwrap();
    let started = std::time::Instant::now();
    let completion = provider.complete(&request()).await.unwrap();
    assert_eq!(completion.text, "ok");
    // max_backoff_secs is 0.05 in these settings; an honoured 1e20 would never return.
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(seen.bodies.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn persistent_failures_exhaust_the_retries() {
    let (base, seen) = serve(|_, _| Reply::Status(503, "overloaded".into(), None));
    let provider = OpenAiProvider::new(config(&base)).unwrap();
    match provider.complete(&request()).await {
        Err(LlmError::Exhausted {
            attempts, detail, ..
        }) => {
            assert_eq!(attempts, 4);
            assert!(
                detail.contains("503") && detail.contains("overloaded"),
                "{detail}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.bodies.lock().unwrap().len(), 4);
}

#[tokio::test]
async fn timeouts_are_retried_then_reported() {
    let (base, _seen) = serve(|_, _| {
        Reply::After(
            Duration::from_millis(600),
            Box::new(openai_reply("too late")),
        )
    });
    let provider = OpenAiProvider::new({
        let mut built = config(&base);
        built.timeout_secs = 0.2;
        built.max_retries = 1;
        built
    })
    .unwrap();
    match provider.complete(&request()).await {
        Err(LlmError::Exhausted {
            attempts: 2,
            detail,
            ..
        }) => {
            assert!(detail.contains("timed out"), "{detail}")
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn context_overflow_is_recognized_and_not_retried() {
    let vllm = "{\"object\":\"error\",\"message\":\"This model's maximum context length is 32768 \
                tokens. However, you requested 40000 tokens.\",\"type\":\"BadRequestError\"}";
    let anthropic = "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\
                     \"message\":\"prompt is too long: 210000 tokens > 200000 maximum\"}}";
    for (body, anthropic_format) in [(vllm, false), (anthropic, true)] {
        let (base, seen) = serve(move |_, _| Reply::Status(400, body.into(), None));
        let error = if anthropic_format {
            AnthropicProvider::new(config(&base))
                .unwrap()
                .complete(&request())
                .await
        } else {
            OpenAiProvider::new(config(&base))
                .unwrap()
                .complete(&request())
                .await
        };
        assert!(
            matches!(error, Err(LlmError::ContextOverflow { .. })),
            "{error:?}"
        );
        assert_eq!(seen.bodies.lock().unwrap().len(), 1);
    }
}

#[tokio::test]
async fn client_errors_fail_at_once() {
    let (base, seen) = serve(|_, _| Reply::Status(401, "invalid api key".into(), None));
    let provider = OpenAiProvider::new(config(&base)).unwrap();
    match provider.complete(&request()).await {
        Err(LlmError::Rejected {
            status: 401,
            detail,
            ..
        }) => {
            assert!(detail.contains("invalid api key"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(seen.bodies.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn malformed_success_bodies_are_reported() {
    let (base, _seen) = serve(|_, _| Reply::Json(json!({"choices": []})));
    let provider = OpenAiProvider::new(config(&base)).unwrap();
    let error = provider.complete(&request()).await.unwrap_err();
    assert!(matches!(error, LlmError::BadResponse { .. }), "{error}");
}

#[tokio::test]
async fn code_fenced_json_answers_parse() {
    let (base, _seen) = serve(|_, _| {
        openai_reply(
            "Sure! Here are the facts:\n```json\n{'facts': ['Moved to Lisbon', 'Has a dog',]}\n```",
        )
    });
    let provider = OpenAiProvider::new(config(&base)).unwrap();
    let completion = provider.complete(&request()).await.unwrap();
    assert_eq!(
        extract_json(&completion.text),
        Some(json!({"facts": ["Moved to Lisbon", "Has a dog"]}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_concurrency_limit_holds_on_the_server_side() {
    let (base, seen) =
        serve(|_, _| Reply::After(Duration::from_millis(100), Box::new(openai_reply("done"))));
    let provider = Arc::new(
        OpenAiProvider::new({
            let mut built = config(&base);
            built.max_concurrency = 3;
            built
        })
        .unwrap(),
    );
    let tasks: Vec<_> = (0..12)
        .map(|_| {
            let provider = provider.clone();
            tokio::spawn(async move { provider.complete(&request()).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(seen.max_in_flight.load(Ordering::SeqCst), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn providers_of_one_server_share_its_limit() {
    let (base, seen) =
        serve(|_, _| Reply::After(Duration::from_millis(100), Box::new(openai_reply("done"))));
    let limited = {
        let mut built = config(&base);
        built.max_concurrency = 2;
        built
    };
    let answer = Arc::new(OpenAiProvider::new(limited.clone()).unwrap());
    let memory = Arc::new(OpenAiProvider::new(limited).unwrap());
    let tasks: Vec<_> = (0..8)
        .map(|i| {
            let provider = if i % 2 == 0 {
                answer.clone()
            } else {
                memory.clone()
            };
            tokio::spawn(async move { provider.complete(&request()).await })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(seen.max_in_flight.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn unreachable_servers_and_bad_settings() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let provider = OpenAiProvider::new({
        let mut built = config(&format!("http://127.0.0.1:{port}/v1"));
        built.max_retries = 1;
        built
    })
    .unwrap();
    let error = provider.complete(&request()).await.unwrap_err().to_string();
    assert!(
        error.contains(&format!("127.0.0.1:{port}/v1/chat/completions")),
        "{error}"
    );
    assert!(error.contains("2 attempts"), "{error}");

    let missing_key = OpenAiProvider::new({
        let mut built = config("http://localhost:1");
        built.api_key_env = Some("MB_LLM_TEST_KEY_THAT_IS_NOT_SET".into());
        built
    });
    assert!(matches!(
        missing_key,
        Err(LlmError::Config {
            field: "api_key_env",
            ..
        })
    ));
    for (field, huge) in [
        ("timeout_secs", {
            let mut built = config("http://localhost:1");
            built.timeout_secs = 1e20;
            built
        }),
        ("max_backoff_secs", {
            let mut built = config("http://localhost:1");
            built.max_backoff_secs = f64::MAX;
            built
        }),
    ] {
        match OpenAiProvider::new(huge) {
            Err(LlmError::Config {
                field: named,
                reason,
            }) => {
                assert_eq!(named, field);
                assert!(reason.contains("up to 86400"), "{reason}");
            }
            Err(other) => panic!("{field}: {other:?}"),
            Ok(_) => panic!("{field}: accepted"),
        }
    }
    let zero = OpenAiProvider::new({
        let mut built = config("http://localhost:1");
        built.max_concurrency = 0;
        built
    });
    assert!(matches!(
        zero,
        Err(LlmError::Config {
            field: "max_concurrency",
            ..
        })
    ));
}

#[test]
fn debug_output_never_shows_the_api_key() {
    const KEY: &str = "sk-debug-test-3c9e1a7f5b";
    // A variable no other test reads.
    std::env::set_var("MB_LLM_DEBUG_TEST_KEY", KEY);
    let settings = {
        let mut built = config("http://localhost:1");
        built.api_key_env = Some("MB_LLM_DEBUG_TEST_KEY".into());
        built
    };
    let openai = OpenAiProvider::new(settings.clone()).unwrap();
    let anthropic = AnthropicProvider::new(settings).unwrap();
    for printed in [format!("{openai:?}"), format!("{anthropic:?}")] {
        assert!(!printed.contains(KEY), "{printed}");
        assert!(printed.contains("redacted"), "{printed}");
    }
}
