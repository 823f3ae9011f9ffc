//! Crates kept outside the workspace on purpose, checked on their sources: what they include
//! from the workspace by path must build with their own manifest, since CI never builds them.

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

/// The crates a crate outside the workspace may name: its `[dependencies]`, and the language's.
fn allowed_roots(manifest: &str) -> BTreeSet<String> {
    let mut allowed: BTreeSet<String> = ["std", "core", "alloc", "crate", "super", "self"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut in_dependencies = false;
    for line in manifest.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_dependencies = line == "[dependencies]";
        } else if in_dependencies {
            if let Some((name, _)) = line.split_once('=') {
                allowed.insert(name.trim().replace('-', "_"));
            }
        }
    }
    allowed
}

/// memvid-core's driver of the stores benchmark is a crate of its own (the workspace's
/// dependencies never meet memvid-core's), and includes the benchmark's shared data module by
/// path. Once that module used the engine, the driver stopped building, unseen, because CI does
/// not build it: every file it includes must name only crates its own manifest declares.
#[test]
fn the_memvid_driver_includes_only_what_its_crate_can_build() {
    let dir = root().join("benches/stores/memvid");
    let read = |path: &Path| {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let allowed = allowed_roots(&read(&dir.join("Cargo.toml")));
    let main = read(&dir.join("src/main.rs"));
    let mut included = 0;
    for (at, _) in main.match_indices("#[path = \"") {
        let rest = &main[at + "#[path = \"".len()..];
        let Some(end) = rest.find('"') else { continue };
        let file = dir.join("src").join(&rest[..end]);
        let foreign: Vec<String> = path_roots(&code_of(&read(&file)))
            .difference(&allowed)
            .cloned()
            .collect();
        assert!(
            foreign.is_empty(),
            "{} is built into memvid-core's driver, whose Cargo.toml does not declare {foreign:?}",
            file.display()
        );
        included += 1;
    }
    assert!(
        included > 0,
        "memvid-core's driver includes no shared module"
    );
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
}
