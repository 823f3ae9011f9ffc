//! The HTTP transport's guards: an oversized body is refused with 413, a foreign Host header
//! with 403 (DNS-rebinding protection), and the server keeps serving afterwards; a session
//! ended with DELETE answers 204, as clients (the Python SDK) count success, and is gone.

use std::io::{BufRead, BufReader, Write};

use crate::support::ours_http;

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

    // Declaring a body over the limit is enough: the answer comes before any of it is sent
    // (sending it whole would race the server closing the connection).
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    let too_long = memorybench_mcp::limits::MAX_HTTP_BODY + 1;
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {too_long}\r\n\r\n"
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(&stream).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");

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

#[test]
fn a_deleted_session_answers_no_content_and_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url) = ours_http(&dir.path().join("store"));
    let mut client = crate::support::http::HttpClient::new(&url, None);
    assert_eq!(client.initialize(), 200);
    let session = client.session().unwrap();
    let http = reqwest::blocking::Client::new();
    let ended = http
        .delete(&url)
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-06-18")
        .send()
        .unwrap();
    assert_eq!(ended.status().as_u16(), 204);
    let (status, _) = client.call_raw("read_graph", serde_json::json!({}));
    assert_eq!(status, 404, "the ended session still answers");
    let _ = server.kill();
    let _ = server.wait();
}

/// One tenant opening sessions without ever ending them reaches its own cap, not the
/// server's (issue 76, D1: 10 400 such sessions locked every other tenant out until restart):
/// its next `initialize` gets 429 naming the cap, another tenant still gets in, and once the
/// unused sessions expire the tenant gets in again while an expired id answers 404.
#[test]
fn one_tenant_cannot_fill_the_session_table_and_unused_sessions_expire() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("service.toml");
    let digest = memorybench_mcp::digest_hex;
    std::fs::write(
        &config,
        format!(
            "[[tenants]]\nname = \"acme\"\ntoken_sha256 = \"{}\"\n\n\
             [[tenants]]\nname = \"bravo\"\ntoken_sha256 = \"{}\"\n",
            digest("token-acme"),
            digest("token-bravo")
        ),
    )
    .unwrap();
    let (mut server, url) = crate::support::ours_http_with(
        &dir.path().join("store"),
        &[
            "--config",
            config.to_str().unwrap(),
            "--max-sessions-per-tenant",
            "5",
            "--session-idle-secs",
            "2",
        ],
    );
    let open = |token: &str| {
        let mut client = crate::support::http::HttpClient::new(&url, Some(token));
        let status = client.initialize();
        (status, client)
    };
    let mut kept = Vec::new();
    for _ in 0..5 {
        let (status, client) = open("token-acme");
        assert_eq!(status, 200);
        kept.push(client);
    }
    let response = crate::support::http::HttpClient::new(&url, Some("token-acme")).post(
        &serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "0"}}}),
    );
    assert_eq!(response.status().as_u16(), 429);
    assert!(
        response.text().unwrap().contains("at most 5"),
        "the refusal names the cap"
    );
    assert_eq!(open("token-bravo").0, 200, "another tenant is locked out");

    // Used sessions stay; unused ones expire and make room.
    std::thread::sleep(std::time::Duration::from_millis(2_500));
    for _ in 0..5 {
        assert_eq!(open("token-acme").0, 200);
    }
    let (status, _) = kept[0].call_raw("list_memories", serde_json::json!({"user_id": "ann"}));
    assert_eq!(status, 404, "an expired session still answers");
    let _ = server.kill();
    let _ = server.wait();
}

/// Slow clients are cut off (issue 76, D2: a half-sent body stayed open 220 s and half-sent
/// headers 200 s, eight of them exhausting a tenant's concurrency): headers that do not arrive
/// within the deadline close the connection, a body that does not gets 408, and the server
/// keeps serving.
#[test]
fn half_sent_headers_and_bodies_are_cut_off_at_the_deadline() {
    use std::io::Read;
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let (mut server, url) =
        crate::support::ours_http_with(&dir.path().join("store"), &["--http-deadline-secs", "1"]);
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let connect = || {
        let stream = std::net::TcpStream::connect(&address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
    };

    // Headers begun, never ended: the server closes the connection.
    let mut headers = connect();
    let started = Instant::now();
    write!(
        headers,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: applic"
    )
    .unwrap();
    let mut answer = Vec::new();
    let read = headers.read_to_end(&mut answer);
    assert!(
        read.is_ok(),
        "the connection was still open after 10 s: {read:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // A body declared, a tenth of it sent: 408.
    let mut body = connect();
    let started = Instant::now();
    write!(
        body,
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
    )
    .unwrap();
    let mut status = String::new();
    BufReader::new(&body).read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 408"), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );

    // The server is still there.
    let mut client = crate::support::http::HttpClient::new(&url, None);
    assert_eq!(client.initialize(), 200);
    let _ = server.kill();
    let _ = server.wait();
}
