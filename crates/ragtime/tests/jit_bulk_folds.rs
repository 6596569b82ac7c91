//! Row kernels whose float32 sums and maxima fold in bulk, sixteen rows at a time
//! (`ragtime_jit::bulk_folds`), on the shapes where later passes read those results back: a later
//! row-by-row fold, a hoisted per-row map, a second output. Each gives the interpreter's results,
//! and the same bits on one thread and on several (a row's fold never depends on its block).

use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor};

/// Rows of 0 to 22 values (flat blocks), a few of over a thousand (row-by-row blocks), with a NaN,
/// infinities, signed zeros and an all-zero row among ordinary values.
fn data() -> RaggedTensor {
    let lengths: Vec<i64> =
        (0..700).map(|i| if i % 89 == 5 { 1200 + (i % 5) as i64 } else { ((i * 7919) % 23) as i64 }).collect();
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
    let mut values = Vec::new();
    for (i, &n) in lengths.iter().enumerate() {
        for k in 0..n as usize {
            let v = match i % 50 {
                // A row of zeros (maximum 0: its block refolds exactly).
                11 => 0.0,
                _ if (i * 31 + k) % 211 == 3 => specials[(i + k) % specials.len()],
                _ => (((i * 131 + k * 37) % 1000) as f32 / 100.0) - 5.0,
            };
            values.push(v);
        }
    }
    RaggedTensor::from_row_lengths(DenseTensor::vector(values), &lengths).expect("valid lengths")
}

/// A graph of the test: its outputs from `x`.
type Outputs = fn(&Var) -> Vec<Var>;

/// The maximum folded in bulk, read back from its slot by the sum's fold (whose argument is cheap,
/// so it folds row by row), under an expensive output. (A sum of positive terms: no cancellation
/// to make the interpreter's order and the JIT's differ by more than rounding.)
fn max_read_by_a_later_fold(x: &Var) -> Vec<Var> {
    let m = x.reduce_max(keepdims(1));
    let s = (x * x + &m * &m).reduce_sum(keepdims(1));
    vec![(x / &s).tanh()]
}

/// Softmax and log-softmax together: both folds in bulk (the `exp` kept in the softmax's buffer),
/// the sum read back by the hoisted `log(sum)`.
fn softmax_and_log_softmax(x: &Var) -> Vec<Var> {
    let shifted = x - x.reduce_max(keepdims(1));
    let e = shifted.exp();
    let s = e.reduce_sum(keepdims(1));
    vec![&e / &s, &shifted - s.log()]
}

/// Softmax, W4's graph.
fn softmax(x: &Var) -> Vec<Var> {
    let e = (x - x.reduce_max(keepdims(1))).exp();
    vec![&e / e.reduce_sum(keepdims(1))]
}

#[test]
fn bulk_folded_results_read_back_by_later_passes_give_the_interpreters_results() {
    let value = data();
    let graphs: [(&str, Outputs); 3] = [
        ("max read by a later fold", max_read_by_a_later_fold),
        ("softmax and log-softmax", softmax_and_log_softmax),
        ("softmax", softmax),
    ];
    for (name, f) in graphs {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let ys = f(&x);
        let outputs: Vec<&Var> = ys.iter().collect();
        let want =
            g.compile_with(&[&x], &outputs, Mode::FastCompile).unwrap().call(std::slice::from_ref(&value)).unwrap();
        let mut first: Option<Vec<RaggedTensor>> = None;
        for threads in [1, 2, 3] {
            let jit = g.compile_with(&[&x], &outputs, CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
            assert_eq!(jit.jit_kernels(), 1, "{name}: one JIT kernel expected\n{}", jit.debugprint());
            let got = jit.call(std::slice::from_ref(&value)).unwrap();
            for (j, (w, g)) in want.iter().zip(&got).enumerate() {
                if let Err(why) = compare(w, g) {
                    panic!("{name}, output {j}, {threads} threads: JIT differs from the interpreter: {why}");
                }
            }
            match &first {
                None => first = Some(got),
                Some(one) => {
                    for (j, (a, b)) in one.iter().zip(&got).enumerate() {
                        assert!(a.equals(b), "{name}, output {j}: {threads} threads must give one thread's bits");
                    }
                }
            }
        }
    }
}
