//! One-pass row kernels over inputs large enough for their prefetching row loop (a thread's range
//! of at least `PREFETCH_MIN_BYTES` of flat inputs) against the interpreter.

use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor};

/// Short binary fractions, NaN and infinities: sums of them are exact in any order, so the
/// JIT's vector folds give the interpreter's bits.
const DYADIC: [f32; 10] = [0.5, -1.25, 2.0, 0.0, -0.0, f32::NAN, f32::INFINITY, -3.5, 0.001953125, 30.0];

#[test]
fn large_one_pass_row_kernels_prefetch_and_match_the_interpreter() {
    // Over `PREFETCH_MIN_BYTES` of flat inputs in one piece (one thread), a one-pass row kernel
    // goes in groups of rows that first call the prefetch routine: one stream (`x` alone), two
    // (`x`, `z`) and a pair plus one (`x`, `z`, `w`). Two threads cut the call into pieces
    // under the threshold, which run the plain loop. Both must give the interpreter's results
    // (a mutation that drops the first row of each group fails here).
    let g = Graph::new();
    let ragged = || TensorType::ragged(DType::F32, 1);
    let (x, z, w) = (g.input("x", ragged()), g.input("z", ragged()), g.input("w", ragged()));
    let lengths: Vec<i64> = (0..260_000).map(|i| (i * 7919) % 21).collect();
    let values = lengths.iter().sum::<i64>() as usize;
    assert!(values * 4 >= ragtime_jit::plan::PREFETCH_MIN_BYTES as usize, "one stream over the threshold");
    let input = |shift: usize| {
        let flat: Vec<f32> = (0..values).map(|i| DYADIC[(i * 7 + shift) % DYADIC.len()]).collect();
        RaggedTensor::from_row_lengths(DenseTensor::vector(flat), &lengths).unwrap()
    };
    let (xv, zv, wv) = (input(0), input(3), input(5));
    let cases: [(Vec<&Var>, Var, Vec<RaggedTensor>); 3] = [
        (vec![&x], (&x * 3.0).reduce_max(1), vec![xv.clone()]),
        (vec![&x, &z], (&x * 2.0 + &z).reduce_mean(1), vec![xv.clone(), zv.clone()]),
        (vec![&x, &z, &w], ((&x * 2.0 + &z) - &w).reduce_sum(1), vec![xv, zv, wv]),
    ];
    for (inputs, output, data) in &cases {
        let reference = g.compile_with(inputs, &[output], Mode::FastCompile).unwrap();
        let want = reference.call(data).unwrap();
        // Bits, any NaN as one value.
        let bits = |t: &RaggedTensor| -> Vec<u32> {
            t.flat_slice::<f32>().unwrap().iter().map(|v| if v.is_nan() { u32::MAX } else { v.to_bits() }).collect()
        };
        let want_bits = bits(&want[0]);
        for threads in [1, 2] {
            let jit = g.compile_with(inputs, &[output], CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
            assert_eq!(jit.jit_kernels(), 1, "one row kernel:\n{}", jit.debugprint());
            let got = jit.call(data).unwrap();
            if let Err(why) = compare(&want[0], &got[0]) {
                panic!("{} inputs on {threads} thread(s): {why}\n{}", inputs.len(), jit.debugprint());
            }
            // Exact sums and maxima: the same bits.
            let got_bits = bits(&got[0]);
            let first_diff = want_bits.iter().zip(&got_bits).position(|(a, b)| a != b);
            assert!(
                first_diff.is_none(),
                "{} inputs on {threads} thread(s): row {} is {} (JIT) against {} (interpreter)",
                inputs.len(),
                first_diff.unwrap_or(0),
                got[0].flat_slice::<f32>().unwrap()[first_diff.unwrap_or(0)],
                want[0].flat_slice::<f32>().unwrap()[first_diff.unwrap_or(0)]
            );
        }
    }
}
