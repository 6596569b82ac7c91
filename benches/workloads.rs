//! The workloads of `docs/benchmarks.md` (W1-W4) compiled by ragtime, each next to its plain
//! Rust baseline loop over the same buffers, in the same run; outputs are checked against the baseline
//! before any time is reported. Run with `cargo bench --bench workloads` (release build).
//!
//! ragtime runs in its default mode (optimizer + JIT) on `RAGTIME_THREADS` threads (default 1),
//! handing each result back with `Function::recycle` before the next call, as a loop would.

use std::time::{Duration, Instant};

use ragtime::prelude::*;
use ragtime::{DenseTensor, Result};

const NROWS: usize = 1 << 20;
const RUNS: usize = 5;

/// Best wall time of `RUNS` runs after one warm-up.
fn best<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut out = f();
    let mut best = Duration::MAX;
    for _ in 0..RUNS {
        let t = Instant::now();
        out = f();
        best = best.min(t.elapsed());
    }
    (best, out)
}

fn assert_close(name: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{name}: lengths differ");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || (g - w).abs() <= 1e-5 + 1e-4 * w.abs();
        assert!(ok, "{name}: value {i} is {g}, the baseline gives {w}");
    }
}

fn report(name: &str, ragtime: Duration, baseline: Duration) {
    let (r, b) = (ragtime.as_secs_f64() * 1e3, baseline.as_secs_f64() * 1e3);
    println!("{name:18} ragtime {r:9.2} ms   baseline {b:8.2} ms   ratio {:6.1}x   checked", r / b);
}

fn main() -> Result<()> {
    // Data as docs/benchmarks.md fixes it.
    let lengths: Vec<i64> = (0..NROWS).map(|i| ((i * 7919) % 21) as i64).collect();
    let n = lengths.iter().sum::<i64>() as usize;
    let x: Vec<f32> = (0..n).map(|k| (((k * 37) % 1000) as f64 / 1000.0 - 0.5) as f32).collect();
    let z: Vec<f32> = (0..n).map(|k| (((k * 91) % 1000) as f64 / 500.0 - 1.0) as f32).collect();
    let xr = RaggedTensor::from_row_lengths(DenseTensor::vector(x.clone()), &lengths)?;
    let zr = xr.with_flat_values(DenseTensor::vector(z.clone()))?;
    let splits = xr.row_splits()?.to_vec();
    let threads: usize = std::env::var("RAGTIME_THREADS").ok().and_then(|t| t.parse().ok()).unwrap_or(1);
    println!("{NROWS} rows, {n} values, {threads} thread(s) for ragtime, 1 for the baselines, best of {RUNS}");

    let g = Graph::new();
    let xv = g.input("x", TensorType::ragged(DType::F32, 1));
    let zv = g.input("z", TensorType::ragged(DType::F32, 1));
    let inputs = [xr.clone(), zr.clone()];
    // Times calls of the compiled `out`, each handing the previous result back first.
    let call = |out: &Var| -> Result<(Duration, RaggedTensor)> {
        let f = g.compile_with(&[&xv, &zv], &[out], CompileOptions::from(Mode::FastRun).threads(threads))?;
        let mut previous: Option<RaggedTensor> = None;
        let (t, ()) = best(|| {
            f.recycle(previous.take());
            previous = Some(f.call(&inputs).expect("the workload runs").remove(0));
        });
        Ok((t, previous.expect("ran")))
    };
    let values = |t: &RaggedTensor| t.flat_slice::<f32>().expect("float32 output").to_vec();

    // W1: tanh(x * 2 + 1) * z - x; baseline: a scalar tanhf loop.
    let (t, got) = call(&((&xv * 2.0 + 1.0).tanh() * &zv - &xv))?;
    let got = values(&got);
    let mut buf = vec![0f32; n];
    let (b, ()) = best(|| buf.iter_mut().enumerate().for_each(|(k, o)| *o = (x[k] * 2.0 + 1.0).tanh() * z[k] - x[k]));
    assert_close("W1", &got, &buf);
    report("W1_fused_elemwise", t, b);

    // W2: x * 2 + z; baseline: axpy into a reused buffer (the memory-bandwidth limit).
    let (t, got) = call(&(&xv * 2.0 + &zv))?;
    let got = values(&got);
    let (b, ()) = best(|| buf.iter_mut().enumerate().for_each(|(k, o)| *o = x[k] * 2.0 + z[k]));
    assert_close("W2", &got, &buf);
    report("W2_axpy", t, b);

    // W3: reduce_mean(x * 2 + z, axis=1); baseline: a row loop over the offsets.
    let (t, got) = call(&(&xv * 2.0 + &zv).reduce_mean(1))?;
    let got = values(&got);
    let mut means = vec![0f32; NROWS];
    let (b, ()) = best(|| {
        for (r, m) in means.iter_mut().enumerate() {
            let (s, e) = (splits[r] as usize, splits[r + 1] as usize);
            let sum: f32 = (s..e).map(|k| x[k] * 2.0 + z[k]).sum();
            *m = sum / (e - s) as f32;
        }
    });
    assert_close("W3", &got, &means);
    report("W3_row_mean", t, b);

    // W4: row softmax; baseline: three passes over each row.
    let e = (&xv - xv.reduce_max(keepdims(1))).exp();
    let (t, got) = call(&(&e / e.reduce_sum(keepdims(1))))?;
    let got = values(&got);
    let (b, ()) = best(|| {
        for r in 0..NROWS {
            let (s, e) = (splits[r] as usize, splits[r + 1] as usize);
            let max = x[s..e].iter().copied().fold(f32::MIN, f32::max);
            let mut sum = 0f32;
            for k in s..e {
                buf[k] = (x[k] - max).exp();
                sum += buf[k];
            }
            buf[s..e].iter_mut().for_each(|v| *v /= sum);
        }
    });
    assert_close("W4", &got, &buf);
    report("W4_row_softmax", t, b);
    Ok(())
}
