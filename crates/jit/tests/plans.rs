//! Kernel plans: the printed plan of representative kernels (the benchmark workloads' fused ops,
//! as the optimizer builds them, and kernels of the other dtypes) compared with the files in
//! `tests/plans/` (`RAGTIME_BLESS=1` rewrites them), and the decisions checked one by one. The
//! workloads' files are what `RAGTIME_JIT_PLAN=1 ragtime bench` prints for W1-W4 and W9's softmax
//! on a machine with AVX2 and FMA.
//!
//! `RowPooling` (W9's pooling) and `GatherReduce` (W7) are fused ops with their own kernels; they
//! do not go through the JIT, so they have no plan. W9's weights kernel, fused into its pooling
//! (`JitPooling`), is `w9_softmax_of_scaled.txt`'s plan, called on blocks of rows. Outer folds
//! (`OuterFold`) run after a kernel, on its per-row results, so they leave its plan as it is.

use ragtime_core::DType;
use ragtime_fused::{OperandKind, RowOutput, RowReduction, ScalarConst, ScalarGraph, ScalarRef};
use ragtime_jit::plan::{
    BulkCall, FlatNode, Fold, ItemBulk, Part, Prefetch, Rows, ScratchUse, Shape, Split, PREFETCH_AHEAD,
    PREFETCH_MIN_BYTES, PREFETCH_ROWS,
};
use ragtime_jit::{KernelPlan, KernelSpec, Target, UnaryMath};
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::reduce::ReduceKind;

fn golden(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plans").join(name);
    if std::env::var_os("RAGTIME_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {}; run with RAGTIME_BLESS=1 to create it", path.display()));
    assert_eq!(text, want, "the plan differs from {} (RAGTIME_BLESS=1 regenerates it)", path.display());
}

const BULK: Target = Target::with_bulk(true);

fn f32c(v: f32) -> ScalarRef {
    ScalarRef::Const(ScalarConst::from_value(v))
}

/// A graph over `inputs` with the nodes `ops` (each an op and its operands), in order.
fn graph(inputs: &[DType], ops: &[(ScalarOp, Vec<ScalarRef>)]) -> ScalarGraph {
    let mut g = ScalarGraph::new(inputs.to_vec());
    for (op, args) in ops {
        g.push(*op, args.clone()).unwrap();
    }
    g
}

use ScalarRef::{Input as I, Node as N};

/// W1: `tanh(x * 2 + 1) * z - x`.
fn w1() -> KernelSpec {
    let g = graph(
        &[DType::F32, DType::F32],
        &[
            (ScalarOp::Multiply, vec![I(0), f32c(2.0)]),
            (ScalarOp::Add, vec![N(0), f32c(1.0)]),
            (ScalarOp::Tanh, vec![N(1)]),
            (ScalarOp::Multiply, vec![N(2), I(1)]),
            (ScalarOp::Subtract, vec![N(3), I(0)]),
        ],
    );
    KernelSpec::new(&g, &[OperandKind::Full, OperandKind::Full], &[], &[RowOutput::Elements(N(4))]).unwrap()
}

/// W2: `x * 2 + z`.
fn w2() -> KernelSpec {
    let g = graph(
        &[DType::F32, DType::F32],
        &[(ScalarOp::Multiply, vec![I(0), f32c(2.0)]), (ScalarOp::Add, vec![N(0), I(1)])],
    );
    KernelSpec::new(&g, &[OperandKind::Full, OperandKind::Full], &[], &[RowOutput::Elements(N(1))]).unwrap()
}

/// W3: `reduce_mean(x * 2 + z, axis=1)`.
fn w3() -> KernelSpec {
    let g = graph(
        &[DType::F32, DType::F32, DType::F32],
        &[(ScalarOp::Multiply, vec![I(0), f32c(2.0)]), (ScalarOp::Add, vec![N(0), I(1)])],
    );
    let mean = RowReduction { kind: ReduceKind::Mean, arg: N(1) };
    let out = RowOutput::Reduction { index: 0, keepdims: false };
    KernelSpec::new(&g, &[OperandKind::Full, OperandKind::Full], &[mean], &[out]).unwrap()
}

/// Row softmax of `x * scale` (W4 without the scale, W9's `softmax(d * 2)` with it).
fn softmax(scale: Option<f32>) -> KernelSpec {
    let mut ops = Vec::new();
    let x = match scale {
        Some(s) => {
            ops.push((ScalarOp::Multiply, vec![I(0), f32c(s)]));
            N(0)
        }
        None => I(0),
    };
    let first = ops.len();
    ops.push((ScalarOp::Subtract, vec![x, I(1)]));
    ops.push((ScalarOp::Exp, vec![N(first)]));
    ops.push((ScalarOp::Divide, vec![N(first + 1), I(2)]));
    let g = graph(&[DType::F32; 3], &ops);
    let reductions =
        [RowReduction { kind: ReduceKind::Max, arg: x }, RowReduction { kind: ReduceKind::Sum, arg: N(first + 1) }];
    KernelSpec::new(&g, &[OperandKind::Full], &reductions, &[RowOutput::Elements(N(first + 2))]).unwrap()
}

/// Log-softmax: `(x - max) - log(sum(exp(x - max)))`, the `log` a map of a reduction's result.
fn log_softmax() -> KernelSpec {
    let ops = [
        (ScalarOp::Subtract, vec![I(0), I(1)]),
        (ScalarOp::Exp, vec![N(0)]),
        (ScalarOp::Log, vec![I(2)]),
        (ScalarOp::Subtract, vec![N(0), N(2)]),
    ];
    let g = graph(&[DType::F32; 3], &ops);
    let reductions =
        [RowReduction { kind: ReduceKind::Max, arg: I(0) }, RowReduction { kind: ReduceKind::Sum, arg: N(1) }];
    KernelSpec::new(&g, &[OperandKind::Full], &reductions, &[RowOutput::Elements(N(3))]).unwrap()
}

#[test]
fn maps_of_per_row_values_are_hoisted_and_item_sums_of_exp_use_the_output_as_scratch() {
    // `log(sum)` becomes per-row input i3 of the element expression, computed once per row.
    let spec = log_softmax();
    assert_eq!(spec.hoisted(), [(2, 3)]);
    assert_eq!(spec.graph().nodes()[3].args, [N(0), I(3)]);
    let rows = KernelPlan::new(&spec, BULK);
    let uses: Vec<ScratchUse> = rows.scratch.iter().map(|s| s.holds).collect();
    assert!(uses.contains(&ScratchUse::HoistedValues(0)), "{rows}");
    assert!(rows.to_string().contains("row value i3: %2, computed once per row"), "{rows}");
    // A block whose `exp` runs flat writes its cheap element output `(x - max) - log(sum)` flat
    // too, reading the expanded max and `log(sum)`: row by row, each row's pass cost more than
    // the expansion (4.5% of log-softmax in cache, docs/perf-log.md).
    let Shape::Rows(Rows::Blocked { flat: Some(flat), .. }) = &rows.shape else { panic!("{rows}") };
    assert!(flat.outputs, "{rows}");
    let expanded: Vec<usize> = flat.expanded.iter().map(|&(i, _)| i).collect();
    assert_eq!(expanded, [1, 3], "the row max and log(sum): {rows}");
    // Over items, `exp(x - max)` is kept nowhere (the output does not read it), so the output's
    // buffer serves as its scratch until the element pass writes it.
    let items = KernelPlan::new(&log_softmax().over_items(8), BULK);
    let Shape::Items(item_rows) = &items.shape else { panic!("{items}") };
    let exp = BulkCall::InPlace { op: UnaryMath::Exp, arg: ScalarRef::Node(0) };
    assert_eq!(item_rows.bulk, [None, Some(ItemBulk { call: exp, output: 0, kept: false })], "{items}");
    assert!(items.stash.is_empty(), "{items}");
}

/// `x - m` with `m` one value per row (a kept-dims row reduction computed elsewhere).
fn per_row_difference() -> KernelSpec {
    let g = graph(&[DType::F64, DType::F64], &[(ScalarOp::Subtract, vec![I(0), I(1)])]);
    KernelSpec::new(&g, &[OperandKind::Full, OperandKind::PerRow], &[], &[RowOutput::Elements(N(0))]).unwrap()
}

/// `where(n > 0, cast<float32>(n) * y, 0)`: int32, bool and float32 in one kernel.
fn mixed_dtypes() -> KernelSpec {
    let zero = ScalarRef::Const(ScalarConst::from_value(0i32));
    let g = graph(
        &[DType::I32, DType::F32],
        &[
            (ScalarOp::Greater, vec![I(0), zero]),
            (ScalarOp::Cast(DType::F32), vec![I(0)]),
            (ScalarOp::Multiply, vec![N(1), I(1)]),
            (ScalarOp::Where, vec![N(0), N(2), f32c(0.0)]),
        ],
    );
    KernelSpec::new(&g, &[OperandKind::Full, OperandKind::Full], &[], &[RowOutput::Elements(N(3))]).unwrap()
}

/// Per row of int64 `a`: `reduce_max(a & 255)` and `reduce_all(a > 0)` (a vector int64 fold and
/// an ordered bool fold in one scalar kernel), both returned.
fn int_and_bool_rows() -> KernelSpec {
    let c = |v: i64| ScalarRef::Const(ScalarConst::from_value(v));
    let g = graph(
        &[DType::I64, DType::I64, DType::Bool],
        &[(ScalarOp::BitwiseAnd, vec![I(0), c(255)]), (ScalarOp::Greater, vec![I(0), c(0)])],
    );
    let reductions =
        [RowReduction { kind: ReduceKind::Max, arg: N(0) }, RowReduction { kind: ReduceKind::All, arg: N(1) }];
    let outputs =
        [RowOutput::Reduction { index: 0, keepdims: false }, RowOutput::Reduction { index: 1, keepdims: true }];
    KernelSpec::new(&g, &[OperandKind::Full], &reductions, &outputs).unwrap()
}

/// int32 `max(a, b) * a` over elements: a vector integer kernel.
fn int_vector() -> KernelSpec {
    let g = graph(
        &[DType::I32, DType::I32],
        &[(ScalarOp::Maximum, vec![I(0), I(1)]), (ScalarOp::Multiply, vec![N(0), I(0)])],
    );
    KernelSpec::new(&g, &[OperandKind::Full, OperandKind::Full], &[], &[RowOutput::Elements(N(1))]).unwrap()
}

/// `int16` `reduce_prod(a * 3)` per row over items of 3 values: a scalar kernel, one column
/// at a time.
fn int16_items() -> KernelSpec {
    let c = ScalarRef::Const(ScalarConst::from_value(3i16));
    let g = graph(&[DType::I16, DType::I16], &[(ScalarOp::Multiply, vec![I(0), c])]);
    let prod = RowReduction { kind: ReduceKind::Prod, arg: N(0) };
    let out = RowOutput::Reduction { index: 0, keepdims: true };
    KernelSpec::new(&g, &[OperandKind::Full], &[prod], &[out]).unwrap().over_items(3)
}

#[test]
fn printed_plans_match_the_golden_files() {
    let cases: [(&str, KernelSpec, Target); 16] = [
        ("w1_elementwise.txt", w1(), BULK),
        ("w1_elementwise_no_bulk.txt", w1(), Target::with_bulk(false)),
        ("w2_axpy.txt", w2(), BULK),
        ("w3_row_mean.txt", w3(), BULK),
        ("w4_row_softmax.txt", softmax(None), BULK),
        ("w4_row_softmax_no_bulk.txt", softmax(None), Target::with_bulk(false)),
        ("w9_softmax_of_scaled.txt", softmax(Some(2.0)), BULK),
        ("w4_row_log_softmax.txt", log_softmax(), BULK),
        ("per_row_difference.txt", per_row_difference(), BULK),
        ("mixed_dtypes.txt", mixed_dtypes(), BULK),
        ("int_and_bool_rows.txt", int_and_bool_rows(), BULK),
        ("int_vector.txt", int_vector(), BULK),
        ("w3_row_mean_inner8.txt", w3().over_items(8), BULK),
        ("w4_row_softmax_inner8.txt", softmax(None).over_items(8), BULK),
        ("w4_row_softmax_inner6.txt", softmax(None).over_items(6), BULK),
        ("int16_items.txt", int16_items(), BULK),
    ];
    for (file, spec, target) in cases {
        golden(file, &KernelPlan::new(&spec, target).to_string());
    }
}

#[test]
fn map_kernels_chunk_only_for_bulk_functions() {
    let plan = KernelPlan::new(&w1(), BULK);
    let Shape::Flat(Some(chunked)) = &plan.shape else { panic!("W1 with bulk functions runs in chunks: {plan}") };
    assert_eq!(chunked.nodes.len(), 1);
    assert_eq!(chunked.nodes[0].node, 2, "the tanh");
    assert_eq!(chunked.nodes[0].bulk, Some(BulkCall::InPlace { op: UnaryMath::Tanh, arg: N(1) }));
    assert_eq!(plan.scratch[chunked.nodes[0].scratch].holds, ScratchUse::Chunk(2));
    assert_eq!(plan.split, Split::Elements);
    // Without the bulk functions, or without an expensive function, one pass.
    assert_eq!(KernelPlan::new(&w1(), Target::with_bulk(false)).shape, Shape::Flat(None));
    let axpy = KernelPlan::new(&w2(), BULK);
    assert_eq!(axpy.shape, Shape::Flat(None));
    assert!(axpy.scratch.is_empty() && axpy.reductions.is_empty() && axpy.stash.is_empty());
}

#[test]
fn one_pass_row_kernels_walk_row_by_row() {
    for spec in [w3(), per_row_difference()] {
        // The flat inputs prefetched ahead of each group of rows on machines with the bulk
        // functions (x86-64 with AVX2), not elsewhere.
        let plan = KernelPlan::new(&spec, BULK);
        let prefetch = Prefetch { rows: PREFETCH_ROWS, ahead: PREFETCH_AHEAD, min_bytes: PREFETCH_MIN_BYTES, range: 0 };
        assert_eq!(plan.shape, Shape::Rows(Rows::OnePass { prefetch: Some(prefetch) }), "{plan}");
        assert_eq!(plan.split, Split::Rows);
        assert_eq!(plan.scratch.len(), 1, "{plan}");
        assert_eq!(plan.scratch[0].holds, ScratchUse::PrefetchRange, "{plan}");
        let plain = KernelPlan::new(&spec, Target::with_bulk(false));
        assert_eq!(plain.shape, Shape::Rows(Rows::OnePass { prefetch: None }), "{plain}");
        assert!(plain.scratch.is_empty(), "{plain}");
    }
    let mean = KernelPlan::new(&w3(), BULK);
    assert_eq!(mean.reductions[0].fold, Fold::Vector);
}

#[test]
fn softmax_blocks_run_flat_with_a_fused_exp_of_the_difference() {
    let plan = KernelPlan::new(&softmax(None), BULK);
    let Shape::Rows(Rows::Blocked { rows: 8, flat: Some(flat) }) = &plan.shape else { panic!("{plan}") };
    // max(x) folds row by row (cheap argument), exp(x - max) is computed flat by one call
    // reading x and the expanded max, the division runs flat over the block.
    assert_eq!(flat.args[0], None);
    let exp = flat.args[1].expect("the exp is flat");
    assert_eq!((exp.node, exp.bulk), (1, Some(BulkCall::ExpSub { x: 0, y: 1 })));
    assert!(flat.outputs);
    let expanded: Vec<usize> = flat.expanded.iter().map(|&(i, _)| i).collect();
    assert_eq!(expanded, [1, 2], "the row max and the row sum");
    assert_eq!(plan.reductions[0].fold, Fold::DroppingNans);
    assert_eq!(plan.reductions[1].fold, Fold::Vector);
    // The row-by-row path keeps exp(x - max) in the output's buffer for the division.
    assert_eq!(plan.stash, [(1, 0)]);
    assert_eq!(plan.reductions[1].keep, Some(0));
    // Slots: the two reductions' row values, then the flat argument, then the expansions.
    let uses: Vec<ScratchUse> = plan.scratch.iter().map(|s| s.holds).collect();
    assert_eq!(
        uses,
        [
            ScratchUse::RowValues(0),
            ScratchUse::RowValues(1),
            ScratchUse::FlatArg(1),
            ScratchUse::Expanded(1),
            ScratchUse::Expanded(2)
        ]
    );
    // Each flat buffer holds a block plus the values a bulk fold's expansion writes past a row's
    // start (two 16-float vectors).
    assert!(plan.scratch[2..].iter().all(|s| s.bytes == (1024 + 32) * 4), "{plan}");
    // Both folds run in bulk, on flat and row-by-row blocks: the max of the full input, the sum of
    // the flat `exp` (kept in the output's buffer on row-by-row blocks).
    assert_eq!(flat.bulk_folds, [true, true]);
    let plain = KernelPlan::new(&softmax(None), Target::with_bulk(false));
    let Shape::Rows(Rows::Blocked { flat: Some(plain), .. }) = &plain.shape else { panic!("{plain}") };
    assert_eq!(plain.bulk_folds, [false, false], "without the bulk functions the IR folds");
}

#[test]
fn a_computed_difference_is_exponentiated_in_place() {
    // W9's softmax(d * 2): the difference reads a computed node, not two flat inputs.
    let plan = KernelPlan::new(&softmax(Some(2.0)), BULK);
    let Shape::Rows(Rows::Blocked { flat: Some(flat), .. }) = &plan.shape else { panic!("{plan}") };
    let exp = flat.args[1].expect("the exp is flat");
    assert_eq!(exp.bulk, Some(BulkCall::InPlace { op: UnaryMath::Exp, arg: N(1) }));
    // Without the bulk functions the same blocks run the exp as a vector loop.
    let plan = KernelPlan::new(&softmax(Some(2.0)), Target::with_bulk(false));
    let Shape::Rows(Rows::Blocked { flat: Some(flat), .. }) = &plan.shape else { panic!("{plan}") };
    assert_eq!(flat.args[1].map(|a| a.bulk), Some(None));
}

#[test]
fn scalar_kernels_fold_in_order_and_stay_row_by_row() {
    let plan = KernelPlan::new(&int_and_bool_rows(), BULK);
    assert_eq!(plan.simd, None, "a bool reduction makes the kernel scalar");
    assert!(plan.reductions.iter().all(|r| r.fold == Fold::Ordered));
    assert_eq!(plan.shape, Shape::Rows(Rows::Blocked { rows: 8, flat: None }), "{plan}");
    let mixed = KernelPlan::new(&mixed_dtypes(), BULK);
    assert_eq!((mixed.simd, &mixed.shape), (None, &Shape::Flat(None)));
    let ints = KernelPlan::new(&int_vector(), BULK);
    assert_eq!(ints.simd, Some(ragtime_jit::Elem::I32));
}

#[test]
fn plans_for_this_machine_follow_its_features() {
    let host = Target::host();
    assert_eq!(host.bulk(), ragtime_jit::bulk::exp_f32_in_place(&mut [0.0f32]));
    let softmax = softmax(None);
    assert_eq!(host.tiles(), host.bulk() && ragtime_jit::bulk::Isa::Avx512.runs());
    let features = Target::with_features(host.bulk(), host.tiles());
    assert_eq!(KernelPlan::new(&softmax, host), KernelPlan::new(&softmax, features));
    // An AVX2 machine runs the bulk `exp` and division, and keeps the IR folds.
    let avx2 = KernelPlan::new(&softmax, Target::with_features(true, false));
    let Shape::Rows(Rows::Blocked { flat: Some(flat), .. }) = &avx2.shape else { panic!("{avx2}") };
    assert_eq!(flat.bulk_folds, [false, false], "{avx2}");
    assert!(matches!(flat.args[1], Some(FlatNode { bulk: Some(BulkCall::ExpSub { .. }), .. })), "{avx2}");
}

#[test]
fn item_rows_split_items_into_vectors_then_columns() {
    let plan = KernelPlan::new(&softmax(None).over_items(6), BULK);
    let Shape::Items(items) = &plan.shape else { panic!("{plan}") };
    let parts = [(0, true), (4, false), (5, false)].map(|(column, vector)| Part { column, vector });
    assert_eq!((items.width, items.parts.as_slice(), items.block), (6, &parts[..], Some(8)), "{plan}");
    // The max folds NaN-dropping with an exact refold of the rare rows; the sum in item order.
    let folds: Vec<Fold> = plan.reductions.iter().map(|r| r.fold).collect();
    assert_eq!(folds, [Fold::ColumnsDroppingNans, Fold::Columns], "{plan}");
    // exp(x - max) is kept in the output's buffer for the division, as over scalar items, and
    // computed there by one bulk call per block where the machine has the function.
    assert_eq!(plan.stash, [(1, 0)]);
    let exp = BulkCall::InPlace { op: UnaryMath::Exp, arg: ScalarRef::Node(0) };
    assert_eq!(items.bulk, [None, Some(ItemBulk { call: exp, output: 0, kept: true })], "{plan}");
    let plain = KernelPlan::new(&softmax(None).over_items(6), Target::with_bulk(false));
    let Shape::Items(plain_items) = &plain.shape else { panic!("{plain}") };
    assert_eq!(plain_items.bulk, [None, None], "{plain}");
    assert_eq!(plan.split, Split::Rows);
    let uses: Vec<ScratchUse> = plan.scratch.iter().map(|s| s.holds).collect();
    assert_eq!(uses, [ScratchUse::RowValues(0), ScratchUse::RowValues(1)]);
    assert!(plan.scratch.iter().all(|s| s.bytes == 8 * items.row_bytes) && items.row_bytes == 48, "{plan}");
    // One reduction alone: one pass per row, no slots; a scalar kernel: single columns.
    let mean = KernelPlan::new(&w3().over_items(8), BULK);
    let Shape::Items(items) = &mean.shape else { panic!("{mean}") };
    assert_eq!((items.parts.len(), items.block), (2, None));
    assert!(mean.scratch.is_empty());
    let ints = KernelPlan::new(&int16_items(), BULK);
    let Shape::Items(items) = &ints.shape else { panic!("{ints}") };
    assert!(ints.simd.is_none() && items.parts.iter().all(|p| !p.vector) && items.parts.len() == 3, "{ints}");
    // A flat kernel has no items: its values are read alike.
    assert_eq!(w2().over_items(8).item_width(), 1);
}
