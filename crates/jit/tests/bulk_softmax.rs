//! The AVX-512 row softmax (`ragtime_jit::bulk_softmax`) gives every row it computes the bits of
//! the JIT's own softmax kernel (compiled without it) and of a plain-Rust model of that kernel's
//! algorithm on `vmath`'s scalar `exp`; the rows it cannot compute (a NaN, a zero or an infinite
//! max) it hands back, and the kernel that calls it gives those rows its IR passes' bits.

// Calling compiled kernels on raw buffers (`FusedKernel::call`), as `exec.rs` does.
#![allow(unsafe_code)]

use ragtime_core::DType;
use ragtime_fused::{OperandKind, RowOutput, RowReduction, ScalarGraph, ScalarRef};
use ragtime_jit::bulk_softmax::softmax_rows_f32_into;
use ragtime_jit::plan::RowPasses;
use ragtime_jit::{Jit, KernelPlan, KernelSpec, Target};
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::reduce::ReduceKind;
use ragtime_vmath::plain::exp_f32;

/// The JIT's vector sum of a float32 row, in plain Rust: two 4-lane accumulators over 8-value
/// blocks, folded, then a 4-value vector, then the last four values with those already added
/// replaced by zeros, then the lanes pairwise; rows under four values one by one from zero.
fn jit_order_sum(e: &[f32]) -> f32 {
    let n = e.len();
    if n < 4 {
        return e.iter().fold(0.0f32, |a, &v| a + v);
    }
    let (end8, end4) = (n / 8 * 8, n / 4 * 4);
    let mut acc = [[0f32; 4]; 2];
    for block in (0..end8).step_by(8) {
        for j in 0..4 {
            acc[0][j] += e[block + j];
            acc[1][j] += e[block + 4 + j];
        }
    }
    let mut f: [f32; 4] = std::array::from_fn(|j| acc[0][j] + acc[1][j]);
    if end4 > end8 {
        for j in 0..4 {
            f[j] += e[end8 + j];
        }
    }
    let rest = n - end4;
    for j in 0..4 {
        f[j] += if j >= 4 - rest { e[n - 4 + j] } else { 0.0 };
    }
    (f[0] + f[2]) + (f[1] + f[3])
}

/// The softmax of one row as the JIT's kernel computes it, or `None` for a row the row-pass
/// function hands back (a NaN, a zero or an infinite max).
fn model_row(x: &[f32]) -> Option<Vec<f32>> {
    let max = x.iter().fold(-f32::MAX, |a, &v| if a < v { v } else { a });
    if x.iter().any(|v| v.is_nan()) || max == 0.0 || max == f32::INFINITY {
        return None;
    }
    let e: Vec<f32> = x.iter().map(|&v| exp_f32(v - max)).collect();
    let sum = jit_order_sum(&e);
    Some(e.iter().map(|&v| v / sum).collect())
}

/// A xorshift generator: the same data on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Rows of every length 0..70 (each several times), then runs of rows of random lengths up to
/// 20 (as W4's, so that every mix of short rows shares a vector), of typical values, with some
/// rows holding denormals, zeros of both signs, huge values, infinities and NaNs.
fn rows() -> (Vec<f32>, Vec<i64>) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut x, mut splits) = (Vec::new(), vec![0i64]);
    let lengths: Vec<(usize, usize)> = (0..12)
        .flat_map(|rep| (0..70).map(move |len| (rep, len)))
        .chain((0..12 * 300).map(|k| (k / 300, (k * 7919 + k / 5 * 13) % 21)))
        .collect();
    for (rep, len) in lengths {
        for _ in 0..len {
            let uniform = (rng.below(1 << 24) as f32 / (1 << 24) as f32) * 20.0 - 10.0;
            let v = match (rep, rng.below(400)) {
                (0..=5, _) => uniform,
                (_, 0) => f32::NAN,
                (_, 1) => f32::INFINITY,
                (_, 2) => f32::NEG_INFINITY,
                (_, 3) => 0.0,
                (_, 4) => -0.0,
                (_, 5..=20) => {
                    f32::from_bits(rng.below(0x0080_0000) as u32) * if rng.below(2) == 0 { 1.0 } else { -1.0 }
                }
                (_, 21..=24) => f32::MAX * (uniform / 10.0),
                (_, 25..=40) => uniform * 1e-30,
                _ => uniform,
            };
            x.push(v);
        }
        // Some all-zero, all-denormal and all-negative-infinity rows.
        if rep == 11 && len % 5 == 0 {
            let start = *splits.last().unwrap() as usize;
            for (k, v) in x[start..].iter_mut().enumerate() {
                *v = [0.0, f32::from_bits(7 + k as u32), f32::NEG_INFINITY, -0.0, 1e-40][len / 5 % 5];
            }
        }
        splits.push(x.len() as i64);
    }
    (x, splits)
}

/// W4's kernel: `exp(x - max) / sum(exp(x - max))` per row.
fn softmax_spec() -> KernelSpec {
    use ScalarRef::{Input as I, Node as N};
    let mut g = ScalarGraph::new(vec![DType::F32; 3]);
    g.push(ScalarOp::Subtract, vec![I(0), I(1)]).unwrap();
    g.push(ScalarOp::Exp, vec![N(0)]).unwrap();
    g.push(ScalarOp::Divide, vec![N(1), I(2)]).unwrap();
    let reductions =
        [RowReduction { kind: ReduceKind::Max, arg: I(0) }, RowReduction { kind: ReduceKind::Sum, arg: N(1) }];
    KernelSpec::new(&g, &[OperandKind::Full], &reductions, &[RowOutput::Elements(N(2))]).unwrap()
}

/// Runs `plan`'s kernel over every row of `x`.
fn run_kernel(plan: &KernelPlan, x: &[f32], splits: &[i64]) -> Vec<f32> {
    let mut jit = Jit::new().unwrap();
    let kernel = jit.compile_plan(plan).unwrap();
    let mut out = vec![f32::NAN; x.len()];
    let inputs = [x.as_ptr().cast::<u8>()];
    let outputs = [out.as_mut_ptr().cast::<u8>()];
    // SAFETY: the kernel reads its one float32 operand and writes its one float32 output at the
    // positions of rows `0..nrows` of `splits`, a partition of `x` (and `out`, as long).
    let ok = unsafe { kernel.call(&inputs, &outputs, splits.as_ptr(), 0, splits.len() - 1) };
    assert!(ok, "softmax does not fault");
    out
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn the_row_softmax_gives_the_models_bits_and_hands_back_the_rows_it_cannot_compute() {
    let (x, splits) = rows();
    let nrows = splits.len() - 1;
    let mut out = vec![f32::NAN; x.len()];
    let (mut first, mut computed, mut handed_back) = (0, 0, 0);
    while first < nrows {
        let Some(stop) = softmax_rows_f32_into(&x, &splits, first, &mut out) else {
            eprintln!("this CPU has no AVX-512: the row-pass functions are not used here");
            return;
        };
        assert!(stop >= first && stop <= nrows, "row {stop} out of {first}..={nrows}");
        for r in first..=stop.min(nrows - 1) {
            let range = splits[r] as usize..splits[r + 1] as usize;
            match model_row(&x[range.clone()]) {
                Some(want) if r < stop => {
                    assert_eq!(bits(&out[range.clone()]), bits(&want), "row {r} of length {}", range.len());
                    computed += 1;
                }
                None if r == stop => handed_back += 1,
                model => panic!("row {r} (length {}): handed back at {stop}, model {model:?}", range.len()),
            }
        }
        first = stop + 1;
    }
    assert!(computed > 500 && handed_back > 20, "{computed} rows computed, {handed_back} handed back");
}

#[test]
fn the_softmax_kernel_with_row_passes_has_the_bits_of_its_ir_passes() {
    let spec = softmax_spec();
    let with = KernelPlan::new(&spec, Target::host());
    if with.row_passes.is_none() {
        eprintln!("this CPU has no AVX-512: the row-pass functions are not used here");
        return;
    }
    assert_eq!(with.row_passes, Some(RowPasses::Softmax { x: 0, out: 0 }));
    let without = KernelPlan::new(&spec, Target::host().with_row_passes(false));
    assert_eq!(without.row_passes, None);
    let (x, splits) = rows();
    let (got, want) = (run_kernel(&with, &x, &splits), run_kernel(&without, &x, &splits));
    for r in 0..splits.len() - 1 {
        let range = splits[r] as usize..splits[r + 1] as usize;
        assert_eq!(bits(&got[range.clone()]), bits(&want[range.clone()]), "row {r} of length {}", range.len());
    }
}
