//! Accuracy of the JIT math library against f64 references (f32 functions) and the platform
//! libm (f64 functions), over dense sweeps, random samples and special values, plus the
//! guarantee that vector main loops and scalar tails compute identical bits.
//!
//! Run `cargo test -p ragtime-jit --test accuracy -- --nocapture` to print the measured table.

use ragtime_jit::{Jit, MapKernel, UnaryMath, SIN_COS_MAX_ARG_F32, SIN_COS_MAX_ARG_F64};

/// Maximum error in ulps asserted per function: (f32, f64). These are the documented bounds.
fn bound(op: &str) -> (f64, f64) {
    match op {
        "exp" => (1.5, 2.0),
        "log" => (1.0, 2.0),
        // f32: Eigen's rational approximation (crate docs).
        "tanh" => (4.6, 3.0),
        "sigmoid" => (2.0, 3.0),
        "sin" | "cos" => (2.0, 2.0),
        // |y ln x| ≤ 1 for f64; f32 pow computes in f64 and holds everywhere.
        "pow" => (1.0, 2.0),
        // f64 pow with |y ln x| up to 708: the error of ln is amplified.
        "pow_large" => (1.0, 64.0),
        _ => unreachable!(),
    }
}

mod rng;
use rng::Rng;

/// Spacing of f32 values at magnitude |r| (the denormal spacing below the normal range).
fn ulp32(r: f64) -> f64 {
    let a = r.abs();
    if a < f64::from(f32::MIN_POSITIVE) {
        return 2f64.powi(-149);
    }
    let e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    2f64.powi(e - 23)
}

/// Spacing of f64 values at magnitude |r|.
fn ulp64(r: f64) -> f64 {
    let a = r.abs();
    // Built from bits: powi(2, -1074) would underflow through 1/2^1074.
    let e = ((a.to_bits() >> 52) & 0x7ff) as i64; // biased exponent, 0 for denormals
    let ue = e.max(1) - 52; // biased exponent of the spacing
    if ue >= 1 {
        f64::from_bits((ue as u64) << 52)
    } else {
        f64::from_bits(1u64 << (ue + 51))
    }
}

/// Error of an f32 result against an (f64-accurate) reference, in f32 ulps. Results that are
/// not finite, or references outside f32's range, must match the rounded reference exactly.
fn err32(y: f32, r: f64) -> f64 {
    let rr = r as f32;
    if !y.is_finite() || !rr.is_finite() {
        return if y == rr || (y.is_nan() && rr.is_nan()) { 0.0 } else { f64::INFINITY };
    }
    (f64::from(y) - r).abs() / ulp32(r)
}

/// Error of an f64 result against a reference, in f64 ulps (non-finite values must match).
fn err64(y: f64, r: f64) -> f64 {
    if !y.is_finite() || !r.is_finite() {
        return if y == r || (y.is_nan() && r.is_nan()) { 0.0 } else { f64::INFINITY };
    }
    (y - r).abs() / ulp64(r)
}

/// Largest error and where it happened.
#[derive(Debug, Default, Clone, Copy)]
struct Worst {
    ulp: f64,
    at: f64,
    at2: f64,
    n: usize,
}
impl Worst {
    fn add(&mut self, e: f64, x: f64, x2: f64) {
        self.n += 1;
        if e > self.ulp || e.is_nan() {
            *self = Worst { ulp: e, at: x, at2: x2, n: self.n };
        }
    }
}

fn same_bits32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}
fn same_bits64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn kernels<T: ragtime_jit::JitFloat>(jit: &mut Jit, op: UnaryMath) -> (MapKernel<T>, MapKernel<T>) {
    (jit.compile_unary(op, true).unwrap(), jit.compile_unary(op, false).unwrap())
}

/// `r` (an f32 result computed in f64), or 0 of its sign where it rounds below the smallest
/// normal f32: `exp`, `sigmoid` and `pow` flush such results to zero, as TensorFlow does
/// (`ragtime_vmath` crate docs).
fn ftz32(r: f64) -> f64 {
    if (r as f32).abs() < f32::MIN_POSITIVE {
        0.0f64.copysign(r)
    } else {
        r
    }
}

/// `r`, or 0 of its sign below the smallest normal f64 (see [`ftz32`]).
fn ftz64(r: f64) -> f64 {
    if r.abs() < f64::MIN_POSITIVE {
        0.0f64.copysign(r)
    } else {
        r
    }
}

fn ref32(op: UnaryMath, x: f32) -> f64 {
    let x = f64::from(x);
    match op {
        UnaryMath::Exp => ftz32(x.exp()),
        UnaryMath::Log => x.ln(),
        UnaryMath::Tanh => x.tanh(),
        UnaryMath::Sigmoid => ftz32(1.0 / (1.0 + (-x).exp())),
        UnaryMath::Sin => x.sin(),
        UnaryMath::Cos => x.cos(),
    }
}

/// f64 sigmoid reference, with `1/(1+e)` or `e/(1+e)` refined by one exact-residual step so
/// that only libm's `exp` error remains (damped by `e/(1+e)` ≤ 1/2).
fn sigmoid64(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let e = (-x.abs()).exp();
    let s = 1.0 + e;
    let s_err = e - (s - 1.0); // exact: 1 + e = s + s_err
    let num = if x < 0.0 { e } else { 1.0 };
    let q = num / s;
    let resid = (-q).mul_add(s, num) - q * s_err; // num - q (s + s_err), to first order
    q + resid / s
}

fn ref64(op: UnaryMath, x: f64) -> f64 {
    match op {
        UnaryMath::Exp => ftz64(x.exp()),
        UnaryMath::Log => x.ln(),
        UnaryMath::Tanh => x.tanh(),
        UnaryMath::Sigmoid => ftz64(sigmoid64(x)),
        UnaryMath::Sin => x.sin(),
        UnaryMath::Cos => x.cos(),
    }
}

/// Dense sweep + random inputs for each function, in f32 (finite inputs where the bound holds).
fn inputs32(op: UnaryMath, rng: &mut Rng) -> Vec<f32> {
    let mut xs = Vec::new();
    let sweep = |lo: f64, hi: f64, step: f64| {
        let n = ((hi - lo) / step) as usize;
        (0..=n).map(move |i| (lo + i as f64 * step) as f32)
    };
    match op {
        UnaryMath::Exp => xs.extend(sweep(-110.0, 110.0, 1e-3)),
        UnaryMath::Log => {
            // Every 61st bit pattern of the positive floats: all binades, denormals included.
            xs.extend((1u32..0x7f80_0000).step_by(61).map(f32::from_bits));
            xs.extend(sweep(0.5, 2.0, 1e-6));
        }
        UnaryMath::Tanh => xs.extend(sweep(-20.0, 20.0, 1e-4)),
        UnaryMath::Sigmoid => xs.extend(sweep(-120.0, 120.0, 1e-3)),
        UnaryMath::Sin | UnaryMath::Cos => {
            xs.extend(sweep(-1e4, 1e4, 1.0 / 256.0));
            xs.extend(sweep(-4.0, 4.0, 1e-6));
            let m = f64::from(SIN_COS_MAX_ARG_F32);
            xs.extend((0..500_000).map(|_| rng.uniform(-m, m) as f32));
        }
    }
    // Random values over all magnitudes (log-uniform via random bit patterns), both signs.
    xs.extend(
        (0..200_000).map(|_| f32::from_bits(rng.next() as u32)).filter(|x| {
            x.is_finite() && !matches!(op, UnaryMath::Sin | UnaryMath::Cos if x.abs() > SIN_COS_MAX_ARG_F32)
        }),
    );
    xs
}

fn inputs64(op: UnaryMath, rng: &mut Rng) -> Vec<f64> {
    let mut xs = Vec::new();
    let sweep = |lo: f64, hi: f64, step: f64| {
        let n = ((hi - lo) / step) as usize;
        (0..=n).map(move |i| lo + i as f64 * step)
    };
    match op {
        UnaryMath::Exp => xs.extend(sweep(-760.0, 760.0, 1e-3)),
        UnaryMath::Log => {
            xs.extend((0..1_000_000).map(|_| f64::from_bits(rng.next() >> 1)));
            xs.extend((0..200_000).map(|_| f64::from_bits(rng.next() >> 12))); // denormals
            xs.extend(sweep(0.5, 2.0, 1e-6));
        }
        UnaryMath::Tanh => xs.extend(sweep(-25.0, 25.0, 1e-4)),
        UnaryMath::Sigmoid => xs.extend(sweep(-760.0, 760.0, 1e-3)),
        UnaryMath::Sin | UnaryMath::Cos => {
            xs.extend(sweep(-1e4, 1e4, 1.0 / 256.0));
            xs.extend(sweep(-4.0, 4.0, 1e-6));
            let m = SIN_COS_MAX_ARG_F64;
            xs.extend((0..500_000).map(|_| rng.uniform(-m, m)));
        }
    }
    xs.extend(
        (0..200_000).map(|_| f64::from_bits(rng.next())).filter(|x| {
            x.is_finite() && !matches!(op, UnaryMath::Sin | UnaryMath::Cos if x.abs() > SIN_COS_MAX_ARG_F64)
        }),
    );
    xs
}

#[test]
fn unary_f32_within_bounds_and_vector_equals_scalar() {
    let mut jit = Jit::new().unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut report = Vec::new();
    let mut failed = Vec::new();
    for op in UnaryMath::ALL {
        let (vk, sk) = kernels::<f32>(&mut jit, op);
        let xs = inputs32(op, &mut rng);
        let mut yv = vec![0.0f32; xs.len()];
        let mut ys = vec![0.0f32; xs.len()];
        vk.run(&[&xs], &mut yv).unwrap();
        sk.run(&[&xs], &mut ys).unwrap();
        let mut w = Worst::default();
        for ((&x, &a), &b) in xs.iter().zip(&yv).zip(&ys) {
            assert!(same_bits32(a, b), "{}: vector {a:e} != scalar {b:e} at x = {x:e}", op.name());
            w.add(err32(a, ref32(op, x)), f64::from(x), 0.0);
        }
        report.push(format!("f32 {:8} max {:.3} ulp at x = {:e} ({} inputs)", op.name(), w.ulp, w.at, w.n));
        if w.ulp.is_nan() || w.ulp > bound(op.name()).0 {
            failed.push(format!("{} {:?}", op.name(), w));
        }
    }
    println!("{}", report.join("\n"));
    assert!(failed.is_empty(), "over the documented bound: {failed:?}");
}

#[test]
fn unary_f64_within_bounds_and_vector_equals_scalar() {
    let mut jit = Jit::new().unwrap();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut report = Vec::new();
    let mut failed = Vec::new();
    for op in UnaryMath::ALL {
        let (vk, sk) = kernels::<f64>(&mut jit, op);
        let xs = inputs64(op, &mut rng);
        let mut yv = vec![0.0f64; xs.len()];
        let mut ys = vec![0.0f64; xs.len()];
        vk.run(&[&xs], &mut yv).unwrap();
        sk.run(&[&xs], &mut ys).unwrap();
        let mut w = Worst::default();
        for ((&x, &a), &b) in xs.iter().zip(&yv).zip(&ys) {
            assert!(same_bits64(a, b), "{}: vector {a:e} != scalar {b:e} at x = {x:e}", op.name());
            w.add(err64(a, ref64(op, x)), x, 0.0);
        }
        report.push(format!("f64 {:8} max {:.3} ulp at x = {:e} ({} inputs)", op.name(), w.ulp, w.at, w.n));
        if w.ulp.is_nan() || w.ulp > bound(op.name()).1 {
            failed.push(format!("{} {:?}", op.name(), w));
        }
    }
    println!("{}", report.join("\n"));
    assert!(failed.is_empty(), "over the documented bound: {failed:?}");
}

/// Runs a unary kernel through the vector path and the scalar path and checks both against
/// exact expectations (bit-exact, so the sign of zero counts; any NaN matches NaN).
fn check_exact32(jit: &mut Jit, op: UnaryMath, cases: &[(f32, f32)]) {
    let (vk, sk) = kernels::<f32>(jit, op);
    let xs: Vec<f32> = cases.iter().map(|c| c.0).collect();
    for k in [vk, sk] {
        let mut ys = vec![0.0f32; xs.len()];
        k.run(&[&xs], &mut ys).unwrap();
        for (&(x, want), &got) in cases.iter().zip(&ys) {
            assert!(same_bits32(got, want), "f32 {}({x:e}) = {got:e}, want {want:e}", op.name());
        }
    }
}

fn check_exact64(jit: &mut Jit, op: UnaryMath, cases: &[(f64, f64)]) {
    let (vk, sk) = kernels::<f64>(jit, op);
    let xs: Vec<f64> = cases.iter().map(|c| c.0).collect();
    for k in [vk, sk] {
        let mut ys = vec![0.0f64; xs.len()];
        k.run(&[&xs], &mut ys).unwrap();
        for (&(x, want), &got) in cases.iter().zip(&ys) {
            assert!(same_bits64(got, want), "f64 {}({x:e}) = {got:e}, want {want:e}", op.name());
        }
    }
}

macro_rules! special_cases {
    ($name:ident, $t:ident, $check:ident) => {
        #[test]
        fn $name() {
            const INF: $t = $t::INFINITY;
            const NINF: $t = $t::NEG_INFINITY;
            const NAN: $t = $t::NAN;
            const MAX: $t = $t::MAX;
            const MIN_POSITIVE: $t = $t::MIN_POSITIVE;
            let mut jit = Jit::new().unwrap();
            let tiny: $t = MIN_POSITIVE / 1024.0; // a denormal
            $check(
                &mut jit,
                UnaryMath::Exp,
                &[
                    (NAN, NAN),
                    (INF, INF),
                    (NINF, 0.0),
                    (0.0, 1.0),
                    (-0.0, 1.0),
                    (1000.0, INF),
                    (-1000.0, 0.0),
                    (MAX, INF),
                    (-MAX, 0.0),
                    (tiny, 1.0),
                ],
            );
            $check(
                &mut jit,
                UnaryMath::Log,
                &[
                    (NAN, NAN),
                    (INF, INF),
                    (NINF, NAN),
                    (0.0, NINF),
                    (-0.0, NINF),
                    (-1.0, NAN),
                    (-tiny, NAN),
                    (1.0, 0.0),
                    (-MAX, NAN),
                ],
            );
            $check(
                &mut jit,
                UnaryMath::Tanh,
                &[
                    (NAN, NAN),
                    (INF, 1.0),
                    (NINF, -1.0),
                    (0.0, 0.0),
                    (-0.0, -0.0),
                    (30.0, 1.0),
                    (-30.0, -1.0),
                    (MAX, 1.0),
                    (-MAX, -1.0),
                    (tiny, tiny),
                    (-tiny, -tiny),
                ],
            );
            $check(
                &mut jit,
                UnaryMath::Sigmoid,
                &[
                    (NAN, NAN),
                    (INF, 1.0),
                    (NINF, 0.0),
                    (0.0, 0.5),
                    (-0.0, 0.5),
                    (800.0, 1.0),
                    (-800.0, 0.0),
                    (MAX, 1.0),
                    (-MAX, 0.0),
                    (tiny, 0.5),
                ],
            );
            $check(
                &mut jit,
                UnaryMath::Sin,
                &[(NAN, NAN), (INF, NAN), (NINF, NAN), (0.0, 0.0), (-0.0, -0.0), (tiny, tiny), (-tiny, -tiny)],
            );
            $check(
                &mut jit,
                UnaryMath::Cos,
                &[(NAN, NAN), (INF, NAN), (NINF, NAN), (0.0, 1.0), (-0.0, 1.0), (tiny, 1.0)],
            );
        }
    };
}
special_cases!(special_values_f32, f32, check_exact32);
special_cases!(special_values_f64, f64, check_exact64);

/// Overflow and underflow stay within the bound and denormal results flush to zero (they are in
/// the sweeps too; these pin the edges).
#[test]
fn range_edges_f32() {
    let mut jit = Jit::new().unwrap();
    let exp = jit.compile_unary::<f32>(UnaryMath::Exp, true).unwrap();
    let log = jit.compile_unary::<f32>(UnaryMath::Log, true).unwrap();
    let xs = [88.72283f32, 88.72284, 88.7229, -87.33654, -87.5, -100.0, -103.2789, -103.9, -103.98];
    let mut ys = [0.0f32; 9];
    exp.run(&[&xs], &mut ys).unwrap();
    for (&x, &y) in xs.iter().zip(&ys) {
        let e = err32(y, ftz32(f64::from(x).exp()));
        assert!(e <= 1.5, "exp({x}) = {y:e}: {e} ulp");
    }
    assert_eq!(ys[2], f32::INFINITY);
    assert_eq!(ys[6], 0.0, "a denormal exp result flushes to zero");
    let xs = [f32::from_bits(1), f32::from_bits(0x7f_ffff), f32::MIN_POSITIVE, f32::MAX, 1.0e-40];
    let mut ys = [0.0f32; 5];
    log.run(&[&xs], &mut ys).unwrap();
    for (&x, &y) in xs.iter().zip(&ys) {
        let e = err32(y, f64::from(x).ln());
        assert!(e <= 1.0, "log({x:e}) = {y:e}: {e} ulp");
    }
}

fn pow_ref_check32(x: f32, y: f32, got: f32) -> f64 {
    let r = ftz32(f64::from(x).powf(f64::from(y)));
    let want = r as f32;
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if got.is_sign_negative() != want.is_sign_negative() {
        return f64::INFINITY;
    }
    err32(got, r)
}

fn pow_ref_check64(x: f64, y: f64, got: f64) -> f64 {
    let want = ftz64(x.powf(y));
    if got.is_nan() || want.is_nan() {
        return if got.is_nan() && want.is_nan() { 0.0 } else { f64::INFINITY };
    }
    if got.is_sign_negative() != want.is_sign_negative() {
        return f64::INFINITY;
    }
    err64(got, want)
}

const POW_X: [f64; 22] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.0,
    -2.0,
    3.0,
    -3.0,
    10.0,
    -10.0,
    1e-3,
    1e30,
    -1e30,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    0.999,
    -1.001,
    1e-39,
    -1e-39,
];
const POW_Y: [f64; 26] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.0,
    -2.0,
    3.0,
    -3.0,
    0.5,
    -0.5,
    1.5,
    -1.5,
    100.0,
    -100.0,
    101.0,
    -101.0,
    1e10,
    -1e10,
    16777217.0,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
    1e-3,
    7.0,
    -7.0,
    1024.5,
];

/// Every C99 Annex F special case, against libm's `pow` (bitwise for zeros, infinities, NaNs
/// and ones; within the bound otherwise).
#[test]
fn pow_special_grid() {
    let mut jit = Jit::new().unwrap();
    for vectorize in [true, false] {
        let k32 = jit.compile_pow::<f32>(vectorize).unwrap();
        let k64 = jit.compile_pow::<f64>(vectorize).unwrap();
        let pairs: Vec<(f64, f64)> = POW_X.iter().flat_map(|&x| POW_Y.iter().map(move |&y| (x, y))).collect();
        let xs: Vec<f64> = pairs.iter().map(|p| p.0).collect();
        let ys: Vec<f64> = pairs.iter().map(|p| p.1).collect();
        let mut out = vec![0.0; pairs.len()];
        k64.run(&[&xs, &ys], &mut out).unwrap();
        for ((&x, &y), &got) in xs.iter().zip(&ys).zip(&out) {
            let e = pow_ref_check64(x, y, got);
            assert!(e <= 64.0, "f64 pow({x:e}, {y:e}) = {got:e}, libm {:e}", x.powf(y));
        }
        let xs: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let ys: Vec<f32> = ys.iter().map(|&y| y as f32).collect();
        let mut out = vec![0.0f32; pairs.len()];
        k32.run(&[&xs, &ys], &mut out).unwrap();
        for ((&x, &y), &got) in xs.iter().zip(&ys).zip(&out) {
            let e = pow_ref_check32(x, y, got);
            assert!(e <= 1.0, "f32 pow({x:e}, {y:e}) = {got:e}, libm {:e}", x.powf(y));
        }
    }
}

/// Random pow arguments: positive bases over many magnitudes, negative bases with integer
/// exponents; f64 split by |y ln x| (≤ 1 and up to the overflow threshold).
#[test]
fn pow_random_within_bounds_and_vector_equals_scalar() {
    let mut jit = Jit::new().unwrap();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let n = 400_000;
    let mut xs = Vec::with_capacity(n);
    let mut ys = Vec::with_capacity(n);
    for i in 0..n {
        let x = 10f64.powf(rng.uniform(-30.0, 30.0));
        let y = if i % 4 == 0 { rng.uniform(-40.0, 40.0).round() } else { rng.uniform(-20.0, 20.0) };
        let x = if i % 4 == 0 && i % 8 == 0 { -x } else { x };
        xs.push(x);
        ys.push(y);
    }
    // Also bases near 1, where y ln x is small for large y.
    for _ in 0..n / 4 {
        xs.push(rng.uniform(0.5, 2.0));
        ys.push(rng.uniform(-1000.0, 1000.0));
    }
    let mut report = Vec::new();

    let (v64, s64) = (jit.compile_pow::<f64>(true).unwrap(), jit.compile_pow::<f64>(false).unwrap());
    let mut ov = vec![0.0; xs.len()];
    let mut os = vec![0.0; xs.len()];
    v64.run(&[&xs, &ys], &mut ov).unwrap();
    s64.run(&[&xs, &ys], &mut os).unwrap();
    let (mut small, mut large) = (Worst::default(), Worst::default());
    for i in 0..xs.len() {
        assert!(same_bits64(ov[i], os[i]), "f64 pow vector != scalar at ({}, {})", xs[i], ys[i]);
        let e = pow_ref_check64(xs[i], ys[i], ov[i]);
        if (ys[i] * xs[i].abs().ln()).abs() <= 1.0 {
            small.add(e, xs[i], ys[i]);
        } else {
            large.add(e, xs[i], ys[i]);
        }
    }
    report.push(format!(
        "f64 pow (|y ln x| <= 1) max {:.3} ulp at {:e}^{:e} ({})",
        small.ulp, small.at, small.at2, small.n
    ));
    report.push(format!(
        "f64 pow (|y ln x| > 1)  max {:.3} ulp at {:e}^{:e} ({})",
        large.ulp, large.at, large.at2, large.n
    ));

    let (v32, s32) = (jit.compile_pow::<f32>(true).unwrap(), jit.compile_pow::<f32>(false).unwrap());
    let xf: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
    let yf: Vec<f32> = ys.iter().map(|&y| y as f32).collect();
    let mut ov = vec![0.0f32; xs.len()];
    let mut os = vec![0.0f32; xs.len()];
    v32.run(&[&xf, &yf], &mut ov).unwrap();
    s32.run(&[&xf, &yf], &mut os).unwrap();
    let mut w32 = Worst::default();
    for i in 0..xf.len() {
        assert!(same_bits32(ov[i], os[i]), "f32 pow vector != scalar at ({}, {})", xf[i], yf[i]);
        w32.add(pow_ref_check32(xf[i], yf[i], ov[i]), f64::from(xf[i]), f64::from(yf[i]));
    }
    report.push(format!("f32 pow                 max {:.3} ulp at {:e}^{:e} ({})", w32.ulp, w32.at, w32.at2, w32.n));
    println!("{}", report.join("\n"));
    assert!(w32.ulp <= bound("pow").0, "f32 pow {w32:?}");
    assert!(small.ulp <= bound("pow").1, "f64 pow {small:?}");
    assert!(large.ulp <= bound("pow_large").1, "f64 pow {large:?}");
}
