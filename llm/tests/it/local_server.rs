//! The local model server (`--llm local`): the real llama.cpp server started by `LocalServer`,
//! answering through the OpenAI provider, stopped on drop and when its parent dies, and its
//! startup errors. Tests that need the server skip, saying so, when `scripts/setup.sh` has not
//! installed xllamacpp and the model.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mb_llm::{
    CacheMode, ChatProvider, ChatRequest, EndpointConfig, LlmChoice, LlmError, LocalServer,
    Message, OpenAiProvider, RoleSettings, ServerSettings,
};

/// Set in the child process of `a_killed_parent_leaves_no_server`.
const CHILD_ENV: &str = "MB_TEST_LOCAL_SERVER_CHILD";

fn checkout(path: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/..")).join(path)
}

/// The default settings when setup has installed the server and model, else `None` after
/// saying why the test skips.
fn installed(test: &str) -> Option<ServerSettings> {
    let settings = {
        let mut built = ServerSettings::default();
        built.startup_timeout_secs = 120.0;
        built
    };
    let python = checkout(&settings.python.to_string_lossy());
    let importable = Command::new(&python)
        .args(["-c", "import xllamacpp"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !importable || !checkout(&settings.model.to_string_lossy()).is_file() {
        mb_core::test_data::skip(&format!(
            "{test}: {} has no xllamacpp or the model is missing (run bash scripts/setup.sh)",
            python.display()
        ));
        return None;
    }
    Some(settings)
}

/// Whether the process is gone (reaped, or a zombie waiting for a reaper).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn port_open(port: u16) -> bool {
    TcpStream::connect_timeout(
        &SocketAddr::from((Ipv4Addr::LOCALHOST, port)),
        Duration::from_secs(1),
    )
    .is_ok()
}

fn wait_until(limit: Duration, done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

fn ask(base_url: &str, model: &str, max_retries: u32) -> mb_llm::Result<mb_llm::Completion> {
    let provider = OpenAiProvider::new({
        let mut built = EndpointConfig::default();
        built.base_url = base_url.to_string();
        built.model = model.to_string();
        built.max_retries = max_retries;
        built.initial_backoff_secs = 0.1;
        built.timeout_secs = 60.0;
        built
    })?;
    let mut request = ChatRequest::new(vec![Message::user("Name one colour.")]);
    request.sampling.max_tokens = 12;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| LlmError::Cache(e.to_string()))?;
    runtime.block_on(provider.complete(&request))
}

#[test]
fn llm_local_serves_every_role_with_usage_and_stops_on_drop() {
    if installed("llm_local_serves_every_role_with_usage_and_stops_on_drop").is_none() {
        return;
    }
    let args = LlmChoice {
        llm: "local".to_string(),
        cache: CacheMode::Off,
    };
    let (settings, server) = args.start().unwrap();
    let server = server.expect("local.toml has a [server] section");
    for role in [
        &settings.answer,
        &settings.memory,
        &settings.simulator,
        &settings.judge,
    ] {
        let RoleSettings::Openai(endpoint) = role else {
            panic!("every role of local.toml is an OpenAI-compatible endpoint: {role:?}")
        };
        assert_eq!(endpoint.base_url, server.base_url());
        assert_eq!(endpoint.model, server.alias());
    }
    let completion = ask(&server.base_url(), server.alias(), 0).unwrap();
    let usage = completion.usage.expect("llama.cpp reports usage");
    assert!(usage.input_tokens > 0, "{usage:?}");
    assert!((1..=12).contains(&usage.output_tokens), "{usage:?}");
    assert!(!completion.text.trim().is_empty());

    let (pid, port) = (server.pid(), server.port());
    assert!(!gone(pid) && port_open(port));
    drop(server);
    assert!(
        gone(pid),
        "the server process {pid} outlived its LocalServer"
    );
    assert!(!port_open(port), "port {port} still answers");
}

#[test]
fn a_missing_or_corrupt_model_is_named() {
    let Some(settings) = installed("a_missing_or_corrupt_model_is_named") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-model.gguf");
    let error = LocalServer::start(&{
        let mut built = settings.clone();
        built.model = missing.clone();
        built
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.contains(&missing.display().to_string()) && error.contains("no model file"),
        "{error}"
    );

    let not_gguf = dir.path().join("notes.gguf");
    std::fs::write(&not_gguf, "not a model").unwrap();
    let error = LocalServer::start(&{
        let mut built = settings.clone();
        built.model = not_gguf.clone();
        built
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.contains(&not_gguf.display().to_string()) && error.contains("not a GGUF file"),
        "{error}"
    );

    // A real model's first megabyte: a GGUF header that llama.cpp cannot load.
    let truncated = dir.path().join("truncated.gguf");
    let model = std::fs::read(checkout(&settings.model.to_string_lossy())).unwrap();
    std::fs::write(&truncated, &model[..1 << 20]).unwrap();
    let error = LocalServer::start(&{
        let mut built = settings;
        built.model = truncated.clone();
        built
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.contains(&truncated.display().to_string()) && error.contains("llama.cpp:"),
        "{error}"
    );
    assert!(!error.contains('\n'), "one line: {error}");
}

#[test]
fn a_port_in_use_and_a_missing_python_are_named() {
    let Some(settings) = installed("a_port_in_use_and_a_missing_python_are_named") else {
        return;
    };
    let taken = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let error = LocalServer::start(&{
        let mut built = settings.clone();
        built.port = port;
        built
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.contains(&format!("port {port}")) && error.contains("in use"),
        "{error}"
    );

    let error = LocalServer::start(&{
        let mut built = settings;
        built.python = PathBuf::from("/no/such/python3");
        built
    })
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("/no/such/python3") && error.contains("bash scripts/setup.sh"),
        "{error}"
    );
}

#[test]
fn a_server_that_dies_mid_run_fails_requests_naming_it() {
    let Some(settings) = installed("a_server_that_dies_mid_run_fails_requests_naming_it") else {
        return;
    };
    let server = LocalServer::start(&settings).unwrap();
    let status = Command::new("kill")
        .args(["-9", &server.pid().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(wait_until(Duration::from_secs(10), || gone(server.pid())));
    let started = Instant::now();
    let error = ask(&server.base_url(), server.alias(), 5).unwrap_err();
    let text = error.to_string();
    assert!(
        matches!(error, LlmError::Server(_))
            && text.contains(&server.base_url())
            && text.contains("stopped while in use"),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a stopped server is not retried: {:?}",
        started.elapsed()
    );
}

/// Run by `a_killed_parent_leaves_no_server` in a child process: starts a server, prints its
/// pid and port, and waits to be killed.
#[test]
#[ignore = "the child process of a_killed_parent_leaves_no_server"]
fn server_child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let Some(settings) = installed("server_child") else {
        return;
    };
    let server = LocalServer::start(&settings).unwrap();
    println!("server {} {}", server.pid(), server.port());
    std::thread::sleep(Duration::from_secs(120));
}

#[test]
fn a_killed_parent_leaves_no_server() {
    if installed("a_killed_parent_leaves_no_server").is_none() {
        return;
    }
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "local_server::server_child",
            "--exact",
            "--ignored",
            "--nocapture",
        ])
        .env(CHILD_ENV, "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let line = std::io::BufRead::lines(std::io::BufReader::new(stdout))
        .map_while(Result::ok)
        .find(|line| line.starts_with("server "))
        .expect("the child announces its server");
    let fields: Vec<&str> = line.split_whitespace().collect();
    let (pid, port): (u32, u16) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    assert!(!gone(pid) && port_open(port));
    child.kill().unwrap(); // SIGKILL: no destructor runs in the child
    child.wait().unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || gone(pid) && !port_open(port)),
        "server {pid} on port {port} outlived its killed parent"
    );
}
