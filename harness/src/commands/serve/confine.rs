//! The runs directory, and the only paths the server reads: run directories under it, named
//! by their path relative to it.
//!
//! A name is refused (400) unless every `/`-separated part is a plain name (no `.`, `..`,
//! backslash or NUL; not absolute); it is then resolved with symbolic links followed, and a
//! path that lands outside the root (a link pointing out), in the store or in the server's own
//! folder is not found (404). Listing runs does not follow links at all.

use std::path::{Path, PathBuf};

use mb_eval::RUN_CONFIG;

use super::reply::ApiError;
use crate::error::{file_error, HarnessError};

/// The server's own folder under the runs directory (launched jobs' logs).
pub(crate) const SERVER_FOLDER: &str = ".serve";
/// Most directories a listing visits.
const MOST_DIRECTORIES: usize = 20_000;
/// Deepest a run directory lies under the root.
const MOST_DEPTH: usize = 12;
/// Longest name accepted.
const LONGEST_NAME: usize = 4096;

/// The runs directory.
pub(crate) struct Runs {
    /// Its canonical path.
    root: PathBuf,
    /// Folders under it that are not runs (the store, the server's folder), canonical.
    excluded: Vec<PathBuf>,
}

impl Runs {
    /// The runs directory `root`, with the store `store` (which may lie under it).
    pub fn open(root: &Path, store: &Path) -> Result<Runs, HarnessError> {
        let root = std::fs::canonicalize(root).map_err(|e| file_error(root, e))?;
        let own = root.join(SERVER_FOLDER);
        std::fs::create_dir_all(&own).map_err(|e| file_error(&own, e))?;
        let store = std::fs::canonicalize(store).unwrap_or_else(|_| {
            if store.is_absolute() {
                store.to_path_buf()
            } else {
                std::env::current_dir().unwrap_or_default().join(store)
            }
        });
        Ok(Runs {
            excluded: vec![own, store],
            root,
        })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The run directory named `name` (relative to the root).
    pub fn run(&self, name: &str) -> Result<PathBuf, ApiError> {
        let dir = self.resolve(&self.root, name)?;
        if !dir.join(RUN_CONFIG).is_file() {
            return Err(ApiError::missing(format!("{name}: not a run")));
        }
        Ok(dir)
    }

    /// The step `step` (one name) of run directory `run`, or the run itself without one.
    pub fn step(&self, run: &Path, step: Option<&str>) -> Result<PathBuf, ApiError> {
        match step {
            None | Some("") => Ok(run.to_path_buf()),
            Some(step) if step.contains('/') => Err(ApiError::bad("a step is one name")),
            Some(step) => {
                let dir = self.resolve(run, step)?;
                if dir.parent() != Some(run) {
                    return Err(ApiError::missing("no such step"));
                }
                Ok(dir)
            }
        }
    }

    /// `name` under `base`, checked as the module says.
    fn resolve(&self, base: &Path, name: &str) -> Result<PathBuf, ApiError> {
        let plain = |part: &str| {
            !part.is_empty() && part != "." && part != ".." && !part.contains(['\\', '\0'])
        };
        if name.len() > LONGEST_NAME || name.starts_with('/') || !name.split('/').all(plain) {
            return Err(ApiError::bad(format!(
                "{}: not a name under the runs directory",
                mb_core::excerpt(name, 200)
            )));
        }
        let missing = || ApiError::missing(format!("{}: not found", mb_core::excerpt(name, 200)));
        let dir = std::fs::canonicalize(base.join(name)).map_err(|_| missing())?;
        if !dir.starts_with(&self.root) || self.excluded.iter().any(|e| dir.starts_with(e)) {
            return Err(missing());
        }
        if !dir.is_dir() {
            return Err(missing());
        }
        Ok(dir)
    }

    /// `path` relative to the root, with `/` between parts; `None` outside it.
    pub fn name_of(&self, path: &Path) -> Option<String> {
        let canonical = std::fs::canonicalize(path).ok()?;
        let relative = canonical.strip_prefix(&self.root).ok()?;
        let parts: Option<Vec<&str>> = relative.iter().map(|p| p.to_str()).collect();
        Some(parts?.join("/"))
    }

    /// Every run directory under the root (holding `run_config.json`), found without following
    /// links; a run's own subdirectories (its steps) are not searched for runs.
    pub fn list(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut todo = vec![(self.root.clone(), 0usize)];
        let mut visited = 0;
        while let Some((dir, depth)) = todo.pop() {
            visited += 1;
            if visited > MOST_DIRECTORIES {
                tracing::warn!("serve: more than {MOST_DIRECTORIES} folders under the runs directory; listing the first");
                break;
            }
            if dir.join(RUN_CONFIG).is_file() {
                found.push(dir);
                continue;
            }
            if depth >= MOST_DEPTH || self.excluded.contains(&dir) {
                continue;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                // `file_type` does not follow links: a link is neither listed nor entered.
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    todo.push((entry.path(), depth + 1));
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_outside_the_runs_directory_are_refused_or_not_found() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join(RUN_CONFIG), "{}").unwrap();
        let root = tempfile::tempdir().unwrap();
        let run = root.path().join("off-policy/results/a/start_at_1");
        std::fs::create_dir_all(run.join("step_1")).unwrap();
        std::fs::write(run.join(RUN_CONFIG), "{}").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("link")).unwrap();
        let runs = Runs::open(root.path(), &root.path().join("store")).unwrap();
        let found = runs.run("off-policy/results/a/start_at_1").unwrap();
        assert_eq!(
            runs.name_of(&found).unwrap(),
            "off-policy/results/a/start_at_1"
        );
        assert!(runs.step(&found, Some("step_1")).is_ok());
        for bad in [
            "../x",
            "/etc",
            "a/../../x",
            "a\\b",
            "",
            "a//b",
            "./a",
            "a\0b",
        ] {
            let error = runs.run(bad).unwrap_err();
            assert_eq!(error.status(), 400, "{bad}");
        }
        // A link out of the root is neither listed nor followed.
        assert_eq!(runs.run("link").unwrap_err().status(), 404);
        assert_eq!(runs.list(), vec![found.clone()]);
        for bad in ["..", "../start_at_1", "a/b"] {
            assert!(runs.step(&found, Some(bad)).is_err(), "{bad}");
        }
        assert_eq!(runs.run(SERVER_FOLDER).unwrap_err().status(), 404);
    }
}
