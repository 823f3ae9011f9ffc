//! Running Python snippets in the setup venv, for parity tests against upstream's packages.

use std::path::PathBuf;
use std::process::Command;

/// The checkout's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// NLTK's data folder holding WordNet 3.0 (`corpora/wordnet`, copied from `.cache/wordnet/dict`
/// by [`mb_eval::metrics::wordnet::find`]), for the Python side of a parity test to read with
/// NLTK's own reader; `None` when no WordNet is installed. NLTK refuses files linked from out
/// of a corpus folder and files others may write, so the files are copied, owner-writable
/// only; its reader also wants a `lexnames` file, which names the lexicographer files and
/// changes no synonym (placeholder names here).
pub fn nltk_wordnet_home() -> Option<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    let dict = mb_eval::metrics::wordnet::find()?;
    let home = tempfile::tempdir().unwrap();
    let corpus = home.path().join("corpora/wordnet");
    std::fs::create_dir_all(&corpus).unwrap();
    for entry in std::fs::read_dir(&dict).unwrap() {
        let from = entry.unwrap().path();
        let to = corpus.join(from.file_name().unwrap());
        std::fs::copy(&from, &to).unwrap();
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let lexnames: String = (0..45)
        .map(|i| format!("{i:02}\tlexicographer_file_{i}\t0\n"))
        .collect();
    std::fs::write(corpus.join("lexnames"), lexnames).unwrap();
    Some(home)
}

/// Runs `code` with the venv's Python, `input` as JSON on stdin; returns its stdout as JSON.
pub fn venv_python<T: serde::de::DeserializeOwned>(code: &str, input: &impl serde::Serialize) -> T {
    let python = root().join(".cache/venv/bin/python");
    assert!(
        python.exists(),
        "{} missing: run `bash scripts/setup.sh`",
        python.display()
    );
    let mut command = Command::new(python);
    command.args(["-c", code]);
    let input = serde_json::to_string(input).unwrap();
    serde_json::from_value(mb_core::test_data::run_json(&mut command, &input)).unwrap()
}
