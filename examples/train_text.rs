//! A fastText-style text classifier trained with ragtime: ragged batches of queries (strings) ->
//! hashed words and bigrams -> the mean of their embedding rows -> a linear layer -> softmax
//! cross-entropy, with SGD applied through updates of the model's states (the embedding table is
//! updated in place, only in the rows the batch touched).
//!
//! The task is synthetic but learnable: each query mixes common words with at least one keyword
//! of its class. Run with `cargo run --release --example train_text`; it trains for a few epochs
//! (the loss per epoch under a progress bar) and states its accuracy on held-out queries, which it
//! checks (at least 95%). `tests/train_text.rs` runs the same code on a small size, and compares the
//! loss of the first steps with TensorFlow's for the same data and initial weights
//! (`tools/train_text_tf.py` -> `tests/train_text/tf_loss_curve.json`).

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::Result;

/// The classes of the synthetic task.
pub const CLASSES: usize = 4;
/// The accuracy on held-out queries `main` states and checks.
pub const STATED_ACCURACY: f64 = 0.95;

/// The model's sizes and learning rate.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// Hash buckets: the embedding table's rows.
    pub buckets: usize,
    /// The embedding width.
    pub dim: usize,
    /// The SGD learning rate.
    pub lr: f32,
}

/// SplitMix64 (Steele, Lea and Flood): the data's deterministic random stream.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream of `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Queries and their classes.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    /// Each query's words.
    pub queries: Vec<Vec<String>>,
    /// Each query's class, in `0..CLASSES`.
    pub labels: Vec<i64>,
}

/// `count` queries of 3 to 10 words: each word is a keyword of the query's class (`k{class}_{j}`,
/// 40 per class) with probability 3/10, else a common word (`w{j}`, 2,000 of them), and at least
/// one word is a keyword. The same stream as `tools/train_text_tf.py`'s.
pub fn synthetic(count: usize, seed: u64) -> Dataset {
    let mut rng = SplitMix64::new(seed);
    let mut queries = Vec::with_capacity(count);
    let mut labels = Vec::with_capacity(count);
    for _ in 0..count {
        let class = rng.below(CLASSES);
        let len = 3 + rng.below(8);
        let forced = rng.below(len);
        let words = (0..len)
            .map(|i| match i == forced || rng.below(10) < 3 {
                true => format!("k{class}_{}", rng.below(40)),
                false => format!("w{}", rng.below(2000)),
            })
            .collect();
        queries.push(words);
        labels.push(class as i64);
    }
    Dataset { queries, labels }
}

impl Dataset {
    /// The queries `range` as a ragged string tensor and their labels as int64 `[n]`.
    pub fn batch(&self, range: std::ops::Range<usize>) -> Result<(RaggedTensor, RaggedTensor)> {
        let queries: Vec<Vec<&str>> =
            self.queries[range.clone()].iter().map(|q| q.iter().map(String::as_str).collect()).collect();
        let labels = DenseTensor::from_vec(vec![range.len()], self.labels[range].to_vec())?;
        Ok((RaggedTensor::try_from(queries)?, labels.into()))
    }
}

/// The initial parameters: table entry `k` (row-major) `(((k * 53) % 1000) / 1000 - 0.5) / 10`,
/// weight `k` `((k * 29) % 100) / 100 - 0.5` (`[dim, CLASSES]`), bias zeros (W8's formulas).
pub fn initial_parameters(config: &Config) -> Result<[RaggedTensor; 3]> {
    let table = (0..config.buckets * config.dim).map(|k| (((k * 53) % 1000) as f64 / 1000.0 - 0.5) as f32 / 10.0);
    let weights = (0..config.dim * CLASSES).map(|k| (((k * 29) % 100) as f64 / 100.0 - 0.5) as f32);
    Ok([
        DenseTensor::from_vec(vec![config.buckets, config.dim], table.collect())?.into(),
        DenseTensor::from_vec(vec![config.dim, CLASSES], weights.collect())?.into(),
        DenseTensor::from_vec(vec![CLASSES], vec![0f32; CLASSES])?.into(),
    ])
}

/// The trained parameters and the two compiled functions sharing them.
#[derive(Debug)]
pub struct Model {
    /// The embedding table, `[buckets, dim]`.
    pub table: State,
    /// The linear layer's weights, `[dim, CLASSES]`.
    pub weights: State,
    /// The linear layer's bias, `[CLASSES]`.
    pub bias: State,
    /// `(queries, labels) -> loss`, then one SGD step on the three states.
    pub train: Function,
    /// `queries -> predicted class` (int64 `[n]`), reading the same states.
    pub predict: Function,
}

/// The features of each query: its words' and its bigrams' hash buckets (the query padded with
/// `#` on both sides, neighbours joined with `+`), int64 `[n, (features)]`.
pub fn features(queries: &Var, buckets: usize) -> Var {
    let buckets = buckets as i64;
    let words = strings::to_hash_bucket_fast(queries, buckets);
    let marker_shape = ops::stack(&[&queries.nrows(), &queries.nrows().scalar_like(1)], 0);
    let marker = ops::fill(&marker_shape, &queries.scalar_like("#"));
    let padded = ops::concat(&[&marker, queries, &marker], 1);
    let bigrams = strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+");
    ops::concat(&[&words, &strings::to_hash_bucket_fast(&bigrams, buckets)], 1)
}

/// Builds and compiles the classifier from `parameters` (table, weights, bias).
pub fn build(config: &Config, parameters: [RaggedTensor; 3], mode: Mode) -> Result<Model> {
    let [table, weights, bias] = parameters;
    let (table, weights, bias) = (State::new("E", table)?, State::new("W", weights)?, State::new("b", bias)?);
    let g = Graph::new();
    let queries = g.input("queries", TensorType::ragged(DType::String, 1));
    let labels = g.input("labels", TensorType::dense(DType::I64, &[None]));
    let (e, w, b) = (g.state(&table), g.state(&weights), g.state(&bias));
    let hidden = ops::embedding_lookup(&e, &features(&queries, config.buckets)).reduce_mean(1);
    let logits = &hidden.matmul(&w) + &b;
    let picked = (&ops::one_hot(&labels, CLASSES) * &logits).reduce_sum(1);
    let loss = (&logits.reduce_logsumexp(1) - &picked).reduce_mean(None).named("loss");
    let grads = ragtime::grad(&loss, &[&e, &w, &b])?;
    let step = |v: &Var, d: &Var| v - &(d * config.lr);
    let updates = [(&table, &step(&e, &grads[0])), (&weights, &step(&w, &grads[1])), (&bias, &step(&b, &grads[2]))];
    let train = g.compile_with_updates(&[&queries, &labels], &[&loss], &updates, mode)?;
    let predict = g.compile_with(&[&queries], &[&ops::argmax_with(&logits, 1, DType::I64)], mode)?;
    Ok(Model { table, weights, bias, train, predict })
}

impl Model {
    /// One SGD step on `batch`; returns the batch's loss before the step.
    pub fn step(&self, batch: &(RaggedTensor, RaggedTensor)) -> Result<f32> {
        let out = self.train.call(&[batch.0.clone(), batch.1.clone()])?;
        Ok(out[0].to_vec::<f32>()?[0])
    }

    /// The share of `data`'s queries whose class is predicted right.
    pub fn accuracy(&self, data: &Dataset) -> Result<f64> {
        let (queries, _) = data.batch(0..data.labels.len())?;
        let predicted = self.predict.call(&[queries])?[0].to_vec::<i64>()?;
        let right = predicted.iter().zip(&data.labels).filter(|(p, l)| p == l).count();
        Ok(right as f64 / data.labels.len().max(1) as f64)
    }
}

/// Trains `model` for `epochs` passes over `data` in batches of `batch_size`; `on_step` sees
/// each step's loss. Returns the mean loss of each epoch.
pub fn train(
    model: &Model,
    data: &Dataset,
    epochs: usize,
    batch_size: usize,
    mut on_step: impl FnMut(f32),
) -> Result<Vec<f64>> {
    let n = data.labels.len();
    let batches: Vec<_> =
        (0..n).step_by(batch_size.max(1)).map(|s| data.batch(s..(s + batch_size).min(n))).collect::<Result<_>>()?;
    let mut curve = Vec::with_capacity(epochs);
    for _ in 0..epochs {
        let mut total = 0.0;
        for batch in &batches {
            let loss = model.step(batch)?;
            on_step(loss);
            total += f64::from(loss);
        }
        curve.push(total / batches.len().max(1) as f64);
    }
    Ok(curve)
}

#[allow(dead_code)] // `tests/train_text.rs` includes this file for the functions above.
fn main() -> Result<()> {
    let config = Config { buckets: 1 << 18, dim: 32, lr: 8.0 };
    let (epochs, batch_size) = (4, 100);
    let (train_set, held_out) = (synthetic(20_000, 1), synthetic(2_000, 2));
    let model = build(&config, initial_parameters(&config)?, Mode::FastRun)?;
    println!("{}", model.train.describe_updates().join("\n"));
    let steps = train_set.labels.len().div_ceil(batch_size);
    for epoch in 0..epochs {
        let bar = indicatif::ProgressBar::new(steps as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template("epoch {prefix} [{bar:30}] {pos}/{len} loss {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_prefix(format!("{}", epoch + 1));
        let curve = train(&model, &train_set, 1, batch_size, |loss| {
            bar.set_message(format!("{loss:.4}"));
            bar.inc(1);
        })?;
        bar.finish_and_clear();
        println!("epoch {}: mean loss {:.4}", epoch + 1, curve[0]);
    }
    let accuracy = model.accuracy(&held_out)?;
    println!("held-out accuracy: {:.1}% (stated: at least {:.0}%)", accuracy * 100.0, STATED_ACCURACY * 100.0);
    if accuracy < STATED_ACCURACY {
        return Err(ragtime::Error::graph(format!("accuracy {accuracy:.3} is below the stated {STATED_ACCURACY}")));
    }
    Ok(())
}
