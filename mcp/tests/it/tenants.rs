//! Tenants over HTTP: bearer tokens (hashed in the configuration file) map to tenants; a
//! missing, wrong or expired token gets the same 401; every attempt of tenant B on tenant A's
//! memories (guessed record ids, A's user names, fields naming A's tenant or namespace, A's
//! session id, names that could escape a namespace) is refused and changes nothing; over-long
//! and chunked bodies get 413, too many requests in flight 429.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

use crate::support::http::HttpClient;
use crate::support::{is_error, ours_http_with, structured};
use serde_json::json;

fn digest(token: &str) -> String {
    memorybench_mcp::digest_hex(token)
}

fn config(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("service.toml");
    let text = format!(
        "[[tenants]]\nname = \"a\"\ntoken_sha256 = \"{}\"\n\n\
         [[tenants]]\nname = \"b\"\ntoken_sha256 = \"{}\"\n\n\
         [[tenants]]\nname = \"old\"\ntoken_sha256 = \"{}\"\nexpires_unix = 1\n\n\
         [[tenants]]\nname = \"slow\"\ntoken_sha256 = \"{}\"\nmax_concurrent = 1\n",
        digest("token-a"),
        digest("token-b"),
        digest("token-old"),
        digest("token-slow")
    );
    std::fs::write(&path, text).unwrap();
    path
}

fn raw_post(address: &str, head: &str) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    (stream, String::new())
}

fn status_line(stream: &TcpStream) -> String {
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    line
}

#[test]
fn tenants_are_kept_apart_and_limits_answered() {
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path());
    let (mut server, url) = ours_http_with(
        &dir.path().join("store"),
        &["--config", config.to_str().unwrap()],
    );
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();

    // No token, a wrong one, an expired one: the same 401, naming no tenant.
    let mut bodies = Vec::new();
    for token in [None, Some("token-x"), Some("token-old"), Some("")] {
        let client = HttpClient::new(&url, token);
        let response = client.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
        assert_eq!(response.status().as_u16(), 401, "{token:?}");
        assert!(response.headers().contains_key("www-authenticate"));
        bodies.push(response.text().unwrap());
    }
    assert!(bodies.iter().all(|b| b == &bodies[0]), "{bodies:?}");
    assert!(!bodies[0].contains("old") && !bodies[0].contains("expired"));

    let mut a = HttpClient::new(&url, Some("token-a"));
    assert_eq!(a.initialize(), 200);
    let mut b = HttpClient::new(&url, Some("token-b"));
    assert_eq!(b.initialize(), 200);

    let added = structured(&a.call(
        "add_memory",
        json!({"user_id": "alice", "wait": true, "messages": [
            {"role": "user", "content": "My locker code is 7291 and I live in Lisbon."}]}),
    ));
    let id = added["added"][0]["id"].as_u64().unwrap();
    a.call(
        "create_entities",
        json!({"entities": [{"name": "Alice", "entityType": "person", "observations": ["secret"]}]}),
    );
    let status_a = structured(&a.call("memory_status", json!({})));

    // B names A's user: nothing there.
    let found = structured(&b.call(
        "search_memories",
        json!({"user_id": "alice", "query": "locker code Lisbon"}),
    ));
    assert_eq!(found["results"], json!([]), "{found}");
    assert_eq!(found["pending"], json!([]), "{found}");
    let listed = structured(&b.call("list_memories", json!({"user_id": "alice"})));
    assert_eq!(listed["memories"], json!([]));
    // B guesses A's record id, around it too.
    for guess in [id.saturating_sub(1), id, id + 1] {
        for user in ["alice", "bob"] {
            let got = b.call("get_memory", json!({"user_id": user, "memory_id": guess}));
            assert!(is_error(&got), "{got}");
            let updated = b.call(
                "update_memory",
                json!({"user_id": user, "memory_id": guess, "text": "overwritten"}),
            );
            assert!(is_error(&updated), "{updated}");
            let deleted = structured(&b.call(
                "delete_memory",
                json!({"user_id": user, "memory_id": guess}),
            ));
            assert_eq!(deleted["deleted"], json!(false));
        }
    }
    structured(&b.call("delete_all_memories", json!({"user_id": "alice"})));
    // Fields naming A's tenant or namespace are refused, not ignored.
    for extra in [
        json!({"tenant": "a"}),
        json!({"namespace": "mcp/t/a/memory/bm25_message/alice"}),
        json!({"filter": {"tenant": "a"}}),
    ] {
        let mut args = json!({"user_id": "alice", "query": "locker"});
        for (k, v) in extra.as_object().unwrap() {
            args[k] = v.clone();
        }
        let refused = b.call("search_memories", args);
        assert!(is_error(&refused), "{refused}");
    }
    // Names that could escape or look alike: refused without echoing them.
    for user in [
        "..",
        "../a",
        "a/../../alice",
        "alice\u{0}",
        "\u{0430}lice",
        "alice\u{1b}[2J",
        &"x".repeat(129),
    ] {
        let refused = b.call("list_memories", json!({"user_id": user}));
        assert!(is_error(&refused), "{user:?}: {refused}");
        let refused = b.call(
            "add_memory",
            json!({"user_id": user, "messages": [{"role": "user", "content": "x"}]}),
        );
        assert!(is_error(&refused), "{user:?}: {refused}");
    }
    // B's graph is B's own.
    let graph = structured(&b.call("read_graph", json!({})));
    assert_eq!(graph["entities"], json!([]), "{graph}");
    let status_b = structured(&b.call("memory_status", json!({})));
    assert_eq!(status_b["namespaces"], json!([]), "{status_b}");
    assert_eq!(status_b["memories"], json!(0));
    // A's session id with B's token: not found.
    let mut thief = HttpClient::new(&url, Some("token-b")).with_session(a.session());
    let (status, _) = thief.call_raw("read_graph", json!({}));
    assert_eq!(status, 404);

    // Nothing of A's changed.
    assert_eq!(structured(&a.call("memory_status", json!({}))), status_a);
    let got = structured(&a.call("get_memory", json!({"user_id": "alice", "memory_id": id})));
    assert!(got["text"].as_str().unwrap().contains("7291"), "{got}");
    let graph = structured(&a.call("read_graph", json!({})));
    assert_eq!(graph["entities"][0]["name"], "Alice");

    // A chunked body over the limit: 413 (not a 500).
    let (stream, _) = raw_post(
        &address,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer token-a\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Transfer-Encoding: chunked\r\n\r\n"
        ),
    );
    // Sent from a thread of its own: the server stops reading once the limit is passed, and
    // the answer is read meanwhile.
    let mut writer = stream.try_clone().unwrap();
    std::thread::spawn(move || {
        let chunk = vec![b' '; 64 * 1024];
        for _ in 0..(memorybench_mcp::limits::MAX_HTTP_BODY / chunk.len() + 2) {
            if write!(writer, "{:x}\r\n", chunk.len()).is_err()
                || writer.write_all(&chunk).is_err()
                || writer.write_all(b"\r\n").is_err()
            {
                return;
            }
        }
    });
    let line = status_line(&stream);
    assert!(line.starts_with("HTTP/1.1 413"), "{line}");

    // One request of `slow` in flight (its body still coming): a second gets 429.
    let (held, _) = raw_post(
        &address,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer token-slow\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: 100\r\n\r\n{{"
        ),
    );
    std::thread::sleep(std::time::Duration::from_millis(300));
    let second = HttpClient::new(&url, Some("token-slow"));
    let response = second.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}));
    assert_eq!(response.status().as_u16(), 429);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(response
        .text()
        .unwrap()
        .contains("too many requests in flight"));
    // Other tenants are not held back by it.
    let (status, _) = a.call_raw("read_graph", json!({}));
    assert_eq!(status, 200);
    // The held request's body never comes whole: the server answers it 408 after its body
    // timeout; closing the connection ends it now.
    drop(held);

    let _ = server.kill();
    let _ = server.wait();
}
