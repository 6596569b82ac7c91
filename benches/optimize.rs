//! Optimizer speed: `compile()` of W4's graph and of a 2,000-node random elementwise graph, in
//! release mode (`cargo bench --bench optimize`). Prints the best of several runs and the report.

use std::time::{Duration, Instant};

use ragtime::prelude::*;

fn best(runs: usize, mut f: impl FnMut() -> Duration) -> Duration {
    (0..runs).map(|_| f()).min().unwrap_or_default()
}

fn main() -> ragtime::Result<()> {
    // W4: row softmax.
    let w4 = best(50, || {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let e = (&x - x.reduce_max(keepdims(1))).exp();
        let y = &e / e.reduce_sum(keepdims(1));
        let start = Instant::now();
        let f = compile(&[&x], &[&y]).expect("W4 compiles");
        let t = start.elapsed();
        assert_eq!(f.rewrite_report().nodes_after, 1);
        t
    });
    println!("compile W4 (5 nodes -> 1): {w4:?}");

    // A 2,000-node random elementwise DAG over two ragged inputs (SplitMix64, fixed seed).
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let z = g.input("z", TensorType::ragged(DType::F32, 1));
    let mut pool = vec![x.clone(), z.clone()];
    for _ in 0..2000 {
        // Mostly recent values, so nearly every node is reachable from the outputs.
        let a = pool[pool.len() - 1 - (next() as usize) % pool.len().min(3)].clone();
        let b = pool[(next() as usize) % pool.len()].clone();
        let v = match next() % 6 {
            0 => &a + &b,
            1 => &a * &b,
            2 => &a - 0.5,
            3 => a.tanh(),
            4 => a.maximum(&b),
            _ => &a * 2.0,
        };
        pool.push(v);
    }
    let outputs: Vec<&Var> = pool[pool.len() - 8..].iter().collect();
    let mut last = None;
    let t = best(5, || {
        let start = Instant::now();
        let f = compile(&[&x, &z], &outputs).expect("the random graph compiles");
        let t = start.elapsed();
        last = Some(f.rewrite_report().clone());
        t
    });
    let report = last.expect("ran");
    println!(
        "compile 2,000-node random elementwise graph ({} -> {} nodes): {t:?}",
        report.nodes_before, report.nodes_after
    );
    println!("{report}");
    Ok(())
}
