//! A crash while a result file is replaced leaves the old file or the new one, whole: a child
//! process aborts at the fault point between writing the new file and renaming it over the old.

use std::process::Command;

use mb_eval::{read_json, write_json};
use serde_json::{json, Value};

const PATH_VAR: &str = "MB_ATOMIC_RESULTS_PATH";

#[test]
#[ignore = "run by a_crash_mid_replace_keeps_a_whole_file as a child process"]
fn atomic_results_child_writer() {
    let Ok(path) = std::env::var(PATH_VAR) else {
        return;
    };
    fail::cfg_callback("results::rename", || std::process::abort()).unwrap();
    write_json(
        std::path::Path::new(&path),
        &json!({"version": 2, "cases": [1, 2, 3]}),
    )
    .unwrap();
}

#[test]
fn a_crash_mid_replace_keeps_a_whole_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("summary.json");
    write_json(&path, &json!({"version": 1})).unwrap();
    let status = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "atomic_results::atomic_results_child_writer",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(PATH_VAR, &path)
        .status()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(6),
        "the child aborted at the fault point"
    );
    let kept: Value = read_json(&path).unwrap();
    assert_eq!(kept, json!({"version": 1}), "the old file, whole");
    // The next write replaces it, whatever the crash left beside it.
    write_json(&path, &json!({"version": 3})).unwrap();
    assert_eq!(read_json::<Value>(&path).unwrap(), json!({"version": 3}));
}
