//! A memory budget bounds a call the same way in every mode: under `with_memory_budget(1 MiB)`,
//! FastRun, FastCompile and Debug (whose replays of each rewrite stage are checks, run under a
//! budget of their own) all succeed with the same values, or all fail with the budget's error
//! kind (`resource_exhausted`, naming the budget).

use ragtime::ops;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, ErrorKind, Result};

const BUDGET: usize = 1 << 20;

/// The outcome of one call in each mode: values, or the error's kind and message.
fn outcomes(
    g: &Graph,
    inputs: &[&Var],
    outputs: &[&Var],
    values: &[RaggedTensor],
) -> Vec<(Mode, Result<Vec<RaggedTensor>>)> {
    [Mode::FastRun, Mode::FastCompile, Mode::Debug]
        .into_iter()
        .map(|mode| {
            let f = g.compile_with(inputs, outputs, CompileOptions::from(mode)).unwrap().with_memory_budget(BUDGET);
            (mode, f.call(values))
        })
        .collect()
}

/// Asserts the three modes agree: the same values (within the conformance tolerance; the JIT's
/// polynomial math may differ in the last bits), or the budget's error in each. Returns whether
/// the call fit.
fn assert_same_in_every_mode(what: &str, outcomes: &[(Mode, Result<Vec<RaggedTensor>>)]) -> bool {
    let fits = outcomes[0].1.is_ok();
    for (mode, outcome) in outcomes {
        match (outcome, &outcomes[0].1) {
            (Ok(got), Ok(want)) => {
                for (g, w) in got.iter().zip(want) {
                    if let Err(why) = ragtime::case::compare(w, g) {
                        panic!("{what}, {mode:?}: {why}");
                    }
                }
            }
            (Err(e), Err(_)) => {
                assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "{what}, {mode:?}: {e}");
                assert!(e.to_string().contains("memory budget of 1048576 bytes"), "{what}, {mode:?}: {e}");
            }
            (got, want) => panic!("{what}: {mode:?} gave {got:?}, FastRun {want:?}"),
        }
    }
    fits
}

#[test]
fn a_one_mib_budget_behaves_the_same_in_every_mode() {
    // Tiling charges its result and indices (20 bytes per value): 2^14 values fit in 1 MiB,
    // 2^16 do not. Several rewrite stages apply (constant folding, elementwise fusion).
    let g = Graph::new();
    let x = g.input("x", TensorType::vector(DType::I32));
    let tiled = ops::tile(&(&(&x * 2) + 1), &[1 << 12]);
    let y = &(&tiled * 3) - &tiled;
    let input: RaggedTensor = DenseTensor::vector(vec![1i32, 2, 3, 4]).into();
    assert!(assert_same_in_every_mode("tile 2^12", &outcomes(&g, &[&x], &[&y], std::slice::from_ref(&input))));
    let g = Graph::new();
    let x = g.input("x", TensorType::vector(DType::I32));
    let tiled = ops::tile(&(&(&x * 2) + 1), &[1 << 14]);
    let y = &(&tiled * 3) - &tiled;
    assert!(!assert_same_in_every_mode("tile 2^14", &outcomes(&g, &[&x], &[&y], std::slice::from_ref(&input))));

    // Row softmax and row means of ragged rows (row fusion into one JIT row kernel in FastRun and
    // Debug; separate reference kernels in FastCompile).
    let outcomes_for_rows = |rows: usize| {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let outputs = [x.softmax(), x.reduce_mean(1), (&x * 0.5).reduce_max(1)];
        let lengths: Vec<i64> = (0..rows).map(|i| (i % 16) as i64).collect();
        let n = lengths.iter().sum::<i64>() as usize;
        let values: Vec<f32> = (0..n).map(|i| (i % 101) as f32 / 10.0 - 5.0).collect();
        let input = RaggedTensor::from_row_lengths(values, &lengths).unwrap();
        outcomes(&g, &[&x], &outputs.iter().collect::<Vec<_>>(), &[input])
    };
    assert!(assert_same_in_every_mode("softmax of 2^12 rows", &outcomes_for_rows(1 << 12)));
    // Larger, the JIT kernel's outputs (charged, as every buffer allocated for a call) pass the
    // budget, while FastCompile's results (elementwise, or one value per row: not charged) do
    // not: Debug, which runs the same kernels, fails exactly as FastRun does, with the budget's
    // error and not a rewrite blamed for it.
    let outcomes = outcomes_for_rows(1 << 16);
    assert!(outcomes[1].1.is_ok(), "FastCompile fits: {:?}", outcomes[1].1.as_ref().err());
    assert!(!assert_same_in_every_mode(
        "softmax of 2^16 rows, FastRun and Debug",
        &[outcomes[0].clone(), outcomes[2].clone()]
    ));
}
