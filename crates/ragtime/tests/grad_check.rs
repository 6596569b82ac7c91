//! Numerical gradient checks (Theano's `verify_grad`): for random ragged inputs (ragged ranks 1
//! to 3, with and without a uniform inner dim, empty rows where the op allows them), the
//! symbolic gradient of `sum(y * p)`, `p` a random projection of `y`'s structure, must match
//! central differences in float64, element by element, and keep its input's partitions. Every
//! differentiable op family is covered in the forms it accepts: unary and binary elementwise ops
//! with each broadcast kind, every reduction on every axis with and without `keepdims`, the row
//! ops, the data-movement ops, `matmul` and the segment reductions, each also compiled in `FastRun`
//! and `Debug` and compared with `FastCompile`. Also: gradients computed in
//! `FastRun` (optimized, JIT) agree with `FastCompile` on random graphs.

use proptest::prelude::*;
use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Axes, Reduce, ReduceKind, Statistic, StatisticKind};

/// A small deterministic generator (splitmix64) for values, from proptest's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi)`.
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Where an input's values are drawn from (away from each op's kinks and poles).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Domain {
    /// `±[0.3, 1.5]`.
    Signed,
    /// `[0.3, 2]`.
    Positive,
    /// `±[0.1, 0.8]`.
    Unit,
    /// `[1.2, 3]`.
    AboveOne,
}

impl Domain {
    fn draw(self, rng: &mut Rng) -> f64 {
        match self {
            Domain::Signed => {
                let v = rng.uniform(0.3, 1.5);
                if rng.next().is_multiple_of(2) {
                    v
                } else {
                    -v
                }
            }
            Domain::Positive => rng.uniform(0.3, 2.0),
            Domain::Unit => {
                let v = rng.uniform(0.1, 0.8);
                if rng.next().is_multiple_of(2) {
                    v
                } else {
                    -v
                }
            }
            Domain::AboveOne => rng.uniform(1.2, 3.0),
        }
    }
}

/// The shape of a random ragged input: ragged rank, outer rows, inner dim, shortest row.
#[derive(Debug, Clone, Copy)]
struct Shape {
    ragged_rank: usize,
    nrows: usize,
    inner: Option<usize>,
    min_len: usize,
}

/// A float64 ragged tensor of `shape` (row lengths `min_len..=min_len + 3` at every level).
fn ragged(rng: &mut Rng, shape: Shape, domain: Domain) -> RaggedTensor {
    let mut splits = Vec::new();
    let mut rows = shape.nrows;
    for _ in 0..shape.ragged_rank {
        let mut s = vec![0i64];
        for _ in 0..rows {
            let len = shape.min_len + rng.below(4);
            s.push(s.last().unwrap() + len as i64);
        }
        rows = *s.last().unwrap() as usize;
        splits.push(s);
    }
    let width = shape.inner.unwrap_or(1);
    let values: Vec<f64> = (0..rows * width).map(|_| domain.draw(rng)).collect();
    let mut flat_shape = vec![rows];
    flat_shape.extend(shape.inner);
    let flat = DenseTensor::from_vec(flat_shape, values).unwrap();
    RaggedTensor::from_nested_row_splits(flat, &splits).unwrap()
}

/// `like` with new random values (same partitions, same flat shape).
fn refill(rng: &mut Rng, like: &RaggedTensor, domain: Domain) -> RaggedTensor {
    let flat = like.flat_values();
    let values: Vec<f64> = (0..flat.len()).map(|_| domain.draw(rng)).collect();
    like.with_flat_values(DenseTensor::from_vec(flat.shape().to_vec(), values).unwrap()).unwrap()
}

fn dense(shape: Vec<usize>, values: Vec<f64>) -> RaggedTensor {
    RaggedTensor::dense(DenseTensor::from_vec(shape, values).unwrap())
}

/// One input of a checked graph: its value, and whether its gradient is checked.
struct Input {
    value: RaggedTensor,
    wrt: bool,
}

fn wrt(value: RaggedTensor) -> Input {
    Input { value, wrt: true }
}

fn fixed(value: RaggedTensor) -> Input {
    Input { value, wrt: false }
}

fn flat_f64(t: &RaggedTensor) -> Vec<f64> {
    t.flat_values().cast(DType::F64).unwrap().as_slice::<f64>().unwrap().to_vec()
}

/// Builds `y = build(inputs)`, then `cost = sum(y * p)` and its gradient with respect to the
/// `wrt` inputs, and compares the gradient with central differences of the cost.
fn verify_grad(rng: &mut Rng, what: &str, inputs: Vec<Input>, build: impl Fn(&[Var]) -> Var) -> Result<(), String> {
    let g = Graph::new();
    let vars: Vec<Var> =
        inputs.iter().enumerate().map(|(i, inp)| g.input(&format!("in{i}"), TensorType::of(&inp.value))).collect();
    let y = build(&vars);
    let refs: Vec<&Var> = vars.iter().collect();
    let values: Vec<RaggedTensor> = inputs.iter().map(|i| i.value.clone()).collect();
    let forward = g.compile_with(&refs, &[&y], Mode::FastCompile).map_err(|e| format!("{what}: forward: {e}"))?;
    let y_value = forward.call(&values).map_err(|e| format!("{what}: forward call: {e}"))?.remove(0);
    let p = g.constant(refill(rng, &y_value.cast(DType::F64).unwrap(), Domain::Signed));
    let cost = (&y * &p).reduce_sum(None);
    let wrt_vars: Vec<&Var> = vars.iter().zip(&inputs).filter(|(_, i)| i.wrt).map(|(v, _)| v).collect();
    let grads = ragtime::grad(&cost, &wrt_vars).map_err(|e| format!("{what}: grad: {e}"))?;
    let mut outputs = vec![&cost];
    outputs.extend(grads.iter());
    let f = g.compile_with(&refs, &outputs, Mode::FastCompile).map_err(|e| format!("{what}: compile: {e}"))?;
    let out = f.call(&values).map_err(|e| format!("{what}: call: {e}"))?;
    // The optimized, JIT-compiled gradient and the debug mode's agree with the interpreter's.
    for mode in [Mode::FastRun, Mode::Debug] {
        let fast = g.compile_with(&refs, &outputs, mode).map_err(|e| format!("{what}: compile {mode:?}: {e}"))?;
        let got = fast.call(&values).map_err(|e| format!("{what}: call {mode:?}: {e}"))?;
        for (k, (a, b)) in out.iter().zip(&got).enumerate() {
            compare(a, b).map_err(|why| format!("{what}: output {k} in {mode:?}: {why}\n{}", fast.debugprint()))?;
        }
    }
    let cost_at = |values: &[RaggedTensor]| -> Result<f64, String> {
        let out = f.call(values).map_err(|e| format!("{what}: call: {e}"))?;
        Ok(flat_f64(&out[0])[0])
    };
    let eps = 1e-6;
    let mut k = 0;
    for (i, input) in inputs.iter().enumerate() {
        if !input.wrt {
            continue;
        }
        k += 1;
        let grad = &out[k];
        if grad.partitions().len() != input.value.partitions().len()
            || grad.partitions().iter().zip(input.value.partitions()).any(|(a, b)| a.row_splits() != b.row_splits())
            || grad.flat_values().shape() != input.value.flat_values().shape()
        {
            return Err(format!(
                "{what}: the gradient of input {i} has another structure: {grad:?} for {:?}",
                input.value
            ));
        }
        let analytic = flat_f64(grad);
        let base = flat_f64(&input.value);
        for j in 0..base.len() {
            let at = |delta: f64| {
                let mut v = base.clone();
                v[j] += delta;
                let mut vals = values.clone();
                vals[i] = input
                    .value
                    .with_flat_values(DenseTensor::from_vec(input.value.flat_values().shape().to_vec(), v).unwrap())
                    .unwrap();
                cost_at(&vals)
            };
            let numeric = (at(eps)? - at(-eps)?) / (2.0 * eps);
            let a = analytic[j];
            if (a - numeric).abs() > 1e-5 + 1e-4 * numeric.abs() {
                return Err(format!(
                    "{what}: d cost / d input {i} element {j}: symbolic {a}, central difference {numeric}\n  inputs {:?}\n  y {y_value:?}",
                    values
                ));
            }
        }
    }
    Ok(())
}

/// A one-input form of an op.
type Unary = fn(&Var) -> Var;
/// A two-input form of an op.
type Binary = fn(&Var, &Var) -> Var;
/// A form of an op over the checked inputs.
type Build = Box<dyn Fn(&[Var]) -> Var>;

fn elemwise(op: ScalarOp, inputs: &[&Var]) -> Var {
    let g = inputs[0].graph().clone();
    g.apply(Elemwise::new(op), inputs).remove(0)
}

const UNARY: [(ScalarOp, Domain); 30] = [
    (ScalarOp::Negative, Domain::Signed),
    (ScalarOp::Abs, Domain::Signed),
    (ScalarOp::Square, Domain::Signed),
    (ScalarOp::Sqrt, Domain::Positive),
    (ScalarOp::Rsqrt, Domain::Positive),
    (ScalarOp::Exp, Domain::Signed),
    (ScalarOp::Expm1, Domain::Signed),
    (ScalarOp::Log, Domain::Positive),
    (ScalarOp::Log1p, Domain::Positive),
    (ScalarOp::Sin, Domain::Signed),
    (ScalarOp::Cos, Domain::Signed),
    (ScalarOp::Tan, Domain::Unit),
    (ScalarOp::Tanh, Domain::Signed),
    (ScalarOp::Sigmoid, Domain::Signed),
    (ScalarOp::Softplus, Domain::Signed),
    (ScalarOp::LogSigmoid, Domain::Signed),
    (ScalarOp::Softsign, Domain::Signed),
    (ScalarOp::Reciprocal, Domain::Signed),
    (ScalarOp::Erf, Domain::Signed),
    (ScalarOp::Erfc, Domain::Signed),
    (ScalarOp::Sinh, Domain::Signed),
    (ScalarOp::Cosh, Domain::Signed),
    (ScalarOp::Asin, Domain::Unit),
    (ScalarOp::Acos, Domain::Unit),
    (ScalarOp::Atan, Domain::Signed),
    (ScalarOp::Atanh, Domain::Unit),
    (ScalarOp::Asinh, Domain::Signed),
    (ScalarOp::Acosh, Domain::AboveOne),
    (ScalarOp::Floor, Domain::Signed),
    (ScalarOp::Sign, Domain::Signed),
];

/// (op, domain of the first operand, domain of the second).
const BINARY: [(ScalarOp, Domain, Domain); 12] = [
    (ScalarOp::Add, Domain::Signed, Domain::Signed),
    (ScalarOp::Subtract, Domain::Signed, Domain::Signed),
    (ScalarOp::Multiply, Domain::Signed, Domain::Signed),
    (ScalarOp::Divide, Domain::Signed, Domain::Signed),
    (ScalarOp::Maximum, Domain::Signed, Domain::Signed),
    (ScalarOp::Minimum, Domain::Signed, Domain::Signed),
    (ScalarOp::Pow, Domain::Positive, Domain::Signed),
    (ScalarOp::SquaredDifference, Domain::Signed, Domain::Signed),
    (ScalarOp::Atan2, Domain::Signed, Domain::Signed),
    (ScalarOp::Xdivy, Domain::Signed, Domain::Signed),
    (ScalarOp::Xlogy, Domain::Signed, Domain::Positive),
    (ScalarOp::DivideNoNan, Domain::Signed, Domain::Signed),
];

/// The second operand of a binary op, by broadcast kind: the same structure, a scalar, a dense
/// `[nrows, 1, ...]` column, or a per-feature vector over the inner dim.
fn operand(rng: &mut Rng, x: &RaggedTensor, kind: usize, inner: Option<usize>, domain: Domain) -> RaggedTensor {
    match (kind % 4, inner) {
        (0, _) => refill(rng, x, domain),
        (1, _) => dense(vec![], vec![domain.draw(rng)]),
        (3, Some(k)) => dense(vec![k], (0..k).map(|_| domain.draw(rng)).collect()),
        _ => {
            let mut shape = vec![x.nrows()];
            shape.extend(std::iter::repeat_n(1, x.rank() - 1));
            dense(shape, (0..x.nrows()).map(|_| domain.draw(rng)).collect())
        }
    }
}

fn shape_strategy() -> impl Strategy<Value = (usize, usize, Option<usize>, u64)> {
    (1usize..=3, 1usize..=3, prop::option::of(1usize..=2), any::<u64>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn unary_elementwise_gradients_match_central_differences((rr, n, inner, seed) in shape_strategy()) {
        let mut rng = Rng(seed);
        for (op, domain) in UNARY {
            let x = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner, min_len: 0 }, domain);
            let r = verify_grad(&mut rng, &format!("{op:?}"), vec![wrt(x)], |v| elemwise(op, &[&v[0]]));
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    #[test]
    fn binary_elementwise_gradients_match_for_every_broadcast_kind(
        (rr, n, inner, seed) in shape_strategy(),
        kind in 0usize..4,
        swap in any::<bool>(),
    ) {
        let mut rng = Rng(seed);
        for (op, da, db) in BINARY {
            let x = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner, min_len: 0 }, da);
            let z = operand(&mut rng, &x, kind, inner, db);
            // Both orders where the domains allow: the broadcast operand first or second.
            let (a, b) = if swap && da == db { (z, x) } else { (x, z) };
            let r = verify_grad(&mut rng, &format!("{op:?} kind {kind}"), vec![wrt(a), wrt(b)], |v| {
                elemwise(op, &[&v[0], &v[1]])
            });
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    #[test]
    fn where_sends_the_gradient_to_the_branch_taken((rr, n, inner, seed) in shape_strategy()) {
        let mut rng = Rng(seed);
        let x = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner, min_len: 0 }, Domain::Signed);
        let z = refill(&mut rng, &x, Domain::Signed);
        let c = refill(&mut rng, &x, Domain::Signed);
        let r = verify_grad(&mut rng, "where", vec![fixed(c), wrt(x), wrt(z)], |v| {
            let zero = v[0].scalar_like(0.0);
            let cond = elemwise(ScalarOp::Greater, &[&v[0], &zero]);
            elemwise(ScalarOp::Where, &[&cond, &v[1], &v[2]])
        });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }

    #[test]
    fn reductions_on_every_axis_match_central_differences(
        (rr, n, inner, seed) in shape_strategy(),
        keepdims in any::<bool>(),
    ) {
        let mut rng = Rng(seed);
        // Non-empty rows: an empty group's mean / variance / log-sum-exp is not finite.
        let x = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner, min_len: 1 }, Domain::Signed);
        let rank = x.rank() as i64;
        let axes: Vec<Axes> = std::iter::once(Axes::All).chain((0..rank).map(Axes::from)).collect();
        for axis in axes {
            for kind in [ReduceKind::Sum, ReduceKind::Mean, ReduceKind::Max, ReduceKind::Min, ReduceKind::Prod] {
                let op = Reduce::with_axes(kind, axis.clone(), keepdims);
                let r = verify_grad(&mut rng, &format!("{op:?}"), vec![wrt(x.clone())], |v| v[0].apply1(op.clone(), &[]));
                prop_assert!(r.is_ok(), "{}", r.unwrap_err());
            }
            for kind in [StatisticKind::Variance, StatisticKind::LogSumExp, StatisticKind::EuclideanNorm] {
                let op = Statistic::new(kind, axis.clone(), keepdims);
                let r = verify_grad(&mut rng, &format!("{op:?}"), vec![wrt(x.clone())], |v| v[0].apply1(op.clone(), &[]));
                prop_assert!(r.is_ok(), "{}", r.unwrap_err());
            }
        }
        // `std` is not differentiable where a group has one element (std 0): rows of at
        // least two values, reduced along the innermost ragged axis or entirely.
        let x2 = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner: None, min_len: 2 }, Domain::Signed);
        for axis in [Axes::All, Axes::from(rr as i64)] {
            let op = Statistic::new(StatisticKind::Std, axis, keepdims);
            let r = verify_grad(&mut rng, &format!("{op:?}"), vec![wrt(x2.clone())], |v| v[0].apply1(op.clone(), &[]));
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    #[test]
    fn row_ops_match_central_differences((rr, n, inner, seed) in shape_strategy()) {
        let mut rng = Rng(seed);
        let x = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner, min_len: 0 }, Domain::Signed);
        let checks: [(&str, Unary); 5] = [
            ("softmax", |x| x.softmax()),
            ("log_softmax", |x| x.log_softmax()),
            ("cumsum", |x| x.cumsum(-1)),
            ("cumprod", |x| x.cumprod(-1)),
            ("cumsum exclusive reverse", |x| {
                ragtime::ops::cumsum_with(x, -1, ragtime::ops::Cumulate { exclusive: true, reverse: true })
            }),
        ];
        for (what, f) in checks {
            let r = verify_grad(&mut rng, what, vec![wrt(x.clone())], |v| f(&v[0]));
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    #[test]
    fn data_movement_gradients_match_central_differences((rr, n, inner, seed) in shape_strategy()) {
        let mut rng = Rng(seed);
        let shape = Shape { ragged_rank: rr, nrows: n, inner, min_len: 0 };
        let x = ragged(&mut rng, shape, Domain::Signed);
        let z = ragged(&mut rng, shape, Domain::Signed);
        let mask = refill(&mut rng, &x, Domain::Signed);
        let rank = x.rank();
        let mut multiples = vec![2];
        multiples.extend(std::iter::repeat_n(1, rank - 2));
        multiples.push(2);
        let checks: Vec<(&str, Build)> = vec![
            ("getitem :, 1:", Box::new(|v| v[0].getitem(":, 1:"))),
            ("getitem ::2", Box::new(|v| v[0].getitem("::2"))),
            ("getitem :, ::-1", Box::new(|v| v[0].getitem(":, ::-1"))),
            ("reverse", Box::new(|v| v[0].reverse(&[1]))),
            ("tile", Box::new(move |v| v[0].tile(&multiples))),
            ("concat 0", Box::new(|v| v[0].concat(&[&v[1]], 0))),
            ("concat 1", Box::new(|v| v[0].concat(&[&v[1]], 1))),
            ("stack", Box::new(|v| v[0].stack(&[&v[1]], 0))),
            ("to_tensor", Box::new(|v| v[0].to_tensor())),
            ("flat_values", Box::new(|v| v[0].flat_values())),
            ("to_sparse values", Box::new(|v| v[0].to_sparse().1)),
            ("boolean_mask", Box::new(|v| {
                let zero = v[2].scalar_like(0.0);
                v[0].boolean_mask(&elemwise(ScalarOp::Greater, &[&v[2], &zero]))
            })),
            ("expand_dims", Box::new(|v| v[0].expand_dims(1))),
            ("merge_dims", Box::new(|v| v[0].merge_dims(0, 1))),
            ("sort", Box::new(|v| v[0].sort(ragtime::ops::Direction::Descending))),
            ("gather", Box::new(|v| {
                let ids = v[0].graph().constant(RaggedTensor::from(DenseTensor::vector(vec![0i64, 0, 1, 0])));
                v[0].gather(&ids)
            })),
        ];
        // `from_sparse` takes rank-2 sparse tensors: `to_sparse`'s output of a `[n, (r)]` value
        // back, through both VJPs.
        let flat = ragged(&mut rng, Shape { ragged_rank: 1, nrows: n, inner: None, min_len: 0 }, Domain::Signed);
        let r = verify_grad(&mut rng, "from_sparse of to_sparse", vec![wrt(flat)], |v| {
            let (indices, values, dense_shape) = v[0].to_sparse();
            ragtime::ops::from_sparse(&indices, &values, &dense_shape)
        });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        for (what, f) in checks {
            // `gather` reads rows 0 and 1: give it at least two.
            if what == "gather" && x.nrows() < 2 {
                continue;
            }
            let inputs = vec![wrt(x.clone()), wrt(z.clone()), fixed(mask.clone())];
            let r = verify_grad(&mut rng, what, inputs, |v| f(v));
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }
    }

    #[test]
    fn matmul_embedding_and_segment_gradients_match((rr, n, seed) in (1usize..=3, 1usize..=3, any::<u64>())) {
        let mut rng = Rng(seed);
        let x = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner: Some(3), min_len: 0 }, Domain::Signed);
        let w = dense(vec![3, 2], (0..6).map(|_| Domain::Signed.draw(&mut rng)).collect());
        let r = verify_grad(&mut rng, "matmul", vec![wrt(x), wrt(w)], |v| v[0].matmul(&v[1]));
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());

        // An embedding bag: ragged ids (repeated) into a table, mean per row.
        let ids = ragged(&mut rng, Shape { ragged_rank: rr, nrows: n, inner: None, min_len: 0 }, Domain::Positive);
        let ids = ids.with_flat_values(DenseTensor::vector(
            (0..ids.flat_values().len()).map(|_| rng.below(4) as i64).collect(),
        )).unwrap();
        let table = dense(vec![4, 3], (0..12).map(|_| Domain::Signed.draw(&mut rng)).collect());
        let r = verify_grad(&mut rng, "embedding_lookup", vec![wrt(table), fixed(ids)], |v| {
            ragtime::ops::embedding_lookup(&v[0], &v[1])
        });
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());

        let data = dense(vec![7], (0..7).map(|_| Domain::Signed.draw(&mut rng)).collect());
        // Every segment non-empty: an empty one's max is the lowest finite float, which would
        // swamp the cost's central differences.
        let segs = RaggedTensor::from(DenseTensor::vector(
            (0..7).map(|k| if k < 3 { k as i64 } else { rng.below(3) as i64 }).collect::<Vec<_>>(),
        ));
        let checks: [(&str, Binary); 6] = [
            ("unsorted_segment_sum", |d, s| d.unsorted_segment_sum(s, 3)),
            ("unsorted_segment_max", |d, s| d.unsorted_segment_max(s, 3)),
            ("unsorted_segment_min", |d, s| d.unsorted_segment_min(s, 3)),
            ("unsorted_segment_mean", |d, s| d.unsorted_segment_mean(s, 3)),
            ("unsorted_segment_sqrt_n", |d, s| d.unsorted_segment_sqrt_n(s, 3)),
            ("unsorted_segment_prod", |d, s| d.unsorted_segment_prod(s, 3)),
        ];
        for (what, f) in checks {
            let r = verify_grad(&mut rng, what, vec![wrt(data.clone()), fixed(segs.clone())], |v| f(&v[0], &v[1]));
            prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        }

        // `fill` repeats its scalar value: the sum of the result's gradient.
        let value = dense(vec![], vec![Domain::Signed.draw(&mut rng)]);
        let dims = RaggedTensor::from(DenseTensor::vector(vec![n as i64, 3]));
        let r = verify_grad(&mut rng, "fill", vec![fixed(dims), wrt(value)], |v| ragtime::ops::fill(&v[0], &v[1]));
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
    }
}

/// A random differentiable graph over ragged `x`, `z` (same structure) and per-row values:
/// elementwise ops, broadcasts of per-row reductions, softmax, and row reductions, the way the
/// JIT differential test (`jit.rs`) builds its graphs; the cost is `sum(out * p)`.
fn random_cost(g: &Graph, dtype: DType, steps: &[(u8, u8, u8)], p: &Var) -> (Vec<Var>, Var) {
    let x = g.input("x", TensorType::ragged(dtype, 1));
    let z = g.input("z", TensorType::ragged(dtype, 1));
    let mut ragged = vec![x.clone(), z.clone()];
    let mut per_row: Vec<Var> = vec![x.reduce_max(keepdims(1))];
    for &(what, a, b) in steps {
        let r = |k: u8| ragged[k as usize % ragged.len()].clone();
        let row = |k: u8| per_row[k as usize % per_row.len()].clone();
        let v = match what % 12 {
            0 => r(a) + r(b),
            1 => r(a) - row(b),
            2 => r(a) * r(b),
            3 => r(a) / (row(b).square() + 1.0),
            4 => r(a).maximum(&r(b)),
            5 => r(a).tanh(),
            6 => r(a).sigmoid() * r(b),
            7 => r(a).softmax(),
            8 => (r(a).square() + 1.0).log(),
            9 => {
                per_row.push(match b % 3 {
                    0 => r(a).reduce_sum(keepdims(1)),
                    1 => r(a).reduce_mean(keepdims(1)),
                    _ => r(a).reduce_max(keepdims(1)),
                });
                continue;
            }
            10 => r(a).exp() * 0.5,
            _ => r(a).cumsum(-1),
        };
        ragged.push(v);
    }
    let out = ragged.last().cloned().expect("x");
    let cost = (&out * p).reduce_sum(None) + per_row.last().expect("max").reduce_sum(None);
    (vec![x, z], cost)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Gradients compiled in `FastRun` (the optimizer's rewrites and fusion, the JIT) agree with
    /// `FastCompile` (the interpreter) within the conformance tolerance.
    #[test]
    fn fast_run_gradients_agree_with_fast_compile(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..8),
        lengths in prop::collection::vec(1usize..6, 1..6),
        f32 in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let dtype = if f32 { DType::F32 } else { DType::F64 };
        let mut rng = Rng(seed);
        let splits: Vec<i64> = std::iter::once(0).chain(lengths.iter().scan(0i64, |s, &l| { *s += l as i64; Some(*s) })).collect();
        let value = |rng: &mut Rng| {
            let n = *splits.last().unwrap() as usize;
            let v: Vec<f64> = (0..n).map(|_| Domain::Signed.draw(rng)).collect();
            let flat = DenseTensor::vector(v).cast(dtype).unwrap();
            RaggedTensor::from_nested_row_splits(flat, std::slice::from_ref(&splits)).unwrap()
        };
        let (x, z) = (value(&mut rng), value(&mut rng));
        let g = Graph::new();
        let p = g.input("p", TensorType::ragged(dtype, 1));
        let (inputs, cost) = random_cost(&g, dtype, &steps, &p);
        let grads = ragtime::grad(&cost, &[&inputs[0], &inputs[1]]).unwrap();
        let ins = [&inputs[0], &inputs[1], &p];
        let outs = [&cost, &grads[0], &grads[1]];
        let fast = g.compile_with(&ins, &outs, Mode::FastRun).unwrap();
        let reference = g.compile_with(&ins, &outs, Mode::FastCompile).unwrap();
        let args = [x.clone(), z, value(&mut rng)];
        let (want, got) = (reference.call(&args).unwrap(), fast.call(&args).unwrap());
        for (k, (a, b)) in want.iter().zip(&got).enumerate() {
            let same = compare(a, b);
            prop_assert!(same.is_ok(), "output {k}: {}\n{}", same.unwrap_err(), fast.debugprint());
        }
        for (grad, input) in got[1..].iter().zip([&x, &x]) {
            prop_assert!(grad.partitions()[0].row_splits() == input.partitions()[0].row_splits());
        }
    }
}
