//! Unit tests of broadcasting: types and values, same-structure sharing, and TensorFlow's refusals.

use super::*;
use ragtime_core::limits::Limits;
use ragtime_core::ExecContext;
use ragtime_core::{ragged, DType, ErrorKind, Literal};

/// The same nested list as a dense tensor.
fn dense(r: Result<RaggedTensor>) -> RaggedTensor {
    RaggedTensor::from_literal_typed(&r.unwrap().to_literal(), None, Some(0), None).unwrap()
}

/// The same nested list with `ragged_rank` ragged dims and uniform inner dims `inner`.
fn with_inner(r: Result<RaggedTensor>, ragged_rank: usize, inner: &[usize]) -> RaggedTensor {
    RaggedTensor::from_literal_typed(&r.unwrap().to_literal(), None, Some(ragged_rank), Some(inner)).unwrap()
}

/// Broadcasts and returns each operand rebuilt as a tensor of the result's structure.
fn operands(inputs: &[RaggedTensor]) -> Vec<RaggedTensor> {
    let ctx = &ExecContext::new(Limits::untrusted());
    let b = broadcast_values(ctx, "add", inputs).unwrap();
    b.operands.iter().map(|o| b.finish(o.clone()).unwrap()).collect()
}

fn lit(r: Result<RaggedTensor>) -> Literal {
    r.unwrap().to_literal()
}

#[test]
fn same_structure_shares_partitions_and_values() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[1, 2], [3]].unwrap();
    let y = x.with_flat_values(DenseTensor::vector(vec![10, 20, 30])).unwrap();
    let b = broadcast_values(ctx, "add", &[x.clone(), y]).unwrap();
    assert!(b.partitions[0].ptr_eq(&x.partitions()[0]), "partition must be shared, not copied");
    assert_eq!(b.flat_shape, vec![3]);
    assert_eq!(b.operands[0].as_slice::<i32>(), Some(&[1, 2, 3][..]));
}

#[test]
fn ragged_plus_scalar() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[1, 2], [3]].unwrap();
    let s = RaggedTensor::dense(DenseTensor::scalar(3i32));
    let b = broadcast_values(ctx, "add", &[x.clone(), s]).unwrap();
    assert!(b.partitions[0].ptr_eq(&x.partitions()[0]));
    assert_eq!(b.operands[1].as_slice::<i32>(), Some(&[3, 3, 3][..]));
}

#[test]
fn dense_column_broadcasts_per_row() {
    // TF guide: [[10, 87, 12], [19, 53], [12, 32]] + [[1000], [2000], [3000]].
    let x = ragged![[10, 87, 12], [19, 53], [12, 32]].unwrap();
    let c = dense(ragged![[1000], [2000], [3000]]);
    let ops = operands(&[x.clone(), c]);
    assert_eq!(ops[1].to_literal(), lit(ragged![[1000, 1000, 1000], [2000, 2000], [3000, 3000]]));
    assert!(ops[1].partitions()[0].ptr_eq(&x.partitions()[0]));
}

#[test]
fn one_by_one_against_inner_dims() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // TF guide: 2 x (r1) x 2 + [[10]].
    let x = with_inner(ragged![[[1, 2], [3, 4], [5, 6]], [[7, 8]]], 1, &[2]);
    let c = dense(ragged![[10]]);
    let b = broadcast_values(ctx, "add", &[x, c]).unwrap();
    assert_eq!(b.flat_shape, vec![4, 2]);
    assert_eq!(b.partitions.len(), 1);
    assert_eq!(b.operands[1].as_slice::<i32>(), Some(&[10; 8][..]));
}

#[test]
fn inner_size_one_against_lower_rank_vector() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // TF guide: 2 x (r1) x (r2) x 1 + [10, 20, 30] -> 2 x (r1) x (r2) x 3.
    let x = with_inner(ragged![[[[1], [2]], [], [[3]], [[4]]], [[[5], [6]], [[7]]]], 2, &[1]);
    let v = RaggedTensor::dense(DenseTensor::vector(vec![10i32, 20, 30]));
    let b = broadcast_values(ctx, "add", &[x.clone(), v]).unwrap();
    assert_eq!(b.flat_shape, vec![7, 3]);
    assert!(b.partitions[0].ptr_eq(&x.partitions()[0]) && b.partitions[1].ptr_eq(&x.partitions()[1]));
    let expanded: Vec<i32> = (1..=7).flat_map(|v| [v; 3]).collect();
    assert_eq!(b.operands[0].as_slice::<i32>(), Some(&expanded[..]));
    assert_eq!(&b.operands[1].as_slice::<i32>().unwrap()[..6], &[10, 20, 30, 10, 20, 30]);
}

#[test]
fn mismatched_ragged_rows_are_incompatible() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[1, 2, 3], [4], [5, 6]].unwrap();
    let y = ragged![[10, 20], [30, 40], [50]].unwrap();
    let e = broadcast_values(ctx, "add", &[x, y]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    assert!(e.to_string().contains("add") && e.to_string().contains("row 0"), "{e}");
}

#[test]
fn ragged_row_of_one_is_not_repeated() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[1], [2, 3]].unwrap();
    let y = ragged![[10, 20], [30, 40]].unwrap();
    assert_eq!(broadcast_values(ctx, "add", &[x, y]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn trailing_dense_dim_against_ragged_rows() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[1, 2], [3, 4, 5, 6], [7]].unwrap();
    let y = dense(ragged![[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]);
    assert_eq!(broadcast_values(ctx, "add", &[x, y.clone()]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    // Rows that all have 4 values do match a uniform dimension of 4.
    let x4 = ragged![[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]].unwrap();
    let b = broadcast_values(ctx, "add", &[x4.clone(), y]).unwrap();
    assert!(b.partitions[0].ptr_eq(&x4.partitions()[0]));
    assert_eq!(b.flat_shape, vec![12]);
    assert_eq!(b.operands[1].as_slice::<i32>(), Some(&(1..=12).collect::<Vec<i32>>()[..]));
}

#[test]
fn trailing_ragged_dims_differ() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10]]].unwrap();
    let y = ragged![[[1, 2, 0], [3, 4, 0], [5, 6, 0]], [[7, 8, 0], [9, 10, 0]]].unwrap();
    let e = broadcast_values(ctx, "add", &[x, y]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    assert!(e.to_string().contains("dimension 2"), "{e}");
}

#[test]
fn outer_rows_must_match() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[1], [2, 3]].unwrap();
    let y = ragged![[1], [2, 3], []].unwrap();
    assert_eq!(broadcast_values(ctx, "add", &[x, y]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn a_single_dense_row_is_not_repeated_against_ragged_rows() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // TensorFlow 2.21 refuses [1, 2] against 3 x (r) even when every row has 2 values; against
    // rows held as a uniform inner dimension it broadcasts.
    let x = ragged![[1, 2], [3, 4], [5, 6]].unwrap();
    let y = dense(ragged![[1, 2]]);
    let e = broadcast_values(ctx, "add", &[x, y.clone()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes, "{e}");
    let uniform = dense(ragged![[1, 2], [3, 4], [5, 6]]);
    let ops = operands(&[uniform, y]);
    assert_eq!(ops[1].to_literal(), lit(ragged![[1, 2], [1, 2], [1, 2]]));
}

#[test]
fn ragged_against_higher_rank_dense_gains_a_ragged_dim() {
    // x: [2, (r)], c: [3, 1, 1] -> [3, 2, (r)] with ragged rank 2 (TF's row-partition count).
    let x = ragged![[1, 2], [3]].unwrap();
    let c = dense(ragged![[[0]], [[10]], [[20]]]);
    let ops = operands(&[x, c]);
    assert_eq!(ops[0].ragged_rank(), 2);
    assert_eq!(ops[0].to_literal(), lit(ragged![[[1, 2], [3]], [[1, 2], [3]], [[1, 2], [3]]]));
    assert_eq!(ops[1].to_literal(), lit(ragged![[[0, 0], [0]], [[10, 10], [10]], [[20, 20], [20]]]));
}

#[test]
fn a_per_row_vector_against_ragged_rows_suggests_keepdims() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragtime_core::ragged![[1.0, 2.0], [3.0], [4.0, 5.0, 6.0]].unwrap();
    let means = RaggedTensor::from(vec![1.5f32, 3.0, 5.0]);
    let e = broadcast_values(ctx, "subtract", &[x.clone(), means]).unwrap_err();
    assert_eq!(e.kind(), ragtime_core::ErrorKind::IncompatibleShapes);
    assert!(e.to_string().contains("did you mean keepdims=true"), "{e}");
    let other = RaggedTensor::from(vec![1.0f32, 2.0]);
    let e = broadcast_values(ctx, "subtract", &[x, other]).unwrap_err();
    assert!(!e.to_string().contains("keepdims"), "no hint when the vector is not one value per row: {e}");
}

#[test]
fn a_dense_vector_against_a_ragged_last_dimension_is_refused_whatever_the_row_lengths() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // TensorFlow 2.21 refuses these even when every row has the vector's length.
    let square = ragtime_core::ragged![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]].unwrap();
    let means = RaggedTensor::from(vec![2.0f32, 5.0, 8.0]);
    let e = broadcast_values(ctx, "subtract", &[square.clone(), means]).unwrap_err();
    assert_eq!(e.kind(), ragtime_core::ErrorKind::IncompatibleShapes);
    assert!(e.to_string().contains("did you mean keepdims=true"), "one value per row: the hint, got {e}");
    let two_rows = ragtime_core::ragged![[1, 2, 3], [4, 5, 6]].unwrap();
    let v = RaggedTensor::from(vec![1, 2, 3]);
    let e = broadcast_values(ctx, "subtract", &[two_rows.clone(), v.clone()]).unwrap_err();
    assert_eq!(e.kind(), ragtime_core::ErrorKind::IncompatibleShapes, "{e}");
    assert!(e.to_string().contains("size 3 there and was broadcast"), "{e}");
    // Either operand order, and a ragged rank 2 tensor whose last dimension is ragged.
    assert!(broadcast_values(ctx, "add", &[v.clone(), two_rows.clone()]).is_err());
    let rank2 = ragtime_core::ragged![[[1, 2], [3, 4]], [[5, 6]]].unwrap();
    assert!(broadcast_values(ctx, "add", &[rank2, RaggedTensor::from(vec![1, 2])]).is_err());
    // [1, k] too, and [2, 1, k] against [2, (r), (s)] once its size-1 dimension broadcast.
    assert!(broadcast_values(ctx, "add", &[two_rows.clone(), dense(ragtime_core::ragged![[1, 2, 3]])]).is_err());
    let nested = ragtime_core::ragged![[[1, 2], [3, 4]], [[5, 6], [7, 8]]].unwrap();
    assert!(broadcast_values(ctx, "add", &[nested.clone(), dense(ragtime_core::ragged![[[1, 1]], [[2, 2]]])]).is_err());
    // Still broadcast: a size-1 vector, a dense [nrows, k] operand against rows of k values, the
    // same dense operand against one row (nothing broadcast before), and a vector against a
    // uniform inner dimension.
    let whole = dense(ragtime_core::ragged![[[1, 1], [2, 2]], [[1, 1], [2, 2]]]);
    assert!(broadcast_values(ctx, "add", &[nested, whole]).is_ok());
    let one_row = ragtime_core::ragged![[1, 2, 3]].unwrap();
    assert!(broadcast_values(ctx, "add", &[one_row, v.clone()]).is_ok());
    assert!(broadcast_values(ctx, "add", &[two_rows.clone(), RaggedTensor::from(vec![10])]).is_ok());
    let table = dense(ragtime_core::ragged![[1, 1, 1], [2, 2, 2]]);
    assert!(broadcast_values(ctx, "add", &[two_rows.clone(), table]).is_ok());
    let inner = with_inner(ragtime_core::ragged![[[1, 2, 3]], [], [[4, 5, 6], [7, 8, 9]]], 1, &[3]);
    assert!(broadcast_values(ctx, "add", &[inner, v]).is_ok());
}

#[test]
fn uniform_size_one_partition_broadcasts_like_keepdims() {
    // x: 2 x (r) x (r); m: 2 x (uniform 1) x (r), as `reduce_max(x, axis=1, keepdims=true)` gives.
    let x = ragged![[[1, 2], [3, 4]], [[5], [6], [7]]].unwrap();
    let inner = RaggedTensor::from_row_lengths(DenseTensor::vector(vec![9i32, 9, 8]), &[2, 1]).unwrap();
    let p = RowPartition::from_uniform_row_length(1, 2).unwrap();
    let m = RaggedTensor::new(inner.flat_values().clone(), vec![p, inner.partitions()[0].clone()]).unwrap();
    let ops = operands(&[x.clone(), m]);
    assert_eq!(ops[1].to_literal(), lit(ragged![[[9, 9], [9, 9]], [[8], [8], [8]]]));
    assert!(ops[0].partitions()[1].ptr_eq(&x.partitions()[1]));
}

#[test]
fn ternary_broadcast() {
    let c = ragged![[true, false], [true]].unwrap();
    let x = RaggedTensor::dense(DenseTensor::scalar(1i32));
    let y = dense(ragged![[5], [6]]);
    let ops = operands(&[c, x, y]);
    assert_eq!(ops[1].to_literal(), lit(ragged![[1, 1], [1]]));
    assert_eq!(ops[2].to_literal(), lit(ragged![[5, 5], [6]]));
}

#[test]
fn strings_broadcast_too() {
    let x = ragged![["a", "b"], ["c"]].unwrap();
    let s = RaggedTensor::dense(DenseTensor::String(ragtime_core::StringTensor::from_strings(&["#"], vec![]).unwrap()));
    let ops = operands(&[x, s]);
    assert_eq!(ops[1].to_literal(), lit(ragged![["#", "#"], ["#"]]));
}

#[test]
fn empty_rows_and_zero_rows() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[], [1], []].unwrap();
    let c = dense(ragged![[7], [8], [9]]);
    let ops = operands(&[x, c]);
    assert_eq!(ops[1].to_literal(), lit(ragged![[], [8], []]));
    let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
    let s = RaggedTensor::dense(DenseTensor::scalar(1i32));
    let b = broadcast_values(ctx, "add", &[none, s]).unwrap();
    assert_eq!(b.flat_shape, vec![0]);
    assert_eq!(b.operands[1].len(), 0);
}

#[test]
fn uniform_sizes_must_agree_even_without_rows() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // [0, *] + [4] + [3]: the two vectors cannot broadcast together (4 vs 3), whether or not
    // the ragged operand has rows to compare them with; infer says so too.
    let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
    let four = RaggedTensor::dense(DenseTensor::vector(vec![1i32, 2, 3, 4]));
    let three = RaggedTensor::dense(DenseTensor::vector(vec![1i32, 2, 3]));
    let inputs = [none, four, three];
    let err = broadcast_values(ctx, "add", &inputs).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IncompatibleShapes, "{err}");
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    assert_eq!(broadcast_types("add", &types).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    // Sizes that agree are still a dense vector against the ragged last dimension, which
    // TensorFlow refuses whatever the rows (none here); size-1 vectors broadcast without rows.
    let none = RaggedTensor::from_row_splits(DenseTensor::vector(Vec::<i32>::new()), vec![0]).unwrap();
    let four_again = RaggedTensor::dense(DenseTensor::vector(vec![5i32, 6, 7, 8]));
    let err = broadcast_values(ctx, "add", &[none.clone(), inputs[1].clone(), four_again]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IncompatibleShapes, "{err}");
    let one = RaggedTensor::dense(DenseTensor::vector(vec![5i32]));
    let b = broadcast_values(ctx, "add", &[none, one.clone(), one]).unwrap();
    assert_eq!(b.flat_shape, vec![0]);
}

#[test]
fn dense_numpy_rules() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let a = dense(ragged![[1], [2]]);
    let b = RaggedTensor::dense(DenseTensor::vector(vec![10i32, 20, 30]));
    let r = broadcast_values(ctx, "add", &[a, b]).unwrap();
    assert!(r.partitions.is_empty());
    assert_eq!(r.flat_shape, vec![2, 3]);
    assert_eq!(r.operands[0].as_slice::<i32>(), Some(&[1, 1, 1, 2, 2, 2][..]));
    assert_eq!(r.operands[1].as_slice::<i32>(), Some(&[10, 20, 30, 10, 20, 30][..]));
    let c = RaggedTensor::dense(DenseTensor::vector(vec![1i32, 2]));
    let d = RaggedTensor::dense(DenseTensor::vector(vec![1i32, 2, 3]));
    assert_eq!(broadcast_values(ctx, "add", &[c, d]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    let s1 = RaggedTensor::dense(DenseTensor::scalar(1i32));
    let s2 = RaggedTensor::dense(DenseTensor::scalar(2.5f32));
    let r = broadcast_values(ctx, "add", &[s1, s2]).unwrap();
    assert!(r.flat_shape.is_empty() && r.operands.len() == 2);
}

#[test]
fn an_element_is_named_by_its_row_at_every_level() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let x = ragged![[[1, 2], [3]], [], [[4]]].unwrap();
    let b = broadcast_values(ctx, "add", &[x]).unwrap();
    let named: Vec<String> = (0..4).map(|e| ragtime_core::describe_element(&b.partitions, &b.flat_shape, e)).collect();
    assert_eq!(
        named,
        [
            "row [0, 0] (flat element 0)",
            "row [0, 0] (flat element 1)",
            "row [0, 1] (flat element 2)",
            "row [2, 0] (flat element 3)"
        ]
    );
    let v = RaggedTensor::from(vec![1, 2, 3]);
    let b = broadcast_values(ctx, "add", &[v]).unwrap();
    assert_eq!(ragtime_core::describe_element(&b.partitions, &b.flat_shape, 2), "element 2");
}

#[test]
fn types_follow_the_value_rules() {
    let x = TensorType::ragged(DType::I32, 1);
    let col = TensorType::dense(DType::I32, &[Some(3), Some(1)]);
    let t = broadcast_types("add", &[x.clone(), col]).unwrap();
    assert_eq!(t, TensorType::new(DType::I32, 1, vec![Dim::Known(3), Dim::Ragged]).unwrap());
    let scalar = TensorType::scalar(DType::I32);
    assert_eq!(broadcast_types("add", &[x.clone(), scalar]).unwrap(), x);
    let inner = TensorType::ragged(DType::I32, 2).with_inner(&[Some(1)]);
    let v = TensorType::dense(DType::I32, &[Some(3)]);
    let t = broadcast_types("add", &[inner, v]).unwrap();
    assert_eq!(t.dims().last(), Some(&Dim::Known(3)));
    assert_eq!(t.ragged_rank(), 2);
    let high = TensorType::dense(DType::I32, &[Some(3), Some(1), Some(1)]);
    let t = broadcast_types("add", &[x, high]).unwrap();
    assert_eq!(t, TensorType::new(DType::I32, 2, vec![Dim::Known(3), Dim::Ragged, Dim::Ragged]).unwrap());
}

#[test]
fn types_reject_known_mismatches() {
    let a = TensorType::ragged(DType::F32, 1).with_inner(&[Some(2)]);
    let b = TensorType::ragged(DType::F32, 1).with_inner(&[Some(3)]);
    assert_eq!(broadcast_types("add", &[a.clone(), b]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    let u = TensorType::ragged(DType::F32, 1).with_inner(&[None]);
    assert_eq!(broadcast_types("add", &[a, u]).unwrap().dims()[2], Dim::Known(2));
    let d1 = TensorType::dense(DType::F32, &[Some(2), Some(5)]);
    let d2 = TensorType::dense(DType::F32, &[Some(4), Some(5)]);
    assert_eq!(broadcast_types("add", &[d1, d2]).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn a_uniform_partition_broadcasts_as_a_dense_dim() {
    let u = TensorType::from_dims(DType::I32, vec![Dim::Unknown, Dim::UniformRows(3)]).unwrap();
    let add = |a: &TensorType, b: &TensorType| broadcast_types("add", &[a.clone(), b.clone()]);
    let d3 = TensorType::dense(DType::I32, &[None, Some(3)]);
    let d4 = TensorType::dense(DType::I32, &[None, Some(4)]);
    let col = TensorType::dense(DType::I32, &[Some(2), Some(1)]);
    assert_eq!(add(&u, &d3).unwrap().to_string(), "int32[?, (3)]");
    assert_eq!(add(&d3, &u).unwrap().to_string(), "int32[?, (3)]");
    assert_eq!(add(&u, &col).unwrap().to_string(), "int32[2, (3)]");
    assert_eq!(add(&u, &TensorType::scalar(DType::I32)).unwrap().to_string(), "int32[?, (3)]");
    assert_eq!(add(&u, &d4).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
    // Against a ragged dim the result is ragged (its rows are the ragged operand's).
    assert_eq!(add(&u, &TensorType::ragged(DType::I32, 1)).unwrap().to_string(), "int32[?, *]");
    let u4 = TensorType::from_dims(DType::I32, vec![Dim::Unknown, Dim::UniformRows(4)]).unwrap();
    assert_eq!(add(&u, &u4).unwrap_err().kind(), ErrorKind::IncompatibleShapes);
}

#[test]
fn uniform_partitions_are_typed_exactly_where_values_keep_them() {
    let ctx = &ExecContext::new(Limits::untrusted());
    // The inferred type of each broadcast must accept its value: a uniform partition where
    // the type says so (a ragged type also accepts a uniform partition).
    let u = RaggedTensor::from_uniform_row_length(RaggedTensor::dense(DenseTensor::vector(vec![1i32; 6])), 3).unwrap();
    let r = ragged![[1, 2, 3], [4, 5, 6]].unwrap();
    let d = dense(ragged![[10, 20, 30], [40, 50, 60]]);
    let col = dense(ragged![[1], [2]]);
    let scalar = RaggedTensor::dense(DenseTensor::scalar(7i32));
    for (a, b, want) in [
        (&u, &d, "int32[2, (3)]"),
        (&d, &u, "int32[2, (3)]"),
        (&u, &col, "int32[2, (3)]"),
        (&u, &scalar, "int32[2, (3)]"),
        (&u, &u, "int32[2, (3)]"),
        (&u, &r, "int32[2, *]"),
        (&r, &u, "int32[2, *]"),
    ] {
        let ty = broadcast_types("add", &[TensorType::of(a), TensorType::of(b)]).unwrap();
        let b = broadcast_values(ctx, "add", &[a.clone(), b.clone()]).unwrap();
        let value = b.finish(b.operands[0].clone()).unwrap();
        assert_eq!(ty.to_string(), want);
        assert!(ty.accepts(&TensorType::of(&value)), "{want} must accept {value}");
    }
}

#[test]
fn dense_operands_broadcast_by_block_copies_as_numpy_does() {
    // Every pair of dense shapes of rank 0 to 3 with sizes 0, 1 and 3, with a third operand: the
    // fast path gives NumPy's shape and values (each result element read through its index, the
    // size-1 dimensions at 0), and leaves to the general path exactly the shapes that do not
    // broadcast, which it refuses.
    let ctx = &ExecContext::new(Limits::untrusted());
    let mut shapes: Vec<Vec<usize>> = vec![vec![]];
    for rank in 1..=3u32 {
        for code in 0..3usize.pow(rank) {
            shapes.push((0..rank).map(|d| [0, 1, 3][code / 3usize.pow(d) % 3]).collect());
        }
    }
    let iota = |shape: &[usize], from: i32| -> RaggedTensor {
        let n: usize = shape.iter().product();
        DenseTensor::from_vec(shape.to_vec(), (from..from + n as i32).collect::<Vec<i32>>()).unwrap().into()
    };
    let numpy_shape = |operands: &[&Vec<usize>]| -> Option<Vec<usize>> {
        let rank = operands.iter().map(|s| s.len()).max().unwrap_or(0);
        (0..rank)
            .map(|d| {
                let sizes: Vec<usize> =
                    operands.iter().filter_map(|s| (d + s.len()).checked_sub(rank).map(|k| s[k])).collect();
                let size = sizes.iter().copied().find(|&n| n != 1).unwrap_or(1);
                sizes.iter().all(|&n| n == 1 || n == size).then_some(size)
            })
            .collect()
    };
    // Element `i` of the result read from an operand of shape `from` holding `first..`.
    let numpy_value = |from: &[usize], to: &[usize], first: i32, mut i: usize| -> i32 {
        let mut at = 0usize;
        let mut stride = 1usize;
        for d in (0..to.len()).rev() {
            let index = i % to[d];
            i /= to[d];
            if let Some(k) = (d + from.len()).checked_sub(to.len()) {
                at += if from[k] == 1 { 0 } else { index * stride };
                stride *= from[k];
            }
        }
        first + at as i32
    };
    let mut compared = 0;
    for a in &shapes {
        for b in &shapes {
            for c in [&vec![], &vec![1, 3], b] {
                let firsts = [1, 100, 1000];
                let inputs = [iota(a, firsts[0]), iota(b, firsts[1]), iota(c, firsts[2])];
                let Some(want) = numpy_shape(&[a, b, c]) else {
                    assert!(dense::broadcast_dense(ctx, "add", &inputs).is_none(), "{a:?}, {b:?}, {c:?}");
                    assert!(broadcast_values(ctx, "add", &inputs).is_err(), "{a:?}, {b:?}, {c:?} must not broadcast");
                    continue;
                };
                let fast = dense::broadcast_dense(ctx, "add", &inputs).expect("dense operands").unwrap();
                assert_eq!(fast.flat_shape, want, "{a:?}, {b:?}, {c:?}");
                assert!(fast.partitions.is_empty());
                for (k, (operand, from)) in fast.operands.iter().zip([a, b, c]).enumerate() {
                    assert_eq!(operand.shape(), want.as_slice(), "{a:?}, {b:?}, {c:?}: operand {k}");
                    let n: usize = want.iter().product();
                    let expected: Vec<i32> = (0..n).map(|i| numpy_value(from, &want, firsts[k], i)).collect();
                    assert_eq!(operand.as_slice::<i32>(), Some(&expected[..]), "{a:?}, {b:?}, {c:?}: operand {k}");
                }
                compared += 1;
            }
        }
    }
    assert!(compared > 1_000, "only {compared} broadcasting triples compared");
}

#[test]
fn a_dense_broadcast_past_the_limits_is_refused_before_allocating() {
    let ctx = &ExecContext::new(Limits::untrusted());
    let column: RaggedTensor = DenseTensor::from_vec(vec![1 << 16, 1], vec![1f32; 1 << 16]).unwrap().into();
    let row: RaggedTensor = DenseTensor::from_vec(vec![1, 1 << 16], vec![1f32; 1 << 16]).unwrap().into();
    let err = broadcast_values(ctx, "add", &[column, row]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ResourceExhausted, "{err}");
}
