//! Models that come with memory settings: an `--llm` file's `memory_config` (the paper's models
//! with the paper's embedders) is used unless `--memory-config` replaces it, which a run says.

use crate::common::{assert_ok, harness_in, json as read, only_run};

#[test]
fn an_llm_files_memory_settings_are_used_unless_replaced_which_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let paired = dir.path().join("paired");
    std::fs::create_dir_all(&paired).unwrap();
    std::fs::write(
        paired.join("embedder.toml"),
        "retrieve_k = 3\nembedder = \"hashing\"\n",
    )
    .unwrap();
    let llm = dir.path().join("llm.toml");
    std::fs::write(
        &llm,
        format!("memory_config = {:?}\n", paired.to_str().unwrap()),
    )
    .unwrap();
    let llm = llm.to_str().unwrap();
    let run = |extra: &[&str], runs: &str| {
        let mut args = vec![
            "off-policy",
            "--baseline",
            "embedder_message",
            "--limit",
            "1",
            "--llm",
            llm,
        ];
        args.extend_from_slice(extra);
        let out = harness_in(&dir.path().join(runs), &args);
        assert_ok(&out);
        let run = only_run(
            dir.path()
                .join(runs)
                .join("runs/off-policy/results/domain/Sample/embedder_message"),
        );
        (out, read(run.join("run_config.json")))
    };

    let (out, config) = run(&[], "paired-run");
    let origin = config["memory_system_config"].as_str().unwrap().to_string();
    assert!(origin.starts_with(paired.to_str().unwrap()), "{origin}");
    assert_eq!(config["memory_settings"]["retrieve_k"], 3);
    assert_eq!(config["memory_embedder"], "hashing");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("is used instead"));

    let mine = dir.path().join("mine.toml");
    std::fs::write(&mine, "retrieve_k = 4\nembedder = \"hashing\"\n").unwrap();
    let (out, config) = run(&["--memory-config", mine.to_str().unwrap()], "replaced-run");
    assert_eq!(config["memory_settings"]["retrieve_k"], 4);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("is used instead"))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains(paired.to_str().unwrap()), "{stderr}");
}
