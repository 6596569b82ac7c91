//! Unit tests of the gather family.

use ragtime_core::limits::Limits;
use ragtime_core::{ragged, ErrorKind, ExecContext, Literal};
use ragtime_core::{DType, DenseTensor, Error, RaggedTensor, Result, TensorType};
use ragtime_graph::{Attrs, Op};

use crate::gather::boolean_mask::BooleanMask;
use crate::gather::defs::Gather;
use crate::gather::defs::{SegmentReduce, SegmentReduction, UnsortedSegmentReduce};
use crate::gather::lookup;
use crate::gather::take::{raise_ragged_rank, take_rows};

/// Runs `op` through both `infer` and `perform`, checking that they agree on the type.
fn run(op: &dyn Op, inputs: &[RaggedTensor]) -> Result<RaggedTensor> {
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let inferred = op.output_types(&types);
    let performed = op.perform(&ExecContext::new(Limits::untrusted()), inputs).map(|mut v| v.remove(0));
    match (&inferred, &performed) {
        (Ok(ty), Ok(value)) => assert!(
            ty[0].accepts(&TensorType::of(value)),
            "{}: infer says {}, perform gave {}",
            op.name(),
            ty[0],
            TensorType::of(value)
        ),
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{}: infer and perform fail differently", op.name()),
        (Err(a), Ok(v)) => panic!("{}: infer fails ({a}) but perform gives {v}", op.name()),
        (Ok(_), Err(_)) => {}
    }
    performed
}

fn check(op: &dyn Op, inputs: &[RaggedTensor], want: Result<RaggedTensor>) {
    let want = want.expect("expected value is a valid literal");
    let got = run(op, inputs).unwrap_or_else(|e| panic!("{} failed: {e}", op.name()));
    assert!(got.equals(&want), "{}: got {got}, want {want}", op.name());
}

fn check_err(op: &dyn Op, inputs: &[RaggedTensor], kind: ErrorKind) -> Error {
    match run(op, inputs) {
        Ok(v) => panic!("{}: expected a {kind} error, got {v}", op.name()),
        Err(e) => {
            assert_eq!(e.kind(), kind, "{}: {e}", op.name());
            e
        }
    }
}

pub(crate) fn dense(lit: impl Into<Literal>) -> Result<RaggedTensor> {
    RaggedTensor::from_literal_typed(&lit.into(), None, Some(0), None)
}

fn typed(lit: impl Into<Literal>, dtype: DType, ragged_rank: usize) -> Result<RaggedTensor> {
    RaggedTensor::from_literal_typed(&lit.into(), Some(dtype), Some(ragged_rank), None)
}

fn letters() -> RaggedTensor {
    ragged!["a", "b", "c", "d", "e"].unwrap()
}

fn ragged_letters() -> RaggedTensor {
    ragged![["a", "b", "c"], ["d"], [], ["e"]].unwrap()
}

// ---- gather: the examples of TensorFlow's `tf.gather` documentation for ragged tensors ----

#[test]
fn gather_dense_params() {
    check(&Gather::new(), &[letters(), ragged![3, 1, 2, 1, 0].unwrap()], ragged!["d", "b", "c", "b", "a"]);
    check(
        &Gather::new(),
        &[letters(), ragged![[3, 1, 2], [1], [], [0]].unwrap()],
        ragged![["d", "b", "c"], ["b"], [], ["a"]],
    );
}

#[test]
fn gather_ragged_params() {
    check(
        &Gather::new(),
        &[ragged_letters(), ragged![3, 1, 2, 1, 0].unwrap()],
        ragged![["e"], ["d"], [], ["d"], ["a", "b", "c"]],
    );
    check(
        &Gather::new(),
        &[ragged_letters(), ragged![[3, 1, 2], [1], [], [0]].unwrap()],
        ragged![[["e"], ["d"], []], [["d"]], [], [["a", "b", "c"]]],
    );
    check(
        &Gather::new(),
        &[ragged_letters(), RaggedTensor::from_literal(&Literal::from(0)).unwrap()],
        ragged!["a", "b", "c"],
    );
    let empty = typed(Literal::List(vec![]), DType::I64, 0).unwrap();
    let got = run(&Gather::new(), &[ragged_letters(), empty]).unwrap();
    assert_eq!((got.nrows(), got.ragged_rank(), got.dtype()), (0, 1, DType::String));
}

#[test]
fn gather_with_matrix_indices() {
    let params = dense(vec![vec![1, 2], vec![3, 4]]).unwrap();
    let indices = typed(vec![vec![1, 0], vec![1, 1]], DType::I64, 0).unwrap();
    check(
        &Gather::new(),
        &[params, indices.clone()],
        dense(vec![vec![vec![3, 4], vec![1, 2]], vec![vec![3, 4], vec![3, 4]]]),
    );
    // Over ragged params, the indices' inner dimension becomes a (uniform) partition.
    let got = run(&Gather::new(), &[ragged![[1], [2, 3]].unwrap(), indices]).unwrap();
    assert_eq!(got.ragged_rank(), 2);
    assert_eq!(got.to_literal(), Literal::from(vec![vec![vec![2, 3], vec![1]], vec![vec![2, 3], vec![2, 3]]]));
}

#[test]
fn gather_rows_with_inner_dims() {
    let table = dense(vec![vec![0.5f32, 1.5], vec![2.5, 3.5], vec![4.5, 5.5]]).unwrap();
    let got = run(&Gather::new(), &[table, ragged![[2, 0], [], [1]].unwrap()]).unwrap();
    assert_eq!(got.ragged_rank(), 1);
    assert_eq!(
        got.to_literal(),
        Literal::from(vec![vec![vec![4.5f32, 5.5], vec![0.5, 1.5]], vec![], vec![vec![2.5, 3.5]]])
    );
}

#[test]
fn gather_refuses_bad_indices() {
    let err = check_err(&Gather::new(), &[letters(), ragged![[0], [4, 5]].unwrap()], ErrorKind::IndexOutOfRange);
    assert!(err.to_string().contains("indices[1, 1]"), "{err}");
    check_err(&Gather::new(), &[letters(), ragged![0, -1].unwrap()], ErrorKind::IndexOutOfRange);
    check_err(&Gather::new(), &[ragged_letters(), ragged![4].unwrap()], ErrorKind::IndexOutOfRange);
    check_err(&Gather::new(), &[letters(), ragged![0.0, 1.0].unwrap()], ErrorKind::TypeMismatch);
    check_err(&Gather::new(), &[letters(), typed(vec![0], DType::U8, 0).unwrap()], ErrorKind::TypeMismatch);
    let scalar = RaggedTensor::from_literal(&Literal::from(1)).unwrap();
    check_err(&Gather::new(), &[scalar.clone(), scalar], ErrorKind::IncompatibleShapes);
    assert_eq!(Gather::new().infer(&[]).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn take_rows_keeps_uniform_partitions() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = RaggedTensor::from_uniform_row_length(DenseTensor::vector(vec![1i32, 2, 3, 4, 5, 6]), 2).unwrap();
    let got = take_rows(ctx, "test", &x, &[2, 0, 2]).unwrap();
    assert_eq!(got.partitions()[0].uniform_row_length(), Some(2));
    assert_eq!(got.to_literal(), Literal::from(vec![vec![5, 6], vec![1, 2], vec![5, 6]]));
    let rt3 = ragged![[[1, 2, 3], [4]], [[5], [], [6]], [[7]], [[8, 9], [10]]].unwrap();
    let got = take_rows(ctx, "test", &rt3, &[3, 1, 3]).unwrap();
    let want = ragged![[[8, 9], [10]], [[5], [], [6]], [[8, 9], [10]]].unwrap();
    assert!(got.equals(&want), "got {got}");
}

#[test]
fn take_rows_gathers_nested_rows() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[[1, 2], [3]], [], [[4]]].unwrap();
    let got = take_rows(ctx, "test", &x, &[2, 0, 2]).unwrap();
    assert!(got.equals(&ragged![[[4]], [[1, 2], [3]], [[4]]].unwrap()), "got {got}");
    assert_eq!(take_rows(ctx, "test", &x, &[]).unwrap().nrows(), 0);
    assert_eq!(take_rows(ctx, "test", &x, &[3]).unwrap_err().kind(), ErrorKind::IndexOutOfRange);
    let scalar = RaggedTensor::dense(DenseTensor::scalar(1i32));
    assert_eq!(take_rows(ctx, "test", &scalar, &[]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn raise_ragged_rank_folds_uniform_dims() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = dense(vec![vec![vec![1, 2], vec![3, 4], vec![5, 6]]]).unwrap();
    let raised = raise_ragged_rank(ctx, "test", &x, 2).unwrap();
    assert_eq!(raised.ragged_rank(), 2);
    assert_eq!(raised.to_literal(), x.to_literal());
    assert_eq!(raise_ragged_rank(ctx, "test", &x, 3).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

// ---- boolean_mask: the examples of `tf.ragged.boolean_mask`'s documentation ----

#[test]
fn boolean_mask_examples() {
    let (t, f) = (true, false);
    check(
        &BooleanMask::new(),
        &[
            dense(vec![vec![1, 2, 3], vec![4, 5, 6], vec![7, 8, 9]]).unwrap(),
            dense(vec![vec![t, f, t], vec![f, f, f], vec![t, f, f]]).unwrap(),
        ],
        ragged![[1, 3], [], [7]],
    );
    check(
        &BooleanMask::new(),
        &[ragged![[1, 2, 3], [4], [5, 6]].unwrap(), ragged![[f, f, t], [f], [t, t]].unwrap()],
        ragged![[3], [], [5, 6]],
    );
    check(
        &BooleanMask::new(),
        &[ragged![[1, 2, 3], [4], [5, 6]].unwrap(), ragged![t, f, t].unwrap()],
        ragged![[1, 2, 3], [5, 6]],
    );
}

#[test]
fn boolean_mask_keeps_inner_dims() {
    let (t, f) = (true, false);
    // Rows of a dense matrix: the result stays dense.
    check(
        &BooleanMask::new(),
        &[dense(vec![vec![1, 2], vec![3, 4], vec![5, 6]]).unwrap(), ragged![f, t, t].unwrap()],
        dense(vec![vec![3, 4], vec![5, 6]]),
    );
    // A rank-2 mask over rank-3 data: the masked dim becomes ragged, the last one stays uniform.
    let data = dense(vec![vec![vec![1, 2], vec![3, 4]], vec![vec![5, 6], vec![7, 8]]]).unwrap();
    let got = run(&BooleanMask::new(), &[data, dense(vec![vec![f, t], vec![t, t]]).unwrap()]).unwrap();
    assert_eq!((got.ragged_rank(), got.flat_values().shape()), (1, &[3usize, 2][..]));
    assert_eq!(got.to_literal(), Literal::from(vec![vec![vec![3, 4]], vec![vec![5, 6], vec![7, 8]]]));
    // Strings, empty strings and empty rows.
    check(
        &BooleanMask::new(),
        &[ragged![["", "x"], [], ["y"]].unwrap(), ragged![[t, f], [], [f]].unwrap()],
        RaggedTensor::from_row_splits(ragged!["",].unwrap(), vec![0, 1, 1, 1]),
    );
}

#[test]
fn boolean_mask_refuses_mismatches() {
    let (t, f) = (true, false);
    let data = ragged![[1, 2, 3], [4], [5, 6]].unwrap();
    check_err(
        &BooleanMask::new(),
        &[data.clone(), ragged![[t, f, t], [f, f], [t, t]].unwrap()],
        ErrorKind::IncompatibleShapes,
    );
    check_err(&BooleanMask::new(), &[data.clone(), ragged![t, f].unwrap()], ErrorKind::IncompatibleShapes);
    check_err(
        &BooleanMask::new(),
        &[data.clone(), dense(vec![vec![t, f, t], vec![f, f, f], vec![t, f, f]]).unwrap()],
        ErrorKind::IncompatibleShapes,
    );
    check_err(&BooleanMask::new(), &[data.clone(), ragged![1, 0, 1].unwrap()], ErrorKind::TypeMismatch);
    check_err(
        &BooleanMask::new(),
        &[data, RaggedTensor::from_literal(&Literal::from(true)).unwrap()],
        ErrorKind::IncompatibleShapes,
    );
    check_err(
        &BooleanMask::new(),
        &[dense(vec![1, 2]).unwrap(), dense(vec![t, f, t]).unwrap()],
        ErrorKind::IncompatibleShapes,
    );
}

// ---- segment reductions: the examples of `tf.math.segment_*`'s documentation ----

pub(crate) fn c() -> RaggedTensor {
    dense(vec![vec![1, 2, 3, 4], vec![4, 3, 2, 1], vec![5, 6, 7, 8]]).unwrap()
}

pub(crate) fn segment(reduction: SegmentReduction) -> SegmentReduce {
    SegmentReduce::new(reduction)
}

#[test]
fn segment_reductions_of_matrices() {
    let ids = ragged![0, 0, 1].unwrap();
    check(&segment(SegmentReduction::Sum), &[c(), ids.clone()], dense(vec![vec![5, 5, 5, 5], vec![5, 6, 7, 8]]));
    check(&segment(SegmentReduction::Max), &[c(), ids.clone()], dense(vec![vec![4, 3, 3, 4], vec![5, 6, 7, 8]]));
    check(&segment(SegmentReduction::Min), &[c(), ids], dense(vec![vec![1, 2, 2, 1], vec![5, 6, 7, 8]]));
    let cf = dense(vec![vec![1.0, 2.0, 3.0, 4.0], vec![4.0, 3.0, 2.0, 1.0], vec![5.0, 6.0, 7.0, 8.0]]).unwrap();
    check(
        &segment(SegmentReduction::Mean),
        &[cf, typed(vec![0, 0, 1], DType::I64, 0).unwrap()],
        dense(vec![vec![2.5f32, 2.5, 2.5, 2.5], vec![5.0, 6.0, 7.0, 8.0]]),
    );
}

#[test]
fn empty_segments_give_zero() {
    let data = ragged![1.5, -2.0, 4.0].unwrap();
    let ids = ragged![0, 0, 3].unwrap();
    for (reduction, first) in [
        (SegmentReduction::Sum, -0.5f32),
        (SegmentReduction::Mean, -0.25),
        (SegmentReduction::Max, 1.5),
        (SegmentReduction::Min, -2.0),
    ] {
        check(&segment(reduction), &[data.clone(), ids.clone()], ragged![first, 0.0, 0.0, 4.0]);
    }
    let none = typed(Literal::List(vec![]), DType::I32, 0).unwrap();
    let got = run(&segment(SegmentReduction::Sum), &[none.clone(), none]).unwrap();
    assert_eq!(got.flat_values().shape(), &[0]);
}

#[test]
fn integer_means_truncate() {
    check(
        &segment(SegmentReduction::Mean),
        &[ragged![1, 2, -3, -4].unwrap(), ragged![0, 0, 1, 1].unwrap()],
        ragged![1, -3],
    );
}

#[test]
fn ragged_segments_combine_by_position() {
    // Row s of the result is as long as the longest row of segment s; empty segments are empty rows.
    let data = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
    check(&segment(SegmentReduction::Sum), &[data.clone(), ragged![0, 0, 2].unwrap()], ragged![[4, 2], [], [4, 5, 6]]);
    check(&segment(SegmentReduction::Max), &[data.clone(), ragged![0, 0, 0].unwrap()], ragged![[4, 5, 6]]);
    check(&segment(SegmentReduction::Mean), &[data, ragged![0, 0, 0].unwrap()], ragged![[2, 3, 6]]);
    let deep = ragged![[[1], [2, 3]], [[10, 20]], [[5]]].unwrap();
    check(&segment(SegmentReduction::Sum), &[deep, ragged![0, 0, 1].unwrap()], ragged![[[11, 20], [2, 3]], [[5]]]);
}

#[test]
fn segment_ids_must_be_sorted_and_fit() {
    let data = ragged![1, 2, 3].unwrap();
    let err = check_err(
        &segment(SegmentReduction::Sum),
        &[data.clone(), ragged![0, 2, 1].unwrap()],
        ErrorKind::InvalidArgument,
    );
    assert!(err.to_string().contains("segment_sum") && err.to_string().contains("segment_ids[2] = 1"), "{err}");
    check_err(&segment(SegmentReduction::Max), &[data.clone(), ragged![-1, 0, 0].unwrap()], ErrorKind::InvalidArgument);
    check_err(&segment(SegmentReduction::Min), &[data.clone(), ragged![0, 0].unwrap()], ErrorKind::IncompatibleShapes);
    check_err(
        &segment(SegmentReduction::Sum),
        &[data.clone(), ragged![[0], [0, 0]].unwrap()],
        ErrorKind::IncompatibleShapes,
    );
    check_err(
        &segment(SegmentReduction::Sum),
        &[data.clone(), ragged![0.0, 0.0, 0.0].unwrap()],
        ErrorKind::TypeMismatch,
    );
    check_err(
        &segment(SegmentReduction::Sum),
        &[ragged![true, false].unwrap(), ragged![0, 0].unwrap()],
        ErrorKind::TypeMismatch,
    );
    check_err(&segment(SegmentReduction::Sum), &[ragged!["a"].unwrap(), ragged![0].unwrap()], ErrorKind::TypeMismatch);
    check_err(&segment(SegmentReduction::Sum), &[data, ragged![0, 0, i64::MAX].unwrap()], ErrorKind::ResourceExhausted);
    // 2^31 + 1 segments of empty rows: refused before per-segment bookkeeping is allocated.
    let empty_rows = ragged![[], [], []].unwrap().cast(DType::U16).unwrap();
    check_err(
        &segment(SegmentReduction::Sum),
        &[empty_rows, typed(vec![0i64, 0, 1 << 31], DType::I64, 0).unwrap()],
        ErrorKind::ResourceExhausted,
    );
}

#[test]
fn unsorted_segment_sum_examples() {
    let c = dense(vec![vec![1, 2, 3, 4], vec![5, 6, 7, 8], vec![4, 3, 2, 1]]).unwrap();
    check(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
        &[c.clone(), ragged![0, 1, 0].unwrap()],
        dense(vec![vec![5, 5, 5, 5], vec![5, 6, 7, 8]]),
    );
    // Negative ids drop their rows; missing segments are 0.
    check(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 3),
        &[c.clone(), ragged![-1, 2, 2].unwrap()],
        dense(vec![vec![0, 0, 0, 0], vec![0, 0, 0, 0], vec![9, 9, 9, 9]]),
    );
    // Ids with the shape of the whole matrix: every element is an item.
    let ids = dense(vec![vec![0, 1, 0, 1], vec![0, 0, 0, 0], vec![1, 1, 1, 1]]).unwrap();
    check(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
        &[c.clone(), ids],
        ragged![1 + 3 + 5 + 6 + 7 + 8, 2 + 4 + 4 + 3 + 2 + 1],
    );
    let err = check_err(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
        &[c.clone(), ragged![0, 2, 1].unwrap()],
        ErrorKind::IndexOutOfRange,
    );
    assert!(err.to_string().contains("segment_ids[1]"), "{err}");
    check_err(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
        &[c, ragged![0, 1].unwrap()],
        ErrorKind::IncompatibleShapes,
    );
    assert_eq!(UnsortedSegmentReduce::new(SegmentReduction::Sum, 4).name(), "UnsortedSegmentSum{num_segments=4}");
}

#[test]
fn unsorted_segment_sum_of_ragged_data() {
    let data = ragged![[1, 2], [3], [4, 5, 6]].unwrap();
    check(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 3),
        &[data.clone(), ragged![2, 2, 0].unwrap()],
        ragged![[4, 5, 6], [], [4, 2]],
    );
    // Ragged ids with data's row structure: every value is an item.
    check(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
        &[data.clone(), ragged![[0, 1], [1], [0, 0, 1]].unwrap()],
        ragged![1 + 4 + 5, 2 + 3 + 6],
    );
    check_err(
        &UnsortedSegmentReduce::new(SegmentReduction::Sum, 2),
        &[data, ragged![[0, 1], [1, 1], [0, 0, 1]].unwrap()],
        ErrorKind::IncompatibleShapes,
    );
}

#[test]
fn registry_builds_these_ops() {
    let none = Attrs::default();
    for (name, op_name) in [
        ("gather", "Gather"),
        ("embedding_lookup", "Gather"),
        ("boolean_mask", "BooleanMask"),
        ("segment_sum", "SegmentSum"),
        ("segment_mean", "SegmentMean"),
        ("segment_max", "SegmentMax"),
        ("segment_min", "SegmentMin"),
    ] {
        assert_eq!(lookup(name, &none).unwrap().unwrap().name(), op_name);
    }
    let mut map = std::collections::BTreeMap::new();
    map.insert("num_segments".to_string(), ragtime_graph::Attr::Int(5));
    let attrs = Attrs::new("unsorted_segment_sum", map.clone());
    assert_eq!(lookup("unsorted_segment_sum", &attrs).unwrap().unwrap().name(), "UnsortedSegmentSum{num_segments=5}");
    map.insert("num_segments".to_string(), ragtime_graph::Attr::Int(-1));
    let attrs = Attrs::new("unsorted_segment_sum", map);
    assert_eq!(lookup("unsorted_segment_sum", &attrs).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(lookup("unsorted_segment_sum", &none).unwrap().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert!(lookup("getitem", &none).is_none());
}
