//! Locating and loading ONNX Runtime. One test per process state, so it runs alone in this binary:
//! the environment variables and the process-wide runtime are global.

use mb_embed::{Assets, EmbedError, OnnxConfig, OnnxEmbedder, RUNTIME_ENV};

#[test]
fn missing_and_foreign_runtimes_say_how_to_fix_them() {
    // An override pointing nowhere names the variable and the path.
    std::env::set_var(RUNTIME_ENV, "/nonexistent/libonnxruntime.so");
    let error = Assets::runtime().unwrap_err().to_string();
    assert!(
        error.contains(RUNTIME_ENV) && error.contains("/nonexistent/libonnxruntime.so"),
        "{error}"
    );
    std::env::remove_var(RUNTIME_ENV);

    // A file that is not a shared library is refused without loading anything.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("libonnxruntime.so");
    std::fs::write(&fake, b"not a library").unwrap();
    let mut config = OnnxConfig::default_model().unwrap_or_else(|e| panic!("{e}"));
    config.runtime = Some(fake.clone());
    match OnnxEmbedder::new(config.clone()) {
        Err(EmbedError::Runtime { path, .. }) => assert_eq!(path, fake),
        Err(other) => panic!("expected a runtime error, got {other}"),
        Ok(_) => panic!("a text file loaded as ONNX Runtime"),
    }

    // The real one still loads afterwards, and a second, different library is then refused.
    config.runtime = None;
    OnnxEmbedder::new(config.clone()).unwrap_or_else(|e| panic!("{e}"));
    let copy = dir.path().join("copy.so");
    std::fs::copy(Assets::runtime().unwrap(), &copy).unwrap();
    config.runtime = Some(copy);
    let error = OnnxEmbedder::new(config).err().unwrap().to_string();
    assert!(error.contains("already loaded"), "{error}");
}
