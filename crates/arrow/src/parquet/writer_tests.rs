//! The output writer against arrow-rs's `ArrowWriter` (what runs wrote before it, in the same
//! slices of rows, with the same properties): the files must be the same bytes, for columns
//! written directly (lists of floats, either width, nested, nullable items or not, empty rows
//! and empty batches, more rows than a slice) and for columns that keep the Arrow path (strings,
//! fixed-size lists, ints, a batch with nulls).

use std::sync::Arc;

use arrow_array::builder::{FixedSizeListBuilder, Float32Builder};
use arrow_array::{
    Array, ArrayRef, Float32Array, Float64Array, GenericListArray, Int64Array, ListArray, OffsetSizeTrait, RecordBatch,
    StringArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::writer::{writer_properties, OutputWriter};
use super::{Compression, WRITE_SLICE_ROWS};

/// Deterministic row lengths and values (an LCG), so both writers get the same data.
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// `rows` lengths in `0..=max`, a fifth of them 0.
    fn lengths(&mut self, rows: usize, max: u64) -> Vec<usize> {
        (0..rows).map(|_| if self.next().is_multiple_of(5) { 0 } else { (self.next() % (max + 1)) as usize }).collect()
    }
}

fn list<O: OffsetSizeTrait>(lengths: &[usize], values: ArrayRef, nullable_items: bool) -> ArrayRef {
    let field = Arc::new(Field::new_list_field(values.data_type().clone(), nullable_items));
    Arc::new(GenericListArray::<O>::new(field, OffsetBuffer::from_lengths(lengths.iter().copied()), values, None))
}

fn floats(n: usize, numbers: &mut Numbers) -> ArrayRef {
    Arc::new(Float32Array::from_iter_values((0..n).map(|_| numbers.next() as f32 / 7.0 - 1e8)))
}

fn doubles(n: usize, numbers: &mut Numbers) -> ArrayRef {
    Arc::new(Float64Array::from_iter_values((0..n).map(|_| numbers.next() as f64 / 3.0 - 1e9)))
}

/// A batch of `rows` rows of every column kind, ragged rows up to `max` values long.
fn batch(schema: Option<&SchemaRef>, rows: usize, max: u64, numbers: &mut Numbers) -> RecordBatch {
    let lengths = numbers.lengths(rows, max);
    let total: usize = lengths.iter().sum();
    let f32_list = list::<i32>(&lengths, floats(total, numbers), true);
    let f64_large = list::<i64>(&lengths, doubles(total, numbers), false);
    // Rank 2: rows of lists of lists (the outer lengths `lengths`, the inner ones their own).
    let inner = numbers.lengths(total, 4);
    let inner_total: usize = inner.iter().sum();
    let rank2 = list::<i32>(&lengths, list::<i32>(&inner, floats(inner_total, numbers), true), true);
    let rank2_large = list::<i64>(&lengths, list::<i64>(&inner, doubles(inner_total, numbers), false), false);
    let dense: ArrayRef = floats(rows, numbers);
    let strings: ArrayRef = Arc::new(StringArray::from_iter_values((0..rows).map(|r| format!("s{}", r % 13))));
    let ints = list::<i32>(&lengths, Arc::new(Int64Array::from_iter_values((0..total as i64).map(|v| v % 5))), true);
    let mut fixed = FixedSizeListBuilder::new(Float32Builder::new(), 2);
    for v in 0..total {
        fixed.values().append_slice(&[v as f32, -(v as f32)]);
        fixed.append(true);
    }
    let fixed = list::<i32>(&lengths, Arc::new(fixed.finish()), true);
    let columns = vec![f32_list, f64_large, rank2, rank2_large, dense, strings, ints, fixed];
    let schema = schema.cloned().unwrap_or_else(|| {
        let fields: Vec<Field> = columns
            .iter()
            .enumerate()
            .map(|(k, c)| Field::new(format!("c{k}"), c.data_type().clone(), false))
            .collect();
        Arc::new(Schema::new(fields))
    });
    RecordBatch::try_new(schema, columns).unwrap()
}

/// The file `ArrowWriter` writes of `batches` (one row group each, in slices, as runs did).
fn arrow_writer_file(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    batch_size: usize,
    compression: Compression,
) -> Vec<u8> {
    let properties: WriterProperties = writer_properties(schema, compression, batch_size).unwrap();
    let mut writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(properties)).unwrap();
    for batch in batches {
        for start in (0..batch.num_rows()).step_by(WRITE_SLICE_ROWS) {
            writer.write(&batch.slice(start, WRITE_SLICE_ROWS.min(batch.num_rows() - start))).unwrap();
        }
        writer.flush().unwrap();
    }
    writer.into_inner().unwrap()
}

/// The file the output writer writes of `batches`.
fn output_writer_file(
    schema: &SchemaRef,
    batches: &[RecordBatch],
    batch_size: usize,
    compression: Compression,
) -> Vec<u8> {
    let path = std::env::temp_dir().join(format!(
        "ragtime-writer-{}-{:?}.parquet",
        std::process::id(),
        std::thread::current().id()
    ));
    let mut writer =
        OutputWriter::new(std::fs::File::create(&path).unwrap(), schema.clone(), compression, batch_size).unwrap();
    for batch in batches {
        writer.write(batch).unwrap();
    }
    drop(writer.finish().unwrap());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    bytes
}

/// Both writers give the same bytes, and the file reads back as the batches.
fn assert_same_file(schema: &SchemaRef, batches: &[RecordBatch], compression: Compression) {
    let batch_size = batches.iter().map(RecordBatch::num_rows).max().unwrap_or(1).max(1);
    let ours = output_writer_file(schema, batches, batch_size, compression);
    let theirs = arrow_writer_file(schema, batches, batch_size, compression);
    assert!(ours == theirs, "the files differ ({} and {} bytes)", ours.len(), theirs.len());
    let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(ours)).unwrap();
    assert_eq!(reader.schema(), schema);
    let nonempty: Vec<&RecordBatch> = batches.iter().filter(|b| b.num_rows() > 0).collect();
    assert_eq!(reader.metadata().num_row_groups(), nonempty.len());
    let read: Vec<RecordBatch> = reader.with_batch_size(batch_size).build().unwrap().map(Result::unwrap).collect();
    assert_eq!(read.len(), nonempty.len());
    for (got, want) in read.iter().zip(nonempty) {
        assert_eq!(got, want);
    }
}

#[test]
fn every_column_kind_in_batches_of_several_slices_with_empty_rows_and_an_empty_batch() {
    let mut numbers = Numbers(7);
    let first = batch(None, 3000, 40, &mut numbers);
    let schema = first.schema();
    let file = tempfile::tempfile().unwrap();
    let writer = OutputWriter::new(file, schema.clone(), Compression::SNAPPY, 3000).unwrap();
    // Lists of floats (any width, rank 1 and 2) and dense floats are written directly.
    assert_eq!(writer.direct_fields(), [true, true, true, true, true, false, false, false]);
    let batches = vec![first, batch(Some(&schema), 0, 40, &mut numbers), batch(Some(&schema), 1025, 300, &mut numbers)];
    assert_same_file(&schema, &batches, Compression::SNAPPY);
    assert_same_file(&schema, &batches, Compression::UNCOMPRESSED);
}

#[test]
fn a_file_of_no_rows_and_rows_that_are_all_empty() {
    let mut numbers = Numbers(11);
    let schema = batch(None, 1, 3, &mut numbers).schema();
    assert_same_file(&schema, &[], Compression::SNAPPY);
    let all_empty = batch(Some(&schema), 2000, 0, &mut numbers);
    assert_same_file(&schema, &[all_empty], Compression::SNAPPY);
}

#[test]
fn a_sliced_batch_and_one_with_nulls_take_the_arrow_path_where_needed() {
    let mut numbers = Numbers(3);
    let whole = batch(None, 2500, 20, &mut numbers);
    let schema = whole.schema();
    // Offsets that do not start at 0.
    let sliced = whole.slice(700, 1500);
    // A nullable column of lists of floats with a null row: written the Arrow way.
    let lengths = numbers.lengths(1500, 9);
    let values = floats(lengths.iter().sum(), &mut numbers);
    let field = Arc::new(Field::new_list_field(DataType::Float32, true));
    let nulls = NullBuffer::from_iter((0..1500).map(|r| r % 97 != 3 || lengths[r] > 0));
    let with_nulls: ArrayRef =
        Arc::new(ListArray::new(field, OffsetBuffer::from_lengths(lengths.iter().copied()), values, Some(nulls)));
    assert!(with_nulls.null_count() > 0);
    let nullable = Arc::new(Schema::new(vec![Field::new("n", with_nulls.data_type().clone(), true)]));
    let no_nulls_lengths = numbers.lengths(1500, 9);
    let no_nulls = list::<i32>(&no_nulls_lengths, floats(no_nulls_lengths.iter().sum(), &mut numbers), true);
    let nullable_batches = vec![
        RecordBatch::try_new(nullable.clone(), vec![with_nulls]).unwrap(),
        RecordBatch::try_new(nullable.clone(), vec![no_nulls]).unwrap(),
    ];
    assert_same_file(&schema, &[sliced], Compression::SNAPPY);
    assert_same_file(&nullable, &nullable_batches, Compression::SNAPPY);
}
