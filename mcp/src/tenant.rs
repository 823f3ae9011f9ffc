//! Tenants: who a call is for, and the engine namespaces only that tenant reaches.
//!
//! Every name that becomes part of a namespace (tenant, user, agent) is checked by
//! [`check_name`]: 1 to [`limits::MAX_ID_BYTES`] bytes of ASCII letters, digits, `_`, `-`, `.`
//! and `@`, not starting with `.` and without `..`. Non-ASCII names are refused rather than
//! normalised, so no two spellings (a Cyrillic `а` for a Latin `a`, a full-width letter, a
//! combining accent) can ever name the same or a look-alike namespace. Because `/` is refused,
//! the namespace of one (tenant, user, agent) is never a prefix of another's.

use crate::error::McpError;
use crate::limits;

/// The tenant of stdio sessions and of HTTP servers started without tenants in their
/// configuration (one local user owns the process).
pub const LOCAL_TENANT: &str = "local";

/// An authenticated tenant, as the HTTP guard attaches it to a request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tenant {
    name: String,
}

impl Tenant {
    /// A tenant named `name` (checked by [`check_name`]).
    pub fn new(name: &str) -> Result<Tenant, McpError> {
        check_name("tenant", name)?;
        Ok(Tenant {
            name: name.to_string(),
        })
    }

    /// The local tenant ([`LOCAL_TENANT`]).
    pub fn local() -> Tenant {
        Tenant {
            name: LOCAL_TENANT.to_string(),
        }
    }

    /// The tenant's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this is the local tenant, whose namespaces keep the single-user layout
    /// (`mcp/memory/...`, the `--graph-namespace`), so stores written before tenants existed
    /// read the same.
    pub fn is_local(&self) -> bool {
        self.name == LOCAL_TENANT
    }

    /// The prefix of every namespace of this tenant's memory tools.
    pub fn memory_root(&self) -> String {
        if self.is_local() {
            "mcp/memory".to_string()
        } else {
            format!("mcp/t/{}/memory", self.name)
        }
    }

    /// The namespace of this tenant's ingest queue.
    pub fn queue_namespace(&self) -> String {
        if self.is_local() {
            "mcp/queue".to_string()
        } else {
            format!("mcp/t/{}/queue", self.name)
        }
    }

    /// Whether `namespace` holds data of this tenant: its memories, ingest queue or knowledge
    /// graph (`graph_namespace` is the local tenant's graph, `--graph-namespace`).
    pub fn owns(&self, namespace: &str, graph_namespace: &str) -> bool {
        if self.is_local() {
            return namespace.starts_with("mcp/memory/")
                || namespace == "mcp/queue"
                || namespace == graph_namespace;
        }
        // Tenant names hold no `/`, so this prefix is no other tenant's.
        namespace
            .strip_prefix("mcp/t/")
            .and_then(|rest| rest.strip_prefix(self.name.as_str()))
            .is_some_and(|rest| rest.starts_with('/'))
    }

    /// The tenant of a queue namespace, when `namespace` is one.
    pub fn of_queue_namespace(namespace: &str) -> Option<Tenant> {
        if namespace == "mcp/queue" {
            return Some(Tenant::local());
        }
        let name = namespace.strip_prefix("mcp/t/")?.strip_suffix("/queue")?;
        Tenant::new(name).ok()
    }
}

/// Checks a name that becomes part of a namespace; `field` names the argument in the error.
pub fn check_name(field: &str, name: &str) -> Result<(), McpError> {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || "_-.@".contains(c);
    let well_formed = !name.is_empty()
        && name.len() <= limits::MAX_ID_BYTES
        && name.chars().all(ok_char)
        && !name.starts_with('.')
        && !name.contains("..");
    if !well_formed {
        return Err(McpError::invalid(
            field,
            format!(
                "not a valid id: 1 to {} bytes of ASCII letters, digits, `_`, `-`, `.`, `@`, \
                 not starting with `.` and without `..`",
                limits::MAX_ID_BYTES
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_or_look_alike_are_refused() {
        for bad in [
            "",
            "..",
            ".hidden",
            "a..b",
            "a/b",
            "../other",
            "a\0b",
            "a\nb",
            "a b",
            "\u{0430}lice",  // Cyrillic а
            "ａlice",        // full-width a
            "alice\u{0301}", // combining accent
            "a\u{202e}b",    // right-to-left override
        ] {
            assert!(check_name("user_id", bad).is_err(), "{bad:?} accepted");
        }
        assert!(check_name("user_id", &"x".repeat(limits::MAX_ID_BYTES + 1)).is_err());
        for good in ["alice", "a.b@example.com", "user_42", "x-y"] {
            assert!(check_name("user_id", good).is_ok(), "{good:?} refused");
        }
        // The error never echoes the name back (it may be a secret or a control sequence).
        let error = check_name("user_id", "secret\u{1b}[2J")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("secret"), "{error}");
    }

    #[test]
    fn tenants_have_disjoint_namespaces() {
        let a = Tenant::new("a").unwrap();
        let local = Tenant::local();
        assert_eq!(local.memory_root(), "mcp/memory");
        assert_eq!(a.memory_root(), "mcp/t/a/memory");
        assert_eq!(
            Tenant::of_queue_namespace(&a.queue_namespace()),
            Some(a.clone())
        );
        assert_eq!(Tenant::of_queue_namespace("mcp/queue"), Some(local.clone()));
        assert_eq!(Tenant::of_queue_namespace("mcp/t/../queue"), None);
        assert!(a.owns("mcp/t/a/memory/hybrid/u", "mcp/graph"));
        assert!(a.owns("mcp/t/a/graph", "mcp/graph"));
        assert!(!a.owns("mcp/t/ab/graph", "mcp/graph"));
        assert!(!a.owns("mcp/t/a", "mcp/graph"));
        assert!(!a.owns("mcp/graph", "mcp/graph"));
        assert!(local.owns("mcp/graph", "mcp/graph"));
        assert!(local.owns("mcp/queue", "mcp/graph"));
        assert!(local.owns("mcp/memory/hybrid/u", "mcp/graph"));
        assert!(!local.owns("mcp/t/a/graph", "mcp/graph"));
    }
}
