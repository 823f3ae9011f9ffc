//! Crates kept outside the workspace on purpose, checked on their sources: what they take from
//! the workspace by path must build with their own manifest. The workspace's build never
//! compiles them (CI checks memvid-core's driver in a step of its own); this catches a shared
//! crate that grew a workspace dependency in every `cargo test`.

use std::collections::BTreeSet;
use std::path::Path;

use crate::architecture::{code_of, root};

/// The first segment of every `use` path in `code` (`use a::b` and `use a::{b, c}`: `a`), and of
/// every path rooted at a workspace crate (`mb_engine::Engine::open`).
fn path_roots(code: &str) -> BTreeSet<String> {
    let mut roots = BTreeSet::new();
    for statement in code.split(';') {
        let statement = statement.trim();
        let statement = statement.strip_prefix("pub ").unwrap_or(statement);
        if let Some(path) = statement.strip_prefix("use ") {
            let root: String = path
                .trim_start_matches("::")
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            roots.insert(root);
        }
    }
    let bytes = code.as_bytes();
    for (at, _) in code.match_indices("mb_") {
        let boundary = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let name: String = code[at..]
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if boundary && code[at + name.len()..].starts_with("::") {
            roots.insert(name);
        }
    }
    roots
}

/// The lines of a manifest's `[dependencies]` table, trimmed.
fn dependency_lines(manifest: &str) -> impl Iterator<Item = &str> {
    let mut in_dependencies = false;
    manifest.lines().map(str::trim).filter(move |line| {
        if line.starts_with('[') {
            in_dependencies = *line == "[dependencies]";
            false
        } else {
            in_dependencies
        }
    })
}

/// The crates a crate outside the workspace may name: its `[dependencies]`, and the language's.
fn allowed_roots(manifest: &str) -> BTreeSet<String> {
    let mut allowed: BTreeSet<String> = ["std", "core", "alloc", "crate", "super", "self"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for line in dependency_lines(manifest) {
        if let Some((name, _)) = line.split_once('=') {
            allowed.insert(name.trim().replace('-', "_"));
        }
    }
    allowed
}

/// The `path = "..."` dependencies of a manifest's `[dependencies]`, as directories relative to
/// the manifest's.
fn path_dependencies(manifest: &str) -> Vec<String> {
    dependency_lines(manifest)
        .filter_map(|line| line.split_once("path = \"")?.1.split_once('"'))
        .map(|(path, _)| path.to_string())
        .collect()
}

/// memvid-core's driver of the stores benchmark is a crate of its own (the workspace's
/// dependencies never meet memvid-core's), and shares the benchmark's data crate by path. Once
/// that code used the engine, the driver stopped building, unseen, because nothing built it:
/// every crate it takes by path must depend on no workspace crate, and its sources must name
/// only what its own manifest declares.
#[test]
fn the_memvid_driver_takes_only_what_its_crate_can_build() {
    let dir = root().join("benches/stores/memvid");
    let read = |path: &Path| {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let shared = path_dependencies(&read(&dir.join("Cargo.toml")));
    assert!(
        !shared.is_empty(),
        "memvid-core's driver shares no crate with the benchmark"
    );
    for relative in shared {
        let crate_dir = dir.join(&relative);
        let manifest = read(&crate_dir.join("Cargo.toml"));
        let allowed = allowed_roots(&manifest);
        assert!(
            path_dependencies(&manifest).is_empty()
                && !allowed.iter().any(|d| d.starts_with("mb_")),
            "{relative}: memvid-core's driver builds it, so it may depend on no workspace crate"
        );
        let mut files = Vec::new();
        crate::architecture::rust_files(&crate_dir.join("src"), &mut files);
        for file in files {
            let foreign: Vec<String> = path_roots(&code_of(&read(&file)))
                .difference(&allowed)
                .cloned()
                .collect();
            assert!(
                foreign.is_empty(),
                "{} is built into memvid-core's driver, but its crate does not declare {foreign:?}",
                file.display()
            );
        }
    }
}

#[test]
fn the_include_check_sees_a_workspace_crate() {
    let allowed = allowed_roots("[package]\nname = \"x\"\n[dependencies]\nserde-json = \"1\"\n");
    let roots =
        path_roots("use std::fs;\nuse serde_json::Value;\nfn f() { mb_engine::Engine::open(); }");
    let foreign: Vec<&String> = roots.difference(&allowed).collect();
    assert_eq!(foreign, vec!["mb_engine"]);
    let roots = path_roots("pub use mb_core::retry;\nuse data::{a, b};");
    assert!(roots.contains("mb_core") && roots.contains("data"));
    let paths = path_dependencies("[dependencies]\nx = { path = \"../data\" }\ny = \"1\"\n");
    assert_eq!(paths, ["../data"]);
}
