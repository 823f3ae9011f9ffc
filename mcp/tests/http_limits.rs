//! The HTTP transport's guards: an oversized body is refused with 413, a foreign Host header
//! with 403 (DNS-rebinding protection), and the server keeps serving afterwards.

mod support;

use support::ours_http;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

#[test]
fn oversized_bodies_and_foreign_hosts_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url) = ours_http(&dir.path().join("store"));
    let client = reqwest::blocking::Client::new();
    let post = |body: String| {
        client
            .post(&url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .body(body)
    };

    let big = INITIALIZE.replace(
        "\"t\"",
        &format!("\"{}\"", "x".repeat(memorybench_mcp::limits::MAX_HTTP_BODY)),
    );
    assert_eq!(post(big).send().unwrap().status().as_u16(), 413);

    let foreign = post(INITIALIZE.to_string())
        .header("Host", "evil.example")
        .send()
        .unwrap();
    assert_eq!(foreign.status().as_u16(), 403);

    let ok = post(INITIALIZE.to_string()).send().unwrap();
    assert_eq!(ok.status().as_u16(), 200);
    assert!(ok.text().unwrap().contains("memorybench-mcp"));
    let _ = server.kill();
    let _ = server.wait();
}
