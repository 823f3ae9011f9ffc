//! The server's configuration file: tenants with their bearer tokens (stored as SHA-256
//! digests, never in clear) and per-tenant limits; and the check of a request's token.
//!
//! ```toml
//! [[tenants]]
//! name = "acme"
//! # printf %s "$TOKEN" | sha256sum
//! token_sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//! expires_unix = 1830297600   # optional: seconds since the epoch
//! max_concurrent = 8          # optional: requests in flight at once (default 8)
//! ```
//!
//! A top-level `local_max_concurrent = N` sets the same limit for the tokenless `local` tenant
//! of a configuration without tenants (loopback only).

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::McpError;
use crate::tenant::{Tenant, LOCAL_TENANT};

/// Requests of one tenant in flight at once, unless its entry says otherwise.
pub const DEFAULT_MAX_CONCURRENT: usize = 8;
/// Largest `max_concurrent` a configuration may give (each permit is a request in memory).
pub const MAX_CONCURRENT_LIMIT: usize = 4096;
/// Largest configuration file read, in bytes.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// The configuration file (`--config`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceConfig {
    /// The tenants allowed over HTTP; none: the HTTP server has one tenant and no tokens.
    #[serde(default)]
    pub tenants: Vec<TenantEntry>,
    /// Requests in flight at once for the `local` tenant (no tenants configured); default
    /// [`DEFAULT_MAX_CONCURRENT`].
    #[serde(default)]
    pub local_max_concurrent: Option<usize>,
}

/// One tenant of the configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TenantEntry {
    /// The tenant's name (an id, see [`crate::tenant::check_name`]; not `local`).
    pub name: String,
    /// SHA-256 of the bearer token, 64 hex digits.
    pub token_sha256: String,
    /// When the token stops working (seconds since the epoch); none: never.
    #[serde(default)]
    pub expires_unix: Option<i64>,
    /// Requests in flight at once; more get 429.
    #[serde(default)]
    pub max_concurrent: Option<usize>,
}

/// Why a request is not authenticated. Every kind is answered with the same 401 and the same
/// words, so a caller learns nothing about which tokens exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A token no tenant has.
    Unknown,
    /// The tenant's token has expired.
    Expired,
}

/// A tenant a token authenticates, with its limits.
#[derive(Debug, Clone)]
pub struct Authorized {
    /// The tenant.
    pub tenant: Tenant,
    /// Its requests in flight at once.
    pub max_concurrent: usize,
}

/// The tokens of a configuration, by digest.
#[derive(Debug)]
pub struct Tokens {
    by_digest: HashMap<[u8; 32], (Authorized, Option<i64>)>,
    local_max_concurrent: usize,
}

impl Default for Tokens {
    fn default() -> Tokens {
        Tokens {
            by_digest: HashMap::new(),
            local_max_concurrent: DEFAULT_MAX_CONCURRENT,
        }
    }
}

impl ServiceConfig {
    /// Reads and checks the configuration file at `path` (TOML).
    pub fn load(path: &Path) -> Result<ServiceConfig, McpError> {
        let text = mb_core::files::read_text(path, MAX_CONFIG_BYTES)
            .map_err(|e| McpError::Config(format!("{}: {e}", path.display())))?;
        // toml's messages span several lines (the line quoted, a caret under it): one line.
        let config: ServiceConfig = toml::from_str(&text).map_err(|e| {
            let message = e.message();
            let at = e
                .span()
                .map(|span| {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!(", line {line}")
                })
                .unwrap_or_default();
            McpError::Config(format!("{}{at}: {message}", path.display()))
        })?;
        config.tokens()?;
        Ok(config)
    }

    /// The tokens, checked: valid distinct names, well-formed distinct digests.
    pub fn tokens(&self) -> Result<Tokens, McpError> {
        let mut by_digest = HashMap::new();
        let mut names = std::collections::HashSet::new();
        for entry in &self.tenants {
            let tenant = Tenant::new(&entry.name)?;
            if entry.name == LOCAL_TENANT {
                return Err(McpError::Config(format!(
                    "tenant name {LOCAL_TENANT:?} is reserved for stdio sessions"
                )));
            }
            if !names.insert(entry.name.clone()) {
                return Err(McpError::Config(format!(
                    "tenant {} listed twice",
                    entry.name
                )));
            }
            let digest = parse_digest(&entry.token_sha256).ok_or_else(|| {
                McpError::Config(format!(
                    "tenant {}: token_sha256 is not 64 hex digits",
                    entry.name
                ))
            })?;
            if digest == self::digest("") {
                // What `printf %s "$TOKEN" | sha256sum` gives when the variable is unset.
                return Err(McpError::Config(format!(
                    "tenant {}: token_sha256 is the SHA-256 of the empty token (was the token's \
                     variable set when it was hashed?)",
                    entry.name
                )));
            }
            let authorized = Authorized {
                tenant,
                max_concurrent: checked_concurrency(
                    &format!("tenant {}: max_concurrent", entry.name),
                    entry.max_concurrent,
                )?,
            };
            if by_digest
                .insert(digest, (authorized, entry.expires_unix))
                .is_some()
            {
                return Err(McpError::Config(format!(
                    "tenant {}: its token is another tenant's",
                    entry.name
                )));
            }
        }
        Ok(Tokens {
            by_digest,
            local_max_concurrent: checked_concurrency(
                "local_max_concurrent",
                self.local_max_concurrent,
            )?,
        })
    }
}

/// A configured concurrency limit, or the default; out of 1..=[`MAX_CONCURRENT_LIMIT`] is an
/// error naming `field`.
fn checked_concurrency(field: &str, value: Option<usize>) -> Result<usize, McpError> {
    match value {
        None => Ok(DEFAULT_MAX_CONCURRENT),
        Some(n) if (1..=MAX_CONCURRENT_LIMIT).contains(&n) => Ok(n),
        Some(n) => Err(McpError::Config(format!(
            "{field} is {n}: it must be 1 to {MAX_CONCURRENT_LIMIT}"
        ))),
    }
}

impl Tokens {
    /// Whether any tenant is configured (else the HTTP server needs no token).
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }

    /// The `local` tenant with its limit: who every request is when no tenant is configured.
    pub fn local(&self) -> Authorized {
        Authorized {
            tenant: Tenant::local(),
            max_concurrent: self.local_max_concurrent,
        }
    }

    /// The tenant of an `Authorization` header value, at `now_unix` seconds.
    pub fn authenticate(
        &self,
        header: Option<&str>,
        now_unix: i64,
    ) -> Result<Authorized, AuthFailure> {
        // The scheme is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` are `Bearer`.
        let token = header
            .and_then(|h| h.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("Bearer"))
            .map(|(_, token)| token.trim())
            .filter(|t| !t.is_empty())
            .ok_or(AuthFailure::Missing)?;
        let (authorized, expires) = self
            .by_digest
            .get(&digest(token))
            .ok_or(AuthFailure::Unknown)?;
        if expires.is_some_and(|at| now_unix >= at) {
            return Err(AuthFailure::Expired);
        }
        Ok(authorized.clone())
    }
}

/// SHA-256 of a token.
pub fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// SHA-256 of a token as 64 lowercase hex digits (what the configuration file holds).
pub fn digest_hex(token: &str) -> String {
    digest(token).iter().map(|b| format!("{b:02x}")).collect()
}

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<Tokens, McpError> {
        toml::from_str::<ServiceConfig>(text)
            .map_err(|e| McpError::Config(e.to_string()))?
            .tokens()
    }

    #[test]
    fn tokens_authenticate_their_tenant_until_they_expire() {
        let text = format!(
            "[[tenants]]\nname = \"a\"\ntoken_sha256 = \"{}\"\n\
             [[tenants]]\nname = \"b\"\ntoken_sha256 = \"{}\"\nexpires_unix = 100\nmax_concurrent = 2\n",
            digest_hex("token-a"),
            digest_hex("token-b")
        );
        let tokens = config(&text).unwrap();
        let a = tokens.authenticate(Some("Bearer token-a"), 0).unwrap();
        assert_eq!(a.tenant.name(), "a");
        assert_eq!(a.max_concurrent, DEFAULT_MAX_CONCURRENT);
        assert_eq!(
            tokens
                .authenticate(Some("Bearer token-b"), 99)
                .unwrap()
                .max_concurrent,
            2
        );
        assert_eq!(
            tokens
                .authenticate(Some("Bearer token-b"), 100)
                .unwrap_err(),
            AuthFailure::Expired
        );
        assert_eq!(
            tokens.authenticate(Some("Bearer nope"), 0).unwrap_err(),
            AuthFailure::Unknown
        );
        assert_eq!(
            tokens.authenticate(None, 0).unwrap_err(),
            AuthFailure::Missing
        );
        assert_eq!(
            tokens.authenticate(Some("Basic token-a"), 0).unwrap_err(),
            AuthFailure::Missing
        );
        for scheme in ["bearer", "BEARER", "BeArEr"] {
            let header = format!("{scheme} token-a");
            assert_eq!(
                tokens.authenticate(Some(&header), 0).unwrap().tenant.name(),
                "a"
            );
        }
    }

    #[test]
    fn a_toml_error_is_one_line_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("service.toml");
        std::fs::write(&path, "[[tenants]]\nname = \"a\"\ntoken_sha256 = 12 oops\n").unwrap();
        let error = ServiceConfig::load(&path).unwrap_err().to_string();
        assert!(!error.trim_end().contains('\n'), "{error}");
        assert!(error.contains("service.toml, line 3"), "{error}");
    }

    #[test]
    fn bad_configurations_are_refused() {
        let d = digest_hex("x");
        for bad in [
            format!("[[tenants]]\nname = \"local\"\ntoken_sha256 = \"{d}\""),
            format!("[[tenants]]\nname = \"../x\"\ntoken_sha256 = \"{d}\""),
            "[[tenants]]\nname = \"a\"\ntoken_sha256 = \"abc\"".to_string(),
            format!(
                "[[tenants]]\nname = \"a\"\ntoken_sha256 = \"{d}\"\n[[tenants]]\nname = \"b\"\ntoken_sha256 = \"{d}\""
            ),
            format!("[[tenants]]\nname = \"a\"\ntoken = \"{d}\""),
            format!("[[tenants]]\nname = \"a\"\ntoken_sha256 = \"{d}\"\nmax_concurrent = 0"),
            format!("[[tenants]]\nname = \"a\"\ntoken_sha256 = \"{d}\"\nmax_concurrent = 5000"),
            "local_max_concurrent = 0".to_string(),
            format!("[[tenants]]\nname = \"a\"\ntoken_sha256 = \"{}\"", digest_hex("")),
        ] {
            assert!(config(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_local_tenant_takes_its_limit_from_the_file() {
        assert_eq!(
            config("").unwrap().local().max_concurrent,
            DEFAULT_MAX_CONCURRENT
        );
        let local = config("local_max_concurrent = 64").unwrap().local();
        assert_eq!((local.tenant.name(), local.max_concurrent), ("local", 64));
    }
}
