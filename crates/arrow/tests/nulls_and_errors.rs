//! Nulls under each policy, unsupported and malformed input, and the type-mapping edge cases:
//! every refusal is a typed error naming the column and the row, never a panic.

use std::sync::Arc;

use arrow_array::builder::{FixedSizeListBuilder, Int32Builder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BooleanArray, DictionaryArray, Int32Array, LargeListArray, ListArray, StringArray,
    StringViewArray, StructArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use ragtime_arrow::{from_arrow, to_arrow, FromArrow, NullLists, NullValues, Strings, ToArrow};
use ragtime_core::{DType, DenseTensor, ErrorKind, RaggedTensor, RowPartition, StringTensor};

fn list_of(values: ArrayRef, offsets: Vec<i32>, nulls: Option<Vec<bool>>) -> ArrayRef {
    let field = Arc::new(Field::new_list_field(values.data_type().clone(), true));
    let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
    Arc::new(ListArray::try_new(field, offsets, values, nulls.map(NullBuffer::from)).unwrap())
}

fn ints(values: &[i32]) -> ArrayRef {
    Arc::new(Int32Array::from(values.to_vec()))
}

#[test]
fn null_lists_are_refused_by_default_naming_column_and_row() {
    let column = list_of(ints(&[1, 2, 3]), vec![0, 2, 2, 3], Some(vec![true, false, true]));
    let e = from_arrow("clicks", column).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert!(e.to_string().contains("column \"clicks\": null list at row 1"), "{e}");

    // A null inner list names its row and its position in the row.
    let inner = list_of(ints(&[1, 2, 3]), vec![0, 1, 1, 3], Some(vec![true, false, true]));
    let e = from_arrow("nested", list_of(inner, vec![0, 1, 3], None)).unwrap_err();
    assert!(e.to_string().contains("null list at row 1 (index [1, 0])"), "{e}");
}

#[test]
fn null_lists_as_empty_drop_the_children_they_span() {
    // Row 1 is null but its offsets span values 2..5: they must not appear.
    let column = list_of(ints(&[1, 2, 30, 40, 50, 6]), vec![0, 2, 5, 6], Some(vec![true, false, true]));
    let t = FromArrow::new().null_lists(NullLists::AsEmpty).convert("c", column).unwrap();
    let want = RaggedTensor::from_row_splits(vec![1i32, 2, 6], [0, 2, 2, 3]).unwrap();
    assert!(t.equals(&want), "{t} != {want}");

    // Two levels: the null outer row spans two inner lists, which are dropped with their values.
    let inner = list_of(ints(&[1, 2, 3, 4, 5]), vec![0, 1, 3, 4, 5], None);
    let outer = list_of(inner, vec![0, 1, 3, 4], Some(vec![true, false, true]));
    let t = FromArrow::new().null_lists(NullLists::AsEmpty).convert("c", outer).unwrap();
    let want = RaggedTensor::from_nested_row_splits(vec![1i32, 5], &[vec![0, 1, 1, 2], vec![0, 1, 2]]).unwrap();
    assert!(t.equals(&want), "{t} != {want}");

    // Builders write null lists with no children: nothing to drop.
    let mut builder = ListBuilder::new(Int32Builder::new());
    builder.append_value([Some(7)]);
    builder.append_null();
    let t = FromArrow::new().null_lists(NullLists::AsEmpty).convert("c", Arc::new(builder.finish())).unwrap();
    assert_eq!(t.to_string(), "<Ragged int32 [[7], []]>");
}

#[test]
fn null_values_are_refused_or_replaced() {
    let values: ArrayRef = Arc::new(Int32Array::from(vec![Some(1), None, Some(3)]));
    let column = list_of(values, vec![0, 1, 3], None);
    let e = from_arrow("v", column.clone()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert!(e.to_string().contains("column \"v\": null value at row 1 (index [1, 0])"), "{e}");

    let replace = FromArrow::new().null_values(NullValues::Replace(DenseTensor::scalar(0i32)));
    let t = replace.convert("v", column.clone()).unwrap();
    assert_eq!(t.to_string(), "<Ragged int32 [[1], [0, 3]]>");

    let wrong = FromArrow::new().null_values(NullValues::Replace(DenseTensor::scalar(0.5f64)));
    let e = wrong.convert("v", column).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch);
    assert!(e.to_string().contains("column \"v\"") && e.to_string().contains("int32"), "{e}");

    // Booleans and strings too.
    let flags: ArrayRef = Arc::new(BooleanArray::from(vec![Some(true), None]));
    let t = FromArrow::new()
        .null_values(NullValues::Replace(DenseTensor::scalar(false)))
        .convert("f", list_of(flags, vec![0, 2], None))
        .unwrap();
    assert_eq!(t.to_string(), "<Ragged bool [[true, false]]>");
    let words: ArrayRef = Arc::new(StringArray::from(vec![Some("a"), None, Some("c")]));
    let fill = DenseTensor::String(StringTensor::from_strings(&["?"], vec![]).unwrap());
    let t = FromArrow::new()
        .null_values(NullValues::Replace(fill))
        .convert("w", list_of(words.clone(), vec![0, 2, 3], None))
        .unwrap();
    assert_eq!(t.to_string(), "<Ragged string [[\"a\", \"?\"], [\"c\"]]>");
    let e = from_arrow("w", list_of(words, vec![0, 2, 3], None)).unwrap_err();
    assert!(e.to_string().contains("null value at row 0 (index [0, 1])"), "{e}");

    // A null in the part of the values no list uses is not read.
    let values: ArrayRef = Arc::new(Int32Array::from(vec![None, Some(2)]));
    assert_eq!(from_arrow("v", list_of(values, vec![1, 2], None)).unwrap().to_string(), "<Ragged int32 [[2]]>");
}

#[test]
fn null_fixed_size_lists_are_refused_under_every_policy() {
    let mut builder = FixedSizeListBuilder::new(Int32Builder::new(), 2);
    builder.values().append_slice(&[1, 2]);
    builder.append(true);
    builder.values().append_slice(&[0, 0]);
    builder.append(false);
    let column: ArrayRef = Arc::new(builder.finish());
    for options in [FromArrow::new(), FromArrow::new().null_lists(NullLists::AsEmpty)] {
        let e = options.convert("pairs", column.clone()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert!(e.to_string().contains("column \"pairs\": null list at row 1"), "{e}");
        assert!(e.to_string().contains("fixed-size list cannot be an empty row"), "{e}");
    }
}

#[test]
fn unsupported_types_are_refused_with_the_column_and_type() {
    let float16: ArrayRef = arrow_array::new_empty_array(&DataType::Float16);
    let dictionary: ArrayRef = Arc::new(DictionaryArray::<Int32Type>::from_iter(["a", "b", "a"]));
    let structs: ArrayRef =
        Arc::new(StructArray::from(vec![(Arc::new(Field::new("x", DataType::Int32, false)), ints(&[1]))]));
    let list_of_structs = list_of(structs.clone(), vec![0, 1], None);
    for (name, column) in [("h", float16), ("d", dictionary), ("s", structs), ("ls", list_of_structs)] {
        let e = from_arrow(name, column.clone()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch, "{e}");
        assert!(
            e.to_string().contains(&format!("column \"{name}\": unsupported Arrow type {}", column.data_type())),
            "{e}"
        );
    }
}

#[test]
fn nesting_past_the_rank_limit_is_refused_before_reading() {
    // Arrow builds (and drops) the 300-level fixture recursively: unoptimized, as tests build
    // dependencies, that takes more than a test thread's default 2 MiB of stack.
    let deep = std::thread::Builder::new().stack_size(256 << 20).spawn(|| {
        let mut data_type = DataType::Int32;
        for _ in 0..300 {
            data_type = DataType::LargeList(Arc::new(Field::new_list_field(data_type, true)));
        }
        let column = arrow_array::new_empty_array(&data_type);
        let e = from_arrow("deep", column).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("column \"deep\"") && e.to_string().contains("rank"), "{e}");
    });
    deep.expect("spawn the test thread").join().expect("the deep column is refused with a typed error");
}

#[test]
fn sliced_columns_read_only_their_rows() {
    let column = list_of(ints(&[1, 2, 3, 4, 5, 6]), vec![0, 1, 3, 3, 6], None);
    let t = from_arrow("c", column.slice(1, 2)).unwrap();
    assert_eq!(t.to_string(), "<Ragged int32 [[2, 3], []]>");
    let values = ints(&[9, 1, 2, 3]).slice(1, 3);
    let t = from_arrow("c", values).unwrap();
    assert_eq!(t.to_string(), "<Tensor int32 shape=[3] [1, 2, 3]>");
}

#[test]
fn string_views_and_large_lists_of_strings_are_read() {
    let long = "a string longer than twelve bytes";
    let views: ArrayRef = Arc::new(StringViewArray::from(vec!["short", long, ""]));
    let t = from_arrow("sv", list_of(views, vec![0, 2, 3], None)).unwrap();
    let strings: Vec<&[u8]> = t.flat_strings().unwrap().iter().collect();
    assert_eq!(strings, [&b"short"[..], long.as_bytes(), b""]);
    assert_eq!(t.row_splits().unwrap(), &[0, 2, 3]);

    let mut builder = ListBuilder::new(StringBuilder::new());
    builder.append_value([Some("x"), Some("yz")]);
    builder.append_value::<[Option<&str>; 0], _>([]);
    let t = from_arrow("s", Arc::new(builder.finish())).unwrap();
    assert_eq!(t.to_string(), "<Ragged string [[\"x\", \"yz\"], []]>");
}

#[test]
fn invalid_utf8_is_refused_for_utf8_and_kept_as_binary() {
    let strings = StringTensor::from_strings(&[&b"ok"[..], b"\xff\xfe"], vec![2]).unwrap();
    let t = RaggedTensor::from_row_splits(DenseTensor::String(strings), [0, 0, 2]).unwrap();
    let e = to_arrow(&t).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    assert!(e.to_string().contains("string at row 1 (index [1, 1]) is not valid UTF-8"), "{e}");
    let binary = ToArrow::new().strings(Strings::Binary).convert(&t).unwrap();
    assert_eq!(binary.data_type().to_string(), "LargeList(LargeBinary)");
    assert!(from_arrow("b", binary).unwrap().equals(&t));

    // Valid strings in a buffer with invalid bytes outside them convert (compacted).
    let column = StringTensor::from_parts(b"\xffab".to_vec(), vec![1i64, 2, 3], vec![2]).unwrap();
    let t = RaggedTensor::from(DenseTensor::String(column));
    let array = to_arrow(&t).unwrap();
    assert_eq!(array.as_string::<i64>().iter().collect::<Vec<_>>(), [Some("a"), Some("b")]);
}

#[test]
fn scalars_have_no_column_form() {
    let e = to_arrow(&RaggedTensor::from(3.0f32)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("scalar"), "{e}");
}

#[test]
fn fixed_size_lists_map_to_uniform_partitions_or_dims_by_position() {
    // A dense [2, 3] tensor is a FixedSizeList<3> column and comes back dense.
    let dense = RaggedTensor::from(DenseTensor::from_vec(vec![2, 3], vec![1.0f64, 2., 3., 4., 5., 6.]).unwrap());
    let array = to_arrow(&dense).unwrap();
    assert!(matches!(array.data_type(), DataType::FixedSizeList(_, 3)));
    let back = from_arrow("d", array).unwrap();
    assert!(back.is_dense() && back.equals(&dense));

    // A uniform partition with no ragged one below reads back as an inner dim (same shape).
    let flat = DenseTensor::from_vec(vec![4], vec![1i32, 2, 3, 4]).unwrap();
    let uniform = RowPartition::from_uniform_row_length(2, 2).unwrap();
    let ragged = RowPartition::from_row_splits(vec![0, 1, 2]).unwrap();
    let t = RaggedTensor::new(flat, vec![ragged, uniform]).unwrap();
    let back = from_arrow("u", to_arrow(&t).unwrap()).unwrap();
    assert_eq!((back.ragged_rank(), back.flat_values().shape()), (1, &[2usize, 2][..]));
    assert_eq!(back.to_string(), t.to_string());

    // List<FixedSizeList<Float64, 2>> from Arrow: ragged rows of 2-vectors.
    let mut builder = ListBuilder::new(FixedSizeListBuilder::new(arrow_array::builder::Float64Builder::new(), 2));
    builder.values().values().append_slice(&[1.0, 2.0, 3.0, 4.0]);
    builder.values().append(true);
    builder.values().append(true);
    builder.append(true);
    builder.append(true);
    let t = from_arrow("xy", Arc::new(builder.finish())).unwrap();
    assert_eq!((t.dtype(), t.ragged_rank(), t.flat_values().shape()), (DType::F64, 1, &[2usize, 2][..]));
    assert_eq!(t.row_splits().unwrap(), &[0, 2, 2]);
}

#[test]
fn type_mapping_is_one_table_both_ways() {
    for dtype in DType::ALL {
        let t = RaggedTensor::from_row_splits(
            DenseTensor::full(
                vec![2],
                &RaggedTensor::from(false).cast(dtype).map_or_else(
                    |_| DenseTensor::String(StringTensor::from_strings(&["s"], vec![]).unwrap()),
                    |t| t.into_flat_values(),
                ),
            )
            .unwrap(),
            [0, 2],
        )
        .unwrap();
        let array = to_arrow(&t).unwrap();
        let DataType::LargeList(field) = array.data_type() else { panic!("{}", array.data_type()) };
        assert_eq!(ragtime_arrow::dtype_of(field.data_type()), Some(dtype), "{dtype}");
    }
    let large: ArrayRef = Arc::new(LargeListArray::new_null(Arc::new(Field::new_list_field(DataType::Int32, true)), 1));
    assert!(from_arrow("n", large).unwrap_err().to_string().contains("null list at row 0"));
}
