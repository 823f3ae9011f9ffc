//! A local model server run as a child process for as long as a command needs it.
//!
//! `--llm local` answers every role with a GGUF model served by llama.cpp's OpenAI-compatible
//! HTTP server (the prebuilt xllamacpp wheel that `scripts/setup.sh` installs).
//! [`LocalServer::start`] runs `py/memorybench/llm_server.py` (shipped in the Python package
//! too, for `llm="local"` outside the checkout) on a loopback port, waits until the model
//! is loaded and `/health` answers, and dropping the [`LocalServer`] kills and reaps it. The
//! launcher also exits by itself when this process dies (even by SIGKILL), so no server is ever
//! left behind; [`stop_local_servers_on_signals`] makes Ctrl-C stop it at once.

mod interrupt;
mod settings;

use mb_core::{locate, searched};

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::error::{LlmError, Result};

pub use interrupt::{say_on_interrupt, stop_local_servers_on_signals};
pub use settings::{ServerSettings, SETUP_COMMAND};

/// Lines of the server's log kept for error messages.
const LOG_TAIL: usize = 40;
/// What the launcher prints on stdout once it serves, followed by its URL.
const LISTENING: &str = "listening ";
/// What the launcher's own error lines start with.
const LAUNCHER_ERROR: &str = "llm_server: error: ";
/// How often startup checks the child and the health endpoint.
const POLL: Duration = Duration::from_millis(50);

/// The servers of this process that have announced their URL, so that a request failing on
/// one that has stopped says so instead of retrying a dead port.
static SERVING: Mutex<Vec<Serving>> = Mutex::new(Vec::new());

/// What a failed request needs to know about the server at its URL.
#[derive(Debug, Clone)]
struct Serving {
    base_url: String,
    pid: u32,
    /// Set when the server's log ends, that is when the process has exited.
    stopped: Arc<AtomicBool>,
    log: Arc<Mutex<VecDeque<String>>>,
}

/// Why requests to `base_url` cannot succeed when it belongs to a server of this process that
/// has stopped while in use (killed, crashed, out of memory), with the end of its log.
pub(crate) fn stopped_server(base_url: &str) -> Option<String> {
    let serving = SERVING
        .lock()
        .iter()
        .find(|s| s.base_url == base_url)
        .cloned()?;
    serving.stopped.load(Ordering::SeqCst).then(|| {
        format!(
            "the server at {base_url} (pid {}) stopped while in use; {}",
            serving.pid,
            errors_in(&serving.log.lock())
        )
    })
}

/// A running model server, stopped when dropped.
#[derive(Debug)]
pub struct LocalServer {
    child: Child,
    port: u16,
    alias: String,
    log: Arc<Mutex<VecDeque<String>>>,
    stopped: Arc<AtomicBool>,
    /// Whether startup finished (a server that failed to start has said why already).
    ready: bool,
    registration: Option<interrupt::Registration>,
}

impl LocalServer {
    /// Starts the server `settings` describe and waits until it answers `/health`. Errors name
    /// the file or port at fault: no Python or xllamacpp (run [`SETUP_COMMAND`]), a missing or
    /// unreadable model, a port in use, a server that exits or stays unready during startup
    /// (with the end of its log).
    ///
    /// The server is also stopped when the thread that started it ends (the kernel's
    /// parent-death signal follows the starting thread), so start it on a thread that outlives
    /// its use, such as the main thread.
    pub fn start(settings: &ServerSettings) -> Result<LocalServer> {
        for (field, value) in [
            ("server.ctx", settings.ctx),
            ("server.parallel", settings.parallel),
        ] {
            if value == 0 {
                return Err(LlmError::Config {
                    field,
                    reason: "must be at least 1".to_string(),
                });
            }
        }
        crate::error::check_wait("server.startup_timeout_secs", settings.startup_timeout_secs)?;
        let python = locate(&settings.python).ok_or_else(|| {
            server_error(format!(
                "no Python {}: run {SETUP_COMMAND}, or set python in [server]",
                searched(&settings.python)
            ))
        })?;
        let launcher = locate(&settings.launcher).ok_or_else(|| {
            server_error(format!(
                "no launcher {}: run from the memorybench-rs checkout, or set launcher in \
                 [server]",
                searched(&settings.launcher)
            ))
        })?;
        let model = settings
            .model_file()
            .map_err(|e| server_error(e.to_string()))?;
        let lora = match &settings.lora {
            Some(path) => Some(locate(path).ok_or_else(|| {
                server_error(format!(
                    "no LoRA adapter {}: train one with mb-harness sft-train, or remove lora \
                     from [server]",
                    searched(path)
                ))
            })?),
            None => None,
        };
        let started = Instant::now();
        let mut command = Command::new(&python);
        command.arg(&launcher);
        if let Some(lora) = &lora {
            command.arg("--lora").arg(lora);
        }
        let mut child = command
            .arg("--model")
            .arg(&model)
            .args(["--alias", &settings.alias])
            .args(["--host", &Ipv4Addr::LOCALHOST.to_string()])
            .args(["--port", &settings.port.to_string()])
            .args(["--ctx", &settings.ctx.to_string()])
            .args(["--threads", &settings.threads.to_string()])
            .args(["--parallel", &settings.parallel.to_string()])
            .args(["--parent-pid", &std::process::id().to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group: Ctrl-C reaches this process, which stops the server.
            .process_group(0)
            .spawn()
            .map_err(|e| {
                server_error(format!(
                    "cannot run {}: {e} (run {SETUP_COMMAND})",
                    python.display()
                ))
            })?;
        let registration = Some(interrupt::register(child.id()));
        let log = Arc::new(Mutex::new(VecDeque::with_capacity(LOG_TAIL)));
        let stopped = Arc::new(AtomicBool::new(false));
        let (listening, stdout_lines) = mpsc::channel();
        if let Some(stderr) = child.stderr.take() {
            let (log, stopped) = (log.clone(), stopped.clone());
            std::thread::spawn(move || {
                keep_tail(stderr, &log);
                stopped.store(true, Ordering::SeqCst);
            });
        }
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || announce(stdout, listening));
        }
        let mut server = LocalServer {
            child,
            port: 0,
            alias: settings.alias.clone(),
            log,
            stopped,
            ready: false,
            registration,
        };
        let deadline = started + Duration::from_secs_f64(settings.startup_timeout_secs);
        server.port = server.wait_listening(&stdout_lines, deadline, &model)?;
        SERVING.lock().push(Serving {
            base_url: server.base_url(),
            pid: server.pid(),
            stopped: server.stopped.clone(),
            log: server.log.clone(),
        });
        server.wait_healthy(deadline, &model)?;
        server.ready = true;
        tracing::info!(
            "local model server {} (pid {}) on port {} ready in {:.1} s",
            model.display(),
            server.pid(),
            server.port,
            started.elapsed().as_secs_f64()
        );
        Ok(server)
    }

    /// The OpenAI-compatible base URL, `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}:{}/v1", Ipv4Addr::LOCALHOST, self.port)
    }

    /// The loopback port the server listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The model name the server answers to.
    pub fn alias(&self) -> &str {
        &self.alias
    }

    /// The server process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the launcher's `listening URL` line and returns the port in it.
    fn wait_listening(
        &mut self,
        lines: &mpsc::Receiver<String>,
        deadline: Instant,
        model: &std::path::Path,
    ) -> Result<u16> {
        loop {
            match lines.recv_timeout(POLL) {
                Ok(line) => {
                    return line
                        .rsplit(':')
                        .next()
                        .and_then(|port| port.trim().parse().ok())
                        .ok_or_else(|| {
                            server_error(format!("launcher announced no port: {line:?}"))
                        })
                }
                Err(mpsc::RecvTimeoutError::Timeout) => self.check_startup(deadline, model)?,
                // Stdout closed without the line: the launcher is exiting.
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().ok();
                    return Err(self.startup_failure(status, model));
                }
            }
        }
    }

    /// Polls `/health` until it reports the model ready.
    fn wait_healthy(&mut self, deadline: Instant, model: &std::path::Path) -> Result<()> {
        while !healthy(self.port) {
            self.check_startup(deadline, model)?;
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// An error when the launcher has exited or the deadline has passed.
    fn check_startup(&mut self, deadline: Instant, model: &std::path::Path) -> Result<()> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Err(self.startup_failure(Some(status), model));
        }
        if Instant::now() >= deadline {
            return Err(server_error(format!(
                "{} was not ready within the startup timeout (startup_timeout_secs in [server]); \
                 its log ends: {}",
                model.display(),
                self.log_excerpt()
            )));
        }
        Ok(())
    }

    /// The error of a launcher that exited during startup: its own error line when it wrote
    /// one (with llama.cpp's first error), else its status and the end of its log.
    fn startup_failure(&self, status: Option<ExitStatus>, model: &std::path::Path) -> LlmError {
        // The log reader may still be taking in the last lines.
        std::thread::sleep(POLL);
        let log = self.log.lock();
        let own = log
            .iter()
            .rev()
            .find_map(|line| line.strip_prefix(LAUNCHER_ERROR));
        let first_llama_error = log.iter().find(|line| line.contains(" E "));
        match (own, first_llama_error) {
            (Some(own), Some(cause)) => {
                server_error(format!("{own} (llama.cpp: {})", llama_message(cause)))
            }
            (Some(own), None) => server_error(own.to_string()),
            (None, _) => server_error(format!(
                "the server for {} exited during startup ({}); its log ends: {}",
                model.display(),
                status.map_or("status unknown".to_string(), |s| s.to_string()),
                excerpt(&log)
            )),
        }
    }

    fn log_excerpt(&self) -> String {
        excerpt(&self.log.lock())
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        // Unregister first: once reaped, the pid may be reused.
        self.registration.take();
        SERVING.lock().retain(|s| s.pid != self.pid());
        match self.child.try_wait() {
            Ok(Some(_)) if !self.ready => {}
            Ok(Some(status)) => tracing::warn!(
                "the local model server on port {} had exited ({status}); {}",
                self.port,
                errors_in(&self.log.lock())
            ),
            _ => {
                if let Err(e) = self.child.kill() {
                    tracing::warn!("cannot stop the local model server: {e}");
                }
                if let Err(e) = self.child.wait() {
                    tracing::warn!("cannot reap the local model server: {e}");
                }
            }
        }
    }
}

/// Whether `GET /health` on the port answers 200 (llama.cpp answers 503 while loading).
fn healthy(port: u16) -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_secs(1)) else {
        return false;
    };
    let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if stream
        .set_read_timeout(Some(Duration::from_secs(2)))
        .is_err()
        || stream.write_all(request.as_bytes()).is_err()
    {
        return false;
    }
    let mut reply = String::new();
    // A reply cut short still starts with its status line.
    let _ = stream.read_to_string(&mut reply);
    reply.starts_with("HTTP/1.1 200") || reply.starts_with("HTTP/1.0 200")
}

/// Keeps the last [`LOG_TAIL`] lines of `stream` (and keeps reading, so the server never
/// blocks on a full pipe).
fn keep_tail(stream: impl Read, log: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        let mut log = log.lock();
        if log.len() == LOG_TAIL {
            log.pop_front();
        }
        log.push_back(line);
    }
}

/// Sends the URL of the launcher's `listening` line, then drains stdout.
fn announce(stream: impl Read, listening: mpsc::Sender<String>) {
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        if let Some(url) = line.strip_prefix(LISTENING) {
            let _ = listening.send(url.to_string());
        }
    }
}

/// The last few log lines on one line.
fn excerpt(log: &VecDeque<String>) -> String {
    let lines: Vec<&str> = log.iter().rev().take(5).map(String::as_str).collect();
    if lines.is_empty() {
        return "(empty)".to_string();
    }
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
}

/// The errors at the end of a server's log (llama.cpp's and the launcher's), on one line.
fn errors_in(log: &VecDeque<String>) -> String {
    let errors: Vec<&str> = log
        .iter()
        .filter(|line| line.contains(" E ") || line.starts_with(LAUNCHER_ERROR))
        .map(|line| llama_message(line))
        .collect();
    match errors.len() {
        0 => "its log shows no error (was it killed?)".to_string(),
        n => format!(
            "its log ends with: {}",
            errors[n.saturating_sub(3)..].join(" | ")
        ),
    }
}

/// A llama.cpp log line without its timestamp and level (`0.00.015.545 E message`).
fn llama_message(line: &str) -> &str {
    line.split_once(" E ").map_or(line, |(_, rest)| rest.trim())
}

fn server_error(reason: String) -> LlmError {
    LlmError::Server(reason)
}
