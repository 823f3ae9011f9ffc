//! Training on the toy model: the loss falls, the gradients are right, a run resumes exactly.

use std::path::Path;

use candle_core::Device;
use mb_sft::{
    train, Example, GgufFile, LoraLlama, LoraSettings, RunDir, SftError, Targets, TrainSettings,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::toy;

fn toy_model(dir: &Path, lora: LoraSettings) -> LoraLlama {
    let path = dir.join("toy.gguf");
    if !path.exists() {
        toy::write(&path, 7);
    }
    let mut file = GgufFile::open(&path).unwrap();
    LoraLlama::load(&mut file, lora, 42, &Device::Cpu).unwrap()
}

/// Four random sequences of 24 tokens, every next token learned.
fn examples() -> Vec<Example> {
    let mut rng = StdRng::seed_from_u64(3);
    (0..4)
        .map(|i| {
            let ids: Vec<u32> = (0..24)
                .map(|_| rng.random_range(0..toy::vocab() as u32))
                .collect();
            let targets = Targets {
                positions: (0..23).collect(),
                tokens: ids[1..].to_vec(),
            };
            Example {
                test_idx: i,
                ids,
                targets,
            }
        })
        .collect()
}

fn settings(epochs: usize) -> TrainSettings {
    TrainSettings {
        learning_rate: 2e-2,
        epochs,
        batch_size: 2,
        ..TrainSettings::default()
    }
}

#[test]
fn the_loss_falls_as_the_adapters_learn() {
    let dir = tempfile::tempdir().unwrap();
    let model = toy_model(dir.path(), LoraSettings::default());
    let run = RunDir::open(&dir.path().join("run"), &serde_json::json!({"run": 1})).unwrap();
    let state = train(&model, &examples(), &settings(30), &run, &mut |_| {}).unwrap();
    let losses: Vec<f64> = state.steps.iter().map(|s| s.loss).collect();
    assert_eq!(losses.len(), 60, "2 steps per epoch");
    let first = (losses[0] + losses[1]) / 2.0;
    let last = losses[55..].iter().sum::<f64>() / 5.0;
    assert!(last < 0.65 * first, "loss {first} -> {last}: {losses:?}");
    for name in [
        "epoch=1_ckpt/adapter.gguf",
        "epoch=30_ckpt/adapter.gguf",
        "training_logs.json",
    ] {
        assert!(run.path().join(name).is_file(), "{name} missing");
    }
    let logs: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.path().join("training_logs.json")).unwrap())
            .unwrap();
    assert_eq!(logs["total_steps"], 60);
    assert_eq!(logs["losses"].as_array().unwrap().len(), 60);
}

#[test]
fn gradients_match_finite_differences() {
    let dir = tempfile::tempdir().unwrap();
    let lora = LoraSettings {
        dropout: 0.0,
        ..LoraSettings::default()
    };
    let model = toy_model(dir.path(), lora);
    let example = &examples()[0];
    let adapters = model.adapters();
    let (_, first) = &adapters[0];
    let (_, last) = &adapters[adapters.len() - 1];
    // B starts at zero, which zeroes A's gradient: give the B's values first.
    let mut rng = StdRng::seed_from_u64(5);
    for (_, lora) in &adapters {
        let values: Vec<f32> = (0..lora.b.elem_count())
            .map(|_| rng.random_range(-0.2..0.2))
            .collect();
        let b = candle_core::Tensor::from_vec(values, lora.b.shape(), &Device::Cpu).unwrap();
        lora.b.set(&b).unwrap();
    }
    let loss = |model: &LoraLlama| -> f64 {
        let sum = model.nll_sum(&example.ids, &example.targets, None).unwrap();
        f64::from(sum.to_scalar::<f32>().unwrap())
    };
    let grads = model
        .nll_sum(&example.ids, &example.targets, None)
        .unwrap()
        .backward()
        .unwrap();
    for var in [&first.a, &first.b, &last.a, &last.b] {
        let analytic: Vec<f32> = grads
            .get(var.as_tensor())
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1()
            .unwrap();
        let original: Vec<f32> = var.as_tensor().flatten_all().unwrap().to_vec1().unwrap();
        // The entry with the largest gradient, nudged both ways.
        let (at, expected) = analytic
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
            .unwrap();
        let h = 1e-2;
        let nudged = |delta: f32| {
            let mut values = original.clone();
            values[at] += delta;
            let t = candle_core::Tensor::from_vec(values, var.shape(), &Device::Cpu).unwrap();
            var.set(&t).unwrap();
            loss(&model)
        };
        let numeric = (nudged(h) - nudged(-h)) / (2.0 * f64::from(h));
        let restored = candle_core::Tensor::from_vec(original, var.shape(), &Device::Cpu).unwrap();
        var.set(&restored).unwrap();
        let expected = f64::from(*expected);
        assert!(
            (numeric - expected).abs() <= 0.03 * expected.abs().max(1e-2),
            "gradient {expected}, finite difference {numeric}"
        );
    }
}

#[test]
fn an_interrupted_run_resumes_as_if_it_had_not_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let config = serde_json::json!({"run": "resume"});
    let whole = RunDir::open(&dir.path().join("whole"), &config).unwrap();
    let model = toy_model(dir.path(), LoraSettings::default());
    train(&model, &examples(), &settings(4), &whole, &mut |_| {}).unwrap();

    let cut = RunDir::open(&dir.path().join("cut"), &config).unwrap();
    let model = toy_model(dir.path(), LoraSettings::default());
    train(&model, &examples(), &settings(4), &cut, &mut |_| {}).unwrap();
    // Stopped during epoch 3's checkpoint: its state was never written, epoch 4 never began.
    std::fs::remove_file(cut.checkpoint(3).join("state.json")).unwrap();
    std::fs::remove_dir_all(cut.checkpoint(4)).unwrap();
    let model = toy_model(dir.path(), LoraSettings::default());
    let mut steps_run = 0;
    let state = train(&model, &examples(), &settings(4), &cut, &mut |_| {
        steps_run += 1
    })
    .unwrap();
    assert_eq!(steps_run, 4, "epochs 3 and 4, two steps each");
    assert_eq!(state.steps.len(), 8);
    let adapter = |run: &RunDir| std::fs::read(run.checkpoint(4).join("adapter.gguf")).unwrap();
    assert!(
        adapter(&whole) == adapter(&cut),
        "the resumed adapter differs"
    );
}

#[test]
fn a_directory_of_another_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    RunDir::open(dir.path(), &serde_json::json!({"lr": 1e-4})).unwrap();
    let err = match RunDir::open(dir.path(), &serde_json::json!({"lr": 1e-3})) {
        Err(err) => err,
        Ok(_) => panic!("another configuration was accepted"),
    };
    assert!(
        matches!(
            err,
            SftError::Setting {
                field: "output",
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("another configuration"), "{err}");
}
