//! The plain-Rust math of `ragtime-vmath` (what the interpreter calls) against the JIT's IR and
//! its AVX2 bulk path: the same algorithm through three `Arith` backends must give the same
//! bits on every input, special values, random bit patterns and the ranges the functions
//! reduce over included.

use ragtime_jit::{bulk, Jit, JitFloat, MapKernel, UnaryMath};

mod rng;
use rng::Rng;

const N: usize = 20_000;

fn inputs_f32(seed: u64) -> Vec<f32> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        f32::EPSILON,
        88.72,
        88.73,
        89.0,
        -87.33,
        -87.34,
        -103.9,
        -104.0,
        -104.1,
        8.74,
        7.9,
        9.0,
        -9.0,
        0.0004,
        0.000_399_9,
        0.625,
    ];
    let mut rng = Rng(seed);
    for i in 0..N {
        let x = match i % 4 {
            0 => f32::from_bits(rng.next() as u32),
            1 => rng.uniform(-120.0, 120.0) as f32,
            2 => rng.uniform(-12.0, 12.0) as f32,
            _ => rng.uniform(0.0, 3.0) as f32,
        };
        v.push(x);
    }
    v
}

fn inputs_f64(seed: u64) -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0x8000_0000_0000_0001),
        f64::MAX,
        f64::MIN,
        f64::EPSILON,
        709.78,
        709.79,
        710.0,
        -708.39,
        -708.4,
        -745.1,
        -746.0,
        19.0,
        0.625,
        -0.625,
    ];
    let mut rng = Rng(seed);
    for i in 0..N {
        let x = match i % 4 {
            0 => f64::from_bits(rng.next()),
            1 => rng.uniform(-800.0, 800.0),
            2 => rng.uniform(-25.0, 25.0),
            _ => rng.uniform(0.0, 3.0),
        };
        v.push(x);
    }
    v
}

fn run<T: JitFloat + Default>(k: &MapKernel<T>, inputs: &[&[T]]) -> Vec<T> {
    let mut out = vec![T::default(); inputs[0].len()];
    k.run(inputs, &mut out).unwrap();
    out
}

/// Asserts `got == want` bit for bit at every index (NaN payloads included).
fn assert_bits<T: Copy + std::fmt::Debug>(what: &str, args: &[&[T]], got: &[T], want: &[T], bits: impl Fn(T) -> u64) {
    let mut bad = 0;
    for i in 0..got.len() {
        if bits(got[i]) != bits(want[i]) {
            if bad < 8 {
                let a: Vec<T> = args.iter().map(|c| c[i]).collect();
                eprintln!(
                    "{what}: args {a:?}: JIT {:?} ({:#x}), plain {:?} ({:#x})",
                    got[i],
                    bits(got[i]),
                    want[i],
                    bits(want[i])
                );
            }
            bad += 1;
        }
    }
    assert_eq!(bad, 0, "{what}: {bad} of {} results differ from the plain backend", got.len());
}

fn plain_unary_f32(op: UnaryMath) -> fn(f32) -> f32 {
    match op {
        UnaryMath::Exp => ragtime_vmath::exp_f32,
        UnaryMath::Log => ragtime_vmath::log_f32,
        UnaryMath::Tanh => ragtime_vmath::tanh_f32,
        UnaryMath::Sigmoid => ragtime_vmath::sigmoid_f32,
        UnaryMath::Sin => ragtime_vmath::sin_f32,
        UnaryMath::Cos => ragtime_vmath::cos_f32,
    }
}

fn plain_unary_f64(op: UnaryMath) -> fn(f64) -> f64 {
    match op {
        UnaryMath::Exp => ragtime_vmath::exp_f64,
        UnaryMath::Log => ragtime_vmath::log_f64,
        UnaryMath::Tanh => ragtime_vmath::tanh_f64,
        UnaryMath::Sigmoid => ragtime_vmath::sigmoid_f64,
        UnaryMath::Sin => ragtime_vmath::sin_f64,
        UnaryMath::Cos => ragtime_vmath::cos_f64,
    }
}

#[test]
fn unary_ir_equals_plain() {
    let mut jit = Jit::new().unwrap();
    let x32 = inputs_f32(0x9e37_79b9_7f4a_7c15);
    let x64 = inputs_f64(0x2545_f491_4f6c_dd1d);
    for op in UnaryMath::ALL {
        // `compile_unary` is the polynomial alone; fused kernels call the platform's `sin` /
        // `cos` beyond the polynomial's range, as the plain functions do
        // (`fused_trig_equals_plain` checks that part).
        let trig = matches!(op, UnaryMath::Sin | UnaryMath::Cos);
        let x32: Vec<f32> =
            x32.iter().copied().filter(|x| !trig || x.abs() <= ragtime_jit::SIN_COS_MAX_ARG_F32).collect();
        let x64: Vec<f64> =
            x64.iter().copied().filter(|x| !trig || x.abs() <= ragtime_jit::SIN_COS_MAX_ARG_F64).collect();
        let want32: Vec<f32> = x32.iter().map(|&x| plain_unary_f32(op)(x)).collect();
        let want64: Vec<f64> = x64.iter().map(|&x| plain_unary_f64(op)(x)).collect();
        for vectorize in [true, false] {
            let k = jit.compile_unary::<f32>(op, vectorize).unwrap();
            let what = format!("f32 {} (vectorize {vectorize})", op.name());
            assert_bits(&what, &[&x32], &run(&k, &[&x32]), &want32, |v: f32| u64::from(v.to_bits()));
            let k = jit.compile_unary::<f64>(op, vectorize).unwrap();
            let what = format!("f64 {} (vectorize {vectorize})", op.name());
            assert_bits(&what, &[&x64], &run(&k, &[&x64]), &want64, |v: f64| v.to_bits());
        }
        let mut bulk_out = x32.clone();
        if bulk::unary_f32_in_place(op, &mut bulk_out) {
            let what = format!("bulk f32 {}", op.name());
            assert_bits(&what, &[&x32], &bulk_out, &want32, |v: f32| u64::from(v.to_bits()));
        }
    }
}

#[test]
fn pow_ir_equals_plain() {
    let mut jit = Jit::new().unwrap();
    // Bases: the unary inputs (negative, zero, special included); exponents: a mix of random
    // bit patterns, small integers (odd and even, for the sign rules) and moderate reals.
    let x32 = inputs_f32(0x1234_5678_9abc_def1);
    let x64 = inputs_f64(0x0fed_cba9_8765_4321);
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    let mut y_of = |i: usize| -> f64 {
        match i % 5 {
            0 => f64::from_bits(rng.next()),
            1 => (rng.next() % 41) as f64 - 20.0,
            2 => rng.uniform(-4.0, 4.0),
            3 => [0.0, -0.0, 0.5, f64::INFINITY, f64::NEG_INFINITY, f64::NAN][(rng.next() % 6) as usize],
            _ => rng.uniform(-300.0, 300.0),
        }
    };
    let y32: Vec<f32> = (0..x32.len()).map(|i| y_of(i) as f32).collect();
    let y64: Vec<f64> = (0..x64.len()).map(&mut y_of).collect();
    let want32: Vec<f32> = x32.iter().zip(&y32).map(|(&x, &y)| ragtime_vmath::pow_f32(x, y)).collect();
    let want64: Vec<f64> = x64.iter().zip(&y64).map(|(&x, &y)| ragtime_vmath::pow_f64(x, y)).collect();
    for vectorize in [true, false] {
        let k = jit.compile_pow::<f32>(vectorize).unwrap();
        let what = format!("f32 pow (vectorize {vectorize})");
        assert_bits(&what, &[&x32, &y32], &run(&k, &[&x32, &y32]), &want32, |v: f32| u64::from(v.to_bits()));
        let k = jit.compile_pow::<f64>(vectorize).unwrap();
        let what = format!("f64 pow (vectorize {vectorize})");
        assert_bits(&what, &[&x64, &y64], &run(&k, &[&x64, &y64]), &want64, |v: f64| v.to_bits());
    }
}
