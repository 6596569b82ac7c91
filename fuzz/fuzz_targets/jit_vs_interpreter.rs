//! Random fused graphs (elementwise ops with scalar and per-row operands, row reductions) on
//! random ragged float32 data: the JIT (FastRun) and the reference interpreter (FastCompile) agree
//! within the conformance tolerance.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::DenseTensor;

const VALUES: [f32; 10] = [0.5, -1.25, 2.0, 0.0, -0.0, f32::NAN, f32::INFINITY, -3.5, 1e-3, 7.0];

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let (shape, rest) = data.split_at(data.len() / 2);
    let lengths: Vec<i64> = shape.iter().take(40).map(|&b| i64::from(b % 23)).collect();
    let total: i64 = lengths.iter().sum();
    let x: Vec<f32> = (0..total as usize).map(|i| VALUES[data[i % data.len()] as usize % VALUES.len()]).collect();
    let Ok(xv) = RaggedTensor::from_row_lengths(DenseTensor::vector(x), &lengths) else { return };
    let g = Graph::new();
    let input = g.input("x", TensorType::ragged(DType::F32, 1));
    let mut ragged = vec![input.clone()];
    let mut per_row = vec![input.reduce_max(keepdims(1))];
    let mut outputs = Vec::new();
    for step in rest.chunks(3).take(12) {
        let (what, a, b) = (step[0], step.get(1).copied().unwrap_or(0), step.get(2).copied().unwrap_or(0));
        let r = |k: u8| ragged[k as usize % ragged.len()].clone();
        let p = |k: u8| per_row[k as usize % per_row.len()].clone();
        let v = match what % 10 {
            0 => r(a) + r(b),
            1 => r(a) - p(b),
            2 => r(a) * r(b),
            3 => r(a).maximum(&p(b)),
            4 => input.exp() * r(a),
            5 => r(a).tanh(),
            6 => r(a).sigmoid(),
            7 => r(a).abs().sqrt(),
            8 => {
                per_row.push(if b % 2 == 0 { r(a).reduce_sum(keepdims(1)) } else { r(a).reduce_mean(keepdims(1)) });
                continue;
            }
            _ => {
                outputs.push(r(a).reduce_min(1));
                continue;
            }
        };
        ragged.push(v);
    }
    outputs.push(ragged.last().cloned().expect("x"));
    let outs: Vec<&Var> = outputs.iter().collect();
    let (Ok(jit), Ok(reference)) = (compile(&[&input], &outs), g.compile_with(&[&input], &outs, Mode::FastCompile))
    else {
        return;
    };
    match (jit.call(std::slice::from_ref(&xv)), reference.call(std::slice::from_ref(&xv))) {
        (Ok(a), Ok(b)) => {
            for (want, got) in b.iter().zip(&a) {
                if let Err(why) = compare(want, got) {
                    panic!("JIT differs from the interpreter: {why}\n{}", jit.debugprint());
                }
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind()),
        (a, b) => panic!("JIT {a:?}, interpreter {b:?}"),
    }
});
