//! Load on the knowledge-graph tools, side by side: memorybench-mcp against the reference
//! `@modelcontextprotocol/server-memory`, the same tool calls from the same Rust clients (so the
//! clients cost next to nothing and the servers' limits show).
//!
//! ```sh
//! cargo run --release -p mb-service-bench --bin service_load -- [--clients 32] [--seconds 60]
//!     [--servers ours-http,ours-stdio,reference] [--write-share 0.5]
//! ```
//!
//! Each client loops until the time is up: with probability `--write-share` it adds an entity
//! (`create_entities`, one entity with one observation, a name of its own), else it searches
//! (`search_nodes` for one entity of any client by its name). The reference server speaks stdio
//! only, so its clients share one stdio session (concurrent JSON-RPC requests, as an agent
//! host's tools would); memorybench-mcp is measured that way and over Streamable HTTP with one
//! session per client. Then the server is killed with SIGKILL, a fresh process is started on
//! the same files, and the entities it acknowledged are looked up in `read_graph`: every
//! acknowledged one must be there. Prints one Markdown table.

mod client;
mod servers;

use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;

use client::{Error, Session};
use servers::{Programs, Server};

/// The command line.
#[derive(Parser)]
#[command(about = "Load on the knowledge-graph tools: memorybench-mcp beside the reference server")]
struct Args {
    /// Concurrent clients (1 to 1024).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=1024))]
    clients: u16,
    /// Seconds of load per server (1 to 3600).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(1..=3600))]
    seconds: u32,
    /// Share of calls that add an entity (0 to 1); the rest search.
    #[arg(long, default_value_t = 0.5, value_parser = share)]
    write_share: f64,
    /// Servers, comma-separated: ours-http, ours-stdio, reference.
    #[arg(long, default_value = "ours-http,ours-stdio,reference")]
    servers: String,
}

fn share(text: &str) -> Result<f64, String> {
    let value: f64 = text.parse().map_err(|e| format!("{e}"))?;
    match (0.0..=1.0).contains(&value) {
        true => Ok(value),
        false => Err("must be between 0 and 1".into()),
    }
}

/// What the clients of one run measured.
#[derive(Default)]
struct Tally {
    create: Vec<Duration>,
    search: Vec<Duration>,
    errors: usize,
    acknowledged: Vec<String>,
    first_error: Option<String>,
}

impl Tally {
    fn merge(&mut self, other: Tally) {
        self.create.extend(other.create);
        self.search.extend(other.search);
        self.errors += other.errors;
        self.acknowledged.extend(other.acknowledged);
        self.first_error = self.first_error.take().or(other.first_error);
    }

    fn fail(&mut self, error: String) {
        self.errors += 1;
        self.first_error.get_or_insert(error);
    }
}

/// One client's calls until `deadline`.
async fn client_loop(
    session: Session,
    client: usize,
    clients: usize,
    deadline: Instant,
    share: f64,
) -> Tally {
    let mut tally = Tally::default();
    let mut rng = StdRng::seed_from_u64(client as u64);
    let mut made = 0usize;
    while Instant::now() < deadline {
        let started = Instant::now();
        if rng.random::<f64>() < share {
            // The trailing dot keeps one name from being a prefix of another's.
            let name = format!("c{client}-e{made}.");
            let entity = json!({"name": name, "entityType": "note", "observations":
                [format!("client {client} wrote note {made} about topic {}", made % 17)]});
            made += 1;
            match session
                .call("create_entities", json!({"entities": [entity]}))
                .await
            {
                Ok(reply) if !reply.is_error => {
                    tally.create.push(started.elapsed());
                    tally.acknowledged.push(name);
                }
                Ok(reply) => tally.fail(format!("create_entities: {}", reply.result)),
                Err(e) => tally.fail(e),
            }
        } else {
            // One entity by its name (or none yet): what a search costs, not how many
            // entities the answer lists.
            let other = rng.random_range(0..clients);
            let wanted = rng.random_range(0..made.max(1));
            let query = format!("c{other}-e{wanted}.");
            match session.call("search_nodes", json!({"query": query})).await {
                Ok(reply) if !reply.is_error => tally.search.push(started.elapsed()),
                Ok(reply) => tally.fail(format!("search_nodes: {}", reply.result)),
                Err(e) => tally.fail(e),
            }
        }
    }
    tally
}

/// One server under load, then killed and asked what it kept.
async fn measure(programs: &Programs, server: Server, args: &Args) -> Result<Row, Error> {
    let work = tempfile::tempdir().map_err(|e| format!("temporary directory: {e}"))?;
    let clients = usize::from(args.clients);
    let (child, sessions) = programs.start(server, work.path(), clients).await?;
    let seconds = Duration::from_secs(u64::from(args.seconds));
    let started = Instant::now();
    let deadline = started + seconds;
    let tasks: Vec<_> = sessions
        .into_iter()
        .enumerate()
        .map(|(client, session)| {
            tokio::spawn(client_loop(
                session,
                client,
                clients,
                deadline,
                args.write_share,
            ))
        })
        .collect();
    let mut tally = Tally::default();
    for task in tasks {
        tally.merge(task.await.map_err(|e| format!("a client failed: {e}"))?);
    }
    let elapsed = started.elapsed().max(seconds);
    let peak_rss_mib = child.id().and_then(servers::peak_rss_mib);
    servers::stop(child).await;
    let kept: HashSet<String> = programs
        .kept_names(server, work.path())
        .await?
        .into_iter()
        .collect();
    let lost = tally
        .acknowledged
        .iter()
        .filter(|n| !kept.contains(*n))
        .count();
    Ok(Row {
        server,
        rate: (tally.create.len() + tally.search.len()) as f64 / elapsed.as_secs_f64(),
        tally,
        lost,
        peak_rss_mib,
    })
}

/// One line of the table.
struct Row {
    server: Server,
    rate: f64,
    tally: Tally,
    lost: usize,
    /// The server process's peak resident memory over the run (Linux `VmHWM`).
    peak_rss_mib: Option<f64>,
}

fn percentile_ms(values: &mut [Duration], q: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_unstable();
    let at = ((q * values.len() as f64) as usize).min(values.len() - 1);
    values[at].as_secs_f64() * 1e3
}

fn print_table(args: &Args, rows: &mut [Row]) {
    println!(
        "{} clients, {} s, {:.0}% writes:\n",
        args.clients,
        args.seconds,
        args.write_share * 100.0
    );
    println!(
        "| server | calls/s | create_entities p50 / p99 ms | search_nodes p50 / p99 ms | \
         errors | acknowledged | lost after SIGKILL | peak RSS MiB |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for row in rows {
        let t = &mut row.tally;
        println!(
            "| {} | {:.0} | {:.2} / {:.2} | {:.2} / {:.2} | {} | {} | {} | {} |",
            row.server.name(),
            row.rate,
            percentile_ms(&mut t.create, 0.5),
            percentile_ms(&mut t.create, 0.99),
            percentile_ms(&mut t.search, 0.5),
            percentile_ms(&mut t.search, 0.99),
            t.errors,
            t.acknowledged.len(),
            row.lost,
            row.peak_rss_mib
                .map_or_else(|| "n/a".to_string(), |mib| format!("{mib:.0}"))
        );
    }
}

async fn run(args: Args) -> Result<(), Error> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let programs = Programs::find(&root)?;
    let chosen = args
        .servers
        .split(',')
        .filter(|s| !s.is_empty())
        .map(Server::parse)
        .collect::<Result<Vec<_>, _>>()?;
    if chosen.contains(&Server::Reference) {
        programs.check_reference()?;
    }
    let mut rows = Vec::new();
    for server in chosen {
        eprintln!(
            "{}: {} clients for {} s",
            server.name(),
            args.clients,
            args.seconds
        );
        let row = measure(&programs, server, &args).await?;
        if let Some(error) = &row.tally.first_error {
            eprintln!("{}: first error: {error}", server.name());
        }
        rows.push(row);
    }
    print_table(&args, &mut rows);
    Ok(())
}

fn main() {
    let args = Args::parse();
    let result = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))
        .and_then(|runtime| runtime.block_on(run(args)));
    if let Err(error) = result {
        eprintln!("service_load: {error}");
        std::process::exit(1);
    }
}
