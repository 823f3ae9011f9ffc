//! Deletion that deletes: unique marker strings written to a namespace (record text, body,
//! attributes, state), spread over write-ahead log, table files and several lexical segments,
//! are found in the engine directory before `forget` and in no byte of any file after it; the
//! other namespace keeps every record, searchable, also after a reopen. Nor does the process
//! hold a deleted file open (where its bytes would stay on disk until it exits).

use std::path::Path;

use mb_core::residue::{files_holding, markers};
use mb_engine::{Batch, Engine, EngineOptions, NamespaceOptions, NewRecord, Space};

/// Files under `dir` this process holds open although they are deleted (read from
/// `/proc/self/fd`: Linux only; elsewhere the list is empty).
fn deleted_but_open(dir: &Path) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return Vec::new();
    };
    let dir = dir.to_string_lossy().into_owned();
    fds.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .map(|target| target.to_string_lossy().into_owned())
        .filter(|target| target.starts_with(&dir) && target.ends_with(" (deleted)"))
        .collect()
}

/// The files under `dir` holding `mark`.
fn files_with_mark(dir: &Path, mark: &str) -> Vec<std::path::PathBuf> {
    files_holding(dir, mark).unwrap()
}

fn options() -> EngineOptions {
    let mut options = EngineOptions::default();
    options.lexical_commit_interval = std::time::Duration::from_millis(50);
    options
}

#[test]
fn forget_leaves_no_byte_of_a_namespace() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("engine");
    let marks = markers(60, 36);
    {
        let engine = Engine::open(&path, options()).unwrap();
        engine.create_space(Space::new("toy", 4)).unwrap();
        for ns in ["victim", "keeper"] {
            engine
                .create_namespace(ns, NamespaceOptions::default())
                .unwrap();
        }
        for (round, chunk) in marks.chunks(20).enumerate() {
            for (i, mark) in chunk.iter().enumerate() {
                let mut batch = Batch::new();
                batch.put(
                    NewRecord::new(format!("the user said {mark} today"))
                        .with_body(format!("body {mark}"))
                        .with_attribute("note", mark.clone())
                        .with_vector("toy", vec![1.0, i as f32, 0.5, 0.0]),
                );
                batch
                    .put_state(format!("fact/{round}/{i}"), &format!("state {mark}"))
                    .unwrap();
                engine.write("victim", batch).unwrap();
                engine
                    .put(
                        "keeper",
                        NewRecord::new(format!("keeper record {round} {i} lisbon"))
                            .with_vector("toy", vec![0.0, 1.0, i as f32, 0.0]),
                    )
                    .unwrap();
            }
            // Each round in its own lexical segment; the first rounds also in table files.
            engine.flush().unwrap();
            if round == 0 {
                engine.close().unwrap();
                return forget_after_reopen(&path, &marks);
            }
        }
    }
}

fn forget_after_reopen(path: &Path, marks: &[String]) {
    let engine = Engine::open(path, options()).unwrap();
    for (i, mark) in marks.iter().enumerate().skip(20) {
        engine
            .put(
                "victim",
                NewRecord::new(format!("later {mark}")).with_attribute("n", i.to_string()),
            )
            .unwrap();
        engine
            .put("keeper", NewRecord::new(format!("keeper later {i} lisbon")))
            .unwrap();
        if i % 10 == 0 {
            engine.flush().unwrap();
        }
    }
    engine.flush().unwrap();
    // The test is real: before forgetting, every marker is somewhere in the directory.
    for mark in marks {
        assert!(
            !files_with_mark(path, mark).is_empty(),
            "{mark} was never written to disk"
        );
    }
    let keeper_before = engine.count("keeper").unwrap();
    assert_eq!(engine.forget(&["victim", "never-existed"]).unwrap(), 1);
    for mark in marks {
        let left = files_with_mark(path, mark);
        assert!(left.is_empty(), "{mark} left in {left:?}");
    }
    // The table files the reopen found are all compacted away by now: none is still open
    // (the read-only instance that answered first must have closed).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let open = deleted_but_open(path);
        if open.is_empty() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still open: {open:?}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(engine.search_text("victim", "user", 5).is_err());
    assert_eq!(engine.count("keeper").unwrap(), keeper_before);
    assert_eq!(
        engine.search_text("keeper", "lisbon", 100).unwrap().len(),
        100.min(keeper_before as usize)
    );
    // A second compaction (nothing new to drop) and a reopen keep the other namespace whole.
    engine.compact().unwrap();
    engine.close().unwrap();
    let engine = Engine::open(path, options()).unwrap();
    assert_eq!(engine.count("keeper").unwrap(), keeper_before);
    assert_eq!(
        engine.search_text("keeper", "keeper", 100).unwrap().len(),
        100.min(keeper_before as usize)
    );
    assert!(engine.namespace("victim").is_err());
    engine.close().unwrap();
    for mark in marks {
        assert!(files_with_mark(path, mark).is_empty());
    }
}
