//! Parquet files as writers make them: every compiled-in codec in and out (written here with the
//! parquet crate, read back and checked against one call of the function on the original
//! tensors), dictionary-encoded string and numeric columns (read as plain values, checked against
//! the dictionary decoded by a plain loop), and two columns of one name (refused, listing the
//! file's columns).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::{Int16Type, Int32Type, Int8Type};
use arrow_array::{Array, ArrayRef, DictionaryArray, Float64Array, Int64Array, ListArray, RecordBatch, StringArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use ragtime::prelude::*;
use ragtime_arrow::parquet::{BrotliLevel, Compression, GzipLevel, ZstdLevel};
use ragtime_arrow::{run_parquet, OffsetWidth, ParquetError, ParquetInput, ParquetOptions, ToArrow};
use ragtime_core::DenseTensor;

/// Every codec, some at levels other than the default.
fn codecs() -> [Compression; 7] {
    [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::LZ4,
        Compression::LZ4_RAW,
        Compression::GZIP(GzipLevel::try_new(9).unwrap()),
        Compression::ZSTD(ZstdLevel::try_new(3).unwrap()),
        Compression::BROTLI(BrotliLevel::try_new(5).unwrap()),
    ]
}

fn write_batch(path: &Path, batch: &RecordBatch, codec: Compression, row_group_rows: usize) {
    let properties =
        WriterProperties::builder().set_compression(codec).set_max_row_group_row_count(Some(row_group_rows)).build();
    let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(properties)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
}

/// Every column of a file, read whole with the parquet crate, and the codec of its first chunk.
fn read_back(path: &Path) -> (Vec<RaggedTensor>, Compression) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let codec = builder.metadata().row_group(0).column(0).compression();
    let batch = builder.with_batch_size(1 << 20).build().unwrap().next().unwrap().unwrap();
    let schema = batch.schema();
    let columns = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(f, c)| ragtime_arrow::from_arrow(f.name(), c.clone()).unwrap())
        .collect();
    (columns, codec)
}

/// The codec without its level (files do not record the level).
fn codec_name(codec: Compression) -> String {
    format!("{codec:?}").split('(').next().unwrap_or_default().to_string()
}

/// 300 rows of ragged floats and ragged words, with repeats so the codecs have work to do.
fn data() -> (RaggedTensor, RaggedTensor) {
    const WORDS: [&str; 5] = ["ragged", "tensors", "", "Ünïcode", "parquet"];
    let lengths: Vec<i64> = (0..300).map(|i| (i * 7 % 5) as i64).collect();
    let n = lengths.iter().sum::<i64>() as usize;
    let floats: Vec<f32> = (0..n).map(|i| (i % 17) as f32 * 0.25 - 2.0).collect();
    let words: Vec<&str> = (0..n).map(|i| WORDS[i * 3 % 5]).collect();
    (
        RaggedTensor::from_row_lengths(floats, &lengths).unwrap(),
        RaggedTensor::from_row_lengths(DenseTensor::from(words), &lengths).unwrap(),
    )
}

#[test]
fn every_codec_is_read_and_written() {
    let dir = tempfile::tempdir().unwrap();
    let (x, t) = data();
    let to_arrow = ToArrow::new().offsets(OffsetWidth::I32);
    let batch =
        RecordBatch::try_from_iter([("x", to_arrow.convert(&x).unwrap()), ("t", to_arrow.convert(&t).unwrap())])
            .unwrap();
    let g = Graph::new();
    let xv = g.input("x", TensorType::ragged(DType::F32, 1));
    let tv = g.input("t", TensorType::ragged(DType::String, 1));
    let f = compile(&[&xv, &tv], &[&(&xv * 2.0).reduce_sum(1), &tv.upper()]).unwrap();
    let expected = f.call(&[x, t]).unwrap();
    for codec in codecs() {
        let input = dir.path().join(format!("in-{codec}.parquet"));
        write_batch(&input, &batch, codec, 64);
        assert_eq!(codec_name(read_back(&input).1), codec_name(codec), "the input file is written with {codec}");
        // Written back with the same codec, except Hadoop-framed LZ4 (deprecated): LZ4_RAW.
        let out_codec = if codec == Compression::LZ4 { Compression::LZ4_RAW } else { codec };
        let output = dir.path().join(format!("out-{codec}.parquet"));
        let inputs = [ParquetInput::new("x", &input, "x"), ParquetInput::new("t", &input, "t")];
        let options = ParquetOptions::new().batch_size(50).compression(out_codec);
        let summary = run_parquet(&f, &inputs, &output, &options).unwrap_or_else(|e| panic!("{codec}: {e}"));
        assert_eq!((summary.rows, summary.batches), (300, 6), "{codec}");
        let (columns, written) = read_back(&output);
        assert_eq!(codec_name(written), codec_name(out_codec));
        for (got, want) in columns.iter().zip(&expected) {
            assert!(got.equals(want), "{codec}: {got:#} != {want:#}");
        }
    }
}

/// `keys` looked up in `values` by a plain loop: what a dictionary column holds.
fn decode<T: Clone>(keys: &[i64], values: &[T]) -> Vec<T> {
    keys.iter().map(|&k| values[k as usize].clone()).collect()
}

#[test]
fn dictionary_encoded_string_and_numeric_columns_read_as_plain_values() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("dict.parquet");
    let words = ["low", "", "Ünïcode", "high"];
    let numbers = [2.5, -1.0, 1e300];
    let keys: Vec<i64> = (0..40).map(|i| i * 5 % 4).collect();
    let number_keys: Vec<i64> = (0..40).map(|i| i % 3).collect();
    // A string column (pandas' categoricals), a float column, and a list of strings whose items
    // are dictionary-encoded; each has its dictionary type in the file's Arrow schema.
    let category: DictionaryArray<Int32Type> =
        DictionaryArray::new(keys.iter().map(|&k| k as i32).collect(), Arc::new(StringArray::from(words.to_vec())));
    let level: DictionaryArray<Int8Type> = DictionaryArray::new(
        number_keys.iter().map(|&k| k as i8).collect(),
        Arc::new(Float64Array::from(numbers.to_vec())),
    );
    let items: DictionaryArray<Int16Type> =
        DictionaryArray::new(keys.iter().map(|&k| k as i16).collect(), Arc::new(StringArray::from(words.to_vec())));
    let item_field = Arc::new(Field::new("item", items.data_type().clone(), true));
    let row_lengths: Vec<usize> = (0..20).map(|i| [0, 1, 3, 4][i % 4]).collect();
    let tags = ListArray::new(item_field, OffsetBuffer::from_lengths(row_lengths.clone()), Arc::new(items), None);
    let columns: Vec<(&str, ArrayRef)> =
        vec![("category", Arc::new(category)), ("level", Arc::new(level)), ("tags", Arc::new(tags))];
    // 40 rows for the first two, 20 rows of tags go to a file of their own.
    let batch = RecordBatch::try_from_iter(columns[..2].to_vec()).unwrap();
    write_batch(&input, &batch, Compression::SNAPPY, 16);
    let tags_file = dir.path().join("tags.parquet");
    write_batch(
        &tags_file,
        &RecordBatch::try_from_iter([columns[2].clone()]).unwrap(),
        Compression::ZSTD(ZstdLevel::default()),
        7,
    );
    let schema = ParquetRecordBatchReaderBuilder::try_new(File::open(&input).unwrap()).unwrap().schema().clone();
    assert!(matches!(schema.field(0).data_type(), DataType::Dictionary(..)), "{schema:?}");

    let g = Graph::new();
    let c = g.input("c", TensorType::vector(DType::String));
    let l = g.input("l", TensorType::vector(DType::F64));
    let f = compile(&[&c, &l], &[&c.upper(), &(&l * 2.0)]).unwrap();
    let output = dir.path().join("out.parquet");
    let inputs = [ParquetInput::new("c", &input, "category"), ParquetInput::new("l", &input, "level")];
    run_parquet(&f, &inputs, &output, &ParquetOptions::new().batch_size(9)).unwrap();
    let plain_words = DenseTensor::from(decode(&keys, &words));
    let plain_numbers = DenseTensor::from(decode(&number_keys, &numbers));
    let expected = f.call(&[plain_words.into(), plain_numbers.into()]).unwrap();
    let (got, _) = read_back(&output);
    for (got, want) in got.iter().zip(&expected) {
        assert!(got.equals(want), "{got:#} != {want:#}");
    }

    let t = g.input("t", TensorType::ragged(DType::String, 1));
    let f = compile(&[&t], &[&t.length()]).unwrap();
    run_parquet(&f, &[ParquetInput::new("t", &tags_file, "tags")], &output, &ParquetOptions::new().batch_size(6))
        .unwrap();
    let row_lengths: Vec<i64> = row_lengths.iter().map(|&n| n as i64).collect();
    let plain_tags = RaggedTensor::from_row_lengths(DenseTensor::from(decode(&keys, &words)), &row_lengths).unwrap();
    let expected = f.call(&[plain_tags]).unwrap();
    let (got, _) = read_back(&output);
    assert!(got[0].equals(&expected[0]), "{:#} != {:#}", got[0], expected[0]);
}

#[test]
fn two_columns_of_one_name_are_refused_listing_the_columns() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("dup.parquet");
    let a: ArrayRef = Arc::new(Int64Array::from(vec![1, 2, 3]));
    let b: ArrayRef = Arc::new(Int64Array::from(vec![4, 5, 6]));
    let fields = ["x", "y", "x"].map(|name| Field::new(name, DataType::Int64, false));
    let batch = RecordBatch::try_new(Arc::new(Schema::new(fields.to_vec())), vec![a.clone(), b, a]).unwrap();
    write_batch(&input, &batch, Compression::SNAPPY, 10);
    let g = Graph::new();
    let x = g.input("v", TensorType::vector(DType::I64));
    let f = compile(&[&x], &[&(&x + 1)]).unwrap();
    let output = dir.path().join("out.parquet");
    let e = run_parquet(&f, &[("v", &input, "x").into()], &output, &ParquetOptions::new()).unwrap_err();
    assert!(matches!(e, ParquetError::DuplicateColumn { count: 2, .. }), "{e:?}");
    assert!(
        e.to_string().ends_with("dup.parquet: 2 columns are named \"x\" (input \"v\"); the file's columns: x, y, x"),
        "{e}"
    );
    assert!(!output.exists());
    // A column whose name is not repeated is read.
    run_parquet(&f, &[("v", &input, "y").into()], &output, &ParquetOptions::new()).unwrap();
    let (got, _) = read_back(&output);
    assert!(got[0].equals(&RaggedTensor::from(DenseTensor::from(vec![5i64, 6, 7]))), "{:#}", got[0]);
}
