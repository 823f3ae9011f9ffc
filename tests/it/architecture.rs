//! The workspace's architecture rules, checked on the sources: no module cycles in any crate,
//! no source file over 500 lines, and the datasets crate builds without the storage engine.
//!
//! Module dependencies are read from paths (`crate::a::b`, `super::x`, `use crate::{a, b::c}`),
//! with `pub use` re-exports followed to the module that defines the item. A module may use its
//! ancestors and descendants freely; two modules that are not nested depend on each other
//! through the children of their nearest common ancestor, and those edges must form no cycle.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The library and binary crates, by directory: every package of the workspace but this one
/// (whose `src/` only re-exports).
const CRATES: [&str; 18] = [
    "core",
    "upstream",
    "text",
    "whoosh-query",
    "engine",
    "embed",
    "llm",
    "datasets",
    "eval",
    "baselines",
    "sft",
    "harness",
    "py",
    "rig",
    "mcp",
    "benches/stores",
    "benches/stores/data",
    "benches/service",
];

/// Most lines in one source file.
const MAX_FILE_LINES: usize = 500;

pub(crate) fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            // Build output of a crate outside the workspace (benches/stores/memvid/target) holds
            // generated sources that are not ours.
            if path.file_name().is_some_and(|name| name == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file under `src/`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).unwrap_or(file);
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap_or_default();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "lib" | "main" | "mod") {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a module: comments (doc links are not dependencies) and unit tests (everything
/// from `#[cfg(test)]` on) removed.
pub(crate) fn code_of(text: &str) -> String {
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => text,
    };
    code.lines()
        .map(|line| match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands `a::{b, c::{d, e}}` into `a::b`, `a::c::d`, `a::c::e`.
fn expand_group(path: &str) -> Vec<String> {
    let Some(open) = path.find('{') else {
        return vec![path.trim().to_string()];
    };
    let prefix = &path[..open];
    let inner = &path[open + 1..path.rfind('}').unwrap_or(path.len())];
    let mut items = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .flat_map(|item| expand_group(&format!("{prefix}{item}")))
        .collect()
}

/// Every path that starts at `crate::`, `super::` or `self::` in `text`, groups expanded.
fn paths_in(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let starts = ["crate::", "super::", "self::"]
            .iter()
            .any(|p| rest.starts_with(p));
        let boundary = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if !(starts && boundary) {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let mut end = 0;
        let mut depth = 0;
        for (j, c) in rest.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => break,
                '}' => depth -= 1,
                c if depth > 0 || c.is_alphanumeric() || c == '_' || c == ':' => {}
                _ => break,
            }
            end = j + c.len_utf8();
        }
        out.extend(expand_group(&rest[..end]));
        i += end.max(1);
    }
    out
}

/// One crate's modules and the `pub use` re-exports of each.
struct Crate {
    modules: BTreeSet<Vec<String>>,
    reexports: HashMap<(Vec<String>, String), Vec<String>>,
    uses: Vec<(Vec<String>, Vec<String>)>,
}

/// Resolves a path written in module `at` to absolute segments.
fn absolute(at: &[String], path: &str) -> Vec<String> {
    let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<String> = Vec::new();
    match segments.first() {
        Some(&"crate") => {
            segments.remove(0);
        }
        Some(&"self") => {
            base = at.to_vec();
            segments.remove(0);
        }
        Some(&"super") => {
            base = at.to_vec();
            while segments.first() == Some(&"super") {
                base.pop();
                segments.remove(0);
            }
        }
        _ => {}
    }
    base.extend(segments.into_iter().map(str::to_string));
    base
}

impl Crate {
    fn read(dir: &Path) -> Crate {
        let src = dir.join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let mut modules = BTreeSet::new();
        let mut sources = Vec::new();
        for file in files {
            let module = module_path(&src, &file);
            if module.iter().any(|m| m == "tests") {
                continue;
            }
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            modules.insert(module.clone());
            sources.push((module, code_of(&text)));
        }
        let mut reexports = HashMap::new();
        let mut uses = Vec::new();
        for (module, text) in &sources {
            for line in text.split(';') {
                let line = line.trim();
                let Some(rest) = line
                    .strip_prefix("pub use ")
                    .or_else(|| line.strip_prefix("pub(crate) use "))
                else {
                    continue;
                };
                let rest = if rest.starts_with("crate::") || rest.starts_with("super::") {
                    rest.to_string()
                } else {
                    format!("self::{rest}")
                };
                for path in expand_group(&rest) {
                    let path = path.split(" as ").next().unwrap_or(&path).to_string();
                    let target = absolute(module, &path);
                    if let Some(name) = target.last() {
                        reexports.insert((module.clone(), name.clone()), target.clone());
                    }
                }
            }
            for path in paths_in(text) {
                uses.push((module.clone(), absolute(module, &path)));
            }
        }
        Crate {
            modules,
            reexports,
            uses,
        }
    }

    /// The module that defines the item a path names (following re-exports).
    fn defining_module(&self, path: &[String]) -> Vec<String> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let mut longest = 0;
            for len in 0..=path.len() {
                if self.modules.contains(&path[..len]) {
                    longest = len;
                }
            }
            let module = path[..longest].to_vec();
            let Some(name) = path.get(longest) else {
                return module;
            };
            match self.reexports.get(&(module.clone(), name.clone())) {
                Some(target) if target != &path[..=longest] => {
                    let mut next = target.clone();
                    next.extend_from_slice(&path[longest + 1..]);
                    path = next;
                }
                _ => return module,
            }
        }
        path
    }

    /// Sibling-level edges: parent module → (child → children it depends on).
    fn edges(&self) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> {
        let mut edges: BTreeMap<Vec<String>, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
        for (from, path) in &self.uses {
            let to = self.defining_module(path);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue;
            }
            edges
                .entry(from[..common].to_vec())
                .or_default()
                .entry(from[common].clone())
                .or_default()
                .insert(to[common].clone());
        }
        edges
    }
}

/// Every cycle among one parent's children, as a list of names.
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    let nodes: Vec<&String> = graph.keys().collect();
    let mut found = Vec::new();
    let reach = |start: &String, goal: &String| -> Option<Vec<String>> {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((node, trail)) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if next == goal {
                    return Some(trail);
                }
                if seen.insert(next.clone()) {
                    let mut longer = trail.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
        None
    };
    let mut reported = BTreeSet::new();
    for node in nodes {
        if reported.contains(node) {
            continue;
        }
        if let Some(cycle) = reach(node, node) {
            reported.extend(cycle.iter().cloned());
            found.push(cycle);
        }
    }
    found
}

#[test]
fn no_crate_has_a_module_cycle() {
    let mut problems = Vec::new();
    for name in CRATES {
        let krate = Crate::read(&root().join(name));
        for (parent, graph) in krate.edges() {
            for cycle in cycles(&graph) {
                let at = if parent.is_empty() {
                    "crate".to_string()
                } else {
                    parent.join("::")
                };
                problems.push(format!("{name}: {at}: {} → back", cycle.join(" → ")));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "module cycles:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_cycle_check_sees_a_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod inner;\npub use inner::Thing;\n").unwrap();
    std::fs::write(src.join("a/inner.rs"), "use crate::b::Other;\n").unwrap();
    std::fs::write(src.join("b.rs"), "use crate::{a::Thing, c};\n").unwrap();
    let krate = Crate::read(dir.path());
    let edges = krate.edges();
    let top = &edges[&Vec::new()];
    assert_eq!(cycles(top).len(), 1, "{edges:?}");
}

#[test]
fn no_source_file_is_over_500_lines() {
    let mut files = Vec::new();
    for dir in CRATES.iter().chain(&["tests", "benches", "examples"]) {
        rust_files(&root().join(dir), &mut files);
    }
    let long: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(file).ok()?.lines().count();
            (lines > MAX_FILE_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines: {long:?}"
    );
}

/// The lines of `cargo tree` over what a build compiles (normal and build dependencies, plus
/// what `selection` adds), one per crate in `format`, without the "(*)" of repeated crates.
fn cargo_tree(selection: &[&str], format: &str) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "-e",
            "normal,build",
            "--prefix",
            "none",
        ])
        .args(["--format", format])
        .args(selection)
        .current_dir(root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.trim_end_matches(" (*)").to_string())
        .collect()
}

/// The crates a package compiles for a normal build, by name.
fn normal_dependencies(package: &str) -> BTreeSet<String> {
    cargo_tree(&["-p", package], "{p}")
        .iter()
        .filter_map(|line| line.split_whitespace().next().map(str::to_string))
        .collect()
}

/// maturin builds the Python package alone; unless its third-party dependencies get the
/// features `cargo test --workspace` gave them, it compiles them again (py/Cargo.toml's feature
/// unification). The workspace's crates differ on purpose: their tests turn on fault points
/// (`fail`'s `failpoints`) and test doubles, which the wheel must not have.
#[test]
fn the_wheel_build_reuses_the_workspace_build() {
    // Every crate each build compiles, as `name version|features`.
    let workspace = cargo_tree(&["--workspace", "-e", "dev"], "{p}|{f}");
    let wheel = cargo_tree(&["-p", "mb-python"], "{p}|{f}");
    let ours = |line: &&String| line.contains(" (/") || line.starts_with("fail v");
    let differing: Vec<&String> = wheel
        .difference(&workspace)
        .filter(|line| !ours(line))
        .collect();
    assert!(
        differing.is_empty(),
        "the wheel's build compiles these with other features than the workspace's \
         (enable the workspace's in py/Cargo.toml): {differing:#?}"
    );
}

#[test]
fn datasets_clients_and_the_query_language_build_without_the_storage_engine() {
    for package in ["mb-datasets", "mb-llm", "mb-embed", "mb-whoosh-query"] {
        let dependencies = normal_dependencies(package);
        for heavy in ["mb-engine", "librocksdb-sys", "tantivy"] {
            assert!(
                !dependencies.contains(heavy),
                "{package} compiles {heavy} by default"
            );
        }
    }
    assert!(
        !normal_dependencies("mb-llm").contains("clap"),
        "CLI argument types belong in the binary"
    );
}

#[test]
fn datasets_build_without_the_model_client() {
    let dependencies = normal_dependencies("mb-datasets");
    for heavy in ["mb-llm", "reqwest", "tokio"] {
        assert!(
            !dependencies.contains(heavy),
            "mb-datasets compiles {heavy}: what needs a model belongs in mb-eval"
        );
    }
}

/// JSON objects serialize with sorted keys in every workspace build: cache keys (recorded
/// answers, memory caches) and result files hash or write `serde_json::Value`s, and a dependency
/// enabling serde_json's `preserve_order` (rig-core 0.44 does) would switch the whole workspace
/// to insertion order, so a binary's keys would depend on how it was built.
#[test]
fn json_maps_keep_sorted_keys_across_the_workspace() {
    let value = serde_json::json!({"zebra": 1, "apple": 2, "mango": 3});
    assert_eq!(value.to_string(), r#"{"apple":2,"mango":3,"zebra":1}"#);
}
