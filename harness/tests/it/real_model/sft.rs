//! The SFT baseline end to end on the sample: `sft-train` LoRA-tunes SmolLM2 on the liked
//! first-round answers and `sft-predict` answers with the adapter served by llama.cpp, into
//! upstream's layout, summarized and reported. (That the adapter loads and changes the model's
//! answers is mb-sft's `llama_cpp` test.)

use super::serving::{settings, CAP};
use crate::common::{assert_ok, harness, json, only_run};

#[test]
fn sft_train_then_sft_predict_answer_with_the_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let Some(llm) = settings(dir.path(), "local.toml", None, CAP) else {
        return;
    };
    let runs = dir.path().join("runs");
    let runs_arg = runs.display().to_string();
    let train = || {
        harness(&[
            "sft-train",
            "--action",
            "like",
            "--epochs",
            "2",
            "--output-dir",
            &runs_arg,
        ])
    };
    assert_ok(&train());
    let model_dir =
        runs.join("action_feedback/sft_models/lr=0.0001/Sample/lora_r8_alpha32_like_only");
    let logs = json(model_dir.join("training_logs.json"));
    assert_eq!(
        logs["total_steps"], 2,
        "two liked first-round answers, batch 4, 2 epochs"
    );
    assert!(logs["losses"]
        .as_array()
        .unwrap()
        .iter()
        .all(|l| l.as_f64().unwrap().is_finite()));
    for epoch in [1, 2] {
        assert!(model_dir
            .join(format!("epoch={epoch}_ckpt/adapter.gguf"))
            .is_file());
    }
    let chart = std::fs::read_to_string(model_dir.join("loss.svg")).unwrap();
    assert!(
        chart.contains("<svg") && chart.contains("training loss"),
        "the loss curve"
    );
    let pairs = json(model_dir.join("training_data.json"));
    assert_eq!(pairs.as_array().unwrap().len(), 2);

    // The same command again finds the run finished and trains nothing more.
    assert_ok(&train());
    assert_eq!(json(model_dir.join("training_logs.json")), logs);

    let store = dir.path().join("store").display().to_string();
    let llm_arg = llm.display().to_string();
    let predict = |action: &str| {
        harness(&[
            "sft-predict",
            "--action",
            action,
            "--epochs",
            "2",
            "--llm",
            &llm_arg,
            "--limit",
            "1",
            "--output-dir",
            &runs_arg,
            "--store",
            &store,
        ])
    };
    let out = predict("like");
    assert_ok(&out);
    let run =
        only_run(runs.join("action_feedback/results/domain/Sample/wo_memory/like/sft/epoch=2"));
    for file in ["predict.json", "summary.json", "timing.json"] {
        assert!(run.join(file).is_file(), "{file} missing");
    }
    let config = json(run.join("run_config.json"));
    assert_eq!(config["memory_system"], "wo_memory");
    assert_eq!(config["sft"]["epoch"], 2);
    assert_eq!(config["sft"]["training"]["action_feedback"], "like");
    assert!(config["sft"]["adapter"]
        .as_str()
        .unwrap()
        .ends_with("epoch=2_ckpt/adapter.gguf"));
    let predictions = json(run.join("predict.json"));
    assert!(!predictions.as_array().unwrap().is_empty());

    // No adapter trained for copy: a clear refusal before any server starts.
    let refused = predict("copy");
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("no adapter") && stderr.contains("sft-train --action copy"),
        "{stderr}"
    );

    let report = dir.path().join("report.html");
    let out = harness(&["report", &runs_arg, "--out", &report.display().to_string()]);
    assert_ok(&out);
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("sft epoch 2"), "the report names the SFT run");
}
