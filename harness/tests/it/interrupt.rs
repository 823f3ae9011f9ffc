//! Ctrl-C on a run: the command that continues it is printed, and it finishes the run.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{json as read, only_run};
use crate::resume::{answer_settings, lines, slow_run, slow_server};

/// Ctrl-C (SIGINT) prints the command that continues the run, and that command finishes it.
#[test]
fn an_interrupted_run_says_how_to_continue_it() {
    let port = slow_server(150);
    let dir = tempfile::tempdir().unwrap();
    let settings = answer_settings(dir.path(), port);
    let results = "runs/off-policy/results/domain/Sample/bm25_dialog";
    let args = slow_run(
        &settings,
        dir.path(),
        &["off-policy", "--baseline", "bm25_dialog"],
    );
    let child = Command::new(env!("CARGO_BIN_EXE_mb-harness"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let runs = dir.path().join(results);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let run = std::fs::read_dir(&runs)
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path());
        if run.is_some_and(|run| lines(run.join("predict.partial.jsonl")) >= 2) {
            break;
        }
        assert!(Instant::now() < deadline, "the run never got there");
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let command = stderr
        .lines()
        .skip_while(|l| !l.contains("continue the run with:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no resume command: {stderr}"))
        .trim()
        .to_string();
    let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    assert!(words.contains(&"--resume".to_string()), "{command}");
    let out = Command::new(&words[0]).args(&words[1..]).output().unwrap();
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = only_run(runs);
    assert_eq!(read(run.join("predict.json")).as_array().unwrap().len(), 10);
}
