//! The servers behind one endpoint: its `base_url` and any `replicas` serving the same model.
//!
//! A MemoryBench sweep spends its time in model inference, which users scale by running
//! several vLLM servers. Each request goes to the server with the fewest requests in flight
//! (ties: configuration order), and each server keeps its own in-flight limit, shared with
//! every provider of the process that talks to the same URL.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::select_all;
use parking_lot::Mutex;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{LlmError, Result};

/// One server: its base URL and its in-flight limit.
#[derive(Debug, Clone)]
pub(crate) struct Server {
    pub(crate) base_url: String,
    limit: usize,
    in_flight: Arc<Semaphore>,
}

impl Server {
    fn new(base_url: &str, max_concurrency: usize) -> Server {
        let (limit, in_flight) = shared_limit(base_url, max_concurrency);
        Server {
            base_url: base_url.to_string(),
            limit,
            in_flight,
        }
    }

    /// Requests this process has in flight to the server now.
    fn load(&self) -> usize {
        self.limit
            .saturating_sub(self.in_flight.available_permits())
    }

    /// `path` on this server.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url.trim_end_matches('/'))
    }
}

/// The servers of an endpoint, primary first.
#[derive(Debug, Clone)]
pub(crate) struct Replicas {
    servers: Vec<Server>,
}

impl Replicas {
    /// `base_url` and `replicas`, each limited to `max_concurrency` requests in flight.
    pub(crate) fn new(base_url: &str, replicas: &[String], max_concurrency: usize) -> Replicas {
        let servers = std::iter::once(base_url)
            .chain(replicas.iter().map(String::as_str))
            .map(|url| Server::new(url, max_concurrency))
            .collect();
        Replicas { servers }
    }

    /// The first server (whose URL names the endpoint in messages).
    pub(crate) fn primary(&self) -> &Server {
        &self.servers[0]
    }

    /// A slot on the least loaded server, waiting for the first one to free up when all are
    /// at their limit. A retry passes the server that just failed as `avoid`: another one is
    /// preferred whatever its load.
    pub(crate) async fn acquire(
        &self,
        avoid: Option<&str>,
    ) -> Result<(&Server, OwnedSemaphorePermit)> {
        let mut order: Vec<&Server> = self.servers.iter().collect();
        order.sort_by_key(|server| (Some(server.base_url.as_str()) == avoid, server.load()));
        for server in &order {
            if let Ok(permit) = server.in_flight.clone().try_acquire_owned() {
                return Ok((server, permit));
            }
        }
        let waits = order
            .iter()
            .map(|server| Box::pin(server.in_flight.clone().acquire_owned()));
        let (permit, index, _) = select_all(waits).await;
        let permit = permit.map_err(|_| LlmError::Config {
            field: "max_concurrency",
            reason: "the endpoint's request limiter was closed".to_string(),
        })?;
        Ok((order[index], permit))
    }
}

/// The in-flight limit of a server, shared by every provider that talks to it (the paper's
/// answer and memory roles are one vLLM server): the first provider's `max_concurrency` sets it.
fn shared_limit(base_url: &str, max_concurrency: usize) -> (usize, Arc<Semaphore>) {
    static LIMITS: Mutex<BTreeMap<String, (usize, Arc<Semaphore>)>> = Mutex::new(BTreeMap::new());
    let key = base_url.trim_end_matches('/').to_string();
    let mut limits = LIMITS.lock();
    let (limit, semaphore) = limits
        .entry(key)
        .or_insert_with(|| (max_concurrency, Arc::new(Semaphore::new(max_concurrency))));
    if *limit != max_concurrency {
        tracing::warn!(
            base_url,
            kept = *limit,
            ignored = max_concurrency,
            "endpoint already has an in-flight limit; keeping the first"
        );
    }
    (*limit, semaphore.clone())
}
