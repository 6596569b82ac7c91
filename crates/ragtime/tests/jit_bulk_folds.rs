//! Row kernels whose float32 sums and maxima fold in bulk, sixteen rows at a time
//! (`ragtime_jit::bulk_folds`), on the shapes where later passes read those results back: a later
//! row-by-row fold, a hoisted per-row map, a second output. Each gives the interpreter's results,
//! and the same bits on one thread and on several (a row's fold never depends on its block).

use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor};

/// Whether row `i` of the test data is long (over a thousand values: its block goes row by row).
fn long(i: usize) -> bool {
    i % 89 == 5
}

/// Rows of 0 to 22 values (flat blocks) and, with `long_rows`, a few of over a thousand (their
/// blocks go row by row, and so do the short rows sharing them), with a NaN, infinities, signed
/// zeros and an all-zero row among ordinary values. Row `i` holds the same values either way.
fn data(long_rows: bool) -> RaggedTensor {
    let mut lengths = Vec::new();
    let mut values = Vec::new();
    let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
    for i in 0..700 {
        if long(i) && !long_rows {
            continue;
        }
        let n = if long(i) { 1200 + i % 5 } else { (i * 7919) % 23 };
        lengths.push(n as i64);
        for k in 0..n {
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

/// Log-softmax: its sum folds in bulk from the output's buffer on row-by-row blocks (no output
/// keeps its `exp(x - max)`), and the hoisted `log(sum)` reads the sum's slot.
fn log_softmax(x: &Var) -> Vec<Var> {
    let shifted = x - x.reduce_max(keepdims(1));
    vec![&shifted - shifted.exp().reduce_sum(keepdims(1)).log()]
}

/// Softmax, W4's graph.
fn softmax(x: &Var) -> Vec<Var> {
    let e = (x - x.reduce_max(keepdims(1))).exp();
    vec![&e / e.reduce_sum(keepdims(1))]
}

#[test]
fn bulk_folded_results_read_back_by_later_passes_give_the_interpreters_results() {
    let (value, short_only) = (data(true), data(false));
    let graphs: [(&str, Outputs); 4] = [
        ("max read by a later fold", max_read_by_a_later_fold),
        ("softmax and log-softmax", softmax_and_log_softmax),
        ("log-softmax", log_softmax),
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
            // A short row gets the same bits in a row-by-row block (beside a long row) and in a
            // flat one (the same rows without the long ones).
            let got_short = jit.call(std::slice::from_ref(&short_only)).unwrap();
            for (j, (a, b)) in got.iter().zip(&got_short).enumerate() {
                let (splits_a, splits_b) = (a.row_splits().unwrap(), b.row_splits().unwrap());
                let (values_a, values_b) = (a.flat_slice::<f32>().unwrap(), b.flat_slice::<f32>().unwrap());
                let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<u32>>();
                for (r, i) in (0..700).filter(|&i| !long(i)).enumerate() {
                    let in_long = bits(&values_a[splits_a[i] as usize..splits_a[i + 1] as usize]);
                    let in_flat = bits(&values_b[splits_b[r] as usize..splits_b[r + 1] as usize]);
                    assert_eq!(
                        in_long, in_flat,
                        "{name}, output {j}, {threads} threads, row {i}: bits differ between blocks"
                    );
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
