//! The paths the crate documents as zero-copy, proved by comparing data pointers: the Arrow array
//! and the ragtime tensor must read the very same memory, whoever allocated it (a `Vec`, an Arrow
//! builder or reader's 64-byte-aligned buffer) and whoever else holds it (a `RecordBatch`).

use std::sync::Arc;

use arrow_array::builder::{Float32Builder, LargeListBuilder, ListBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type, Int64Type};
use arrow_array::{
    Array, ArrayRef, LargeListArray, LargeStringArray, ListArray, PrimitiveArray, RecordBatch, StringArray,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::Field;
use ragtime_arrow::{from_arrow, to_arrow};
use ragtime_core::{DenseTensor, RaggedTensor, RowPartition, StringTensor};

/// Arrow's own allocations (`MutableBuffer`: `Buffer::from_slice_ref`, the IPC and Parquet
/// readers) are 64-byte aligned and cannot become a `Vec`: the layout the zero-copy paths must
/// handle without taking the buffer over.
fn assert_arrow_allocated<T>(ptr: *const T) {
    assert_eq!(ptr as usize % 64, 0, "expected a 64-byte aligned buffer, as Arrow allocates");
}

/// A `LargeList<Float32>` column (rows `[1, 2, 3], [], [4, 5], [6]`) in Arrow-allocated buffers.
fn arrow_column() -> ArrayRef {
    let values = ScalarBuffer::<f32>::new(Buffer::from_slice_ref([1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]), 0, 6);
    let offsets = ScalarBuffer::<i64>::new(Buffer::from_slice_ref([0i64, 3, 3, 5, 6]), 0, 5);
    assert_arrow_allocated(values.as_ptr());
    assert_arrow_allocated(offsets.as_ptr());
    let field = Arc::new(Field::new_list_field(arrow_schema::DataType::Float32, true));
    let leaf: ArrayRef = Arc::new(PrimitiveArray::<Float32Type>::new(values, None));
    Arc::new(LargeListArray::new(field, OffsetBuffer::new(offsets), leaf, None))
}

/// The same rows built with Arrow's builders (arrow-rs 59 builders allocate `Vec`s).
fn built_column() -> ArrayRef {
    let mut builder = LargeListBuilder::new(Float32Builder::new());
    for row in [&[1.0f32, 2.0, 3.0][..], &[], &[4.0, 5.0], &[6.0]] {
        builder.values().append_slice(row);
        builder.append(true);
    }
    Arc::new(builder.finish())
}

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
fn shared_arrays_are_read_in_place_and_left_intact() {
    // The caller keeps a reference (as a `RecordBatch` does): the buffers are shared, not copied,
    // and never handed to the executor's buffer pool.
    let values = vec![1i64, 2, 3];
    let values_ptr = values.as_ptr();
    let offsets = vec![0i64, 3];
    let offsets_ptr = offsets.as_ptr();
    let column = large_list(offsets, Arc::new(PrimitiveArray::<Int64Type>::from(values)));
    let kept = column.clone();
    let t = from_arrow("x", column).unwrap();
    assert_eq!(t.flat_slice::<i64>().unwrap().as_ptr(), values_ptr, "a shared buffer is read in place");
    assert_eq!(t.row_splits().unwrap().as_ptr(), offsets_ptr, "offsets starting at 0 are shared");
    assert_eq!(t.flat_slice::<i64>().unwrap(), &[1, 2, 3]);
    let flat = t.into_flat_values();
    assert!(flat.try_into_buffer::<i64>().is_err(), "Arrow's memory is never given out for reuse");
    assert_eq!(kept.as_list::<i64>().values().as_primitive::<Int64Type>().values().as_ref(), &[1, 2, 3]);
}

#[test]
fn arrow_allocated_buffers_are_adopted_moved_or_held() {
    // `Buffer::from_slice_ref` allocates as the Parquet and IPC readers do.
    let values = ScalarBuffer::<f64>::new(Buffer::from_slice_ref([0.5f64, 1.5, 2.5, 3.5]), 0, 4);
    let offsets = ScalarBuffer::<i64>::new(Buffer::from_slice_ref([0i64, 1, 4]), 0, 3);
    let (values_ptr, offsets_ptr) = (values.as_ptr(), offsets.as_ptr());
    assert_arrow_allocated(values_ptr);
    assert_arrow_allocated(offsets_ptr);
    let field = Arc::new(Field::new_list_field(arrow_schema::DataType::Float64, true));
    let leaf: ArrayRef = Arc::new(PrimitiveArray::<Float64Type>::new(values, None));
    let column: ArrayRef = Arc::new(LargeListArray::new(field, OffsetBuffer::new(offsets), leaf, None));
    let t = from_arrow("moved", column).unwrap();
    assert_eq!(t.to_string(), "<Ragged float64 [[0.5], [1.5, 2.5, 3.5]]>");
    assert_eq!(t.flat_slice::<f64>().unwrap().as_ptr(), values_ptr, "aligned values adopted");
    assert_eq!(t.row_splits().unwrap().as_ptr(), offsets_ptr, "aligned offsets adopted as splits");

    // Built with builders and held by a record batch (a clone of the column is converted).
    let batch = RecordBatch::try_from_iter([("x", built_column())]).unwrap();
    let list = batch.column(0).as_list::<i64>();
    let (values_ptr, offsets_ptr) =
        (list.values().as_primitive::<Float32Type>().values().as_ptr(), list.offsets().as_ptr());
    let t = from_arrow("x", batch.column(0).clone()).unwrap();
    assert_eq!(t.flat_slice::<f32>().unwrap().as_ptr(), values_ptr, "builder values adopted from a shared batch");
    assert_eq!(t.row_splits().unwrap().as_ptr(), offsets_ptr, "builder offsets adopted from a shared batch");

    // `List` (i32 offsets): the values are still adopted, the offsets widened.
    let mut builder = ListBuilder::new(Float32Builder::new());
    builder.values().append_slice(&[7.0, 8.0]);
    builder.append(true);
    let array = builder.finish();
    let values_ptr = array.values().as_primitive::<Float32Type>().values().as_ptr();
    let t = from_arrow("small", Arc::new(array)).unwrap();
    assert_eq!(t.flat_slice::<f32>().unwrap().as_ptr(), values_ptr);
}

#[test]
fn sliced_arrays_are_views_of_their_buffers() {
    let column = arrow_column();
    let values_ptr = column.as_list::<i64>().values().as_primitive::<Float32Type>().values().as_ptr();
    // Rows 2..4 start at value 3: the values are a view at offset 3; the offsets (3, 5, 6) do not
    // start at 0, so the two splits needed are rebased (a copy of 3 integers).
    let t = from_arrow("x", column.slice(2, 2)).unwrap();
    assert_eq!(t.to_string(), "<Ragged float32 [[4.0, 5.0], [6.0]]>");
    assert_eq!(t.flat_slice::<f32>().unwrap().as_ptr(), values_ptr.wrapping_add(3));
    // Rows 0..2 start at offset 0: the splits are a view of the offsets too.
    let offsets_ptr = column.as_list::<i64>().offsets().as_ptr();
    let t = from_arrow("x", column.slice(0, 2)).unwrap();
    assert_eq!(t.to_string(), "<Ragged float32 [[1.0, 2.0, 3.0], []]>");
    assert_eq!((t.row_splits().unwrap().as_ptr(), t.flat_slice::<f32>().unwrap().as_ptr()), (offsets_ptr, values_ptr));

    let dense = PrimitiveArray::<Float64Type>::from(vec![1.0, 2.0, 3.0, 4.0]);
    let ptr = dense.values().as_ptr();
    let t = from_arrow("d", Arc::new(dense.slice(1, 2))).unwrap();
    assert_eq!(
        (t.flat_slice::<f64>().unwrap(), t.flat_slice::<f64>().unwrap().as_ptr()),
        (&[2.0, 3.0][..], ptr.wrapping_add(1))
    );
}

#[test]
fn string_bytes_are_shared_and_large_offsets_too() {
    let offsets = ScalarBuffer::<i64>::new(Buffer::from_slice_ref([0i64, 2, 2, 5, 6]), 0, 5);
    let array = LargeStringArray::new(OffsetBuffer::new(offsets), Buffer::from_slice_ref(b"abcdef"), None);
    let (bytes_ptr, offsets_ptr) = (array.values().as_ptr(), array.value_offsets().as_ptr());
    assert_arrow_allocated(bytes_ptr);
    let kept: ArrayRef = Arc::new(array);
    let t = from_arrow("s", kept.clone()).unwrap();
    let column = t.flat_strings().unwrap();
    assert_eq!((column.bytes().as_ptr(), column.offsets().as_ptr()), (bytes_ptr, offsets_ptr));
    // A slice views the offsets where it starts; they index the same bytes, not rebased.
    let t = from_arrow("s", kept.slice(2, 2)).unwrap();
    let column = t.flat_strings().unwrap();
    assert_eq!(column.iter().collect::<Vec<_>>(), [&b"cde"[..], b"f"]);
    assert_eq!((column.bytes().as_ptr(), column.offsets().as_ptr()), (bytes_ptr, offsets_ptr.wrapping_add(2)));
    assert_eq!((column.offsets()[0], column.byte_len()), (2, 4));
    // Back to Arrow: the same memory again.
    let back = to_arrow(&t).unwrap();
    let strings = back.as_string::<i64>();
    assert_eq!((strings.values().as_ptr(), strings.value(0)), (bytes_ptr, "cde"));

    // `Utf8` (i32 offsets): the bytes are shared, the offsets widened.
    let small = StringArray::from(vec!["xy", "z"]);
    let bytes_ptr = small.values().as_ptr();
    let t = from_arrow("s", Arc::new(small)).unwrap();
    assert_eq!(t.flat_strings().unwrap().bytes().as_ptr(), bytes_ptr);
}

#[test]
fn a_compiled_function_reads_arrow_values_in_place_and_its_results_convert_back_without_copies() {
    use ragtime::prelude::*;

    let batch = RecordBatch::try_from_iter([("x", arrow_column())]).unwrap();
    let arrow_values = batch.column(0).as_list::<i64>().values().as_primitive::<Float32Type>().values().clone();
    let values_ptr = arrow_values.as_ptr();
    let input = from_arrow("x", batch.column(0).clone()).unwrap();

    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let scaled = &x * 2.0 + 1.0;
    let rest = x.getitem("1:");
    let flat = x.flat_values();
    let f = compile(&[&x], &[&scaled, &rest, &flat]).unwrap();
    let out = f.call(std::slice::from_ref(&input)).unwrap();
    assert_eq!(out[0].to_string(), "<Ragged float32 [[3.0, 5.0, 7.0], [], [9.0, 11.0], [13.0]]>");
    assert_eq!(out[2].flat_slice::<f32>().unwrap().as_ptr(), values_ptr, "the input values were never copied");
    assert_eq!(out[1].to_string(), "<Ragged float32 [[], [4.0, 5.0], [6.0]]>");
    assert_eq!(out[1].flat_slice::<f32>().unwrap().as_ptr(), values_ptr.wrapping_add(3), "a row slice is a view");

    // The kernel's output goes to Arrow without a copy.
    let array = to_arrow(&out[0]).unwrap();
    let leaf = array.as_list::<i64>().values().as_primitive::<Float32Type>();
    assert_eq!(leaf.values().as_ptr(), out[0].flat_slice::<f32>().unwrap().as_ptr());

    // Recycling results that view Arrow memory never lets a kernel write into it.
    drop(array);
    f.recycle(out);
    let other = RaggedTensor::from_row_splits(vec![0.0f32; 6], [0, 3, 3, 5, 6]).unwrap();
    let again = f.call(std::slice::from_ref(&other)).unwrap();
    assert_eq!(again[0].flat_slice::<f32>().unwrap(), &[1.0; 6]);
    assert_eq!(arrow_values.as_ref(), &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "the Arrow buffer is untouched");
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
