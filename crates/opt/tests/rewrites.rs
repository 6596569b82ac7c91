//! Each rewrite's law, shown on a small graph: what it removes, what it must leave alone (IEEE
//! floats), and that the optimized graph computes exactly what the unoptimized one does.

use std::sync::Arc;

use ragtime_core::{ragged, DType, DenseTensor, ExecContext, Literal, RaggedTensor, StringTensor, TensorType};
use ragtime_graph::{FunctionGraph, Graph, OpRef, VarId};
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::gather::Gather;
use ragtime_ops::index::{GetItem, Key};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_ops::rows::Softmax;
use ragtime_ops::s;
use ragtime_ops::strings::{Join, Ngrams, ToHashBucketFast};
use ragtime_ops::structure::{Concat, Fill, Stack};
use ragtime_ops::structure::{Identity, Nrows};
use ragtime_opt::{optimize, Level, OptimizeOptions};
use ragtime_runtime::Interpreter;

fn ew(op: ScalarOp) -> OpRef {
    Arc::new(Elemwise::new(op))
}

fn f32c(g: &mut Graph, v: f32) -> VarId {
    g.constant(DenseTensor::scalar(v).into())
}

fn apply(g: &mut Graph, op: OpRef, inputs: &[VarId]) -> VarId {
    g.apply(op, inputs).unwrap()[0]
}

/// Optimizes `outputs` of `g` (inputs `inputs`) with `excluding`, runs both graphs on `values`,
/// asserts bit-identical results, and returns the optimized node count and its ops' names.
fn check(
    g: &Graph,
    inputs: &[VarId],
    outputs: &[VarId],
    values: &[RaggedTensor],
    excluding: &[&str],
) -> (usize, Vec<String>) {
    let plain = FunctionGraph::new(g, inputs, outputs).unwrap();
    let mut fg = plain.clone();
    let opts = OptimizeOptions {
        level: Level::Full,
        excluding: excluding.iter().map(|s| s.to_string()).collect(),
        including: vec![],
    };
    optimize(&mut fg, &opts).unwrap();
    assert!(fg.verify().is_empty(), "{:?}", fg.verify());
    let want = Interpreter::new(&plain).unwrap().run(&plain, &ExecContext::default(), values);
    let got = Interpreter::new(&fg).unwrap().run(&fg, &ExecContext::default(), values);
    match (&want, &got) {
        (Ok(w), Ok(o)) => {
            for (a, b) in w.iter().zip(o) {
                assert!(a.dtype() == b.dtype() && a.equals(b), "optimized result {b} differs from unoptimized {a}");
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{a} vs {b}"),
        _ => panic!("unoptimized gave {want:?}, optimized {got:?}"),
    }
    let names = fg.toposort().unwrap().into_iter().map(|n| fg.node(n).unwrap().op.name()).collect();
    (fg.node_count(), names)
}

fn rx() -> (Graph, VarId, RaggedTensor) {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1)).unwrap();
    let v = ragged![[1.5f32, -0.0, f32::NAN], [], [f32::INFINITY, -2.0]].unwrap();
    (g, x, v)
}

const NO_FUSION: &[&str] = &["fusion"];

#[test]
fn mul_one_and_div_one_vanish_for_every_float() {
    let (mut g, x, v) = rx();
    let one = f32c(&mut g, 1.0);
    let a = apply(&mut g, ew(ScalarOp::Multiply), &[one, x]);
    let b = apply(&mut g, ew(ScalarOp::Divide), &[a, one]);
    assert_eq!(check(&g, &[x], &[b], &[v], NO_FUSION).0, 0, "x * 1 / 1 is x");
}

#[test]
fn add_zero_respects_signed_zeros() {
    let (mut g, x, v) = rx();
    // -0.0 + 0.0 is +0.0, so x + 0.0 must stay; x + (-0.0) and x - 0.0 are x.
    let zero = f32c(&mut g, 0.0);
    let neg_zero = f32c(&mut g, -0.0);
    let kept = apply(&mut g, ew(ScalarOp::Add), &[x, zero]);
    assert_eq!(check(&g, &[x], &[kept], std::slice::from_ref(&v), NO_FUSION).0, 1, "x + 0.0 is not x in IEEE");
    let gone = apply(&mut g, ew(ScalarOp::Add), &[neg_zero, x]);
    let gone = apply(&mut g, ew(ScalarOp::Subtract), &[gone, zero]);
    assert_eq!(check(&g, &[x], &[gone], &[v], NO_FUSION).0, 0, "-0.0 + x - 0.0 is x");
}

#[test]
fn integer_add_zero_vanishes() {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1)).unwrap();
    let zero = g.constant(DenseTensor::scalar(0i32).into());
    let y = apply(&mut g, ew(ScalarOp::Add), &[x, zero]);
    assert_eq!(check(&g, &[x], &[y], &[ragged![[1, 2], []].unwrap()], NO_FUSION).0, 0);
}

#[test]
fn times_zero_and_minus_self_are_kept() {
    let (mut g, x, v) = rx();
    let zero = f32c(&mut g, 0.0);
    let a = apply(&mut g, ew(ScalarOp::Multiply), &[x, zero]);
    let b = apply(&mut g, ew(ScalarOp::Subtract), &[x, x]);
    // NaN * 0 and inf - inf are NaN: neither is 0.
    assert_eq!(check(&g, &[x], &[a, b], &[v], NO_FUSION).0, 2);
}

#[test]
fn double_negation_identity_cast_and_concat_of_one_vanish() {
    let (mut g, x, v) = rx();
    let a = apply(&mut g, ew(ScalarOp::Negative), &[x]);
    let b = apply(&mut g, ew(ScalarOp::Negative), &[a]);
    let c = apply(&mut g, Arc::new(Identity::new()), &[b]);
    let d = apply(&mut g, ew(ScalarOp::Cast(DType::F32)), &[c]);
    let e = apply(&mut g, Arc::new(Concat::new(0)), &[d]);
    assert_eq!(check(&g, &[x], &[e], &[v], NO_FUSION).0, 0);
}

#[test]
fn keepdims_max_over_a_size_one_axis_vanishes_but_a_float_sum_stays() {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::F32, &[None, Some(1)])).unwrap();
    let m = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Max, Some(1), true)), &[x]);
    let s = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Sum, Some(1), true)), &[x]);
    let v: RaggedTensor = DenseTensor::from_vec(vec![3, 1], vec![-0.0f32, 2.0, f32::NAN]).unwrap().into();
    assert_eq!(check(&g, &[x], &[m], std::slice::from_ref(&v), NO_FUSION).0, 0);
    assert_eq!(check(&g, &[x], &[s], &[v], NO_FUSION).0, 1, "0 + -0.0 is +0.0: the sum stays");
}

#[test]
fn merge_joins_equal_nodes_and_constants_but_not_signed_zeros() {
    let (mut g, x, v) = rx();
    let (two_a, two_b) = (f32c(&mut g, 2.0), f32c(&mut g, 2.0));
    let a = apply(&mut g, ew(ScalarOp::Multiply), &[x, two_a]);
    let b = apply(&mut g, ew(ScalarOp::Multiply), &[x, two_b]);
    let y = apply(&mut g, ew(ScalarOp::Add), &[a, b]);
    assert_eq!(check(&g, &[x], &[y], std::slice::from_ref(&v), NO_FUSION).0, 2, "x * 2 is computed once");
    let (z, nz) = (f32c(&mut g, 0.0), f32c(&mut g, -0.0));
    let p = apply(&mut g, ew(ScalarOp::Maximum), &[x, z]);
    let q = apply(&mut g, ew(ScalarOp::Maximum), &[x, nz]);
    let r = apply(&mut g, ew(ScalarOp::Add), &[p, q]);
    assert_eq!(check(&g, &[x], &[r], &[v], NO_FUSION).0, 3, "0.0 and -0.0 are different constants");
}

#[test]
fn constant_folding_computes_constant_subgraphs() {
    let (mut g, x, v) = rx();
    let (three, four) = (f32c(&mut g, 3.0), f32c(&mut g, 4.0));
    let k = apply(&mut g, ew(ScalarOp::Add), &[three, four]);
    let k = apply(&mut g, ew(ScalarOp::Exp), &[k]);
    let y = apply(&mut g, ew(ScalarOp::Multiply), &[x, k]);
    assert_eq!(check(&g, &[x], &[y], &[v], NO_FUSION).0, 1);
}

#[test]
fn folding_leaves_a_failing_node_to_fail_at_run_time() {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1)).unwrap();
    let (one, zero) = (g.constant(DenseTensor::scalar(1i32).into()), g.constant(DenseTensor::scalar(0i32).into()));
    let k = apply(&mut g, ew(ScalarOp::FloorDiv), &[one, zero]);
    let y = apply(&mut g, ew(ScalarOp::Add), &[x, k]);
    assert_eq!(check(&g, &[x], &[y], &[ragged![[1], []].unwrap()], &[]).0, 2, "1 // 0 is not folded away");
}

#[test]
fn an_intermediate_with_several_clients_fuses_into_a_multi_output_composite() {
    let (mut g, x, v) = rx();
    let two = f32c(&mut g, 2.0);
    let a = apply(&mut g, ew(ScalarOp::Multiply), &[x, two]);
    let b = apply(&mut g, ew(ScalarOp::Tanh), &[a]);
    let c = apply(&mut g, ew(ScalarOp::Subtract), &[b, x]);
    let (n, names) = check(&g, &[x], &[a, c], &[v], &[]);
    assert_eq!(n, 1, "{names:?}");
    assert!(names[0].starts_with("Composite{i0 * 2, "), "{names:?}");
}

#[test]
fn fusion_keeps_groups_convex() {
    let (mut g, x, v) = rx();
    let a = apply(&mut g, ew(ScalarOp::Exp), &[x]);
    let s = apply(&mut g, Arc::new(Identity::new()), &[a]);
    let b = apply(&mut g, ew(ScalarOp::Add), &[a, s]);
    // `b` reads `a` directly and through the identity: fusing it with `a` would make a cycle.
    let (n, names) = check(&g, &[x], &[b], &[v], &["canonicalize"]);
    assert_eq!(n, 3, "{names:?}");
}

#[test]
fn row_ops_fuse_into_one_row_kernel() {
    let (mut g, x, v) = rx();
    let m = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Mean, Some(1), true)), &[x]);
    let c = apply(&mut g, ew(ScalarOp::Subtract), &[x, m]);
    let sq = apply(&mut g, ew(ScalarOp::Square), &[c]);
    let var = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Mean, Some(1), false)), &[sq]);
    let (n, names) = check(&g, &[x], &[c, var], &[v], &[]);
    assert_eq!(n, 1, "{names:?}");
    assert!(names[0].starts_with("RowKernel{r0 = reduce_mean(i0); r1 = reduce_mean(square(i0 - r0))"), "{names:?}");
}

/// Maps of a row kernel's per-row results that only element-level members read (layer norm's
/// `rsqrt(variance + eps)`) join the kernel; one that a node outside reads (logsumexp's
/// `max + log(sum)`) is computed after it, with whatever reads it.
#[test]
fn per_row_maps_of_reductions_join_the_row_kernel_when_only_its_elements_read_them() {
    let (mut g, x, v) = rx();
    let m = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Mean, Some(1), true)), &[x]);
    let c = apply(&mut g, ew(ScalarOp::Subtract), &[x, m]);
    let sq = apply(&mut g, ew(ScalarOp::Square), &[c]);
    let var = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Mean, Some(1), true)), &[sq]);
    let eps = f32c(&mut g, 1e-5);
    let shifted = apply(&mut g, ew(ScalarOp::Add), &[var, eps]);
    let r = apply(&mut g, ew(ScalarOp::Rsqrt), &[shifted]);
    let y = apply(&mut g, ew(ScalarOp::Multiply), &[c, r]);
    let (n, names) = check(&g, &[x], &[y], std::slice::from_ref(&v), &[]);
    assert_eq!(n, 1, "{names:?}");
    assert!(names[0].contains("out = (i0 - r0) * rsqrt(r1 + 0.00001)"), "{names:?}");
    // The same per-row value also returned: it is computed after the kernel, and so is the
    // element map reading it.
    let (n, names) = check(&g, &[x], &[y, r], std::slice::from_ref(&v), &[]);
    assert_eq!(n, 3, "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("RowKernel{r0 = reduce_mean(i0); r1 = reduce_mean(")), "{names:?}");
    // logsumexp: `max + log(sum)` is the result, so only the reductions are fused.
    let (mut g, x, v) = rx();
    let mx = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Max, Some(1), true)), &[x]);
    let d = apply(&mut g, ew(ScalarOp::Subtract), &[x, mx]);
    let e = apply(&mut g, ew(ScalarOp::Exp), &[d]);
    let s = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Sum, Some(1), true)), &[e]);
    let l = apply(&mut g, ew(ScalarOp::Log), &[s]);
    let lse = apply(&mut g, ew(ScalarOp::Add), &[mx, l]);
    let (n, names) = check(&g, &[x], &[lse], &[v], &[]);
    assert_eq!(n, 2, "{names:?}");
    assert!(names.iter().any(|n| n == "RowKernel{r0 = reduce_max(i0); r1 = reduce_sum(exp(i0 - r0))}"), "{names:?}");
}

#[test]
fn fused_ops_fall_back_to_the_original_ops_on_broadcasts_they_do_not_cover() {
    // x: [?, *] and y: [?, *] of different partitions with one row each side broadcasting.
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1)).unwrap();
    let y = g.input("y", TensorType::ragged(DType::F32, 1)).unwrap();
    let a = apply(&mut g, ew(ScalarOp::Add), &[x, y]);
    let b = apply(&mut g, ew(ScalarOp::Exp), &[a]);
    let one_row = ragged![[1.0f32, 2.0]].unwrap();
    let three = ragged![[1.0f32, 2.0], [3.0, 4.0], [5.0, 6.0]].unwrap();
    check(&g, &[x, y], &[b], &[one_row, three.clone()], &[]);
    let mismatched = ragged![[1.0f32], [2.0, 3.0], []].unwrap();
    check(&g, &[x, y], &[b], &[mismatched, three], &[]);
}

#[test]
fn integer_division_by_zero_inside_a_composite_names_the_row() {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I32, 1)).unwrap();
    let y = g.input("y", TensorType::ragged(DType::I32, 1)).unwrap();
    let q = apply(&mut g, ew(ScalarOp::FloorDiv), &[x, y]);
    let r = apply(&mut g, ew(ScalarOp::Add), &[q, x]);
    let mut fg = FunctionGraph::new(&g, &[x, y], &[r]).unwrap();
    optimize(&mut fg, &OptimizeOptions::default()).unwrap();
    assert_eq!(fg.node_count(), 1);
    let err = Interpreter::new(&fg)
        .unwrap()
        .run(&fg, &ExecContext::default(), &[ragged![[1, 2], [], [3]].unwrap(), ragged![[1, 1], [], [0]].unwrap()])
        .unwrap_err();
    assert!(err.to_string().contains("row 2"), "{err}");
}

/// `reduce(concat([gather(table, a), gather(table, b)], axis=1), axis=1)` and the one-gather form,
/// over a `[rows, dims...]` table of `dtype`, with ragged int32 / int64 indices.
fn embedding_bag(
    kind: ReduceKind,
    keepdims: bool,
    table_shape: &[Option<usize>],
    concat: bool,
) -> (Graph, Vec<VarId>, VarId) {
    let mut g = Graph::new();
    let table = g.input("table", TensorType::dense(DType::F32, table_shape)).unwrap();
    let a = g.input("a", TensorType::ragged(DType::I32, 1)).unwrap();
    let b = g.input("b", TensorType::ragged(DType::I64, 1)).unwrap();
    let ga = apply(&mut g, Arc::new(Gather::new()), &[table, a]);
    let x = if concat {
        let gb = apply(&mut g, Arc::new(Gather::new()), &[table, b]);
        apply(&mut g, Arc::new(Concat::new(1)), &[ga, gb])
    } else {
        ga
    };
    let out = apply(&mut g, Arc::new(Reduce::new(kind, Some(1), keepdims)), &[x]);
    (g, vec![table, a, b], out)
}

fn table(rows: usize, inner: &[usize]) -> RaggedTensor {
    let n = rows * inner.iter().product::<usize>();
    let values: Vec<f32> = (0..n).map(|k| ((k * 37) % 101) as f32 / 7.0 - 6.5).collect();
    let mut shape = vec![rows];
    shape.extend_from_slice(inner);
    DenseTensor::from_vec(shape, values).unwrap().into()
}

#[test]
fn gathered_rows_summed_over_the_ragged_axis_fuse_into_one_gather_reduce() {
    let a = ragged![[0, 3, 3], [], [4], [1, 2]].unwrap();
    let b = ragged![[2i64], [0, 1], [], [4, 4, 4]].unwrap();
    for kind in [ReduceKind::Sum, ReduceKind::Mean] {
        for keepdims in [false, true] {
            for (concat, with_b) in [(true, "tables=2"), (false, "tables=1")] {
                for inner in [&[][..], &[3][..], &[2, 2][..], &[2, 4][..], &[16][..], &[32][..]] {
                    let dims: Vec<Option<usize>> =
                        std::iter::once(None).chain(inner.iter().map(|&d| Some(d))).collect();
                    let (g, inputs, out) = embedding_bag(kind, keepdims, &dims, concat);
                    let values = [table(5, inner), a.clone(), b.clone()];
                    // Bit-identical to the unfused graph (an empty row's mean is NaN on both sides).
                    let (n, names) = check(&g, &inputs, &[out], &values, &[]);
                    assert_eq!(n, 1, "{names:?}");
                    assert!(names[0].starts_with("GatherReduce{") && names[0].contains(with_b), "{names:?}");
                    let (_, unfused) = check(&g, &inputs, &[out], &values, &["local_gather_reduce"]);
                    assert!(
                        unfused.iter().any(|n| n == "Gather"),
                        "excluding the rewrite keeps the gathers: {unfused:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn gather_reduce_reports_the_gathers_errors_and_leaves_shared_gathers_alone() {
    let (g, inputs, out) = embedding_bag(ReduceKind::Mean, false, &[None, Some(2)], true);
    // Index 5 is out of range for a 5-row table: the fused op fails as the gather does.
    let bad = [table(5, &[2]), ragged![[0, 5], []].unwrap(), ragged![[1i64], [2]].unwrap()];
    let negative = [table(5, &[2]), ragged![[0], []].unwrap(), ragged![[-1i64], [2]].unwrap()];
    // Row counts that differ: the concat's error.
    let rows = [table(5, &[2]), ragged![[0], [1], []].unwrap(), ragged![[1i64], [2]].unwrap()];
    for values in [bad, negative, rows] {
        // The fused op runs (and falls back), and the unfused graph fails on these values.
        let (_, names) = check(&g, &inputs, &[out], &values, &[]);
        assert!(names[0].starts_with("GatherReduce"), "{names:?}");
        let plain = FunctionGraph::new(&g, &inputs, &[out]).unwrap();
        assert!(
            Interpreter::new(&plain).unwrap().run(&plain, &ExecContext::default(), &values).is_err(),
            "the unfused graph must fail"
        );
    }

    // A gather that is also an output is computed anyway: no fusion.
    let mut g = Graph::new();
    let t = g.input("table", TensorType::dense(DType::F32, &[None, Some(2)])).unwrap();
    let a = g.input("a", TensorType::ragged(DType::I32, 1)).unwrap();
    let ga = apply(&mut g, Arc::new(Gather::new()), &[t, a]);
    let sum = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Sum, Some(1), false)), &[ga]);
    let (_, names) = check(&g, &[t, a], &[ga, sum], &[table(3, &[2]), ragged![[0, 2], [1]].unwrap()], &[]);
    assert!(names.iter().all(|n| !n.starts_with("GatherReduce")), "{names:?}");
}

#[test]
fn ragged_softmax_expands_into_one_row_kernel_with_the_same_bits() {
    for log in [false, true] {
        for dtype in [DType::F32, DType::F64] {
            let mut g = Graph::new();
            let x = g.input("x", TensorType::ragged(dtype, 1)).unwrap();
            let y = apply(&mut g, Arc::new(Softmax::new(log)), &[x]);
            let v = ragged![
                [1.5f64, -0.0, 3.0, 2.0, 0.25],
                [],
                [f64::NEG_INFINITY],
                [f64::NEG_INFINITY, 1.0],
                [f64::INFINITY, 1.0],
                [f64::NAN, 2.0],
                [-1e30, 1e30, 0.0],
                [7.0]
            ]
            .unwrap()
            .cast(dtype)
            .unwrap();
            // Bit-identical to the Softmax op, special rows included.
            let (n, names) = check(&g, &[x], &[y], &[v], &[]);
            assert!(names[0].starts_with("RowKernel{"), "{names:?}");
            // Both are one row kernel: log_softmax's per-row `log(sum)` is a member computed once
            // per row, and the final subtraction an element output of the kernel.
            assert_eq!(n, 1, "{names:?}");
            if log {
                assert!(names[0].contains("out = (i0 - r0) - log(r1)"), "{names:?}");
            }
            assert!(names.iter().all(|n| !n.contains("Softmax")), "{names:?}");
            let (_, kept) =
                check(&g, &[x], &[y], &[ragged![[1.0f32]].unwrap().cast(dtype).unwrap()], &["local_expand_softmax"]);
            assert!(kept.iter().any(|n| n.contains("Softmax")), "excluding the rewrite keeps the op: {kept:?}");
        }
    }
    // A dense operand: the softmax over its uniform last axis is one row kernel along that axis,
    // with the op's bits (special rows included).
    let mut g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::F32, &[None, Some(3)])).unwrap();
    let y = apply(&mut g, Arc::new(Softmax::new(false)), &[x]);
    let values = vec![1.0f32, 2.0, 3.0, 0.0, -1.0, 5.0, f32::NAN, 1.0, 2.0, f32::INFINITY, 0.0, 1.0, -0.0, 0.0, -1e30];
    let dense: RaggedTensor = DenseTensor::from_vec(vec![5, 3], values).unwrap().into();
    let (n, names) = check(&g, &[x], &[y], &[dense], &[]);
    assert_eq!(n, 1, "{names:?}");
    assert!(names[0].starts_with("RowKernel{") && names[0].contains("axis=-1 of 3"), "{names:?}");
}

#[test]
fn row_statistics_expand_only_over_the_ragged_axis_of_float_rows() {
    use ragtime_ops::reduce::{Statistic, StatisticKind};
    let stat = |kind, axis: i64| -> OpRef { Arc::new(Statistic::new(kind, axis, false)) };
    let optimized = |g: &Graph, x: VarId, y: VarId| {
        let mut fg = FunctionGraph::new(g, &[x], &[y]).unwrap();
        optimize(&mut fg, &OptimizeOptions { level: Level::Full, excluding: vec![], including: vec![] }).unwrap();
        assert!(fg.verify().is_empty(), "{:?}", fg.verify());
        fg.toposort().unwrap().into_iter().map(|n| fg.node(n).unwrap().op.name()).collect::<Vec<_>>()
    };
    for kind in [StatisticKind::Variance, StatisticKind::Std, StatisticKind::LogSumExp] {
        for axis in [1, -1] {
            let mut g = Graph::new();
            let x = g.input("x", TensorType::ragged(DType::F64, 1)).unwrap();
            let y = apply(&mut g, stat(kind, axis), &[x]);
            let names = optimized(&g, x, y);
            let statistic = ["ReduceVariance", "ReduceStd", "ReduceLogSumExp"];
            assert!(names.iter().all(|n| !statistic.iter().any(|s| n.starts_with(s))), "{names:?}");
            assert!(names.iter().any(|n| n.starts_with("RowKernel{") || n.starts_with("RowReduce{")), "{names:?}");
        }
        // Over the outer axis, or on integers (TensorFlow's integer formula), the op stays.
        let mut g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1)).unwrap();
        let y = apply(&mut g, stat(kind, 0), &[x]);
        assert_eq!(optimized(&g, x, y).len(), 1);
        if kind != StatisticKind::LogSumExp {
            let mut g = Graph::new();
            let x = g.input("x", TensorType::ragged(DType::I32, 1)).unwrap();
            let y = apply(&mut g, stat(kind, 1), &[x]);
            assert_eq!(optimized(&g, x, y).len(), 1);
        }
    }
}

/// `join([x[:, a], x[:, b]], "+")` over ragged string rows `x`.
fn joined_slices(a: Key, b: Key) -> (Graph, Vec<VarId>, VarId) {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::String, 1)).unwrap();
    let left = apply(&mut g, Arc::new(GetItem::new(a)), &[x]);
    let right = apply(&mut g, Arc::new(GetItem::new(b)), &[x]);
    let out = apply(&mut g, Arc::new(Join::new("+")), &[left, right]);
    (g, vec![x], out)
}

#[test]
fn joins_of_adjacent_tokens_become_bigrams_written_straight_from_the_tokens() {
    let rows = [
        RaggedTensor::from_literal_typed(
            &Literal::from(vec![vec!["a", "bb", "", "ccc"], vec![], vec!["d"], vec!["e", "f"]]),
            Some(DType::String),
            Some(1),
            None,
        )
        .unwrap(),
        // No tokens at all, and no rows.
        RaggedTensor::from_literal_typed(
            &Literal::from(vec![Vec::<&str>::new(); 3]),
            Some(DType::String),
            Some(1),
            None,
        )
        .unwrap(),
        RaggedTensor::from_literal_typed(&Literal::from(Vec::<Vec<&str>>::new()), Some(DType::String), Some(1), None)
            .unwrap(),
    ];
    let (g, inputs, out) = joined_slices(s![.., ..-1], s![.., 1..]);
    for x in &rows {
        // Byte-identical to the two slices joined, empty and one-token rows included.
        let (n, names) = check(&g, &inputs, &[out], std::slice::from_ref(x), &[]);
        assert_eq!(n, 1, "{names:?}");
        assert!(names[0].starts_with("StringsNgrams{widths=[2], separator=\"+\""), "{names:?}");
        let (_, kept) = check(&g, &inputs, &[out], std::slice::from_ref(x), &["local_join_adjacent"]);
        assert!(kept.iter().any(|n| n.starts_with("StringsJoin")), "excluding the rewrite keeps the join: {kept:?}");
    }
    // Other slices, or the adjacent ones in the other order, are not bigrams: left alone.
    for (a, b) in [(s![.., 1..], s![.., ..-1]), (s![.., ..-2], s![.., 2..]), (s![.., ..-1], s![.., 1..;2])] {
        let (g, inputs, out) = joined_slices(a, b);
        let (_, names) = check(&g, &inputs, &[out], &rows[..1], &[]);
        assert!(names.iter().any(|n| n.starts_with("StringsJoin")), "{names:?}");
    }
}

#[test]
fn hashed_ngrams_are_hashed_without_storing_the_ngrams_unless_they_are_read_elsewhere() {
    let tokens = RaggedTensor::from_literal_typed(
        &Literal::from(vec![vec!["a", "bb", "", "ccc"], vec![], vec!["d"], vec!["e", "f"]]),
        Some(DType::String),
        Some(1),
        None,
    )
    .unwrap();
    let build = |also_grams: bool| {
        let mut g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::String, 1)).unwrap();
        let op = Ngrams::new(&[2]).unwrap().with_separator("+").with_padding("<s>", "</s>", None).unwrap();
        let grams = apply(&mut g, Arc::new(op), &[x]);
        let buckets = apply(&mut g, Arc::new(ToHashBucketFast::new(97).unwrap()), &[grams]);
        let outputs = if also_grams { vec![buckets, grams] } else { vec![buckets] };
        (g, x, outputs)
    };
    let (g, x, outputs) = build(false);
    // Bit-identical buckets (`check` compares with the unoptimized graph).
    let (n, names) = check(&g, &[x], &outputs, std::slice::from_ref(&tokens), &[]);
    assert_eq!(n, 1, "{names:?}");
    assert!(names[0].starts_with("StringsHashedNgrams{"), "{names:?}");
    let (_, kept) = check(&g, &[x], &outputs, std::slice::from_ref(&tokens), &["local_hash_ngrams"]);
    assert!(kept.iter().any(|n| n.starts_with("StringsNgrams")), "{kept:?}");
    // The n-grams are an output too: they are built anyway, and hashed from there.
    let (g, x, outputs) = build(true);
    let (_, names) = check(&g, &[x], &outputs, std::slice::from_ref(&tokens), &[]);
    assert!(names.iter().any(|n| n.starts_with("StringsToHashBucketFast")), "{names:?}");
}

/// `ngrams(concat([fill(stack([nrows(x), 1]), a), x, fill(stack([nrows(y), 1]), b)], 1), width)`,
/// hashed or not, over ragged string rows `x` (`y` is `x` unless `other_rows`).
fn padded_by_concat(width: i64, hashed: bool, other_rows: bool) -> (Graph, Vec<VarId>, VarId) {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::String, 1)).unwrap();
    let y = if other_rows { g.input("y", TensorType::ragged(DType::String, 1)).unwrap() } else { x };
    let marker = |g: &mut Graph, rows: VarId, s: &str| {
        let n = apply(g, Arc::new(Nrows), &[rows]);
        let one = g.constant(DenseTensor::scalar(1i64).into());
        let dims = apply(g, Arc::new(Stack::new(0)), &[n, one]);
        let value = g.constant(DenseTensor::String(StringTensor::from_strings(&[s], vec![]).unwrap()).into());
        apply(g, Arc::new(Fill), &[dims, value])
    };
    let (a, b) = (marker(&mut g, x, "<s>"), marker(&mut g, y, "</s>"));
    let padded = apply(&mut g, Arc::new(Concat::new(1)), &[a, x, b]);
    let grams = apply(&mut g, Arc::new(Ngrams::new(&[width]).unwrap().with_separator("+")), &[padded]);
    let out = if hashed { apply(&mut g, Arc::new(ToHashBucketFast::new(97).unwrap()), &[grams]) } else { grams };
    let inputs = if other_rows { vec![x, y] } else { vec![x] };
    (g, inputs, out)
}

#[test]
fn ngrams_of_rows_with_markers_concatenated_are_padded_ngrams_of_the_rows() {
    let strings = |rows: Vec<Vec<&str>>| {
        RaggedTensor::from_literal_typed(&Literal::from(rows), Some(DType::String), Some(1), None).unwrap()
    };
    let cases = [
        strings(vec![vec!["a", "bb", "", "ccc"], vec![], vec!["d"], vec!["e", "f"]]),
        // No tokens at all: the concat still has the markers, so every row has n-grams of them.
        strings(vec![vec![], vec![], vec![]]),
        strings(vec![]),
    ];
    for width in [2, 3] {
        for hashed in [false, true] {
            let (g, inputs, out) = padded_by_concat(width, hashed, false);
            for x in &cases {
                // Identical to the concat's n-grams (`check` compares with the unoptimized graph).
                let (n, names) = check(&g, &inputs, &[out], std::slice::from_ref(x), &[]);
                assert_eq!(n, 1, "width {width}, hashed {hashed}: {names:?}");
                assert!(names[0].contains("pad_values=Some((\"<s>\", \"</s>\")), padding_width=Some(1)"), "{names:?}");
                assert!(names[0].contains("pad_without_tokens=true"), "{names:?}");
            }
        }
    }
    // Unigrams would keep the markers as n-grams of their own; markers counted from other rows
    // may not line up: both left alone.
    let (g, inputs, out) = padded_by_concat(1, false, false);
    let (_, names) = check(&g, &inputs, &[out], &cases[..1], &[]);
    assert!(names.iter().any(|n| n.starts_with("Concat")), "{names:?}");
    let (g, inputs, out) = padded_by_concat(2, false, true);
    let (_, names) = check(&g, &inputs, &[out], &[cases[0].clone(), cases[0].clone()], &[]);
    assert!(names.iter().any(|n| n.starts_with("Concat")), "{names:?}");
}

fn options_excluding(names: &[&str]) -> OptimizeOptions {
    OptimizeOptions { excluding: names.iter().map(|n| n.to_string()).collect(), ..Default::default() }
}

#[test]
fn an_unknown_rewrite_name_is_refused_with_the_closest_names() {
    let err = options_excluding(&["gather_reduce"]).check(&["jit"]).unwrap_err().to_string();
    assert!(
        err.contains("`gather_reduce`") && err.contains("did you mean `local_gather_reduce`"),
        "the error should name the unknown rewrite and suggest local_gather_reduce, got: {err}"
    );
    let err = options_excluding(&["fusoin"]).check(&[]).unwrap_err().to_string();
    assert!(err.contains("did you mean `fusion`"), "a misspelt tag should suggest `fusion`, got: {err}");
    let err = options_excluding(&["zzzz"]).check(&[]).unwrap_err().to_string();
    assert!(err.contains("local_mul_one") && err.contains("canonicalize"), "no close name: the list, got: {err}");
    let including = OptimizeOptions { including: vec!["no_such".into()], ..Default::default() };
    assert!(including.check(&[]).is_err(), "`including` is checked too");
}

#[test]
fn every_rewrite_name_tag_and_backend_stage_is_accepted() {
    for info in ragtime_opt::REWRITES {
        let mut names = vec![info.name];
        names.extend(info.tags.iter().copied());
        options_excluding(&names).check(&[]).unwrap_or_else(|e| panic!("{} should be accepted: {e}", info.name));
    }
    options_excluding(&["jit"]).check(&["jit"]).expect("a backend stage name is accepted when declared");
    assert!(options_excluding(&["jit"]).check(&[]).is_err(), "`jit` is not a rewrite of the optimizer itself");
}

#[test]
fn every_application_of_a_node_rewrite_is_its_own_named_stage() {
    // x * 1 then -(-(that)): two rules of the canonicalize group apply, and `Mode::Debug` must be
    // able to name either one, so each application is reported as a stage with its rule's name.
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1)).unwrap();
    let one = f32c(&mut g, 1.0);
    let a = apply(&mut g, ew(ScalarOp::Multiply), &[x, one]);
    let b = apply(&mut g, ew(ScalarOp::Negative), &[a]);
    let c = apply(&mut g, ew(ScalarOp::Negative), &[b]);
    let y = apply(&mut g, ew(ScalarOp::Tanh), &[c]);
    let mut fg = FunctionGraph::new(&g, &[x], &[y]).unwrap();
    let mut stages = Vec::new();
    ragtime_opt::optimize_staged(&mut fg, &OptimizeOptions::default(), &mut |name, exact, _| {
        stages.push((name, exact))
    })
    .unwrap();
    assert_eq!(
        stages,
        [("local_mul_one", true), ("local_double_negation", true), ("elemwise_fusion", true)],
        "each application should be a stage named by its rule"
    );
}

/// W7's shape: `reduce(concat([gather(t, hash(x)), gather(t, hash(bigrams))], 1), 1)` with the
/// bigrams of `x` padded by concatenated markers (`padded_by_concat`), 97 buckets.
fn hashed_bag(kind: ReduceKind, dim: usize) -> (Graph, Vec<VarId>, VarId) {
    let (mut g, inputs, bigram_buckets) = padded_by_concat(2, true, false);
    let x = inputs[0];
    let table = g.input("table", TensorType::dense(DType::F32, &[Some(97), Some(dim)])).unwrap();
    let token_buckets = apply(&mut g, Arc::new(ToHashBucketFast::new(97).unwrap()), &[x]);
    let a = apply(&mut g, Arc::new(Gather::new()), &[table, token_buckets]);
    let b = apply(&mut g, Arc::new(Gather::new()), &[table, bigram_buckets]);
    let all = apply(&mut g, Arc::new(Concat::new(1)), &[a, b]);
    let out = apply(&mut g, Arc::new(Reduce::new(kind, Some(1), false)), &[all]);
    (g, vec![x, table], out)
}

/// `rows` queries of 0 to 6 tokens drawn by a linear congruential generator from `seed`, among
/// empty, one-byte, non-ASCII and long (over 64 bytes: FarmHash's looping path) strings.
fn random_queries(seed: u64, rows: usize) -> RaggedTensor {
    const WORDS: [&str; 9] = [
        "",
        "a",
        "is",
        "café",
        "日本語",
        "naïve",
        "Smith",
        "x-ray",
        "a long token, longer than sixty-four bytes, hashed by the loop",
    ];
    let mut state = seed;
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % n) as usize
    };
    let queries: Vec<Vec<&str>> = (0..rows).map(|_| (0..next(7)).map(|_| WORDS[next(9)]).collect()).collect();
    RaggedTensor::from_literal_typed(&Literal::from(queries), Some(DType::String), Some(1), None).unwrap()
}

#[test]
fn hashed_features_gathered_and_reduced_fuse_into_one_hashed_gather_reduce_with_the_same_bits() {
    for kind in [ReduceKind::Mean, ReduceKind::Sum] {
        for dim in [1, 3, 16] {
            let (g, inputs, out) = hashed_bag(kind, dim);
            for (seed, rows) in [(1, 0), (2, 1), (3, 2), (4, 7), (5, 40), (6, 300)] {
                let values = [random_queries(seed, rows), table(97, &[dim])];
                // `check` compares with the unoptimized graph bit for bit (NaN means of empty rows too).
                let (n, names) = check(&g, &inputs, &[out], &values, &[]);
                assert_eq!(n, 1, "{names:?}");
                assert!(names[0].starts_with("HashedGatherReduce{"), "{names:?}");
                let (_, unfused) = check(&g, &inputs, &[out], &values, &["local_hashed_gather_reduce"]);
                assert!(unfused.iter().any(|n| n.starts_with("GatherReduce{")), "{unfused:?}");
            }
        }
    }
    // Batches without any token; a table with fewer rows than buckets (the inner graph's error).
    let (g, inputs, out) = hashed_bag(ReduceKind::Mean, 4);
    for values in [[random_queries(7, 0), table(97, &[4])], [random_queries(8, 5), table(3, &[4])]] {
        let (_, names) = check(&g, &inputs, &[out], &values, &[]);
        assert!(names[0].starts_with("HashedGatherReduce{"), "{names:?}");
    }
    let empty_rows = RaggedTensor::from_literal_typed(
        &Literal::from(vec![Vec::<&str>::new(); 3]),
        Some(DType::String),
        Some(1),
        None,
    )
    .unwrap();
    check(&g, &inputs, &[out], &[empty_rows, table(97, &[4])], &[]);
    let plain = FunctionGraph::new(&g, &inputs, &[out]).unwrap();
    let short_table = [random_queries(8, 5), table(3, &[4])];
    assert!(Interpreter::new(&plain).unwrap().run(&plain, &ExecContext::default(), &short_table).is_err());
}

#[test]
fn hashed_gather_reduce_splits_rows_across_threads_with_the_same_bits() {
    let (g, inputs, out) = hashed_bag(ReduceKind::Mean, 16);
    let plain = FunctionGraph::new(&g, &inputs, &[out]).unwrap();
    let mut fused = plain.clone();
    optimize(&mut fused, &OptimizeOptions::default()).unwrap();
    let values = [random_queries(9, 70_000), table(97, &[16])];
    let want = Interpreter::new(&plain).unwrap().run(&plain, &ExecContext::default(), &values).unwrap();
    for threads in [2, 3] {
        let ctx = ExecContext::default().with_threads(threads);
        let got = Interpreter::new(&fused).unwrap().run(&fused, &ctx, &values).unwrap();
        assert!(got[0].equals(&want[0]), "{threads} threads: the values differ from the unoptimized graph's");
    }
}

#[test]
fn hashed_gather_reduce_leaves_buckets_read_elsewhere_and_other_tokens_alone() {
    // The token buckets are an output too: they are computed anyway.
    let (mut g, inputs, bigram_buckets) = padded_by_concat(2, true, false);
    let x = inputs[0];
    let table_in = g.input("table", TensorType::dense(DType::F32, &[Some(97), Some(2)])).unwrap();
    let buckets = apply(&mut g, Arc::new(ToHashBucketFast::new(97).unwrap()), &[x]);
    let a = apply(&mut g, Arc::new(Gather::new()), &[table_in, buckets]);
    let b = apply(&mut g, Arc::new(Gather::new()), &[table_in, bigram_buckets]);
    let all = apply(&mut g, Arc::new(Concat::new(1)), &[a, b]);
    let out = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Sum, Some(1), false)), &[all]);
    let values = [random_queries(10, 20), table(97, &[2])];
    let (_, names) = check(&g, &[x, table_in], &[out, buckets], &values, &[]);
    assert!(names.iter().all(|n| !n.starts_with("HashedGatherReduce")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("GatherReduce{")), "{names:?}");

    // Features of two token tensors.
    let mut g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::String, 1)).unwrap();
    let y = g.input("y", TensorType::ragged(DType::String, 1)).unwrap();
    let t = g.input("table", TensorType::dense(DType::F32, &[Some(97), Some(2)])).unwrap();
    let gathered: Vec<VarId> = [x, y]
        .iter()
        .map(|&s| {
            let h = apply(&mut g, Arc::new(ToHashBucketFast::new(97).unwrap()), &[s]);
            apply(&mut g, Arc::new(Gather::new()), &[t, h])
        })
        .collect();
    let all = apply(&mut g, Arc::new(Concat::new(1)), &gathered);
    let out = apply(&mut g, Arc::new(Reduce::new(ReduceKind::Mean, Some(1), false)), &[all]);
    let values = [random_queries(11, 20), random_queries(12, 20), table(97, &[2])];
    let (_, names) = check(&g, &[x, y, t], &[out], &values, &[]);
    assert!(names.iter().all(|n| !n.starts_with("HashedGatherReduce")), "{names:?}");
}
