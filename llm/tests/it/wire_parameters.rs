//! What goes on the wire as upstream's clients send it: parameters some of them leave out
//! (top-p, a schema's `strict`) and the chat-template arguments of the paper's Qwen3 roles.

use mb_llm::{ChatProvider, OpenAiProvider, ResponseFormat};
use serde_json::json;

use crate::providers::{config, openai_reply, request, serve};

#[tokio::test]
async fn parameters_upstream_leaves_out_stay_out() {
    // An operation whose upstream client sends no top-p sends none.
    let (base, seen) = serve(|_, _| openai_reply("{}"));
    let provider = OpenAiProvider::new(config(&format!("{base}/v1"))).unwrap();
    let mut req = request();
    req.sampling = mb_llm::Sampling::without_top_p(0.7, 2000);
    provider.complete(&req).await.unwrap();
    let body = seen.bodies.lock().unwrap()[0].clone();
    assert!(body.get("top_p").is_none(), "{body}");
    assert_eq!(body["temperature"].to_string(), "0.7");

    // A schema upstream does not mark strict goes out without `strict`.
    let (base, seen) = serve(|_, _| openai_reply("{}"));
    let provider = OpenAiProvider::new(config(&format!("{base}/v1"))).unwrap();
    let mut req = request();
    req.response_format = Some(ResponseFormat::JsonSchema {
        name: "response".into(),
        schema: json!({"type": "object"}),
        strict: false,
    });
    provider.complete(&req).await.unwrap();
    let body = seen.bodies.lock().unwrap()[0].clone();
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "response", "schema": {"type": "object"}}})
    );
}

/// The paper's settings turn Qwen3's thinking off in every Qwen3 role's requests.
#[tokio::test]
async fn the_papers_qwen3_roles_send_thinking_off() {
    let paper = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/llm/paper.toml");
    let settings = mb_llm::LlmSettings::from_file(&paper).unwrap();
    for (role, settings) in [
        ("answer", &settings.answer),
        ("memory", &settings.memory),
        ("simulator", &settings.simulator),
    ] {
        let mb_llm::RoleSettings::Openai(endpoint) = settings else {
            panic!("{role} is not an OpenAI-compatible role");
        };
        let (base, seen) = serve(|_, _| openai_reply("Paris"));
        let mut endpoint = endpoint.clone();
        endpoint.base_url = format!("{base}/v1");
        endpoint.max_retries = 0;
        OpenAiProvider::new(endpoint)
            .unwrap()
            .complete(&request())
            .await
            .unwrap();
        let body = seen.bodies.lock().unwrap()[0].clone();
        assert_eq!(
            body["chat_template_kwargs"],
            json!({"enable_thinking": false}),
            "{role}"
        );
    }
}
