//! Broken model directories and settings give clear errors, never a panic.

use std::fs;
use std::path::Path;

use mb_embed::{EmbedError, OnnxConfig, OnnxEmbedder};

fn default_config() -> OnnxConfig {
    OnnxConfig::default_model().unwrap_or_else(|e| panic!("{e}"))
}

/// A model directory with copies of the default files, for tampering with.
fn copy_of_default(dir: &Path) -> OnnxConfig {
    let config = default_config();
    fs::copy(&config.model, dir.join("model.onnx")).unwrap();
    fs::copy(&config.tokenizer, dir.join("tokenizer.json")).unwrap();
    OnnxConfig::from_dir(dir).unwrap()
}

#[test]
fn a_file_that_is_not_onnx_is_a_model_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = copy_of_default(dir.path());
    fs::write(&config.model, b"this is not a protobuf").unwrap();
    match OnnxEmbedder::new(config.clone()) {
        Err(EmbedError::Model { path, .. }) => assert_eq!(path, config.model),
        Err(other) => panic!("expected a model error, got {other}"),
        Ok(_) => panic!("a text file loaded as a model"),
    }
}

#[test]
fn a_tokenizer_with_a_larger_vocabulary_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let config = copy_of_default(dir.path());
    let mut tokenizer: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&config.tokenizer).unwrap()).unwrap();
    let vocab = tokenizer["model"]["vocab"].as_object_mut().unwrap();
    let size = vocab.len();
    for i in 0..100 {
        vocab.insert(format!("extra-token-{i}"), serde_json::json!(size + i));
    }
    fs::write(&config.tokenizer, tokenizer.to_string()).unwrap();
    match OnnxEmbedder::new(config) {
        Err(EmbedError::Tokenizer { detail, .. }) => {
            assert!(detail.contains("does not fit model"), "{detail}")
        }
        Err(other) => panic!("expected a tokenizer error, got {other}"),
        Ok(_) => panic!("a mismatched tokenizer was accepted"),
    }
}

#[test]
fn an_unreadable_tokenizer_names_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let config = copy_of_default(dir.path());
    fs::write(&config.tokenizer, "{ not json").unwrap();
    let error = OnnxEmbedder::new(config.clone()).err().unwrap();
    assert!(matches!(error, EmbedError::Tokenizer { .. }), "{error}");
    assert!(error
        .to_string()
        .contains(&config.tokenizer.display().to_string()));
}

#[test]
fn missing_files_and_zero_settings_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let error = OnnxConfig::from_dir(dir.path()).unwrap_err();
    assert!(
        matches!(
            error,
            EmbedError::AssetMissing {
                what: "ONNX model",
                ..
            }
        ),
        "{error}"
    );

    for tweak in [
        (|c: &mut OnnxConfig| c.batch_size = 0) as fn(&mut OnnxConfig),
        |c| c.sessions = 0,
        |c| c.intra_threads = 0,
        |c| c.solo_threads = 0,
        |c| c.max_tokens = Some(0),
    ] {
        let mut config = default_config();
        tweak(&mut config);
        let error = OnnxEmbedder::new(config).err().unwrap();
        assert!(matches!(error, EmbedError::Config { .. }), "{error}");
    }
}

#[test]
fn a_broken_pooling_config_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    copy_of_default(dir.path());
    fs::write(
        dir.path().join("pooling_config.json"),
        r#"{"pooling_mode_max_tokens": true}"#,
    )
    .unwrap();
    let error = OnnxConfig::from_dir(dir.path()).unwrap_err().to_string();
    assert!(error.contains("pooling_config.json"), "{error}");
}
