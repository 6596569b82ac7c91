//! The JIT against the reference interpreter on nested shapes: random fused graphs over ragged
//! rank 2 and 3 tensors (row kernels over the innermost rows, per-row broadcasts of innermost
//! reductions at every level), and over `[.., *, k]` values of ragged rank 1 to 3 with uniform
//! inner dims `k` of 1 to 16 (row kernels over items of `k` values); reductions on every axis,
//! empty rows at every level, all-empty and zero-row inputs, one and several threads.

use proptest::prelude::*;
use ragtime::case::compare;
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, RowPartition};

const SPECIAL: [f64; 12] =
    [0.5, -1.25, 2.0, 0.0, -0.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -3.5, 1e-3, 7.0, 30.0];

/// One random step: (what, operand picks).
type Step = (u8, u8, u8);

/// A graph over `x` and `z` of ragged rank `rank`, scalar items or, with `width`, items of
/// `width` values (`[n, *.., width]`): elementwise ops, reductions over the innermost ragged axis
/// (kept as per-row operands, or returned), softmax over that axis (column by column for vector
/// items), and reductions over every axis, the inner one included.
fn build(g: &Graph, dtype: DType, rank: usize, width: Option<usize>, steps: &[Step]) -> (Vec<Var>, Vec<Var>) {
    let ty = match width {
        Some(width) => TensorType::ragged(dtype, rank).with_inner(&[Some(width)]),
        None => TensorType::ragged(dtype, rank),
    };
    let (x, z) = (g.input("x", ty.clone()), g.input("z", ty));
    let inner = rank as i64;
    let dims = rank as i64 + 1 + i64::from(width.is_some());
    let mut ragged = vec![x.clone(), z.clone()];
    let mut per_row: Vec<Var> = vec![x.reduce_max(keepdims(inner))];
    let mut outputs = Vec::new();
    for &(what, a, b) in steps {
        let r = |k: u8| ragged[k as usize % ragged.len()].clone();
        let p = |k: u8| per_row[k as usize % per_row.len()].clone();
        let v = match what % 16 {
            0 => r(a) + r(b),
            1 => r(a) - p(b),
            2 => r(a) * r(b),
            3 => r(a) / p(b),
            4 => r(a).maximum(&r(b)),
            5 => r(a) * 2.0 + 1.0,
            6 => r(a).exp(),
            7 => r(a).tanh(),
            8 => r(a).minimum(&p(b)),
            9 if width.is_none() => ragtime::ops::softmax(&r(a)),
            9 => {
                // Softmax over the ragged axis, each column on its own (W4's inner-dim form).
                let e = (r(a) - r(a).reduce_max(keepdims(inner))).exp();
                &e / e.reduce_sum(keepdims(inner))
            }
            10 => {
                per_row.push(match b % 4 {
                    0 => r(a).reduce_sum(keepdims(inner)),
                    1 => r(a).reduce_mean(keepdims(inner)),
                    2 => r(a).reduce_max(keepdims(inner)),
                    _ => r(a).reduce_min(keepdims(inner)),
                });
                continue;
            }
            15 => {
                // A map of per-row values (a log-softmax's `log(sum)`, here kept finite): computed
                // once per row inside the row kernel when only its elements read them.
                per_row.push((p(a) * p(b)).abs().sqrt() + 1.0);
                continue;
            }
            11 => {
                // Any axis, the inner one included, negative or not: the innermost ragged axis
                // fuses, the others run as ops.
                let axis = (b as i64 % dims) - if a % 2 == 0 { 0 } else { dims };
                outputs.push(match a % 3 {
                    0 => r(b).reduce_sum(axis),
                    1 => r(b).reduce_max(axis),
                    _ => r(b).reduce_mean(axis),
                });
                continue;
            }
            13 if rank >= 2 => {
                // A reduction over the next outer ragged axis of per-row results (a user's
                // maximum of per-session sums): an outer fold of the row kernel.
                let along = if (a / 20) % 2 == 0 { ragtime::ops::ReduceAxis::from(inner) } else { keepdims(inner) };
                let per_row = match a % 4 {
                    0 => r(b).reduce_sum(along),
                    1 => r(b).reduce_mean(along),
                    2 => r(b).reduce_max(along),
                    _ => r(b).reduce_min(along),
                };
                let axis = if b % 2 == 0 { keepdims(inner - 1) } else { ragtime::ops::ReduceAxis::from(inner - 1) };
                outputs.push(match (a / 4) % 5 {
                    0 => per_row.reduce_sum(axis),
                    1 => per_row.reduce_max(axis),
                    2 => per_row.reduce_min(axis),
                    3 => per_row.reduce_mean(axis),
                    _ => per_row.reduce_prod(axis),
                });
                if a % 3 == 0 {
                    // The per-row results themselves are read too.
                    outputs.push(per_row);
                }
                continue;
            }
            _ => {
                outputs.push(r(a).reduce_sum(inner));
                if b % 2 == 1 {
                    // The same sum in both shapes: one reduction of the kernel, two outputs.
                    outputs.push(r(a).reduce_sum(keepdims(inner)));
                }
                continue;
            }
        };
        ragged.push(v);
    }
    outputs.push(ragged.last().cloned().expect("x"));
    (vec![x, z], outputs)
}

/// Nested partitions of ragged rank `rank`: `nrows` outer rows, each level's row lengths drawn
/// cyclically from `seeds` (zeros make empty rows at that level; all zeros, an all-empty input).
fn partitions(rank: usize, nrows: usize, seeds: &[usize]) -> Vec<RowPartition> {
    let mut count = nrows;
    let mut parts = Vec::with_capacity(rank);
    for level in 0..rank {
        let lengths: Vec<i64> = (0..count).map(|i| seeds[(i * 3 + level * 7) % seeds.len().max(1)] as i64).collect();
        let p = RowPartition::from_row_lengths(&lengths).expect("valid lengths");
        count = p.nvals();
        parts.push(p);
    }
    parts
}

fn data(dtype: DType, parts: &[RowPartition], picks: &[u8], shift: usize) -> RaggedTensor {
    let total = parts.last().map_or(0, |p| p.nvals());
    let values: Vec<f64> = (0..total)
        .map(|i| {
            SPECIAL[picks.get((i + shift) % picks.len().max(1)).copied().unwrap_or(i as u8) as usize % SPECIAL.len()]
        })
        .collect();
    let flat = match dtype {
        DType::F32 => DenseTensor::vector(values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        _ => DenseTensor::vector(values),
    };
    RaggedTensor::new(flat, parts.to_vec()).expect("valid partitions")
}

struct Case<'a> {
    steps: &'a [Step],
    dtype: DType,
    rank: usize,
    nrows: usize,
    seeds: &'a [usize],
    picks: &'a [u8],
    threads: usize,
}

fn check(case: &Case) -> std::result::Result<(), String> {
    let g = Graph::new();
    let (inputs, outputs) = build(&g, case.dtype, case.rank, None, case.steps);
    let ins: Vec<&Var> = inputs.iter().collect();
    let outs: Vec<&Var> = outputs.iter().collect();
    let options = CompileOptions::from(Mode::FastRun).threads(case.threads);
    let jit = g.compile_with(&ins, &outs, options).map_err(|e| e.to_string())?;
    let reference = g.compile_with(&ins, &outs, Mode::FastCompile).map_err(|e| e.to_string())?;
    let parts = partitions(case.rank, case.nrows, case.seeds);
    let x = data(case.dtype, &parts, case.picks, 0);
    let z = data(case.dtype, &parts, case.picks, 5);
    let want = reference.call(&[x.clone(), z.clone()]);
    let got = jit.call(&[x, z]);
    match (want, got) {
        (Ok(w), Ok(o)) => {
            for (k, (a, b)) in w.iter().zip(&o).enumerate() {
                if let Err(why) = compare(a, b) {
                    return Err(format!("output {k}: {why}\n{}", jit.debugprint()));
                }
            }
            Ok(())
        }
        (Err(a), Err(b)) if a.kind() == b.kind() => Ok(()),
        (w, o) => Err(format!("interpreter {w:?}, JIT {o:?}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn nested_jit_kernels_agree_with_the_interpreter(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..10),
        rank in 2usize..4,
        nrows in 0usize..7,
        seeds in prop::collection::vec(prop_oneof![3 => 0usize..6, 1 => Just(0usize)], 1..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        f64s in any::<bool>(),
        threads in 1usize..4,
    ) {
        let dtype = if f64s { DType::F64 } else { DType::F32 };
        let case = Case { steps: &steps, dtype, rank, nrows, seeds: &seeds, picks: &picks, threads };
        let result = check(&case);
        prop_assert!(result.is_ok(), "{}", result.unwrap_err());
    }
}

/// Softmax and row means over axis 2 of ragged rank 2 become one JIT row kernel each, whose
/// reductions keep the outer partition (the same `Arc`).
#[test]
fn innermost_reductions_of_rank_2_are_single_row_kernels() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 2));
    let softmax = ragtime::ops::softmax(&(&x * 2.0));
    let mean = (&x * 2.0 + 1.0).reduce_mean(2);
    for out in [&softmax, &mean] {
        let f = g.compile(&[&x], &[out]).unwrap();
        let printed = f.debugprint();
        assert_eq!(f.rewrite_report().nodes_after, 1, "{printed}");
        assert!(printed.contains("JitRow"), "{printed}");
    }
    let parts = partitions(2, 5, &[3, 0, 2, 4, 1]);
    let value = data(DType::F32, &parts, &[1, 2, 3, 4, 7], 0);
    let f = g.compile(&[&x], &[&mean]).unwrap();
    let out = f.call(std::slice::from_ref(&value)).unwrap();
    assert!(out[0].partitions()[0].ptr_eq(&value.partitions()[0]));
    let reference = g.compile_with(&[&x], &[&mean], Mode::FastCompile).unwrap();
    compare(&reference.call(&[value]).unwrap()[0], &out[0]).unwrap();
}

/// Long inner rows and many threads: the split across threads by innermost rows gives the
/// one-thread results.
#[test]
fn long_nested_rows_split_across_threads_agree_with_one_thread() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 3));
    let e = (&x - x.reduce_max(keepdims(3))).exp();
    let out = &e / e.reduce_sum(keepdims(3));
    let parts = partitions(3, 3_000, &[4, 0, 7, 19, 1, 0, 33]);
    let value = data(DType::F32, &parts, &(0..61).collect::<Vec<u8>>(), 0);
    let one = g.compile_with(&[&x], &[&out], CompileOptions::from(Mode::FastRun).threads(1)).unwrap();
    let four = g.compile_with(&[&x], &[&out], CompileOptions::from(Mode::FastRun).threads(4)).unwrap();
    let reference = g.compile_with(&[&x], &[&out], Mode::FastCompile).unwrap();
    let a = one.call(std::slice::from_ref(&value)).unwrap();
    let b = four.call(std::slice::from_ref(&value)).unwrap();
    assert!(a[0].equals(&b[0]));
    compare(&reference.call(&[value]).unwrap()[0], &a[0]).unwrap();
}

/// `[.., *, width]` vectors on the partitions `parts` (flat element `e`, column `j`).
fn vectors(dtype: DType, parts: &[RowPartition], width: usize, picks: &[u8]) -> RaggedTensor {
    let total = parts.last().map_or(0, |p| p.nvals());
    let values: Vec<f64> = (0..total * width)
        .map(|i| SPECIAL[picks.get(i % picks.len().max(1)).copied().unwrap_or(0) as usize % SPECIAL.len()] + i as f64)
        .collect();
    let flat = match dtype {
        DType::F32 => DenseTensor::from_vec(vec![total, width], values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        _ => DenseTensor::from_vec(vec![total, width], values),
    };
    RaggedTensor::new(flat.expect("valid shape"), parts.to_vec()).expect("valid partitions")
}

/// Weighted sums of each innermost row's vectors, then an optional reduction over the next outer
/// ragged axis (`outer`: 0 none, 1 sum, 2 max, 3 min, 4 prod, 5 mean, which is not fused).
fn pooling(w: &Var, f: &Var, rank: usize, outer: u8, weights_first: bool) -> Var {
    let a = w.expand_dims(-1);
    let m = if weights_first { a * f } else { f * a };
    let p = m.reduce_sum(rank as i64);
    let axis = rank as i64 - 1;
    match outer {
        1 => p.reduce_sum(axis),
        2 => p.reduce_max(axis),
        3 => p.reduce_min(axis),
        4 => p.reduce_prod(axis),
        5 => p.reduce_mean(axis),
        _ => p,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Row pooling over ragged ranks 2 and 3, widths 1 to 16, every outer reduction, empty rows at
    /// every level: bit-identical to the interpreter (the same operations in the same order), and
    /// fused into one node wherever the law applies; an outer mean (not fused: a JIT row
    /// reduction after the pooling) within the tolerance.
    #[test]
    fn row_pooling_is_bit_identical_to_the_unfused_ops(
        rank in 2usize..4,
        width in 1usize..17,
        outer in 0u8..6,
        weights_first in any::<bool>(),
        nrows in 0usize..7,
        seeds in prop::collection::vec(prop_oneof![3 => 0usize..6, 1 => Just(0usize)], 1..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        f64s in any::<bool>(),
        threads in 1usize..4,
        softmax_weights in any::<bool>(),
    ) {
        let dtype = if f64s { DType::F64 } else { DType::F32 };
        let g = Graph::new();
        let w = g.input("w", TensorType::ragged(dtype, rank));
        let f = g.input("f", TensorType::ragged(dtype, rank).with_inner(&[Some(width)]));
        // With softmax weights (W9's), the row kernel computing them is fused into the pooling
        // (`local_pooling_weights`).
        let weights = if softmax_weights { ragtime::ops::softmax(&(&w * 2.0)) } else { w.clone() };
        let out = pooling(&weights, &f, rank, outer, weights_first);
        let options = CompileOptions::from(Mode::FastRun).threads(threads);
        let jit = g.compile_with(&[&w, &f], &[&out], options).unwrap();
        let reference = g.compile_with(&[&w, &f], &[&out], Mode::FastCompile).unwrap();
        let printed = jit.debugprint();
        prop_assert!(printed.contains("RowPooling"), "{}", printed);
        prop_assert_eq!(printed.contains("RowPooling{w = RowKernel{"), softmax_weights, "{}", printed);
        let fused_outer = (1..5).contains(&outer);
        prop_assert_eq!(jit.rewrite_report().nodes_after, if fused_outer || outer == 0 { 1 } else { 2 }, "{}", printed);
        let parts = partitions(rank, nrows, &seeds);
        let inputs = [data(dtype, &parts, &picks, 0), vectors(dtype, &parts, width, &picks)];
        let want = reference.call(&inputs).unwrap();
        let got = jit.call(&inputs).unwrap();
        if softmax_weights {
            // The softmax kernel's vector sums reassociate (the suite's tolerance); the fused
            // weights give the bits of the same kernels run as two nodes.
            let options = unfused_options().threads(threads);
            let unfused = g.compile_with(&[&w, &f], &[&out], options).unwrap().call(&inputs).unwrap();
            prop_assert!(unfused[0].equals(&got[0]), "fused {} vs two nodes {}", got[0], unfused[0]);
            let same = compare(&want[0], &got[0]);
            prop_assert!(same.is_ok(), "{:?}", same);
        } else if outer == 5 {
            // The mean over the pooled vectors is not fused: it runs as a JIT row reduction,
            // whose vector sums reassociate (the one difference from the interpreter allowed,
            // as in `tests/jit.rs`): the suite's tolerance.
            let same = compare(&want[0], &got[0]);
            prop_assert!(same.is_ok(), "{:?}\n{}", same, printed);
        } else {
            prop_assert!(want[0].dtype() == got[0].dtype() && want[0].equals(&got[0]), "JIT {} vs reference {}\n{}", got[0], want[0], printed);
        }
    }
}

/// `Mode::FastRun` without `local_pooling_weights`: the weights kernel and the pooling as two
/// nodes, the form the fused one must reproduce bit for bit.
fn unfused_options() -> CompileOptions {
    CompileOptions::from(Mode::FastRun).excluding("local_pooling_weights")
}

/// Operands whose partitions differ at run time (equal shapes, other row lengths) run the
/// original ops, which report the error the unfused graph reports.
#[test]
fn row_pooling_of_mismatched_partitions_fails_as_the_unfused_ops_do() {
    let g = Graph::new();
    let w = g.input("w", TensorType::ragged(DType::F32, 2));
    let f = g.input("f", TensorType::ragged(DType::F32, 2).with_inner(&[Some(8)]));
    let out = pooling(&w, &f, 2, 2, true);
    let jit = g.compile(&[&w, &f], &[&out]).unwrap();
    let reference = g.compile_with(&[&w, &f], &[&out], Mode::FastCompile).unwrap();
    let wv = data(DType::F32, &partitions(2, 4, &[2, 3]), &[1, 2], 0);
    let fv = vectors(DType::F32, &partitions(2, 4, &[3, 2]), 8, &[3]);
    let (a, b) = (jit.call(&[wv.clone(), fv.clone()]), reference.call(&[wv, fv]));
    assert_eq!(a.unwrap_err().kind(), b.unwrap_err().kind());
}

/// W9's graph: softmax over each session's events, weighted sum of the feature vectors, maximum
/// over each user's sessions: one node (`local_pooling_weights`: the pooling with the softmax
/// kernel fused in, computing the weights block by block), or two without that rewrite (the
/// softmax row kernel, then the pooling), within the conformance tolerance of the interpreter on
/// nested data with empty sessions and users, the one node bit-identical to the two.
#[test]
fn nested_attention_is_two_nodes_or_one_with_the_weights_fused() {
    let g = Graph::new();
    let d = g.input("d", TensorType::ragged(DType::F32, 2));
    let f = g.input("f", TensorType::ragged(DType::F32, 2).with_inner(&[Some(8)]));
    let a = ragtime::ops::softmax(&(&d * 2.0));
    let out = (a.expand_dims(-1) * &f).reduce_sum(2).reduce_max(1);
    let jit = g.compile(&[&d, &f], &[&out]).unwrap();
    let printed = jit.debugprint();
    assert_eq!(jit.rewrite_report().nodes_after, 1, "{printed}");
    assert!(printed.contains("JitRowPooling{w = RowKernel{"), "{printed}");
    let unfused = g.compile_with(&[&d, &f], &[&out], unfused_options()).unwrap();
    assert_eq!(unfused.rewrite_report().nodes_after, 2, "{}", unfused.debugprint());
    let reference = g.compile_with(&[&d, &f], &[&out], Mode::FastCompile).unwrap();
    let debug = g.compile_with(&[&d, &f], &[&out], Mode::Debug).unwrap();
    for (users, seeds) in [(50, &[0, 3, 1, 4, 0, 2, 5][..]), (0, &[1][..]), (7, &[0][..]), (300, &[2, 9, 0, 70, 1][..])]
    {
        let parts = partitions(2, users, seeds);
        let inputs = [data(DType::F32, &parts, &[0, 1, 2, 3, 8, 9], 0), vectors(DType::F32, &parts, 8, &[0, 2, 9])];
        let got = jit.call(&inputs).unwrap();
        assert!(got[0].equals(&unfused.call(&inputs).unwrap()[0]), "{users} users");
        compare(&reference.call(&inputs).unwrap()[0], &got[0]).unwrap();
        debug.call(&inputs).unwrap();
    }
}

/// The fused weights and pooling split across threads by users (W9's shape, with and without the
/// outer reduction): the bits of one thread, and of the same kernels run as two nodes.
#[test]
fn nested_attention_split_across_threads_gives_the_one_thread_bits() {
    let g = Graph::new();
    let d = g.input("d", TensorType::ragged(DType::F32, 2));
    let f = g.input("f", TensorType::ragged(DType::F32, 2).with_inner(&[Some(8)]));
    let parts = partitions(2, 40_000, &[0, 3, 1, 4, 0, 2, 5]);
    let inputs = [data(DType::F32, &parts, &[0, 1, 2, 3, 8, 9], 0), vectors(DType::F32, &parts, 8, &[0, 2, 9])];
    let a = ragtime::ops::softmax(&(&d * 2.0));
    let pooled = (a.expand_dims(-1) * &f).reduce_sum(2);
    for out in [pooled.clone(), pooled.reduce_max(1)] {
        let run = |options: CompileOptions| {
            let f = g.compile_with(&[&d, &f], &[&out], options).unwrap();
            f.call(&inputs).unwrap().remove(0)
        };
        let fused = CompileOptions::from(Mode::FastRun);
        let one = run(fused.clone().threads(1));
        assert!(one.equals(&run(fused.threads(3))));
        assert!(one.equals(&run(unfused_options().threads(2))));
    }
}

/// Outer rows with more elements than a scratch block (ragged rank 3, float64, five columns, a
/// minimum over the middle axis): the blocks of one outer row, the same bits as two nodes.
#[test]
fn nested_attention_over_long_outer_rows_gives_the_two_node_bits() {
    let g = Graph::new();
    let d = g.input("d", TensorType::ragged(DType::F64, 3));
    let f = g.input("f", TensorType::ragged(DType::F64, 3).with_inner(&[Some(5)]));
    let a = ragtime::ops::softmax(&(&d * 2.0));
    let out = (a.expand_dims(-1) * &f).reduce_sum(3).reduce_min(2);
    let parts = partitions(3, 300, &[0, 3, 1, 4, 0, 2, 5, 70]);
    let inputs = [data(DType::F64, &parts, &[0, 1, 2, 3, 8, 9], 0), vectors(DType::F64, &parts, 5, &[0, 2, 9])];
    let fused = g.compile(&[&d, &f], &[&out]).unwrap();
    assert_eq!(fused.rewrite_report().nodes_after, 1, "{}", fused.debugprint());
    let unfused = g.compile_with(&[&d, &f], &[&out], unfused_options()).unwrap();
    let got = fused.call(&inputs).unwrap().remove(0);
    assert!(got.equals(&unfused.call(&inputs).unwrap()[0]));
    let reference = g.compile_with(&[&d, &f], &[&out], Mode::FastCompile).unwrap();
    compare(&reference.call(&inputs).unwrap()[0], &got).unwrap();
}

/// Enough users for the pooling to split across threads: the bits of one thread.
#[test]
fn row_pooling_split_across_threads_gives_the_one_thread_bits() {
    let g = Graph::new();
    let w = g.input("w", TensorType::ragged(DType::F32, 2));
    let f = g.input("f", TensorType::ragged(DType::F32, 2).with_inner(&[Some(8)]));
    let parts = partitions(2, 100_000, &[0, 3, 1, 4, 0, 2, 5]);
    let inputs = [data(DType::F32, &parts, &[0, 1, 2, 3, 8, 9], 0), vectors(DType::F32, &parts, 8, &[0, 2, 9])];
    for outer in [0, 2] {
        let out = pooling(&w, &f, 2, outer, true);
        let run = |threads: usize| {
            let options = CompileOptions::from(Mode::FastRun).threads(threads);
            g.compile_with(&[&w, &f], &[&out], options).unwrap().call(&inputs).unwrap().remove(0)
        };
        let one = run(1);
        assert!(one.equals(&run(4)), "outer {outer}");
        let reference = g.compile_with(&[&w, &f], &[&out], Mode::FastCompile).unwrap();
        assert!(one.equals(&reference.call(&inputs).unwrap()[0]), "outer {outer}");
    }
}

/// Innermost rows of more than `FOLD_BLOCK` (1024) elements: the unfused sum folds their
/// products' items pairwise (`reduce::fold_items`), and the pooling folds them the same way, for
/// fixed and any widths, with and without an outer reduction: the same bits.
#[test]
fn row_pooling_over_rows_longer_than_a_fold_block_gives_the_unfused_bits() {
    let parts = partitions(2, 6, &[1, 3000, 0, 2, 1100, 2049]);
    assert!(parts[1].max_row_length() > 2048);
    for width in [8, 5] {
        let g = Graph::new();
        let w = g.input("w", TensorType::ragged(DType::F32, 2));
        let f = g.input("f", TensorType::ragged(DType::F32, 2).with_inner(&[Some(width)]));
        let inputs = [data(DType::F32, &parts, &[0, 1, 2, 9, 10], 0), vectors(DType::F32, &parts, width, &[0, 2, 9])];
        for outer in [0, 1, 2] {
            let out = pooling(&w, &f, 2, outer, true);
            let fused = g.compile_with(&[&w, &f], &[&out], CompileOptions::from(Mode::FastRun)).unwrap();
            assert!(fused.debugprint().contains("RowPooling"), "{}", fused.debugprint());
            let got = fused.call(&inputs).unwrap().remove(0);
            let reference = g.compile_with(&[&w, &f], &[&out], Mode::FastCompile).unwrap();
            let want = reference.call(&inputs).unwrap().remove(0);
            assert!(got.equals(&want), "width {width}, outer {outer}: fused {got} vs reference {want}");
        }
    }
}

/// `[.., *, width]` values on `parts` drawn from `SPECIAL` by `picks` (from `shift` on).
fn items(dtype: DType, parts: &[RowPartition], width: usize, picks: &[u8], shift: usize) -> RaggedTensor {
    let total = parts.last().map_or(0, |p| p.nvals()) * width;
    let values: Vec<f64> = (0..total)
        .map(|i| SPECIAL[picks.get((i + shift) % picks.len().max(1)).copied().unwrap_or(0) as usize % SPECIAL.len()])
        .collect();
    let nvals = total / width;
    let flat = match dtype {
        DType::F32 => DenseTensor::from_vec(vec![nvals, width], values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        _ => DenseTensor::from_vec(vec![nvals, width], values),
    };
    RaggedTensor::new(flat.expect("valid shape"), parts.to_vec()).expect("valid partitions")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 384, ..ProptestConfig::default() })]

    /// Random fused graphs over `[.., *, k]` values: the interpreter's results, bit for bit when
    /// items have several values (each column is folded in item order, as the reference folds
    /// it), within the tolerance for `k = 1` (scalar items' vector folds reassociate sums) and
    /// where a kernel's rows are the last axis (`axis=-1 of k`: folds of scalars too).
    #[test]
    fn inner_dim_jit_kernels_agree_with_the_interpreter(
        steps in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..10),
        rank in 1usize..4,
        width in 1usize..17,
        nrows in 0usize..7,
        seeds in prop::collection::vec(prop_oneof![3 => 0usize..6, 1 => Just(0usize)], 1..9),
        picks in prop::collection::vec(any::<u8>(), 1..64),
        f64s in any::<bool>(),
        threads in 1usize..4,
    ) {
        let dtype = if f64s { DType::F64 } else { DType::F32 };
        let g = Graph::new();
        let (inputs, outputs) = build(&g, dtype, rank, Some(width), &steps);
        let ins: Vec<&Var> = inputs.iter().collect();
        let outs: Vec<&Var> = outputs.iter().collect();
        let jit = g.compile_with(&ins, &outs, CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
        let reference = g.compile_with(&ins, &outs, Mode::FastCompile).unwrap();
        let parts = partitions(rank, nrows, &seeds);
        let values = [items(dtype, &parts, width, &picks, 0), items(dtype, &parts, width, &picks, 5)];
        match (reference.call(&values), jit.call(&values)) {
            (Ok(want), Ok(got)) => {
                for (k, (a, b)) in want.iter().zip(&got).enumerate() {
                    if width > 1 && !jit.debugprint().contains("axis=-1 of") {
                        prop_assert!(a.equals(b), "output {}: JIT {} vs reference {}\n{}", k, b, a, jit.debugprint());
                    } else {
                        let same = compare(a, b);
                        prop_assert!(same.is_ok(), "output {}: {:?}\n{}", k, same, jit.debugprint());
                    }
                }
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.kind(), b.kind()),
            (w, o) => prop_assert!(false, "interpreter {:?}, JIT {:?}", w, o),
        }
    }
}

/// W3's and W4's inner-dim forms (`[n, *, k]`, ragged ranks 1 and 2) are one JIT row kernel each,
/// for widths that fill whole vectors and for ones that do not.
#[test]
fn inner_dim_means_and_softmaxes_are_single_row_kernels() {
    for (rank, width) in [(1, 8), (1, 3), (2, 8), (2, 5), (1, 16)] {
        let g = Graph::new();
        let ty = TensorType::ragged(DType::F32, rank).with_inner(&[Some(width)]);
        let (x, z) = (g.input("x", ty.clone()), g.input("z", ty));
        let axis = rank as i64;
        let mean = (&x * 2.0 + &z).reduce_mean(axis);
        let e = (&x - x.reduce_max(keepdims(axis))).exp();
        let softmax = &e / e.reduce_sum(keepdims(axis));
        let parts = partitions(rank, 40, &[3, 0, 2, 4, 1, 9]);
        let values =
            [items(DType::F32, &parts, width, &[1, 2, 3, 8, 9, 10], 0), items(DType::F32, &parts, width, &[7, 1], 1)];
        for out in [&mean, &softmax] {
            let f = g.compile(&[&x, &z], &[out]).unwrap();
            let printed = f.debugprint();
            assert_eq!(f.rewrite_report().nodes_after, 1, "{printed}");
            assert!(printed.contains("JitRow"), "{printed}");
            let reference = g.compile_with(&[&x, &z], &[out], Mode::FastCompile).unwrap();
            let (want, got) = (reference.call(&values).unwrap(), f.call(&values).unwrap());
            assert!(want[0].equals(&got[0]), "rank {rank}, width {width}: JIT {} vs reference {}", got[0], want[0]);
        }
    }
}

/// Reductions over the next outer ragged axis of a row kernel's per-row results (a user's maximum
/// of per-session sums, over ragged ranks 2 and 3, scalar and vector items) are outputs of that
/// kernel: one node, the interpreter's results (bit for bit over vector items).
#[test]
fn outer_axis_reductions_of_per_row_results_are_outputs_of_the_row_kernel() {
    for (rank, width) in [(2, None), (3, None), (2, Some(8)), (3, Some(3))] {
        let g = Graph::new();
        let ty = match width {
            Some(w) => TensorType::ragged(DType::F32, rank).with_inner(&[Some(w)]),
            None => TensorType::ragged(DType::F32, rank),
        };
        let x = g.input("x", ty);
        let axis = rank as i64;
        let sums = (&x * 2.0).reduce_sum(axis);
        let user_max = sums.reduce_max(axis - 1);
        let user_mean = (&x * 2.0).reduce_mean(keepdims(axis)).reduce_mean(keepdims(axis - 1));
        let parts = partitions(rank, 40, &[3, 0, 2, 4, 1, 9]);
        let value = match width {
            Some(w) => items(DType::F32, &parts, w, &[1, 2, 3, 8, 9, 10], 0),
            None => data(DType::F32, &parts, &[1, 2, 3, 8, 9, 10], 0),
        };
        for outs in [vec![&user_max], vec![&user_max, &sums], vec![&user_mean, &user_max]] {
            let f = g.compile(&[&x], &outs).unwrap();
            let printed = f.debugprint();
            assert_eq!(f.rewrite_report().nodes_after, 1, "{printed}");
            assert!(printed.contains("JitRowKernel") && printed.contains("over outer rows"), "{printed}");
            let reference = g.compile_with(&[&x], &outs, Mode::FastCompile).unwrap();
            let (want, got) =
                (reference.call(std::slice::from_ref(&value)).unwrap(), f.call(std::slice::from_ref(&value)).unwrap());
            for (a, b) in want.iter().zip(&got) {
                if width.is_some() {
                    assert!(a.equals(b), "rank {rank}, width {width:?}: JIT {b} vs reference {a}");
                } else {
                    compare(a, b).unwrap();
                }
            }
        }
    }
}
