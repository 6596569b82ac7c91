//! Row kernels whose element outputs read maps of their per-row results (log-softmax's
//! `(x - max) - log(sum)`, its `exp`, a layer norm's `(x - mean) * rsqrt(variance + eps)`): one JIT kernel
//! each, the map computed once per row, and the interpreter's results on every row shape the
//! kernels take (short rows run flat, long rows pass by pass, items of several values, ragged rank
//! 2, several threads).

use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, RowPartition};

/// Values with signed zeros, a NaN and infinities among ordinary ones.
const POOL: [f64; 12] = [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 1e-3, 7.0, 30.0];

/// Row lengths: empty rows, short ones (flat blocks), and a few over a thousand (blocks pass by
/// pass).
fn lengths(rows: usize) -> Vec<i64> {
    (0..rows).map(|i| if i % 97 == 5 { 1500 + (i % 7) as i64 } else { ((i * 7919) % 23) as i64 }).collect()
}

/// `width` values per item (`None`: scalar items) of the rows `lengths`, as `dtype`; ragged rank
/// 2 when `outer` is set (groups of 3 inner rows).
fn data(dtype: DType, lengths: &[i64], width: Option<usize>, outer: bool) -> RaggedTensor {
    let items: i64 = lengths.iter().sum();
    let n = items as usize * width.unwrap_or(1);
    // Mostly ordinary values, a special one every 13th.
    let values: Vec<f64> = (0..n)
        .map(|k| if k % 13 == 7 { POOL[k % POOL.len()] } else { ((k * 37) % 1000) as f64 / 100.0 - 5.0 })
        .collect();
    let flat = match (dtype, width) {
        (DType::F32, None) => DenseTensor::vector(values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        (DType::F32, Some(w)) => {
            DenseTensor::from_vec(vec![items as usize, w], values.iter().map(|&v| v as f32).collect()).unwrap()
        }
        (_, None) => DenseTensor::vector(values),
        (_, Some(w)) => DenseTensor::from_vec(vec![items as usize, w], values).unwrap(),
    };
    let mut parts = Vec::new();
    if outer {
        let groups: Vec<i64> = (0..lengths.len().div_ceil(3)).map(|g| (lengths.len() - 3 * g).min(3) as i64).collect();
        parts.push(RowPartition::from_row_lengths(&groups).unwrap());
    }
    parts.push(RowPartition::from_row_lengths(lengths).unwrap());
    RaggedTensor::new(flat, parts).unwrap()
}

/// A row function of the test: `f(x, axis)`.
type RowFunction = fn(&Var, i64) -> Var;

fn log_softmax(x: &Var, axis: i64) -> Var {
    let shifted = x - x.reduce_max(keepdims(axis));
    &shifted - shifted.exp().reduce_sum(keepdims(axis)).log()
}

/// An expensive output reading a per-row map (`exp` of the log-softmax): short rows' blocks
/// compute it flat, the map expanded over the block's values.
fn softmax_by_logs(x: &Var, axis: i64) -> Var {
    log_softmax(x, axis).exp()
}

fn layer_norm(x: &Var, axis: i64) -> Var {
    let centered = x - x.reduce_mean(keepdims(axis));
    &centered * (centered.square().reduce_mean(keepdims(axis)) + 1e-5).rsqrt()
}

#[test]
fn log_softmax_and_layer_norm_are_one_kernel_with_the_interpreters_results() {
    let cases: [(DType, Option<usize>, bool); 6] = [
        (DType::F32, None, false),
        (DType::F64, None, false),
        (DType::F32, Some(8), false),
        (DType::F32, Some(3), false),
        (DType::F32, None, true),
        (DType::F64, Some(5), true),
    ];
    for (dtype, width, outer) in cases {
        let rank = 1 + usize::from(outer);
        let ty = match width {
            Some(w) => TensorType::ragged(dtype, rank).with_inner(&[Some(w)]),
            None => TensorType::ragged(dtype, rank),
        };
        let axis = rank as i64;
        let value = data(dtype, &lengths(600), width, outer);
        let functions: [(&str, RowFunction); 3] =
            [("log_softmax", log_softmax), ("softmax_by_logs", softmax_by_logs), ("layer_norm", layer_norm)];
        for (name, f) in functions {
            let g = Graph::new();
            let x = g.input("x", ty.clone());
            let y = f(&x, axis);
            let reference = g.compile_with(&[&x], &[&y], Mode::FastCompile).unwrap();
            let want = reference.call(std::slice::from_ref(&value)).unwrap();
            for threads in [1, 3] {
                let jit = g.compile_with(&[&x], &[&y], CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
                let what = format!("{name} over {dtype:?} items of {width:?}, ragged rank {rank}, {threads} threads");
                assert_eq!(jit.jit_kernels(), 1, "{what}: one JIT kernel expected\n{}", jit.debugprint());
                assert!(!jit.debugprint().contains("JitComposite"), "{what}\n{}", jit.debugprint());
                let got = jit.call(std::slice::from_ref(&value)).unwrap();
                if let Err(why) = compare(&want[0], &got[0]) {
                    panic!("{what}: JIT differs from the interpreter: {why}");
                }
                // Over items of several values the folds keep the reference's order, so rows of
                // up to 1,024 items get its bits (longer ones the reference folds in halves).
                if width.is_some_and(|w| w > 1) {
                    let short: Vec<i64> = lengths(600).into_iter().map(|n| n % 23).collect();
                    let value = data(dtype, &short, width, outer);
                    let want = reference.call(std::slice::from_ref(&value)).unwrap();
                    let got = jit.call(std::slice::from_ref(&value)).unwrap();
                    assert!(want[0].equals(&got[0]), "{what}: the same bits expected on short rows");
                }
            }
        }
    }
}

/// Maps that read a per-row operand from outside the kernel (`w`, `[n, 1]`), and a kernel of a
/// dtype without vector lowering (int16: scalar loops, the map computed row by row), give the
/// interpreter's results; each is one JIT kernel.
#[test]
fn per_row_maps_of_operands_and_of_scalar_kernels_match_the_interpreter() {
    let lengths = lengths(300);
    let rows = lengths.len();
    // Float32 with a per-row operand inside the map: `x - log(sum(exp(x - max)) * w)`.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let w = g.input("w", TensorType::dense(DType::F32, &[None, Some(1)]));
    let shifted = &x - x.reduce_max(keepdims(1));
    let y = &shifted - (shifted.exp().reduce_sum(keepdims(1)) * &w).log();
    let w_value: RaggedTensor =
        DenseTensor::from_vec(vec![rows, 1], (0..rows).map(|r| 0.5 + (r % 5) as f32).collect()).unwrap().into();
    let inputs = [data(DType::F32, &lengths, None, false), w_value];
    let reference = g.compile_with(&[&x, &w], &[&y], Mode::FastCompile).unwrap();
    let want = reference.call(&inputs).unwrap();
    for threads in [1, 2] {
        let jit = g.compile_with(&[&x, &w], &[&y], CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
        assert_eq!(jit.jit_kernels(), 1, "one JIT kernel expected\n{}", jit.debugprint());
        let got = jit.call(&inputs).unwrap();
        if let Err(why) = compare(&want[0], &got[0]) {
            panic!("per-row operand in the map, {threads} threads: {why}");
        }
    }
    // Int16 (scalar kernels): `x - (max * 2 + 1)` with wrapping, exactly the interpreter's values.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I16, 1));
    let y = &x - (x.reduce_max(keepdims(1)) * 2i16 + 1i16);
    let n: i64 = lengths.iter().sum();
    let values: Vec<i16> = (0..n).map(|k| ((k * 7919) % 65_536 - 32_768) as i16).collect();
    let value = RaggedTensor::from_row_lengths(DenseTensor::vector(values), &lengths).unwrap();
    let want = g.compile_with(&[&x], &[&y], Mode::FastCompile).unwrap().call(std::slice::from_ref(&value)).unwrap();
    let jit = g.compile_with(&[&x], &[&y], Mode::FastRun).unwrap();
    assert_eq!(jit.jit_kernels(), 1, "one JIT kernel expected\n{}", jit.debugprint());
    let got = jit.call(std::slice::from_ref(&value)).unwrap();
    assert!(want[0].equals(&got[0]), "int16: JIT {} vs interpreter {}", got[0], want[0]);
}
