//! Quick speed check of the JIT math kernels against Rust's scalar libm loops (one thread,
//! 10M elements, best of 5). Run: `cargo run --release -p ragtime-jit --example vmath_speed`.

use std::hint::black_box;
use std::time::Instant;

use ragtime_jit::{Jit, UnaryMath};

const N: usize = 10_000_000;

/// Best wall time of `reps` runs, in ns per element.
fn best(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
        * 1e9
        / N as f64
}

fn main() {
    let mut jit = Jit::new().expect("host JIT");
    let x32: Vec<f32> = (0..N).map(|i| ((i % 20_000) as f32 - 10_000.0) * 1e-3).collect();
    let x64: Vec<f64> = x32.iter().map(|&v| f64::from(v)).collect();
    let mut y32 = vec![0.0f32; N];
    let mut y64 = vec![0.0f64; N];
    let sigmoid32 = |v: f32| 1.0 / (1.0 + (-v).exp());
    let sigmoid64 = |v: f64| 1.0 / (1.0 + (-v).exp());
    println!("{:8} {:>5} {:>10} {:>10} {:>7}", "op", "type", "jit ns/el", "std ns/el", "ratio");
    for op in UnaryMath::ALL {
        let k = jit.compile_unary::<f32>(op, true).unwrap();
        let jit_t = best(5, || k.run(&[&x32], &mut y32).unwrap());
        let f: fn(f32) -> f32 = match op {
            UnaryMath::Exp => f32::exp,
            UnaryMath::Log => f32::ln,
            UnaryMath::Tanh => f32::tanh,
            UnaryMath::Sigmoid => sigmoid32,
            UnaryMath::Sin => f32::sin,
            UnaryMath::Cos => f32::cos,
        };
        let std_t = best(5, || {
            for (o, &v) in y32.iter_mut().zip(black_box(&x32)) {
                *o = f(v);
            }
            black_box(&y32);
        });
        println!("{:8} {:>5} {jit_t:>10.3} {std_t:>10.3} {:>7.3}", op.name(), "f32", jit_t / std_t);

        let k = jit.compile_unary::<f64>(op, true).unwrap();
        let jit_t = best(5, || k.run(&[&x64], &mut y64).unwrap());
        let f: fn(f64) -> f64 = match op {
            UnaryMath::Exp => f64::exp,
            UnaryMath::Log => f64::ln,
            UnaryMath::Tanh => f64::tanh,
            UnaryMath::Sigmoid => sigmoid64,
            UnaryMath::Sin => f64::sin,
            UnaryMath::Cos => f64::cos,
        };
        let std_t = best(5, || {
            for (o, &v) in y64.iter_mut().zip(black_box(&x64)) {
                *o = f(v);
            }
            black_box(&y64);
        });
        println!("{:8} {:>5} {jit_t:>10.3} {std_t:>10.3} {:>7.3}", op.name(), "f64", jit_t / std_t);
    }
    let k = jit.compile_pow::<f32>(true).unwrap();
    let e32: Vec<f32> = (0..N).map(|i| (i % 7) as f32 * 0.5 - 1.5).collect();
    let b32: Vec<f32> = x32.iter().map(|v| v.abs() + 0.1).collect();
    let jit_t = best(5, || k.run(&[&b32, &e32], &mut y32).unwrap());
    let std_t = best(5, || {
        for ((o, &a), &b) in y32.iter_mut().zip(black_box(&b32)).zip(&e32) {
            *o = a.powf(b);
        }
        black_box(&y32);
    });
    println!("{:8} {:>5} {jit_t:>10.3} {std_t:>10.3} {:>7.3}", "pow", "f32", jit_t / std_t);
}
