//! Ill-conditioned graphs give the same result in every mode, TensorFlow's where TensorFlow defines it
//! (issue 26): the interpreter and the JIT compute `exp`, `log`, `tanh`, `sigmoid`, `sin`, `cos` and
//! `pow` with the same algorithms (`ragtime-vmath`), so a last-bit difference can no longer be
//! amplified into a different answer. The expected values were computed with TensorFlow 2.21
//! (`tf.math.log(tf.sigmoid(x))`, `tf.math.floor(tf.sqrt(tf.tanh(x)))`, float32).

use ragtime::prelude::*;
use ragtime::{CompileOptions, Mode};

/// Runs `build(x)` on the float32 rows `rows` in FastRun, FastCompile, Debug and FastRun without the
/// JIT, and returns each mode's flat values.
fn in_every_mode(rows: Vec<Vec<f32>>, build: impl Fn(&Var) -> Var) -> Vec<(String, Vec<f32>)> {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let y = build(&x);
    let value = RaggedTensor::from_nested(rows).unwrap();
    let options = [
        ("fast_run", CompileOptions::from(Mode::FastRun)),
        ("fast_compile", CompileOptions::from(Mode::FastCompile)),
        ("debug", CompileOptions::from(Mode::Debug)),
        ("fast_run without jit", CompileOptions::from(Mode::FastRun).excluding("jit")),
    ];
    options
        .into_iter()
        .map(|(name, o)| {
            let f = g.compile_with(&[&x], &[&y], o).unwrap();
            let out = f.call(std::slice::from_ref(&value)).unwrap();
            (name.to_owned(), out[0].flat_slice::<f32>().unwrap().to_vec())
        })
        .collect()
}

fn assert_all_bits(results: &[(String, Vec<f32>)], want: &[f32]) {
    for (mode, got) in results {
        let (g, w): (Vec<u32>, Vec<u32>) =
            (got.iter().map(|v| v.to_bits()).collect(), want.iter().map(|v| v.to_bits()).collect());
        assert_eq!(g, w, "{mode}: got {got:?}, TensorFlow gives {want:?}");
    }
}

#[test]
fn log_of_a_sigmoid_that_underflows_is_minus_infinity_everywhere() {
    // TensorFlow's float32 sigmoid flushes results below the smallest normal float to 0.
    let results = in_every_mode(vec![vec![-91.1, -88.8, -88.0], vec![-87.0, -104.0]], |x| x.sigmoid().log());
    let want = [f32::NEG_INFINITY, f32::NEG_INFINITY, f32::NEG_INFINITY, -87.0, f32::NEG_INFINITY];
    assert_all_bits(&results, &want);
}

#[test]
fn floor_of_the_root_of_a_saturated_tanh_is_one_everywhere() {
    // TensorFlow's float32 tanh is exactly 1 from 7.9073896 on; floor(sqrt(.)) turns the last bit
    // into 0 or 1.
    let results = in_every_mode(vec![vec![8.74, 9.0], vec![20.0]], |x| x.tanh().sqrt().floor());
    assert_all_bits(&results, &[1.0, 1.0, 1.0]);
}

#[test]
fn transcendental_ops_agree_bit_for_bit_between_the_interpreter_and_the_jit() {
    // Not ill-conditioned: any input. The modes must agree exactly, not within a tolerance.
    let rows: Vec<Vec<f32>> =
        (0..64).map(|r| (0..r % 9).map(|k| ((r * 37 + k * 101) % 997) as f32 / 37.0 - 13.0).collect()).collect();
    for (name, f) in [
        ("exp", (|x: &Var| x.exp()) as fn(&Var) -> Var),
        ("log", |x| x.abs().log()),
        ("tanh", |x| x.tanh()),
        ("sigmoid", |x| x.sigmoid()),
        ("sin", |x| x.sin()),
        ("cos", |x| x.cos()),
    ] {
        let results = in_every_mode(rows.clone(), f);
        let reference = &results[1].1;
        for (mode, got) in &results {
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(got), bits(reference), "{name} in {mode} differs from fast_compile");
        }
    }
}
