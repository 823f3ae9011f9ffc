//! Whether the roles' servers accept connections at all, asked before any model call.
//!
//! A request to a server that is not there is retried with backoff (`max_retries` times, about
//! a minute with the defaults), which is right for a server that drops one request and wrong
//! for a URL nobody listens on: a run's first check would wait that minute before saying the
//! endpoint is down. [`check_reachable`] opens one TCP connection to each role's servers instead
//! and fails at once when none of a role's servers accepts it. A server that accepts
//! connections but answers badly is left to the request path and its retries.

use std::time::Duration;

use crate::error::{LlmError, Result};
use crate::settings::{LlmSettings, RoleSettings};

/// How long one connection attempt may take before the server counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Checks that each model-backed role of `settings` has at least one server (its `base_url` or
/// a replica) accepting TCP connections; the error names the role, the URL and the reason.
pub async fn check_reachable(settings: &LlmSettings) -> Result<()> {
    for (role, role_settings) in settings.roles() {
        let config = match role_settings {
            RoleSettings::Offline => continue,
            RoleSettings::Openai(config) | RoleSettings::Anthropic(config) => config,
        };
        let urls = std::iter::once(&config.base_url).chain(&config.replicas);
        let mut first_failure = None;
        for url in urls {
            match connect(url).await {
                Ok(()) => {
                    first_failure = None;
                    break;
                }
                Err(detail) => {
                    first_failure.get_or_insert((url.clone(), detail));
                }
            }
        }
        if let Some((url, detail)) = first_failure {
            return Err(LlmError::Unreachable { role, url, detail });
        }
    }
    Ok(())
}

/// Opens (and closes) one TCP connection to the server of `url`.
async fn connect(url: &str) -> std::result::Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| format!("not a URL ({e})"))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| "the URL names no host".to_string())?;
    let port = parsed
        .port_or_known_default()
        .ok_or_else(|| "the URL names no port".to_string())?;
    // An IPv6 host comes bracketed in URLs and must be in `connect`'s address too.
    let address = format!("{host}:{port}");
    match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(&address)).await {
        Ok(Ok(_stream)) => Ok(()),
        Ok(Err(e)) => Err(format!("{address}: {e}")),
        Err(_) => Err(format!(
            "{address}: no answer to a connection in {} s",
            CONNECT_TIMEOUT.as_secs()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EndpointConfig;

    fn at(base_url: &str, replicas: &[String]) -> LlmSettings {
        let config = EndpointConfig {
            base_url: base_url.to_string(),
            replicas: replicas.to_vec(),
            ..EndpointConfig::default()
        };
        LlmSettings {
            judge: RoleSettings::Openai(config),
            ..LlmSettings::default()
        }
    }

    /// A port nothing listens on: one just freed by a listener.
    fn closed_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn a_role_whose_servers_refuse_connections_is_named_at_once() {
        let url = format!("http://127.0.0.1:{}/v1", closed_port());
        let started = std::time::Instant::now();
        let error = check_reachable(&at(&url, &[])).await.unwrap_err();
        assert!(started.elapsed() < CONNECT_TIMEOUT);
        let message = error.to_string();
        assert!(
            message.contains("judge") && message.contains(&url),
            "{message}"
        );
        assert!(matches!(error, LlmError::Unreachable { role: "judge", .. }));
    }

    #[tokio::test]
    async fn one_listening_server_of_a_role_is_enough() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let up = format!(
            "http://127.0.0.1:{}/v1",
            listener.local_addr().unwrap().port()
        );
        let down = format!("http://127.0.0.1:{}/v1", closed_port());
        check_reachable(&at(&down, std::slice::from_ref(&up)))
            .await
            .unwrap();
        check_reachable(&at(&up, &[down])).await.unwrap();
        check_reachable(&LlmSettings::default()).await.unwrap();
    }

    #[tokio::test]
    async fn a_malformed_url_is_an_error_naming_it() {
        let error = check_reachable(&at("localhost-without-scheme", &[]))
            .await
            .unwrap_err();
        assert!(error.to_string().contains("not a URL"), "{error}");
    }
}
