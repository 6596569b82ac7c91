//! Unit tests of the row partition constructors and accessors.

use ragtime_core::limits::Limits;
use ragtime_core::{ragged, ErrorKind, ExecContext, Literal};
use ragtime_core::{DType, DenseTensor, RaggedTensor, TensorType};
use ragtime_graph::Attr;
use ragtime_graph::Op;

use crate::structure::build_partitions::{FromNestedRowSplits, FromRowSplits};
use crate::structure::lookup;
use crate::structure::testing::*;

#[test]
fn from_row_splits_lengths_rowids() {
    // seed_walkthrough/from_row_splits, from_row_lengths, from_value_rowids(_nrows)
    let values = i32s(&[3, 1, 4, 1, 5, 9, 2]);
    let want = ragged![[3, 1, 4, 1], [], [5, 9], [2]].unwrap();
    assert_value(&run("from_row_splits", &[], &[values.clone(), i64s(&[0, 4, 4, 6, 7])]).unwrap()[0], &want);
    assert_value(&run("from_row_lengths", &[], &[values.clone(), i32s(&[4, 0, 2, 1])]).unwrap()[0], &want);
    let rowids = i64s(&[0, 0, 0, 0, 2, 2, 3]);
    assert_value(&run("from_value_rowids", &[], &[values.clone(), rowids.clone()]).unwrap()[0], &want);
    let out = run("from_value_rowids", &[("nrows", Attr::Int(6))], &[values, rowids]).unwrap();
    assert_value(&out[0], &ragged![[3, 1, 4, 1], [], [5, 9], [2], [], []].unwrap());
}

#[test]
fn from_row_splits_of_ragged_values_adds_an_outer_dimension() {
    let values = ragged![[1, 2], [], [3]].unwrap();
    let out = run("from_row_splits", &[], &[values, i64s(&[0, 2, 3])]).unwrap();
    assert_value(&out[0], &ragged![[[1, 2], []], [[3]]].unwrap());
}

#[test]
fn bad_partitions_are_invalid_row_partition() {
    // seed_walkthrough/bad_splits_*, bad_lengths_sum, bad_rowids_unsorted
    let values = i32s(&[1, 2, 3]);
    for splits in [&[0, 2, 1, 3][..], &[0, 2, 5], &[1, 2, 3], &[]] {
        let e = run("from_row_splits", &[], &[values.clone(), i64s(splits)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition, "splits {splits:?}: {e}");
    }
    let e = run("from_row_lengths", &[], &[values.clone(), i64s(&[1, 1])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    let e = run("from_row_lengths", &[], &[values.clone(), i64s(&[4, -1])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    let e = run("from_value_rowids", &[], &[values.clone(), i64s(&[1, 0, 2])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    let e = run("from_value_rowids", &[("nrows", Attr::Int(2))], &[values.clone(), i64s(&[0, 1, 2])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    let e = run("from_value_rowids", &[], &[values, i64s(&[0, 1, i64::MAX])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "a huge row id is refused before allocating: {e}");
}

#[test]
fn splits_must_be_integer_vectors() {
    let op = build("from_row_splits", &[]);
    let values = TensorType::vector(DType::I32);
    let e = op.infer(&[values.clone(), TensorType::vector(DType::F32)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    let e = op.infer(&[values, TensorType::dense(DType::I64, &[Some(2), Some(2)])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    let e = op.infer(&[TensorType::scalar(DType::I32), TensorType::vector(DType::I64)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    let e = op.infer(&[TensorType::vector(DType::I32)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn from_nested_row_splits_builds_every_level() {
    // seed_walkthrough/from_nested_row_splits
    let flat = i32s(&[10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    let out = run("from_nested_row_splits", &[], &[flat, i64s(&[0, 1, 1, 5]), i64s(&[0, 3, 3, 5, 9, 10])]).unwrap();
    assert_value(&out[0], &ragged![[[10, 11, 12]], [], [[], [13, 14], [15, 16, 17, 18], [19]]].unwrap());
    let t = build("from_nested_row_splits", &[])
        .infer(&[
            TensorType::vector(DType::I32),
            TensorType::dense(DType::I64, &[Some(4)]),
            TensorType::vector(DType::I64),
        ])
        .unwrap();
    assert_eq!(t[0].to_string(), "int32[3, *, *]");
}

#[test]
fn from_nested_row_splits_names_the_bad_level() {
    let flat = i32s(&[1, 2, 3]);
    let e = run("from_nested_row_splits", &[], &[flat, i64s(&[0, 1, 2]), i64s(&[0, 1, 2])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    assert!(e.to_string().contains("input 2"), "message should name input 2: {e}");
}

#[test]
fn lod_two_level() {
    // partitions/lod_two_level
    let flat: RaggedTensor = DenseTensor::from_vec(vec![7, 2], (1..=14).collect::<Vec<i32>>()).unwrap().into();
    let y = run("from_nested_row_splits", &[], &[flat, i64s(&[0, 2, 3]), i64s(&[0, 2, 4, 7])]).unwrap().remove(0);
    assert_eq!(y.ragged_rank(), 2);
    let l0 = run("row_lengths", &[("axis", Attr::Int(1))], std::slice::from_ref(&y)).unwrap().remove(0);
    assert_value(&l0, &i64s(&[2, 1]));
    let l1 = run("row_lengths", &[("axis", Attr::Int(2))], &[y]).unwrap().remove(0);
    let want =
        RaggedTensor::from_literal_typed(&Literal::from(vec![vec![2, 2], vec![3]]), Some(DType::I64), Some(1), None)
            .unwrap();
    assert_value(&l1, &want);
}

#[test]
fn from_uniform_row_length_groups_rows() {
    // seed_walkthrough/from_uniform_row_length
    let values = ragged![[10, 11, 12], [13, 14], [15, 16, 17, 18], [19]].unwrap();
    let out =
        run("from_uniform_row_length", &[("uniform_row_length", Attr::Int(2))], std::slice::from_ref(&values)).unwrap();
    assert_value(&out[0], &ragged![[[10, 11, 12], [13, 14]], [[15, 16, 17, 18], [19]]].unwrap());
    let e = run("from_uniform_row_length", &[("uniform_row_length", Attr::Int(3))], &[values]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
    let empty =
        run("from_uniform_row_length", &[("uniform_row_length", Attr::Int(0)), ("nrows", Attr::Int(2))], &[i32s(&[])])
            .unwrap();
    assert_eq!(empty[0].to_string(), "<Ragged int32 [[], []]>");
    let e =
        lookup("from_uniform_row_length", &attrs("from_uniform_row_length", &[("uniform_row_length", Attr::Int(-1))]))
            .unwrap()
            .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidRowPartition);
}

#[test]
fn partition_accessors() {
    // seed_walkthrough/partition_accessors
    let rt = ragged![[1, 2], [3, 4, 5], [6], [], [7]].unwrap();
    let get = |name: &str| run(name, &[], std::slice::from_ref(&rt)).unwrap().remove(0);
    assert_value(&get("row_splits"), &i64s(&[0, 2, 5, 6, 6, 7]));
    assert_value(&get("row_lengths"), &i64s(&[2, 3, 1, 0, 1]));
    assert_value(&get("value_rowids"), &i64s(&[0, 0, 1, 1, 1, 2, 4]));
    assert_value(&get("nrows"), &DenseTensor::scalar(5i64).into());
    assert_value(&get("flat_values"), &i32s(&[1, 2, 3, 4, 5, 6, 7]));
    assert_value(&get("bounding_shape"), &i64s(&[5, 3]));
}

#[test]
fn accessors_on_strings_and_deeper_axes() {
    // seed_walkthrough/string_rank3_row_lengths and seed_walkthrough/bounding_shape
    let p = ragged![
        [["I", "have", "a", "cat"], ["His", "name", "is", "Mat"]],
        [["Do", "you", "want", "to", "come", "visit"], ["I'm", "free", "tomorrow"]]
    ]
    .unwrap();
    let y = run("row_lengths", &[("axis", Attr::Int(2))], std::slice::from_ref(&p)).unwrap().remove(0);
    assert_eq!(y.to_string(), "<Ragged int64 [[4, 4], [6, 3]]>");
    let y = run("row_lengths", &[("axis", Attr::Int(-1))], std::slice::from_ref(&p)).unwrap().remove(0);
    assert_eq!(y.to_string(), "<Ragged int64 [[4, 4], [6, 3]]>");
    let n = run("row_lengths", &[("axis", Attr::Int(0))], &[p]).unwrap().remove(0);
    assert_value(&n, &DenseTensor::scalar(2i64).into());
    let s = ragged![["Hi"], ["How", "are", "you"]].unwrap();
    assert_value(&run("bounding_shape", &[], &[s]).unwrap()[0], &i64s(&[2, 3]));
}

#[test]
fn accessors_refuse_what_has_no_partition() {
    let dense = TensorType::dense(DType::I32, &[Some(2), Some(3)]);
    for name in ["row_splits", "value_rowids"] {
        let e = build(name, &[]).infer(std::slice::from_ref(&dense)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}");
    }
    let e = build("nrows", &[]).infer(&[TensorType::scalar(DType::I32)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = build("row_lengths", &[("axis", Attr::Int(2))]).infer(&[TensorType::ragged(DType::I32, 1)]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // A dense tensor still has rows, flat values, a bounding shape and uniform row lengths.
    let x: RaggedTensor = DenseTensor::from_vec(vec![2, 3], vec![1, 2, 3, 4, 5, 6]).unwrap().into();
    assert_value(&run("row_lengths", &[], std::slice::from_ref(&x)).unwrap()[0], &i64s(&[3, 3]));
    assert_value(&run("nrows", &[], std::slice::from_ref(&x)).unwrap()[0], &DenseTensor::scalar(2i64).into());
    assert_value(&run("bounding_shape", &[], &[x]).unwrap()[0], &i64s(&[2, 3]));
}

#[test]
fn flat_values_keep_inner_dims() {
    // seed_walkthrough/uniform_inner_dim
    let values: RaggedTensor =
        DenseTensor::from_vec(vec![6, 2], vec![1, 3, 0, 0, 1, 3, 5, 3, 3, 3, 1, 2]).unwrap().into();
    let y = run("from_row_splits", &[], &[values.clone(), i64s(&[0, 3, 4, 6])]).unwrap().remove(0);
    assert_eq!(TensorType::of(&y).to_string(), "int32[3, *, 2]");
    let fv = run("flat_values", &[], &[y]).unwrap().remove(0);
    assert_value(&fv, &values);
    let t = build("flat_values", &[]).infer(&[TensorType::ragged(DType::F32, 2).with_inner(&[Some(4)])]).unwrap();
    assert_eq!(t[0].to_string(), "float32[?, 4]");
}

#[test]
fn identity_shares_the_value() {
    // seed_walkthrough/string_identity
    let s = ragged![["Let's", "build"], ["We", "can"]].unwrap();
    let out = run("identity", &[], std::slice::from_ref(&s)).unwrap();
    assert_value(&out[0], &s);
    assert!(out[0].partitions()[0].ptr_eq(&s.partitions()[0]));
}

#[test]
fn names_carry_properties_and_unknown_attrs_are_refused() {
    assert_eq!(build("row_lengths", &[]).name(), "RowLengths{axis=1}");
    assert_eq!(build("from_value_rowids", &[("nrows", Attr::Int(6))]).name(), "FromValueRowids{nrows=6}");
    let e = lookup("nrows", &attrs("nrows", &[("axis", Attr::Int(0))])).unwrap().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(lookup("gather", &attrs("gather", &[])).is_none());
}

#[test]
fn perform_refuses_wrong_input_counts() {
    let e = FromRowSplits::new().perform(&ExecContext::new(Limits::untrusted()), &[i32s(&[1])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = FromNestedRowSplits::new().perform(&ExecContext::new(Limits::untrusted()), &[]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}
