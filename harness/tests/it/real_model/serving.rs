//! The model server the real-model tests talk to, and what they send it: the shipped local
//! settings made cheap, one server shared by the tests, and a proxy that counts what it served.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use mb_llm::{LocalServer, ServerSettings};
use serde_json::Value;

use crate::common::chat_server_with_status;

/// Output tokens per request of every role: enough for a short answer or a judge's score,
/// too few for most memory operations' JSON (their fallbacks are part of what is tested).
pub(super) const CAP: u32 = 24;

/// The request the harness sends each role before any work (not a cost of any case).
const PREFLIGHT: &str = "Reply with the word OK.";

fn checkout(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
}

/// The shipped local settings with absolute paths, every role's `max_tokens` set to `cap`,
/// and `base_url = "server"` replaced by `base_url` (`None`: keep the `[server]` section, so
/// the harness starts its own server). `None` after saying why when setup has not installed
/// the server and model.
pub(super) fn settings(
    dir: &Path,
    name: &str,
    base_url: Option<&str>,
    cap: u32,
) -> Option<PathBuf> {
    let defaults = ServerSettings::default();
    let python = checkout(&defaults.python.to_string_lossy());
    let model = checkout(&defaults.model.to_string_lossy());
    let importable = Command::new(&python)
        .args(["-c", "import xllamacpp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !importable || !model.is_file() {
        mb_core::test_data::skip(&format!(
            "a real-model test: {} has no xllamacpp or {} is missing (run bash scripts/setup.sh)",
            python.display(),
            model.display()
        ));
        return None;
    }
    let local = std::fs::read_to_string(checkout("configs/llm/local.toml")).unwrap();
    let mut text = String::new();
    let mut in_server = false;
    for line in local.lines() {
        if line.starts_with('[') {
            in_server = line.trim() == "[server]";
            if in_server && base_url.is_some() {
                continue;
            }
        }
        if in_server && base_url.is_some() {
            continue;
        }
        let key = line.split('=').next().unwrap_or("").trim();
        let absolute = |path: &Path| format!("{key} = {:?}", path.display().to_string());
        let line = match key {
            "model" if in_server => absolute(&model),
            "python" => absolute(&python),
            "launcher" => absolute(&checkout("py/memorybench/llm_server.py")),
            "startup_timeout_secs" => "startup_timeout_secs = 120".to_string(),
            "max_tokens" => format!("max_tokens = {cap}"),
            "base_url" => match base_url {
                Some(url) => format!("base_url = {url:?}"),
                None => line.to_string(),
            },
            _ => line.to_string(),
        };
        text.push_str(&line);
        text.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    Some(path)
}

/// The server the tests share: its port, or `None` when setup has not installed it. Started on
/// a thread that lives as long as the test process (the server stops with the thread that
/// started it, and with the process).
pub(super) fn shared_server() -> Option<u16> {
    static PORT: OnceLock<Option<u16>> = OnceLock::new();
    *PORT.get_or_init(|| {
        let probe = tempfile::tempdir().unwrap();
        settings(probe.path(), "probe.toml", Some("unused"), CAP)?;
        let (sent, port) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let server = LocalServer::start(&{
                let mut built = ServerSettings::default();
                built.model = checkout(&ServerSettings::default().model.to_string_lossy());
                built.python = checkout(&ServerSettings::default().python.to_string_lossy());
                built.launcher = checkout("py/memorybench/llm_server.py");
                built.startup_timeout_secs = 120.0;
                built
            })
            .unwrap();
            sent.send(server.port()).unwrap();
            loop {
                std::thread::park();
            }
        });
        Some(port.recv().expect("the shared server started"))
    })
}

/// What a proxy passed on: the calls, the tokens the server reported, and each exchange's
/// request text (its messages' contents joined) and reply.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Served {
    pub(super) calls: u64,
    pub(super) input_tokens: u64,
    pub(super) output_tokens: u64,
    pub(super) exchanges: Vec<(String, String)>,
}

/// A proxy in front of the shared server that adds up the usage of every response (the
/// harness's preflight requests aside); its base URL and tally.
pub(super) fn counting_proxy(server: u16) -> (String, Arc<Mutex<Served>>) {
    let served = Arc::new(Mutex::new(Served::default()));
    let tally = served.clone();
    let port = chat_server_with_status(move |sent| {
        let (status, reply) = forward(server, sent).expect("the shared server answers");
        let preflight = sent["messages"]
            .as_array()
            .and_then(|m| m.last())
            .is_some_and(|m| m["content"] == PREFLIGHT);
        if !preflight {
            let usage = &reply["usage"];
            let mut served = tally.lock().unwrap();
            served.calls += 1;
            served.input_tokens += usage["prompt_tokens"].as_u64().unwrap_or(0);
            served.output_tokens += usage["completion_tokens"].as_u64().unwrap_or(0);
            let asked = sent["messages"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|m| m["content"].as_str())
                .collect::<Vec<_>>()
                .join("\n");
            let replied = reply["choices"][0]["message"]["content"].as_str();
            served
                .exchanges
                .push((asked, replied.unwrap_or_default().to_string()));
        }
        (status, reply)
    });
    (format!("http://127.0.0.1:{port}/v1"), served)
}

/// Posts `body` to the server's chat completions; its status and JSON reply.
fn forward(port: u16, body: &Value) -> std::io::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    let text = body.to_string();
    write!(
        stream,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let response = String::from_utf8_lossy(&response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(502);
    let body = if head.to_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok((status, serde_json::from_str(&body).unwrap_or(Value::Null)))
}

/// The payload of a chunked HTTP body.
fn dechunk(mut body: &str) -> String {
    let mut payload = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 || rest.len() < size {
            break;
        }
        payload.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    payload
}
