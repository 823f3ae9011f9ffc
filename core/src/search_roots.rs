//! Where a relative path to an installed asset (a settings file, a model, `.cache/`) is looked
//! for: the current directory and the running executable's directory, each with its ancestors
//! searched by the caller. One list, so that the embedder's assets and the local model server's
//! files are found (and reported missing) from the same places.

use std::path::{Path, PathBuf};

/// The current directory and the running executable's directory (once when they are the same),
/// in that order.
pub fn search_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        roots.push(cwd);
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        if !roots.contains(&dir) {
            roots.push(dir);
        }
    }
    roots
}

/// Where an asset path is: itself when absolute, else the first existing `<ancestor>/<path>`
/// of the current directory, then of the executable's directory. `None` when no candidate
/// exists; [`searched`] says where it looked.
pub fn locate(path: &Path) -> Option<PathBuf> {
    if path.is_absolute() {
        return path.exists().then(|| path.to_path_buf());
    }
    search_roots()
        .iter()
        .flat_map(|root| root.ancestors().map(|dir| dir.join(path)))
        .find(|candidate| candidate.exists())
}

/// `path` and where [`locate`] looks for it, for error messages.
pub fn searched(path: &Path) -> String {
    if path.is_absolute() {
        return path.display().to_string();
    }
    let roots: Vec<String> = search_roots()
        .iter()
        .map(|root| format!("{} or a parent", root.display()))
        .collect();
    format!("{} (looked in {})", path.display(), roots.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn current_directory_first_then_the_executable_s_once() {
        let roots = search_roots();
        assert_eq!(roots.first(), std::env::current_dir().ok().as_ref());
        let exe_dir = std::env::current_exe()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
        assert!(roots.contains(&exe_dir));
        assert_eq!(roots.iter().filter(|r| **r == exe_dir).count(), 1);
    }
}
