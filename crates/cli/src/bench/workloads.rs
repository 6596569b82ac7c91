//! The workloads of `docs/benchmarks.md` (W1-W9; W7's other spellings are in `variants.rs`, W8's step in `w8.rs`; and the ragged rank 2 and inner-dimension forms of W3 and W4): their ids, and their graphs built with the public DSL
//! (`ragtime::prelude`), ready for `compile`. Shared by `ragtime bench` and the criterion benches.

use clap::ValueEnum;
use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{Result, TensorType as Ty};

use super::data::{BUCKETS, DIM, FEATURES, INNER};

/// A workload of `docs/benchmarks.md`, named by its JSON key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum WorkloadId {
    /// `tanh(x * 2 + 1) * z - x`.
    #[value(name = "W1_fused_elemwise")]
    FusedElemwise,
    /// `x * 2 + z`.
    #[value(name = "W2_axpy")]
    Axpy,
    /// `reduce_mean(x * 2 + z, axis=1)`.
    #[value(name = "W3_row_mean")]
    RowMean,
    /// Row softmax of `x`.
    #[value(name = "W4_row_softmax")]
    RowSoftmax,
    /// `compile()` of W4's graph.
    #[value(name = "W5_compile")]
    Compile,
    /// One call of W3's function on a 5-row input.
    #[value(name = "W6_small_call")]
    SmallCall,
    /// The bigram-embedding pipeline.
    #[value(name = "W7_bigram")]
    Bigram,
    /// W7 in other spellings (`variants.rs`): the slowest against the seed's spelling.
    #[value(name = "W7_bigram_variants")]
    BigramVariants,
    /// One SGD step of a fastText-style classifier on W7's queries (`w8.rs`).
    #[value(name = "W8_train_step")]
    TrainStep,
    /// Attention pooling over users -> sessions -> events with 8 features per event.
    #[value(name = "W9_nested_attention")]
    NestedAttention,
    /// W3 over the inner rows of a ragged rank 2 tensor: `reduce_mean(x * 2 + z, axis=2)`.
    #[value(name = "W3_row_mean_rank2")]
    RowMeanRank2,
    /// W4 over the inner rows of a ragged rank 2 tensor (softmax over axis 2).
    #[value(name = "W4_row_softmax_rank2")]
    RowSoftmaxRank2,
    /// W3 over the ragged axis of `[n, *, 8]` values: `reduce_mean(x * 2 + z, axis=1)`, `[n, 8]`.
    #[value(name = "W3_row_mean_inner8")]
    RowMeanInner8,
    /// W4 over the ragged axis of `[n, *, 8]` values, each feature column on its own.
    #[value(name = "W4_row_softmax_inner8")]
    RowSoftmaxInner8,
    /// W4's family on W4's data: `log_softmax(x)` over the ragged axis.
    #[value(name = "W4_row_log_softmax")]
    RowLogSoftmax,
    /// W4's family on W4's data: a layer norm over the ragged axis, `(x - mean) * rsqrt(var + 1e-5)`.
    #[value(name = "W4_row_layer_norm")]
    RowLayerNorm,
    /// A layer norm over the 8 features (the uniform last axis) of each item of `[n, *, 8]` values.
    #[value(name = "W4_feature_layer_norm")]
    FeatureLayerNorm,
}

impl WorkloadId {
    /// Every workload, in order.
    pub const ALL: [WorkloadId; 17] = [
        WorkloadId::FusedElemwise,
        WorkloadId::Axpy,
        WorkloadId::RowMean,
        WorkloadId::RowSoftmax,
        WorkloadId::Compile,
        WorkloadId::SmallCall,
        WorkloadId::Bigram,
        WorkloadId::BigramVariants,
        WorkloadId::TrainStep,
        WorkloadId::NestedAttention,
        WorkloadId::RowMeanRank2,
        WorkloadId::RowSoftmaxRank2,
        WorkloadId::RowMeanInner8,
        WorkloadId::RowSoftmaxInner8,
        WorkloadId::RowLogSoftmax,
        WorkloadId::RowLayerNorm,
        WorkloadId::FeatureLayerNorm,
    ];

    /// The JSON key, e.g. `W3_row_mean`.
    pub fn name(self) -> &'static str {
        match self {
            WorkloadId::FusedElemwise => "W1_fused_elemwise",
            WorkloadId::Axpy => "W2_axpy",
            WorkloadId::RowMean => "W3_row_mean",
            WorkloadId::RowSoftmax => "W4_row_softmax",
            WorkloadId::Compile => "W5_compile",
            WorkloadId::SmallCall => "W6_small_call",
            WorkloadId::Bigram => "W7_bigram",
            WorkloadId::BigramVariants => "W7_bigram_variants",
            WorkloadId::TrainStep => "W8_train_step",
            WorkloadId::NestedAttention => "W9_nested_attention",
            WorkloadId::RowMeanRank2 => "W3_row_mean_rank2",
            WorkloadId::RowSoftmaxRank2 => "W4_row_softmax_rank2",
            WorkloadId::RowMeanInner8 => "W3_row_mean_inner8",
            WorkloadId::RowSoftmaxInner8 => "W4_row_softmax_inner8",
            WorkloadId::RowLogSoftmax => "W4_row_log_softmax",
            WorkloadId::RowLayerNorm => "W4_row_layer_norm",
            WorkloadId::FeatureLayerNorm => "W4_feature_layer_norm",
        }
    }
}

/// A workload's graph, built with the DSL and not compiled yet.
#[derive(Debug)]
pub struct Built {
    /// The graph's inputs, in call order.
    pub inputs: Vec<Var>,
    /// The one output.
    pub output: Var,
}

impl Built {
    /// Compiles in the default mode (`FastRun`): what the benchmark times.
    pub fn compile(&self) -> Result<Function> {
        let inputs: Vec<&Var> = self.inputs.iter().collect();
        compile(&inputs, &[&self.output])
    }

    /// Compiles with `options` (mode, threads).
    pub fn compile_options(&self, options: CompileOptions) -> Result<Function> {
        let inputs: Vec<&Var> = self.inputs.iter().collect();
        self.output.graph().compile_with(&inputs, &[&self.output], options)
    }

    /// Compiles in `mode` (`Mode::FastCompile` for the reference interpreter).
    pub fn compile_with(&self, mode: Mode) -> Result<Function> {
        let inputs: Vec<&Var> = self.inputs.iter().collect();
        self.output.graph().compile_with(&inputs, &[&self.output], mode)
    }
}

fn ragged_f32(g: &Graph, name: &str) -> Var {
    g.input(name, Ty::ragged(DType::F32, 1))
}

/// W1: `tanh(x * 2 + 1) * z - x` over float32 `[?, *]` inputs `x`, `z`.
pub fn fused_elemwise() -> Built {
    let g = Graph::new();
    let (x, z) = (ragged_f32(&g, "x"), ragged_f32(&g, "z"));
    let output = (&x * 2.0 + 1.0).tanh() * &z - &x;
    Built { inputs: vec![x, z], output }
}

/// W2: `x * 2 + z`.
pub fn axpy() -> Built {
    let g = Graph::new();
    let (x, z) = (ragged_f32(&g, "x"), ragged_f32(&g, "z"));
    let output = &x * 2.0 + &z;
    Built { inputs: vec![x, z], output }
}

/// W3: `reduce_mean(x * 2 + z, axis=1)`; also W6's function.
pub fn row_mean() -> Built {
    let g = Graph::new();
    let (x, z) = (ragged_f32(&g, "x"), ragged_f32(&g, "z"));
    let output = (&x * 2.0 + &z).reduce_mean(1);
    Built { inputs: vec![x, z], output }
}

/// W4: `e = exp(x - reduce_max(x, 1, keepdims)); e / reduce_sum(e, 1, keepdims)`; also W5's graph.
pub fn row_softmax() -> Built {
    let g = Graph::new();
    let x = ragged_f32(&g, "x");
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let output = &e / e.reduce_sum(keepdims(1));
    Built { inputs: vec![x], output }
}

/// W4's family: `log_softmax(x)` over the ragged axis of W4's input (`tf.nn.log_softmax`:
/// `(x - max) - log(sum(exp(x - max)))` per row).
pub fn row_log_softmax() -> Built {
    let g = Graph::new();
    let x = ragged_f32(&g, "x");
    let output = ops::log_softmax(&x);
    Built { inputs: vec![x], output }
}

/// The variance's offset of [`row_layer_norm`].
pub const LAYER_NORM_EPSILON: f32 = 1e-5;

/// W4's family: a layer norm over the ragged axis of W4's input, `c = x - reduce_mean(x, 1,
/// keepdims)`, `c * rsqrt(reduce_mean(c * c, 1, keepdims) + 1e-5)`.
pub fn row_layer_norm() -> Built {
    let g = Graph::new();
    let x = ragged_f32(&g, "x");
    let centered = &x - x.reduce_mean(keepdims(1));
    let output = &centered * (centered.square().reduce_mean(keepdims(1)) + LAYER_NORM_EPSILON).rsqrt();
    Built { inputs: vec![x], output }
}

/// W7: the seed's bigram-embedding pipeline (conformance case `strings/seed_bigram_embedding`) with a
/// 1024 x 16 table: word buckets and bigram buckets (the query padded with `#` on both sides,
/// neighbours joined with `+`) looked up in the table, and the mean of all of a query's rows.
pub fn bigram() -> Built {
    let g = Graph::new();
    let queries = g.input("queries", Ty::ragged(DType::String, 1));
    let table = g.input("table", Ty::dense(DType::F32, &[Some(BUCKETS), Some(DIM)]));
    let buckets = BUCKETS as i64;
    let word_emb = ops::embedding_lookup(&table, &strings::to_hash_bucket_fast(&queries, buckets));
    let marker_shape = ops::stack(&[&queries.nrows(), &queries.nrows().scalar_like(1)], 0);
    let marker = ops::fill(&marker_shape, &queries.scalar_like("#"));
    let padded = ops::concat(&[&marker, &queries, &marker], 1);
    let bigrams = strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+");
    let bigram_emb = ops::embedding_lookup(&table, &strings::to_hash_bucket_fast(&bigrams, buckets));
    let output = ops::concat(&[&word_emb, &bigram_emb], 1).reduce_mean(1);
    Built { inputs: vec![queries, table], output }
}

fn ragged2_f32(g: &Graph, name: &str) -> Var {
    g.input(name, Ty::ragged(DType::F32, 2))
}

/// W9: `a = softmax(d * 2)` over each session's events; `p = reduce_sum(a[..., None] * f, axis=2)`,
/// a weighted sum of each session's feature vectors; `reduce_max(p, axis=1)` over each user's sessions.
/// `d` is float32 `[users, *, *]`, `f` float32 `[users, *, *, 8]`.
pub fn nested_attention() -> Built {
    let g = Graph::new();
    let d = ragged2_f32(&g, "d");
    let f = g.input("f", Ty::ragged(DType::F32, 2).with_inner(&[Some(FEATURES)]));
    let a = ops::softmax(&(&d * 2.0));
    let p = (a.expand_dims(-1) * &f).reduce_sum(2);
    let output = p.reduce_max(1);
    Built { inputs: vec![d, f], output }
}

/// W3 over axis 2 of float32 `[?, *, *]` inputs: `reduce_mean(x * 2 + z, axis=2)`.
pub fn row_mean_rank2() -> Built {
    let g = Graph::new();
    let (x, z) = (ragged2_f32(&g, "x"), ragged2_f32(&g, "z"));
    let output = (&x * 2.0 + &z).reduce_mean(2);
    Built { inputs: vec![x, z], output }
}

/// W4 over axis 2: `e = exp(x - reduce_max(x, 2, keepdims)); e / reduce_sum(e, 2, keepdims)`.
pub fn row_softmax_rank2() -> Built {
    let g = Graph::new();
    let x = ragged2_f32(&g, "x");
    let e = (&x - x.reduce_max(keepdims(2))).exp();
    let output = &e / e.reduce_sum(keepdims(2));
    Built { inputs: vec![x], output }
}

fn inner8_f32(g: &Graph, name: &str) -> Var {
    g.input(name, Ty::ragged(DType::F32, 1).with_inner(&[Some(INNER)]))
}

/// W3 over the ragged axis of float32 `[?, *, 8]` inputs: `reduce_mean(x * 2 + z, axis=1)`, `[?, 8]`.
pub fn row_mean_inner8() -> Built {
    let g = Graph::new();
    let (x, z) = (inner8_f32(&g, "x"), inner8_f32(&g, "z"));
    let output = (&x * 2.0 + &z).reduce_mean(1);
    Built { inputs: vec![x, z], output }
}

/// W4 over the ragged axis of float32 `[?, *, 8]` input: `e = exp(x - reduce_max(x, 1, keepdims));
/// e / reduce_sum(e, 1, keepdims)`, a softmax per row and feature column.
pub fn row_softmax_inner8() -> Built {
    let g = Graph::new();
    let x = inner8_f32(&g, "x");
    let e = (&x - x.reduce_max(keepdims(1))).exp();
    let output = &e / e.reduce_sum(keepdims(1));
    Built { inputs: vec![x], output }
}

/// A layer norm over the last axis (the 8 features) of float32 `[?, *, 8]` input, as transformers
/// normalize each token: `c = x - reduce_mean(x, -1, keepdims)`, `c * rsqrt(reduce_mean(c * c, -1,
/// keepdims) + 1e-5)`.
pub fn feature_layer_norm() -> Built {
    let g = Graph::new();
    let x = inner8_f32(&g, "x");
    let centered = &x - x.reduce_mean(keepdims(-1));
    let output = &centered * (centered.square().reduce_mean(keepdims(-1)) + LAYER_NORM_EPSILON).rsqrt();
    Built { inputs: vec![x], output }
}

/// The graph a workload compiles: W5 compiles W4's graph, W6 calls W3's function.
pub fn build(id: WorkloadId) -> Built {
    match id {
        WorkloadId::FusedElemwise => fused_elemwise(),
        WorkloadId::Axpy => axpy(),
        WorkloadId::RowMean | WorkloadId::SmallCall => row_mean(),
        WorkloadId::RowSoftmax | WorkloadId::Compile => row_softmax(),
        WorkloadId::Bigram | WorkloadId::BigramVariants => bigram(),
        WorkloadId::TrainStep => super::w8::built(),
        WorkloadId::NestedAttention => nested_attention(),
        WorkloadId::RowMeanRank2 => row_mean_rank2(),
        WorkloadId::RowSoftmaxRank2 => row_softmax_rank2(),
        WorkloadId::RowMeanInner8 => row_mean_inner8(),
        WorkloadId::RowSoftmaxInner8 => row_softmax_inner8(),
        WorkloadId::RowLogSoftmax => row_log_softmax(),
        WorkloadId::RowLayerNorm => row_layer_norm(),
        WorkloadId::FeatureLayerNorm => feature_layer_norm(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::data::{small_input, Queries};

    #[test]
    fn names_round_trip_through_clap() {
        for id in WorkloadId::ALL {
            assert_eq!(WorkloadId::from_str(id.name(), false), Ok(id));
        }
    }

    #[test]
    fn every_graph_compiles_in_every_mode() {
        for id in WorkloadId::ALL {
            let built = build(id);
            built.compile().unwrap();
            built.compile_with(Mode::FastCompile).unwrap();
        }
    }

    #[test]
    fn w3_on_the_small_input() {
        let f = row_mean().compile().unwrap();
        let v = small_input().unwrap();
        let out = f.call(&[v.clone(), v]).unwrap();
        assert_eq!(out[0].to_string(), "<Tensor float32 shape=[5] [6.75, NaN, 16.0, 18.0, NaN]>");
    }

    #[test]
    fn w7_reproduces_the_conformance_case() {
        // The case's table row r is [4r .. 4r+3] / 1000, so its answer is avg[q][j] = (4 m_q + j) / 1000
        // with m_q the mean bucket of query q. With a 1024 x 16 table whose entry k is k / 1000, the same
        // buckets give (16 m_q + j) / 1000: same hashing, padding, joining and averaging.
        let f = bigram().compile().unwrap();
        let queries =
            ragged![["Who", "is", "Dan", "Smith"], ["Pause"], ["Will", "it", "rain", "later", "today"]].unwrap();
        let table: Vec<f32> = (0..BUCKETS * DIM).map(|k| k as f32 / 1000.0).collect();
        let table = ragtime::DenseTensor::from_vec(vec![BUCKETS, DIM], table).unwrap().into();
        let out = f.call(&[queries, table]).unwrap();
        let got = out[0].flat_slice::<f32>().unwrap();
        // The case: row q of avg = (4 * m_q + j) / 1000 with m_q the mean bucket; here (16 * m_q + j) / 1000.
        let case = [1.638222336769104f64, 1.7973333597183228, 2.4985456466674805];
        for (q, &c) in case.iter().enumerate() {
            let mean_bucket = c * 1000.0 / 4.0;
            for j in 0..DIM {
                let want = (16.0 * mean_bucket + j as f64) / 1000.0;
                let g = got[q * DIM + j] as f64;
                assert!((g - want).abs() <= 1e-5 * want.abs(), "query {q} column {j}: {g} vs {want}");
            }
        }
        // And on generated queries, ragtime's output has one row of DIM values per query.
        let data = Queries::new(20).unwrap();
        let out = f.call(&[data.queries.clone(), data.table.clone()]).unwrap();
        assert_eq!(out[0].flat_values().shape(), &[20, DIM]);
    }
}
