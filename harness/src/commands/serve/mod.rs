//! `serve`: a web page to configure, launch, watch and browse runs, as upstream's Streamlit
//! frontend does, for every regime the harness has.
//!
//! The server is a thin layer over what the command line already writes. A launched run is
//! this same binary, started without a shell from arguments checked against the known
//! choices ([`launch`]), in its own process group, with `--progress-file` so that its bars'
//! counts can be followed ([`progress`], [`events`]: server-sent events) and API keys in
//! its environment only ([`jobs`]). Browsing reads the run directories under `--runs` ([`results`],
//! [`items`]), never a path outside them ([`confine`]); the charts are the `report` command's.
//! It listens on loopback; any other address needs a token ([`security`]).

mod assets;
mod choices;
mod confine;
mod events;
mod items;
mod jobs;
mod launch;
mod progress;
mod reply;
mod results;
mod security;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use clap::Args;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;

use crate::error::{file_error, HarnessError};

/// Arguments of `serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The runs directory: browsed, and where launched runs write (their `--output-dir`).
    #[arg(long, default_value = "runs")]
    pub runs: PathBuf,
    /// The engine store launched runs use (default: RUNS/store).
    #[arg(long)]
    pub store: Option<PathBuf>,
    /// A MemoryBench copy launched runs read (their `--data`); default: $MEMORY_BENCH_PATH,
    /// else the built-in sample.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// The address to listen on: loopback by default; any other needs a token (--token-env).
    #[arg(long, default_value = "127.0.0.1")]
    pub host: IpAddr,
    /// The port (0: any free port; the address is printed on standard error).
    #[arg(long, default_value_t = 8484)]
    pub port: u16,
    /// The environment variable holding the access token; when it is set, every request needs
    /// the token (open the page once as `/?token=...`, which sets a cookie).
    #[arg(long, default_value = "MB_SERVE_TOKEN")]
    pub token_env: String,
    /// Ended launched runs whose logs the page keeps (1 to 100 000); older ones' folders are
    /// deleted, their results stay in the runs directory.
    #[arg(long, default_value_t = jobs::KEPT_JOBS, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub keep_jobs: u32,
}

/// How long a request's headers may take to arrive.
const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// How long requests in flight (an open event stream) may go on after Ctrl-C.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// What every request handler shares.
pub(crate) struct Server {
    /// The browsable runs directory.
    runs: confine::Runs,
    /// The launch choices, read once at start.
    choices: choices::Choices,
    /// Launched runs.
    jobs: jobs::Jobs,
    /// Who may call.
    access: security::Access,
    /// `--data`, for reading a run's questions and references.
    data: Option<PathBuf>,
    /// Parsed run files and loaded sets, for the item views.
    cache: items::Cache,
}

/// Runs `serve` until Ctrl-C; running jobs are then stopped (resumable).
pub fn run(args: &ServeArgs) -> Result<(), HarnessError> {
    let token = std::env::var(&args.token_env)
        .ok()
        .filter(|t| !t.is_empty());
    if !args.host.is_loopback() && token.is_none() {
        return Err(HarnessError::Usage(format!(
            "serving on {} (not loopback) needs an access token: set {}",
            args.host, args.token_env
        )));
    }
    std::fs::create_dir_all(&args.runs).map_err(|e| file_error(&args.runs, e))?;
    let store = args
        .store
        .clone()
        .unwrap_or_else(|| args.runs.join("store"));
    // Launched runs get absolute paths: what they record names the same place from anywhere.
    let store = std::path::absolute(&store).map_err(|e| file_error(&store, e))?;
    let runs = confine::Runs::open(&args.runs, &store)?;
    let jobs = jobs::Jobs::open(&runs, &store, args.data.as_deref(), args.keep_jobs as usize)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(HarnessError::Output)?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(SocketAddr::new(args.host, args.port))
            .await
            .map_err(|e| {
                HarnessError::Usage(format!("cannot listen on {}:{}: {e}", args.host, args.port))
            })?;
        let bound = listener.local_addr().map_err(HarnessError::Output)?;
        let server = Arc::new(Server {
            runs,
            choices: choices::Choices::read()?,
            jobs,
            access: security::Access::new(bound, token),
            data: args.data.clone(),
            cache: items::Cache::default(),
        });
        eprintln!("mb-harness: serving http://{bound}/");
        serve(listener, server.clone()).await;
        server.jobs.stop_all();
        Ok(())
    })
}

/// The page's routes.
fn router(server: Arc<Server>) -> Router {
    Router::new()
        .route("/", get(assets::index))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/choices", get(choices::get_choices))
        .route("/api/jobs", get(jobs::list).post(jobs::launch))
        .route("/api/jobs/{id}", get(jobs::one))
        .route("/api/jobs/{id}/stop", post(jobs::stop))
        .route("/api/jobs/{id}/resume", post(jobs::resume))
        .route("/api/jobs/{id}/events", get(events::stream))
        .route("/api/runs", get(results::runs))
        .route("/api/run", get(results::run))
        .route("/api/run/items", get(items::list))
        .route("/api/run/item", get(items::one))
        .route("/api/run/dialogs", get(items::dialogs))
        .route("/api/report", get(results::report))
        .fallback(reply::not_found)
        .layer(axum::middleware::from_fn_with_state(
            server.clone(),
            security::guard,
        ))
        .with_state(server)
}

/// Accepts connections until Ctrl-C (HTTP/1.1 with a header deadline, as the MCP server's).
async fn serve(listener: tokio::net::TcpListener, server: Arc<Server>) {
    let router = router(server);
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_DEADLINE);
    let graceful = GracefulShutdown::new();
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        let (tcp, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("accepting a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut stop => break,
        };
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let connection = http.serve_connection(TokioIo::new(tcp), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = watched.await {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    eprintln!("mb-harness: stopping the server");
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {}
    }
}
