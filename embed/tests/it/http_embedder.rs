//! `HttpEmbedder` against a local OpenAI-compatible server the test runs itself.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mb_embed::{EmbedError, Embedder, HttpConfig, HttpEmbedder};
use serde_json::{json, Value};
use tiny_http::{Header, Response, Server};

const DIM: usize = 8;

/// A deterministic, not yet normalized "embedding" of a text.
fn fake_vector(text: &str) -> Vec<f32> {
    let mut v = vec![0.5f32; DIM];
    for (i, b) in text.bytes().enumerate() {
        v[i % DIM] += f32::from(b) / 64.0;
    }
    v
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

/// What the server does with one request's input texts.
enum Reply {
    Embeddings,
    Status(u16, &'static str, Option<&'static str>),
    Raw(&'static str),
}

/// The input texts of each request the server saw.
type Log = Arc<Mutex<Vec<Vec<String>>>>;

/// Starts a server on a free port; `script` decides each reply from the request number and
/// inputs. Returns the base URL and the request log.
fn serve(script: impl Fn(usize, &[String]) -> Reply + Send + 'static) -> (String, Log) {
    let server = Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", server.server_addr().to_ip().unwrap());
    let log: Log = Arc::default();
    let seen = log.clone();
    std::thread::spawn(move || {
        let count = AtomicUsize::new(0);
        for mut request in server.incoming_requests() {
            let mut body = String::new();
            request.as_reader().read_to_string(&mut body).unwrap();
            assert_eq!(request.url(), "/v1/embeddings");
            let parsed: Value = serde_json::from_str(&body).unwrap();
            let inputs: Vec<String> = serde_json::from_value(parsed["input"].clone()).unwrap();
            seen.lock().unwrap().push(inputs.clone());
            let n = count.fetch_add(1, Ordering::SeqCst);
            let response = match script(n, &inputs) {
                Reply::Embeddings => {
                    // Answer out of order: the client must sort by `index`.
                    let data: Vec<Value> = inputs
                        .iter()
                        .enumerate()
                        .rev()
                        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": fake_vector(t)}))
                        .collect();
                    Response::from_string(json!({"object": "list", "data": data}).to_string())
                }
                Reply::Status(code, body, retry_after) => {
                    let mut response = Response::from_string(body).with_status_code(code);
                    if let Some(seconds) = retry_after {
                        response.add_header(Header::from_bytes("Retry-After", seconds).unwrap());
                    }
                    response
                }
                Reply::Raw(body) => Response::from_string(body),
            };
            let _ = request.respond(response);
        }
    });
    (url, log)
}

fn config(url: &str) -> HttpConfig {
    {
        let mut built = HttpConfig::default();
        built.base_url = url.to_string();
        built.model = "test-embedder".to_string();
        built.dim = Some(DIM);
        built.batch_size = 3;
        built.timeout = Duration::from_secs(5);
        built.max_retries = 3;
        built.initial_backoff = Duration::from_millis(10);
        built.shrink_overlong = true;
        built
    }
}

#[test]
fn batches_in_order_and_normalizes() {
    let (url, log) = serve(|_, _| Reply::Embeddings);
    let embedder = HttpEmbedder::new(config(&url)).unwrap();
    let texts = ["one", "two", "three", "four", "five", "six", "seven"];
    let vectors = embedder.embed(&texts).unwrap();
    for (text, vector) in texts.iter().zip(&vectors) {
        let expected = unit(fake_vector(text));
        for (a, b) in vector.iter().zip(&expected) {
            assert!((a - b).abs() < 1e-6, "{text}");
        }
    }
    let sizes: Vec<usize> = log.lock().unwrap().iter().map(Vec::len).collect();
    assert_eq!(sizes, vec![3, 3, 1]);
}

#[test]
fn asks_the_server_for_the_dimension() {
    let (url, log) = serve(|_, _| Reply::Embeddings);
    let embedder = HttpEmbedder::new({
        let mut built = config(&url);
        built.dim = None;
        built
    })
    .unwrap();
    assert_eq!(embedder.dim(), DIM);
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn retries_busy_and_failing_servers() {
    let (url, log) = serve(|n, _| match n {
        0 => Reply::Status(503, "warming up", None),
        1 => Reply::Status(429, "slow down", Some("0")),
        _ => Reply::Embeddings,
    });
    let embedder = HttpEmbedder::new(config(&url)).unwrap();
    assert_eq!(embedder.embed(&["hello"]).unwrap().len(), 1);
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn gives_up_after_the_configured_retries() {
    let (url, log) = serve(|_, _| Reply::Status(500, "boom", None));
    let embedder = HttpEmbedder::new(config(&url)).unwrap();
    match embedder.embed(&["hello"]) {
        Err(EmbedError::Http { detail, .. }) => {
            assert!(
                detail.contains("4 attempts") && detail.contains("boom"),
                "{detail}"
            )
        }
        other => panic!("expected an HTTP error, got {other:?}"),
    }
    assert_eq!(log.lock().unwrap().len(), 4);
}

#[test]
fn client_errors_fail_at_once() {
    let (url, log) = serve(|_, _| Reply::Status(401, "bad key", None));
    let embedder = HttpEmbedder::new(config(&url)).unwrap();
    let error = embedder.embed(&["hello"]).unwrap_err().to_string();
    assert!(
        error.contains("401") && error.contains("bad key"),
        "{error}"
    );
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn overlong_texts_shrink_to_an_accepted_prefix() {
    // The "server" accepts at most 50 characters per input.
    let (url, log) = serve(|_, inputs| {
        if inputs.iter().any(|t| t.chars().count() > 50) {
            Reply::Status(400, "maximum context length exceeded", None)
        } else {
            Reply::Embeddings
        }
    });
    let embedder = HttpEmbedder::new(config(&url)).unwrap();
    let long = "x".repeat(100);
    let vectors = embedder.embed(&["short", long.as_str()]).unwrap();
    let accepted = log
        .lock()
        .unwrap()
        .last()
        .map(|inputs| inputs[0].clone())
        .unwrap();
    assert_eq!(
        accepted.len(),
        50,
        "the longest accepted prefix is 50% of 100"
    );
    assert!(vectors[1]
        .iter()
        .zip(unit(fake_vector(&accepted)))
        .all(|(a, b)| (a - b).abs() < 1e-6));
    assert!(vectors[0]
        .iter()
        .zip(unit(fake_vector("short")))
        .all(|(a, b)| (a - b).abs() < 1e-6));

    // Without the option the rejection is an error.
    let strict = HttpEmbedder::new({
        let mut built = config(&url);
        built.shrink_overlong = false;
        built
    })
    .unwrap();
    assert!(strict.embed(&[long.as_str()]).is_err());
}

#[test]
fn a_text_every_prefix_of_which_is_rejected_becomes_zeros() {
    let (url, _log) = serve(|_, inputs| {
        // Short prefixes round down to the empty string, which this server refuses too.
        if inputs.iter().any(|t| t.contains('!') || t.is_empty()) {
            Reply::Status(400, "rejected", None)
        } else {
            Reply::Embeddings
        }
    });
    let embedder = HttpEmbedder::new(config(&url)).unwrap();
    let vectors = embedder.embed(&["!!!!!!!!!!"]).unwrap();
    assert_eq!(vectors, vec![vec![0.0; DIM]]);
}

#[test]
fn malformed_responses_are_reported() {
    for (body, expected) in [
        ("not json", "invalid embeddings response"),
        (r#"{"data": []}"#, "0 embeddings for 1 inputs"),
        (
            r#"{"data": [{"index": 0, "embedding": [1.0, 2.0]}]}"#,
            "2-dimensional",
        ),
        (
            r#"{"data": [{"index": 5, "embedding": [1,2,3,4,5,6,7,8]}]}"#,
            "index 5 out of range",
        ),
    ] {
        let (url, _log) = serve(move |_, _| Reply::Raw(body));
        let embedder = HttpEmbedder::new(config(&url)).unwrap();
        let error = embedder.embed(&["hello"]).unwrap_err().to_string();
        assert!(error.contains(expected), "{body}: {error}");
    }
}

#[test]
fn unreachable_endpoints_name_the_url() {
    // A port nobody listens on: bind, read the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let embedder = HttpEmbedder::new({
        let mut built = config(&url);
        built.max_retries = 1;
        built
    })
    .unwrap();
    let error = embedder.embed(&["hello"]).unwrap_err().to_string();
    assert!(
        error.contains(&format!("127.0.0.1:{port}/v1/embeddings")),
        "{error}"
    );
    assert!(error.contains("2 attempts"), "{error}");
}

/// Every prefix of a valid response, and valid shapes with hostile values, get an error or
/// vectors of the right dimension; none panics.
#[test]
fn hostile_response_bodies_are_errors_never_panics() {
    let valid = json!({"object": "list", "data": [
        {"index": 0, "embedding": fake_vector("a")},
    ]})
    .to_string();
    let mut bodies: Vec<String> = (0..valid.len())
        .filter(|&end| valid.is_char_boundary(end))
        .map(|end| valid[..end].to_string())
        .collect();
    for hostile in [
        r#"{"data": [{"index": -1, "embedding": [1,2,3,4,5,6,7,8]}]}"#,
        r#"{"data": [{"index": 1e30, "embedding": [1,2,3,4,5,6,7,8]}]}"#,
        r#"{"data": [{"index": 18446744073709551615, "embedding": [1,2,3,4,5,6,7,8]}]}"#,
        r#"{"data": [{"index": 0, "embedding": [1e39,2,3,4,5,6,7,8]}]}"#,
        r#"{"data": [{"index": 0, "embedding": [0,0,0,0,0,0,0,0]}]}"#,
        r#"{"data": [{"index": 0, "embedding": ["1",null,3,4,5,6,7,8]}]}"#,
        r#"{"data": [{"index": 0, "embedding": [[1],2,3,4,5,6,7,8]}]}"#,
        r#"{"data": [{"index": 0}, {"index": 0, "embedding": [1,2,3,4,5,6,7,8]}]}"#,
        r#"{"data": {"index": 0}}"#,
        r#"{"data": null}"#,
        "[]",
        "",
    ] {
        bodies.push(hostile.to_string());
    }
    bodies.push(format!(
        "{{\"data\": [{{\"index\": 0, \"embedding\": [{}]}}]}}",
        vec!["1.0"; 200_000].join(",")
    ));
    let count = bodies.len();
    let served: Vec<&'static str> = bodies
        .into_iter()
        .map(|b| &*Box::leak(b.into_boxed_str()))
        .collect();
    let (url, _log) = serve(move |n, _| Reply::Raw(served[n % served.len()]));
    let embedder = HttpEmbedder::new({
        let mut built = config(&url);
        built.max_retries = 0;
        built.shrink_overlong = false;
        built
    })
    .unwrap();
    for _ in 0..count {
        if let Ok(vectors) = embedder.embed(&["a"]) {
            assert_eq!(vectors.len(), 1);
            assert_eq!(vectors[0].len(), DIM);
            assert!(vectors[0].iter().all(|x| x.is_finite()), "{:?}", vectors[0]);
        }
    }
}
