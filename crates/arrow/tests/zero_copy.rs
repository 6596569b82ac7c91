//! The paths the crate documents as zero-copy, proved by comparing data pointers: the Arrow array
//! and the ragtime tensor must read the very same memory.

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, LargeListArray, ListArray, PrimitiveArray};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::Field;
use ragtime_arrow::{from_arrow, to_arrow};
use ragtime_core::{DenseTensor, RaggedTensor, RowPartition, StringTensor};

fn large_list(offsets: Vec<i64>, values: ArrayRef) -> ArrayRef {
    let field = Arc::new(Field::new_list_field(values.data_type().clone(), true));
    Arc::new(LargeListArray::new(field, OffsetBuffer::new(ScalarBuffer::from(offsets)), values, None))
}

#[test]
fn ragtime_to_arrow_shares_values_and_splits() {
    let flat = DenseTensor::from_vec(vec![6], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let t = RaggedTensor::from_nested_row_splits(flat, &[vec![0, 2, 3], vec![0, 1, 1, 6]]).unwrap();
    let array = to_arrow(&t).unwrap();
    let outer = array.as_list::<i64>();
    let inner = outer.values().as_list::<i64>();
    let leaf = inner.values().as_primitive::<Float64Type>();
    assert_eq!(outer.offsets().as_ptr(), t.partitions()[0].row_splits().as_ptr(), "outer splits shared");
    assert_eq!(inner.offsets().as_ptr(), t.partitions()[1].row_splits().as_ptr(), "inner splits shared");
    assert_eq!(leaf.values().as_ptr(), t.flat_slice::<f64>().unwrap().as_ptr(), "values shared");
    // The array keeps the buffers alive after the tensor is gone.
    let expected: Vec<f64> = t.flat_slice::<f64>().unwrap().to_vec();
    drop(t);
    assert_eq!(leaf.values().as_ref(), expected.as_slice());
}

#[test]
fn ragtime_to_arrow_shares_inner_dims_and_strings() {
    let flat = DenseTensor::from_vec(vec![3, 2], vec![1i64, 2, 3, 4, 5, 6]).unwrap();
    let t = RaggedTensor::from_row_splits(flat, [0, 1, 3]).unwrap();
    let array = to_arrow(&t).unwrap();
    let fixed = array.as_list::<i64>().values().as_fixed_size_list();
    assert_eq!(fixed.value_length(), 2);
    let leaf = fixed.values().as_primitive::<Int64Type>();
    assert_eq!(leaf.values().as_ptr(), t.flat_slice::<i64>().unwrap().as_ptr(), "values under inner dims shared");

    let strings = StringTensor::from_strings(&["ab", "", "cde"], vec![3]).unwrap();
    let t = RaggedTensor::from_row_splits(DenseTensor::String(strings), [0, 2, 3]).unwrap();
    let array = to_arrow(&t).unwrap();
    let leaf = array.as_list::<i64>().values().as_string::<i64>();
    let column = t.flat_strings().unwrap();
    assert_eq!(leaf.values().as_ptr(), column.bytes().as_ptr(), "string bytes shared");
    assert_eq!(leaf.value_offsets().as_ptr(), column.offsets().as_ptr(), "string offsets shared");
    assert_eq!(leaf.value(2), "cde");
}

#[test]
fn arrow_to_ragtime_adopts_vec_buffers_of_a_moved_array() {
    let values: Vec<f32> = (0..10).map(|i| i as f32).collect();
    let values_ptr = values.as_ptr();
    let inner_offsets = vec![0i64, 3, 3, 10];
    let inner_ptr = inner_offsets.as_ptr();
    let outer_offsets = vec![0i64, 2, 3];
    let outer_ptr = outer_offsets.as_ptr();
    let leaf: ArrayRef = Arc::new(PrimitiveArray::<Float32Type>::from(values));
    let column = large_list(outer_offsets, large_list(inner_offsets, leaf));

    let t = from_arrow("x", column).unwrap();
    assert_eq!(t.nested_row_splits(), [vec![0, 2, 3], vec![0, 3, 3, 10]]);
    assert_eq!(t.partitions()[0].row_splits().as_ptr(), outer_ptr, "outer offsets adopted as splits");
    assert_eq!(t.partitions()[1].row_splits().as_ptr(), inner_ptr, "inner offsets adopted as splits");
    assert_eq!(t.flat_slice::<f32>().unwrap().as_ptr(), values_ptr, "values adopted");
}

#[test]
fn arrow_to_ragtime_views_the_used_part_of_adopted_values_and_rebases_offsets_in_place() {
    // Lists spanning values 2..6 of 8, offsets starting at 2.
    let values: Vec<i64> = (0..8).collect();
    let values_ptr = values.as_ptr();
    let offsets = vec![2i64, 4, 6];
    let offsets_ptr = offsets.as_ptr();
    let column = large_list(offsets, Arc::new(PrimitiveArray::<Int64Type>::from(values)));
    let t = from_arrow("x", column).unwrap();
    assert_eq!(t.row_splits().unwrap(), &[0, 2, 4]);
    assert_eq!(t.flat_slice::<i64>().unwrap(), &[2, 3, 4, 5]);
    assert_eq!(t.row_splits().unwrap().as_ptr(), offsets_ptr, "rebased in place, not copied");
    assert_eq!(t.flat_slice::<i64>().unwrap().as_ptr(), values_ptr.wrapping_add(2), "a view into the adopted values");
}

#[test]
fn i32_offsets_are_widened_but_values_still_adopted() {
    let values = vec![1.5f64, 2.5, 3.5];
    let values_ptr = values.as_ptr();
    let field = Arc::new(Field::new_list_field(arrow_schema::DataType::Float64, true));
    let offsets = OffsetBuffer::new(ScalarBuffer::from(vec![0i32, 1, 3]));
    let column: ArrayRef =
        Arc::new(ListArray::new(field, offsets, Arc::new(PrimitiveArray::<Float64Type>::from(values)), None));
    let t = from_arrow("x", column).unwrap();
    assert_eq!(t.row_splits().unwrap(), &[0, 1, 3]);
    assert_eq!(t.flat_slice::<f64>().unwrap().as_ptr(), values_ptr);
}

#[test]
fn shared_arrays_are_copied_and_left_intact() {
    // The documented copy path: the caller keeps a reference, so nothing can be adopted.
    let values = vec![1i64, 2, 3];
    let values_ptr = values.as_ptr();
    let column = large_list(vec![0, 3], Arc::new(PrimitiveArray::<Int64Type>::from(values)));
    let kept = column.clone();
    let t = from_arrow("x", column).unwrap();
    assert_ne!(t.flat_slice::<i64>().unwrap().as_ptr(), values_ptr, "a shared buffer must be copied");
    assert_eq!(t.flat_slice::<i64>().unwrap(), &[1, 2, 3]);
    assert_eq!(kept.as_list::<i64>().values().as_primitive::<Int64Type>().values().as_ref(), &[1, 2, 3]);
}

#[test]
fn uniform_partitions_and_dense_columns_share_values_both_ways() {
    let flat = DenseTensor::from_vec(vec![4], vec![1u32, 2, 3, 4]).unwrap();
    let ragged = RaggedTensor::from_row_splits(flat, [0, 1, 4]).unwrap();
    let uniform = RowPartition::from_uniform_row_length(2, 1).unwrap();
    let t = ragged.with_outer_partitions(&[uniform]).unwrap();
    let array = to_arrow(&t).unwrap();
    assert!(matches!(array.data_type(), arrow_schema::DataType::FixedSizeList(_, 2)), "{}", array.data_type());
    let leaf =
        array.as_fixed_size_list().values().as_list::<i64>().values().as_primitive::<arrow_array::types::UInt32Type>();
    assert_eq!(leaf.values().as_ptr(), t.flat_slice::<u32>().unwrap().as_ptr());

    let dense: Vec<f32> = vec![1.0, 2.0, 3.0];
    let dense_ptr = dense.as_ptr();
    let t = from_arrow("d", Arc::new(PrimitiveArray::<Float32Type>::from(dense))).unwrap();
    assert!(t.is_dense());
    assert_eq!(t.flat_slice::<f32>().unwrap().as_ptr(), dense_ptr, "a primitive column is adopted as a dense vector");
}
