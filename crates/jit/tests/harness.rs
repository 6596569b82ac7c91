//! The JIT harness: loop shapes (vector main loop + scalar tail at every length), custom map
//! bodies, and the checks `MapKernel::run` makes before calling machine code.

use cranelift_codegen::ir::InstBuilder;
use ragtime_jit::{Jit, JitError, UnaryMath};

#[test]
fn every_length_hits_main_loop_and_tail() {
    let mut jit = Jit::new().unwrap();
    let k32 = jit.compile_unary::<f32>(UnaryMath::Exp, true).unwrap();
    let k64 = jit.compile_unary::<f64>(UnaryMath::Exp, true).unwrap();
    for n in 0..19 {
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 2.0).collect();
        let mut y = vec![f32::NAN; n];
        k32.run(&[&x], &mut y).unwrap();
        for (a, b) in x.iter().zip(&y) {
            assert!((f64::from(*b) - f64::from(*a).exp()).abs() <= 1e-6 * f64::from(*a).exp());
        }
        let x: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
        let mut y = vec![f64::NAN; n];
        k64.run(&[&x], &mut y).unwrap();
        for (a, b) in x.iter().zip(&y) {
            assert!((b - a.exp()).abs() <= 1e-15 * a.exp());
        }
    }
}

#[test]
fn custom_map_body_with_three_inputs() {
    let mut jit = Jit::new().unwrap();
    // out = a * b + tanh(c), generic over the lane shape.
    let k = jit
        .compile_map::<f32>(3, true, |b, v| {
            let t = ragtime_jit::emit_tanh(b, v[2]);
            b.ins().fma(v[0], v[1], t)
        })
        .unwrap();
    assert_eq!(k.arity(), 3);
    let a: Vec<f32> = (0..11).map(|i| i as f32).collect();
    let bb: Vec<f32> = (0..11).map(|i| 0.5 * i as f32).collect();
    let c: Vec<f32> = (0..11).map(|i| i as f32 - 5.0).collect();
    let mut out = vec![0.0f32; 11];
    k.run(&[&a, &bb, &c], &mut out).unwrap();
    for i in 0..11 {
        let want = a[i] * bb[i] + c[i].tanh();
        assert!((out[i] - want).abs() <= 1e-5 * want.abs().max(1.0), "{i}: {} vs {want}", out[i]);
    }
}

#[test]
fn run_rejects_bad_arity_and_lengths_without_writing() {
    let mut jit = Jit::new().unwrap();
    let k = jit.compile_pow::<f64>(true).unwrap();
    let x = [1.0f64, 2.0];
    let short = [1.0f64];
    let mut out = [7.0f64; 2];
    assert!(matches!(k.run(&[&x], &mut out), Err(JitError::Arity { expected: 2, got: 1 })));
    assert!(matches!(k.run(&[&x, &short], &mut out), Err(JitError::Length { index: 1, len: 1, out_len: 2 })));
    assert_eq!(out, [7.0, 7.0]);
    k.run(&[&x, &x], &mut out).unwrap();
    assert_eq!(out, [1.0, 4.0]);
}

#[test]
fn kernels_outlive_their_module() {
    let k = {
        let mut jit = Jit::new().unwrap();
        jit.compile_unary::<f64>(UnaryMath::Log, false).unwrap()
    };
    let mut y = [0.0f64];
    k.run(&[&[1.0f64]], &mut y).unwrap();
    assert_eq!(y, [0.0]);
}
