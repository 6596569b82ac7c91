//! Reductions over the trailing uniform axis (features of `[n, *, k]`, classes of a dense `[n, k]`):
//! a layer norm, a softmax, a log-softmax, a logsumexp and a variance over the last axis are one
//! row kernel each, whose rows are that axis's vectors, and give the interpreter's results (the
//! JIT's and the fused op's own reference path), on every shape the view takes: ragged rank 1 and
//! 2, two uniform inner dims, a dense batch, axes of 1 to 33 values, several threads.

use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, RowPartition};

/// Values with signed zeros, a NaN and infinities among ordinary ones.
const POOL: [f64; 10] = [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 1e-3];

/// The flat values of `items` vectors of `inner` dims (`inner`'s product values each): ordinary
/// values, a special one every 29th.
fn flat(dtype: DType, items: usize, inner: &[usize]) -> DenseTensor {
    let n = items * inner.iter().product::<usize>();
    let values: Vec<f64> = (0..n)
        .map(|k| if k % 29 == 11 { POOL[k % POOL.len()] } else { ((k * 37) % 1000) as f64 / 100.0 - 5.0 })
        .collect();
    let mut shape = vec![items];
    shape.extend_from_slice(inner);
    match dtype {
        DType::F32 => DenseTensor::from_vec(shape, values.iter().map(|&v| v as f32).collect()).unwrap(),
        _ => DenseTensor::from_vec(shape, values).unwrap(),
    }
}

/// `[rows, *, inner...]` (or `[rows, *, *, inner...]` with `outer`, groups of 3 inner rows; or a
/// dense `[rows, inner...]` with `dense`), rows of 0 to 22 items.
fn data(dtype: DType, rows: usize, inner: &[usize], outer: bool, dense: bool) -> RaggedTensor {
    if dense {
        return flat(dtype, rows, inner).into();
    }
    let lengths: Vec<i64> = (0..rows).map(|i| ((i * 7919) % 23) as i64).collect();
    let items: i64 = lengths.iter().sum();
    let mut parts = Vec::new();
    if outer {
        let groups: Vec<i64> = (0..rows.div_ceil(3)).map(|g| (rows - 3 * g).min(3) as i64).collect();
        parts.push(RowPartition::from_row_lengths(&groups).unwrap());
    }
    parts.push(RowPartition::from_row_lengths(&lengths).unwrap());
    RaggedTensor::new(flat(dtype, items as usize, inner), parts).unwrap()
}

/// A function of the test, over the last axis (-1).
type LastAxisFunction = fn(&Var) -> Var;

fn layer_norm(x: &Var) -> Var {
    let centered = x - x.reduce_mean(keepdims(-1));
    &centered * (centered.square().reduce_mean(keepdims(-1)) + 1e-5).rsqrt()
}

fn softmax(x: &Var) -> Var {
    x.softmax()
}

fn log_softmax(x: &Var) -> Var {
    x.log_softmax()
}

fn logsumexp(x: &Var) -> Var {
    x.reduce_logsumexp(-1)
}

fn variance_with_keepdims(x: &Var) -> Var {
    x.reduce_variance(keepdims(-1))
}

/// `x * w` (a `[.., k]` full operand of the space) then a sum over the last axis: a dot product
/// per vector, two inputs of one structure.
fn weighted_sum(x: &Var) -> Var {
    (x * x.exp()).reduce_sum(-1)
}

const FUNCTIONS: [(&str, LastAxisFunction); 6] = [
    ("layer_norm", layer_norm),
    ("softmax", softmax),
    ("log_softmax", log_softmax),
    ("logsumexp", logsumexp),
    ("variance", variance_with_keepdims),
    ("weighted_sum", weighted_sum),
];

/// The distinct ops of an optimized graph's `debugprint` (its nodes, not its inputs or its inner
/// graphs), by name.
fn fused_nodes(printed: &str) -> Vec<String> {
    let mut ids: Vec<(String, String)> = Vec::new();
    for line in printed.lines().take_while(|l| !l.starts_with("Inner graphs:")) {
        let node = line.trim_start_matches(|c: char| " │├└─".contains(c));
        let Some((name, rest)) = node.split_once(" [id ") else { continue };
        let id = rest.split(']').next().unwrap_or_default().to_string();
        // Inputs print no op number after their id.
        let is_op = rest.split(']').nth(1).is_some_and(|t| t.trim_start().starts_with(|c: char| c.is_ascii_digit()));
        if is_op && !ids.iter().any(|(i, _)| *i == id) {
            ids.push((id, name.split(".").next().unwrap_or(name).to_string()));
        }
    }
    ids.into_iter().map(|(_, name)| name).collect()
}

#[test]
fn last_axis_row_functions_are_one_kernel_with_the_interpreters_results() {
    // (dtype, inner dims, ragged rank 2, dense)
    let cases: [(DType, &[usize], bool, bool); 8] = [
        (DType::F32, &[4], false, false),
        (DType::F32, &[8], false, false),
        (DType::F32, &[33], false, false),
        (DType::F32, &[1], false, false),
        (DType::F64, &[5], false, false),
        (DType::F32, &[3, 6], false, false),
        (DType::F32, &[7], true, false),
        (DType::F32, &[4], false, true),
    ];
    for (dtype, inner, outer, dense) in cases {
        let rank = if dense { 0 } else { 1 + usize::from(outer) };
        let inner_dims: Vec<Option<usize>> = inner.iter().map(|&d| Some(d)).collect();
        let ty = if dense {
            let mut dims = vec![None];
            dims.extend(&inner_dims);
            TensorType::dense(dtype, &dims)
        } else {
            TensorType::ragged(dtype, rank).with_inner(&inner_dims)
        };
        let value = data(dtype, 400, inner, outer, dense);
        for (name, f) in FUNCTIONS {
            let g = Graph::new();
            let x = g.input("x", ty.clone());
            let y = f(&x);
            let what = format!("{name} over the last of {inner:?} of {dtype:?}, ragged rank {rank}");
            let want =
                g.compile_with(&[&x], &[&y], Mode::FastCompile).unwrap().call(std::slice::from_ref(&value)).unwrap();
            // The fused op's own reference path (the chunked row passes on the view).
            let fused = g.compile_with(&[&x], &[&y], CompileOptions::from(Mode::FastRun).excluding("jit")).unwrap();
            let printed = fused.debugprint();
            let nodes = fused_nodes(&printed);
            let kernels = nodes.iter().filter(|n| n.starts_with("RowKernel{") || n.starts_with("RowReduce{")).count();
            assert_eq!(kernels, 1, "{what}: one row kernel expected\n{printed}");
            // Besides it, only O(rows) maps of its per-row results (logsumexp's `log(sum) + max`).
            assert!(nodes.iter().all(|n| n.starts_with("Row") || n.starts_with("Composite{")), "{what}\n{printed}");
            let unjitted = fused.call(std::slice::from_ref(&value)).unwrap();
            if let Err(why) = compare(&want[0], &unjitted[0]) {
                panic!("{what}: the fused op differs from the interpreter: {why}");
            }
            for threads in [1, 3] {
                let jit = g.compile_with(&[&x], &[&y], CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
                let nodes = fused_nodes(&jit.debugprint());
                assert_eq!(nodes.iter().filter(|n| n.starts_with("JitRow")).count(), 1, "{what}\n{}", jit.debugprint());
                assert!(
                    nodes.iter().all(|n| n.starts_with("Jit")),
                    "{what}: every op a JIT kernel\n{}",
                    jit.debugprint()
                );
                let got = jit.call(std::slice::from_ref(&value)).unwrap();
                if let Err(why) = compare(&want[0], &got[0]) {
                    panic!("{what}, {threads} threads: the JIT differs from the interpreter: {why}");
                }
                // Rows of up to 32 values run a row per lane, folded in order: the bits of the
                // primitives the op expands into (logsumexp and variance ops accumulate float32 in
                // float64, their expansions in float32: within the tolerance of the op).
                if *inner.last().unwrap() <= 32 {
                    assert!(unjitted[0].equals(&got[0]), "{what}, {threads} threads: the fused op's bits expected");
                }
            }
        }
    }
}

/// A per-row operand from outside the kernel (`w`, `[n, *, 1]`) and an output of the per-row
/// results with `keepdims`: the kernel's reduction results come back as `[n, *, 1]`, and a value
/// of another structure makes the kernel hand the call to the inner graph (which reports it).
#[test]
fn per_row_operands_and_results_keep_the_shape_of_the_last_axis() {
    let ty = TensorType::ragged(DType::F32, 1).with_inner(&[Some(6)]);
    let g = Graph::new();
    let x = g.input("x", ty.clone());
    let w = g.input("w", TensorType::ragged(DType::F32, 1).with_inner(&[Some(1)]));
    let m = x.reduce_max(keepdims(-1));
    let y = (&x - &m) * &w;
    let value = data(DType::F32, 300, &[6], false, false);
    let items = value.flat_values().shape()[0];
    let w_value = RaggedTensor::new(
        DenseTensor::from_vec(vec![items, 1], (0..items).map(|r| 0.5 + (r % 5) as f32).collect()).unwrap(),
        value.partitions().to_vec(),
    )
    .unwrap();
    let inputs = [value.clone(), w_value];
    let want = g.compile_with(&[&x, &w], &[&y, &m], Mode::FastCompile).unwrap().call(&inputs).unwrap();
    let jit = g.compile_with(&[&x, &w], &[&y, &m], Mode::FastRun).unwrap();
    assert_eq!(jit.jit_kernels(), 1, "one JIT kernel expected\n{}", jit.debugprint());
    let got = jit.call(&inputs).unwrap();
    for (k, (a, b)) in want.iter().zip(&got).enumerate() {
        assert!(a.equals(b), "output {k}: the interpreter's bits expected (a maximum and a map), got {b} for {a}");
    }
    assert_eq!(got[1].flat_values().shape(), [items, 1], "the maximum keeps its last dim of 1");
    // `w` with other rows: the inner graph runs and reports that they do not broadcast.
    let other = data(DType::F32, 301, &[1], false, false);
    let err = jit.call(&[value, other]).unwrap_err();
    assert!(err.to_string().contains("subtract") || err.to_string().contains("multiply"), "{err}");
}

/// Rows made of special values only (all `-inf`, all NaN, `+inf` and `-inf`, signed zeros), folded
/// by maxima, minima and sums over the last axis, through every JIT path: a row per lane (lengths
/// that are a multiple of the vector or not, the rows past the last whole vector), rows longer
/// than a vector of rows runs (40 values), float64, an int32 kernel and an int16 one (scalar
/// loops): the interpreter's bits, where a maximum of `-inf`s is `-inf` (the identity of a
/// uniform axis, not the lowest finite value of a ragged one).
#[test]
fn special_rows_fold_as_the_interpreter_folds_them() {
    const ROWS: [[f64; 4]; 7] = [
        [f64::NEG_INFINITY; 4],
        [f64::NAN; 4],
        [f64::INFINITY, f64::NEG_INFINITY, 0.0, 1.0],
        [-0.0, 0.0, -0.0, 0.0],
        [-0.0; 4],
        [f64::INFINITY; 4],
        [1.5, f64::NAN, -2.0, 3.0],
    ];
    for (dtype, k) in
        [(DType::F32, 4), (DType::F32, 8), (DType::F32, 6), (DType::F32, 40), (DType::F64, 4), (DType::F64, 3)]
    {
        // 7 rows of each pattern, `k` values each, 49 rows in all (not a multiple of the lanes).
        let values: Vec<f64> = (0..49).flat_map(|r| (0..k).map(move |j| ROWS[r % 7][j % 4])).collect();
        let flat = match dtype {
            DType::F32 => DenseTensor::from_vec(vec![49, k], values.iter().map(|&v| v as f32).collect()).unwrap(),
            _ => DenseTensor::from_vec(vec![49, k], values.clone()).unwrap(),
        };
        let value = RaggedTensor::from_row_lengths(flat, &[7, 0, 20, 22]).unwrap();
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(dtype, 1).with_inner(&[Some(k)]));
        let outs = [x.reduce_max(-1), x.reduce_min(keepdims(-1)), x.reduce_sum(-1), x.softmax()];
        let outs: Vec<&Var> = outs.iter().collect();
        let want = g.compile_with(&[&x], &outs, Mode::FastCompile).unwrap().call(std::slice::from_ref(&value)).unwrap();
        let paths = [
            ("the fused op's reference path", CompileOptions::from(Mode::FastRun).excluding("jit"), true),
            ("the JIT on 1 thread", CompileOptions::from(Mode::FastRun).threads(1), k <= 32),
            ("the JIT on 2 threads", CompileOptions::from(Mode::FastRun).threads(2), k <= 32),
        ];
        for (path, options, in_order) in paths {
            let f = g.compile_with(&[&x], &outs, options).unwrap();
            let got = f.call(std::slice::from_ref(&value)).unwrap();
            for (o, (a, b)) in want.iter().zip(&got).enumerate() {
                // Maxima and minima are exact whatever the order; sums (and the softmax's) are the
                // interpreter's bits where the fold is in order.
                let same = if in_order || o < 2 { a.equals(b) } else { compare(a, b).is_ok() };
                assert!(same, "{dtype:?}, rows of {k}, output {o}, {path}: got {b}, the interpreter {a}");
            }
        }
    }
    // Integer kernels: int32 (vector lanes) and int16 (scalar loops).
    for dtype in [DType::I32, DType::I16] {
        let flat =
            DenseTensor::from_vec(vec![30, 5], (0..150).map(|v| ((v * 7919) % 201 - 100) as i64).collect::<Vec<_>>())
                .unwrap()
                .cast(dtype)
                .unwrap();
        let value: RaggedTensor = flat.into();
        let g = Graph::new();
        let x = g.input("x", TensorType::dense(dtype, &[None, Some(5)]));
        let y = &x - x.reduce_max(keepdims(-1));
        let s = x.reduce_sum(-1);
        let want =
            g.compile_with(&[&x], &[&y, &s], Mode::FastCompile).unwrap().call(std::slice::from_ref(&value)).unwrap();
        let jit = g.compile_with(&[&x], &[&y, &s], Mode::FastRun).unwrap();
        assert!(jit.debugprint().contains("axis=-1 of 5"), "{}", jit.debugprint());
        let got = jit.call(std::slice::from_ref(&value)).unwrap();
        for (a, b) in want.iter().zip(&got) {
            assert!(a.equals(b), "{dtype:?}: JIT {b} vs interpreter {a}");
        }
    }
}

/// Maps over dense `[n, k]` values reading per-row `[n, 1]` values from outside (the backward of a
/// softmax cross-entropy: `exp(z - lse) * g`): one row kernel along the last axis without
/// reductions (composites take per-row operands over ragged rows only), with the interpreter's
/// bits, and the interpreter's error for a per-row value of another length.
#[test]
fn maps_of_per_row_values_along_the_last_axis_are_one_row_kernel() {
    let g = Graph::new();
    let z = g.input("z", TensorType::dense(DType::F32, &[None, Some(4)]));
    let lse = g.input("lse", TensorType::dense(DType::F32, &[None, Some(1)]));
    let scale = g.input("scale", TensorType::dense(DType::F32, &[None, Some(1)]));
    let y = (&z - &lse).exp() * &scale + 1.0f32;
    let rows = 103;
    let z_value: RaggedTensor =
        DenseTensor::from_vec(vec![rows, 4], (0..rows * 4).map(|v| ((v * 37) % 100) as f32 / 10.0 - 5.0).collect())
            .unwrap()
            .into();
    let column = |f: fn(usize) -> f32| -> RaggedTensor {
        DenseTensor::from_vec(vec![rows, 1], (0..rows).map(f).collect()).unwrap().into()
    };
    let inputs = [z_value.clone(), column(|r| (r % 7) as f32 - 3.0), column(|r| 0.25 * (r % 3) as f32)];
    let want = g.compile_with(&[&z, &lse, &scale], &[&y], Mode::FastCompile).unwrap().call(&inputs).unwrap();
    for threads in [1, 2] {
        let options = CompileOptions::from(Mode::FastRun).threads(threads);
        let jit = g.compile_with(&[&z, &lse, &scale], &[&y], options).unwrap();
        let nodes = fused_nodes(&jit.debugprint());
        assert_eq!(nodes, ["JitRowKernel{out = (exp(i0 - i1) * i2) + 1; axis=-1 of 4}"], "{}", jit.debugprint());
        let got = jit.call(&inputs).unwrap();
        assert!(want[0].equals(&got[0]), "{threads} threads: JIT {} vs interpreter {}", got[0], want[0]);
    }
    let jit = g.compile_with(&[&z, &lse, &scale], &[&y], Mode::FastRun).unwrap();
    let short = [z_value, column(|r| r as f32), DenseTensor::from_vec(vec![5, 1], vec![1.0f32; 5]).unwrap().into()];
    let err = jit.call(&short).unwrap_err();
    let interpreted = g.compile_with(&[&z, &lse, &scale], &[&y], Mode::FastCompile).unwrap().call(&short).unwrap_err();
    assert_eq!(err.kind(), interpreted.kind(), "{err} vs {interpreted}");
}
