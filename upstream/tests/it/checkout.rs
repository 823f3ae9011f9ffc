//! Opening the real upstream checkout, and copies of it with one template changed.

use std::path::{Path, PathBuf};

use mb_upstream::{Prompt, Upstream, UpstreamError};

/// The upstream checkout beside the project, or `None` (after a `skipped:` line, or a failure
/// under CI) when it is absent.
fn checkout() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/upstream/MemoryBench");
    if dir.join("memorybench.py").is_file() {
        return Some(dir);
    }
    mb_core::test_data::skip(&format!(
        "the upstream checkout {} is absent",
        dir.display()
    ));
    None
}

#[test]
fn every_catalogued_template_is_found_and_matches_the_known_version() {
    let Some(dir) = checkout() else { return };
    let upstream = match Upstream::open(&dir) {
        Ok(upstream) => upstream,
        Err(e) => panic!("{e}"),
    };
    let answer = upstream
        .render(
            Prompt::AnswerBm25En,
            &[("context", "C1\nC2"), ("question", "Q?")],
        )
        .unwrap();
    assert!(
        answer.starts_with("Context:\nC1\nC2\n\nUser: \nQ?\n\n"),
        "{answer}"
    );
    assert!(upstream.provenance().contains("9a33aae9d0c1"));
}

/// Copies the files the catalog reads into a new folder.
fn copy_checkout(from: &Path, to: &Path) {
    for file in [
        "memorybench.py",
        "src/agent/bm25.py",
        "src/agent/bm25_dialog.py",
        "src/agent/embedder.py",
        "src/agent/embedder_dialog.py",
        "src/agent/a_mem.py",
        "src/agent/mem0.py",
        "src/solver/base.py",
    ] {
        let target = to.join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(from.join(file), target).unwrap();
    }
}

#[test]
fn a_changed_template_is_reported_by_file_and_function_and_not_used() {
    let Some(dir) = checkout() else { return };
    let copy = tempfile::tempdir().unwrap();
    copy_checkout(&dir, copy.path());
    let file = copy.path().join("src/agent/mem0.py");
    let text = std::fs::read_to_string(&file).unwrap();
    let changed = text.replacen("User input: ", "User input:  ", 1);
    assert_ne!(text, changed);
    std::fs::write(&file, changed).unwrap();
    match Upstream::open(copy.path()) {
        Err(UpstreamError::Changed(mismatches)) => {
            assert_eq!(mismatches.len(), 1, "{mismatches:?}");
            assert_eq!(mismatches[0].file, "src/agent/mem0.py");
            assert_eq!(mismatches[0].scope, "Mem0Agent.generate_response");
        }
        other => panic!("expected a reported change, got {other:?}"),
    }
}

#[test]
fn a_folder_that_is_no_checkout_says_so() {
    let empty = tempfile::tempdir().unwrap();
    let error = Upstream::open(empty.path()).unwrap_err();
    assert!(
        matches!(error, UpstreamError::NotACheckout { .. }),
        "{error}"
    );
}
