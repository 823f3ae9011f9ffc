//! The binary as `cargo install --path harness` leaves it: copied out of the checkout and run
//! from an unrelated directory, it finds ONNX Runtime and the embedding model only after the
//! one documented set-up step (`bash scripts/setup.sh --user`), and says so before it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::assert_ok;

/// The binary copied into `dir/bin`, far from the checkout's `.cache/`.
fn installed_copy(dir: &Path) -> PathBuf {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let copy = bin.join("mb-harness");
    std::fs::copy(env!("CARGO_BIN_EXE_mb-harness"), &copy).unwrap();
    copy
}

/// `command` run in `cwd` with `home` as the user's home and no variable that locates assets.
fn as_user(command: &mut Command, cwd: &Path, home: &Path) -> Output {
    for variable in [
        "MB_ONNXRUNTIME_LIB",
        "MB_EMBED_MODEL_DIR",
        "VIRTUAL_ENV",
        "XDG_DATA_HOME",
    ] {
        command.env_remove(variable);
    }
    command.current_dir(cwd).env("HOME", home).output().unwrap()
}

#[test]
fn an_installed_binary_runs_from_any_directory_after_the_user_setup() {
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    if !checkout.join(".cache/embedding-assets.ok").is_file() {
        mb_core::test_data::skip("run bash scripts/setup.sh first (no .cache/ in the checkout)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (project, home) = (dir.path().join("project"), dir.path().join("home"));
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let binary = installed_copy(dir.path());
    let main_job = ["off-policy", "--baseline", "embedder_message"];

    // Before the set-up step: one line naming what is missing and the commands that fix it.
    let out = as_user(Command::new(&binary).args(main_job), &project, &home);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran without its model: {stderr}");
    assert!(
        stderr.contains("setup.sh --user") && stderr.contains("pip install memorybench"),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");

    // The documented step fills the user's data folder; the same command then runs.
    let setup = as_user(
        Command::new("bash")
            .arg(checkout.join("scripts/setup.sh"))
            .arg("--user"),
        &project,
        &home,
    );
    assert_ok(&setup);
    assert!(home
        .join(".local/share/memorybench/models/all-minilm-l6-v2-int8/model.onnx")
        .is_file());
    let out = as_user(Command::new(&binary).args(main_job), &project, &home);
    assert_ok(&out);
    assert!(
        project.join("runs").is_dir(),
        "results belong in the directory the user ran from"
    );
}
