//! Every third-party package the workspace can build is under a licence that lets this
//! Apache-2.0 project ship it: each package's SPDX expression, as `cargo metadata` reports it
//! from the lock file, must be satisfiable with the permissive licences below (an `OR` needs
//! one acceptable side, an `AND` both). A new dependency under another licence (GPL, say, or
//! none declared) fails here, naming it, until someone decides. Offline, from the lock file:
//! no tool or advisory database is downloaded (cargo-deny's advisories come from GitHub, which
//! this machine cannot reach).

use std::process::Command;

use serde_json::Value;

/// Licences whose terms allow shipping in an Apache-2.0 project (SPDX identifiers; `WITH`
/// exceptions that only add permissions count as their base licence).
const PERMISSIVE: &[&str] = &[
    "0BSD",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "BSL-1.0",
    "CC0-1.0",
    "CDLA-Permissive-2.0",
    "ISC",
    "MIT",
    "MIT-0",
    "MPL-2.0",
    "Unicode-3.0",
    "Unicode-DFS-2016",
    "Unlicense",
    "Zlib",
    "zlib-acknowledgement",
];

/// Whether the SPDX expression `text` (old `/`-separated lists read as `OR`) can be met with
/// [`PERMISSIVE`] licences.
fn acceptable(text: &str) -> bool {
    let spaced = text
        .replace('/', " OR ")
        .replace('(', " ( ")
        .replace(')', " ) ");
    let tokens: Vec<&str> = spaced.split_whitespace().collect();
    let mut at = 0;
    let ok = or(&tokens, &mut at);
    ok && at == tokens.len()
}

fn or(tokens: &[&str], at: &mut usize) -> bool {
    let mut ok = and(tokens, at);
    while tokens.get(*at) == Some(&"OR") {
        *at += 1;
        ok |= and(tokens, at);
    }
    ok
}

fn and(tokens: &[&str], at: &mut usize) -> bool {
    let mut ok = term(tokens, at);
    while tokens.get(*at) == Some(&"AND") {
        *at += 1;
        ok &= term(tokens, at);
    }
    ok
}

fn term(tokens: &[&str], at: &mut usize) -> bool {
    let Some(token) = tokens.get(*at) else {
        return false;
    };
    *at += 1;
    if *token == "(" {
        let ok = or(tokens, at);
        let closed = tokens.get(*at) == Some(&")");
        *at += 1;
        return ok && closed;
    }
    if tokens.get(*at) == Some(&"WITH") {
        *at += 2; // an exception (LLVM-exception) grants more, never less
    }
    PERMISSIVE.contains(token)
}

#[test]
fn every_dependency_is_under_a_permissive_licence() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .current_dir(crate::architecture::root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let ours: Vec<&Value> = metadata["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    let mut refused = Vec::new();
    let mut checked = 0;
    for package in metadata["packages"].as_array().unwrap() {
        if ours.contains(&&package["id"]) {
            continue;
        }
        checked += 1;
        let licence = package["license"].as_str().unwrap_or("");
        if !acceptable(licence) {
            refused.push(format!(
                "{} {}: {licence:?}",
                package["name"].as_str().unwrap_or("?"),
                package["version"].as_str().unwrap_or("?")
            ));
        }
    }
    assert!(checked > 100, "only {checked} packages read");
    assert!(
        refused.is_empty(),
        "licences to decide on:\n{}",
        refused.join("\n")
    );
}

#[test]
fn the_licence_check_refuses_what_it_should() {
    assert!(acceptable("MIT OR Apache-2.0"));
    assert!(acceptable("(MIT OR Apache-2.0) AND Unicode-3.0"));
    assert!(acceptable("Apache-2.0 WITH LLVM-exception OR MIT"));
    assert!(acceptable("MIT OR Apache-2.0 OR LGPL-2.1-or-later"));
    assert!(acceptable("MIT/Apache-2.0"));
    assert!(!acceptable("GPL-3.0-only"));
    assert!(!acceptable("MIT AND GPL-2.0-only"));
    assert!(!acceptable(""));
    assert!(!acceptable("(MIT"));
}
