//! `examples/train_text.rs` on a small size: it reaches the accuracy it states on held-out
//! queries, and its loss per SGD step matches TensorFlow's for the same data and initial
//! parameters (`tests/train_text/tf_loss_curve.json`, written by `tools/train_text_tf.py`).

#[path = "../examples/train_text.rs"]
mod train_text;

use ragtime::Mode;
use train_text::{build, initial_parameters, synthetic, train, Config, STATED_ACCURACY};

#[test]
fn trains_to_the_stated_accuracy() {
    let config = Config { buckets: 1 << 14, dim: 16, lr: 8.0 };
    let model = build(&config, initial_parameters(&config).unwrap(), Mode::FastRun).unwrap();
    assert_eq!(
        model.train.describe_updates(),
        [
            "E <- embedding-bag (mean) scatter-subtract in place, ids in 2 parts, gradient a @ wᵀ per bag",
            "W <- replace",
            "b <- replace"
        ]
    );
    let (data, held_out) = (synthetic(2000, 1), synthetic(500, 2));
    let before = model.accuracy(&held_out).unwrap();
    let curve = train(&model, &data, 3, 100, |_| {}).unwrap();
    let after = model.accuracy(&held_out).unwrap();
    assert!(curve[2] < curve[0] / 2.0, "the loss per epoch did not fall: {curve:?}");
    assert!(after >= STATED_ACCURACY, "held-out accuracy {after} (was {before} before training), curve {curve:?}");
    assert_eq!(model.table.get().flat_values().shape(), [1 << 14, 16]);
    assert_eq!(model.weights.get().flat_values().shape(), [16, 4]);
    assert!(model.bias.get().to_vec::<f32>().unwrap().iter().any(|&b| b != 0.0), "the bias never moved");
}

/// The loss of each of TensorFlow's recorded steps, within 1e-4 relative, in the default mode
/// and on the reference interpreter.
#[test]
fn the_loss_curve_matches_tensorflow() {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/train_text/tf_loss_curve.json")).unwrap();
    let tf: serde_json::Value = serde_json::from_str(&text).unwrap();
    let n = |key: &str| tf[key].as_u64().unwrap() as usize;
    let c = &tf["config"];
    let config = Config {
        buckets: c["buckets"].as_u64().unwrap() as usize,
        dim: c["dim"].as_u64().unwrap() as usize,
        lr: c["lr"].as_f64().unwrap() as f32,
    };
    let data = synthetic(n("queries"), tf["seed"].as_u64().unwrap());
    // The script's port of the generator draws the same queries.
    let first: Vec<String> = serde_json::from_value(tf["first_query"].clone()).unwrap();
    assert_eq!(data.queries[0], first);
    let want: Vec<f64> = serde_json::from_value(tf["losses"].clone()).unwrap();
    let (batch, steps) = (n("batch"), n("steps"));
    let batches: Vec<_> = (0..data.labels.len())
        .step_by(batch)
        .map(|s| data.batch(s..(s + batch).min(data.labels.len())).unwrap())
        .collect();
    for mode in [Mode::FastRun, Mode::FastCompile] {
        let model = build(&config, initial_parameters(&config).unwrap(), mode).unwrap();
        for (step, &w) in want.iter().enumerate().take(steps) {
            let got = f64::from(model.step(&batches[step % batches.len()]).unwrap());
            assert!((got - w).abs() <= 1e-4 * w.abs(), "{mode:?} step {step}: ragtime {got}, TensorFlow {w}");
        }
    }
}
