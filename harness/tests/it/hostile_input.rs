//! Input nobody writes by hand: a `k` near `usize::MAX`, settings far out of range, a report
//! directory that links back into itself, an output pipe closed before anything is written.
//! Each gets one readable line, a bounded result or a quiet end, never a backtrace.

use crate::common::{assert_ok, harness, harness_in, in_dir, json, only_run};

/// The one line a refused command prints, asserting there is no backtrace.
fn refusal(args: &[&str]) -> String {
    let out = harness(args);
    assert!(!out.status.success(), "{args:?}");
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{args:?}: {stderr}"
    );
    stderr
}

#[test]
fn a_retrieve_k_out_of_range_is_refused_in_one_line() {
    for k in ["18446744073709551615", "10001", "-3", "many"] {
        let stderr = refusal(&["off-policy", &format!("--retrieve-k={k}")]);
        assert!(stderr.contains("--retrieve-k"), "{k}: {stderr}");
        assert!(stderr.lines().count() <= 4, "{k}: {stderr}");
    }
    let dir = tempfile::tempdir().unwrap();
    let settings = dir.path().join("bm25.toml");
    std::fs::write(&settings, "retrieve_k = 9000000000000000000\n").unwrap();
    let args = in_dir(
        dir.path(),
        &["off-policy", "--memory-config", settings.to_str().unwrap()],
    );
    let stderr = refusal(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("bm25.toml") && stderr.contains("retrieve_k"),
        "{stderr}"
    );
}

#[test]
fn the_largest_retrieve_k_retrieves_every_memory() {
    let dir = tempfile::tempdir().unwrap();
    for baseline in ["bm25_message", "memoryos"] {
        let out = harness_in(
            dir.path(),
            &[
                "off-policy",
                "--baseline",
                baseline,
                "--retrieve-k",
                "10000",
            ],
        );
        assert_ok(&out);
        let run = only_run(
            dir.path()
                .join("runs/off-policy/results/domain/Sample")
                .join(baseline),
        );
        assert_eq!(json(run.join("summary.json"))["timing"]["cases"], 10);
    }
}

#[test]
fn a_report_directory_linking_into_itself_is_read_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = harness_in(dir.path(), &["off-policy", "--baseline", "bm25_message"]);
    assert_ok(&out);
    let runs = dir.path().join("runs");
    std::os::unix::fs::symlink(&runs, runs.join("again")).unwrap();
    std::os::unix::fs::symlink(runs.join("missing"), runs.join("dangling")).unwrap();
    let page = dir.path().join("report.html");
    let out = harness(&[
        "report",
        runs.to_str().unwrap(),
        "--out",
        page.to_str().unwrap(),
    ]);
    assert_ok(&out);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("1 run;"), "{stdout}");
}

#[test]
fn thread_counts_and_dates_out_of_range_are_refused_in_one_line() {
    for (flag, value) in [
        ("--threads", "100000"),
        ("--threads", "0"),
        ("--threads", "-1"),
        ("--date", "2026-02-30"),
        ("--date", "2026-13-01"),
        ("--date", "yesterday"),
    ] {
        let stderr = refusal(&["off-policy", &format!("{flag}={value}")]);
        assert!(
            stderr.contains(flag) && stderr.contains(value),
            "{flag} {value}: {stderr}"
        );
        assert!(stderr.lines().count() <= 4, "{flag} {value}: {stderr}");
    }
}

#[test]
fn an_embedder_no_system_of_the_run_uses_is_named_as_unused() {
    let dir = tempfile::tempdir().unwrap();
    let args = in_dir(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "bm25_dialog",
            "--embedder",
            "/nonexistent.toml",
        ],
    );
    let out = harness(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--embedder /nonexistent.toml is unused") && stderr.contains("bm25_dialog"),
        "{stderr}"
    );
    // A system that embeds takes it, and so reads the file.
    let args = in_dir(
        dir.path(),
        &[
            "off-policy",
            "--baseline",
            "embedder_dialog",
            "--embedder",
            "/nonexistent.toml",
        ],
    );
    let stderr = refusal(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(stderr.contains("/nonexistent.toml"), "{stderr}");
    assert!(!stderr.contains("unused"), "{stderr}");
}

#[test]
fn output_read_by_a_closed_pipe_ends_quietly() {
    // `mb-harness plan | head -1`: the reader is gone before anything is written.
    for args in [
        &["plan", "--baseline", "all", "--shards", "2"][..],
        &["list"],
    ] {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mb-harness"))
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
}
