//! `run_parquet` streams Parquet columns through a compiled function batch by batch; the
//! output file must hold exactly what one call of the function on the whole columns returns,
//! whatever the batch size and the row groups of the inputs. Bad inputs give typed errors naming
//! the file, the column and the rows, and leave no output behind.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, ListArray, RecordBatch};
use arrow_buffer::{NullBuffer, OffsetBuffer};
use arrow_schema::{DataType, Field};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use ragtime::prelude::*;
use ragtime_arrow::parquet::{ParquetRun, Progress};
use ragtime_arrow::{
    run_parquet, FromArrow, NullLists, NullValues, OffsetWidth, ParquetError, ParquetInput, ParquetOptions, ToArrow,
};
use ragtime_core::DenseTensor;

/// A deterministic stream of numbers (a linear congruential generator).
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// Row lengths 0..=4 for `rows` rows, with an empty row every few rows.
fn lengths(rows: usize, numbers: &mut Numbers) -> Vec<i64> {
    (0..rows).map(|_| (numbers.next() % 5) as i64).collect()
}

fn floats(rows: usize, seed: u64) -> RaggedTensor {
    let mut numbers = Numbers(seed);
    let lengths = lengths(rows, &mut numbers);
    let n = lengths.iter().sum::<i64>() as usize;
    let values: Vec<f32> = (0..n).map(|_| (numbers.next() % 2000) as f32 / 100.0 - 10.0).collect();
    RaggedTensor::from_row_lengths(values, &lengths).unwrap()
}

fn words(rows: usize, seed: u64) -> RaggedTensor {
    const WORDS: [&str; 6] = ["to", "be", "or", "not", "Ünïcode", ""];
    let mut numbers = Numbers(seed);
    let lengths = lengths(rows, &mut numbers);
    let n = lengths.iter().sum::<i64>() as usize;
    let values: Vec<&str> = (0..n).map(|_| WORDS[(numbers.next() % 6) as usize]).collect();
    RaggedTensor::from_row_lengths(DenseTensor::from(values), &lengths).unwrap()
}

/// `List<List<Int64>>`: ragged rank 2.
fn nested_ints(rows: usize, seed: u64) -> RaggedTensor {
    let mut numbers = Numbers(seed);
    let outer = lengths(rows, &mut numbers);
    let inner = lengths(outer.iter().sum::<i64>() as usize, &mut numbers);
    let n = inner.iter().sum::<i64>() as usize;
    let values: Vec<i64> = (0..n).map(|_| numbers.next() as i64 % 1000 - 500).collect();
    let inner = RaggedTensor::from_row_lengths(values, &inner).unwrap();
    RaggedTensor::from_row_lengths(inner, &outer).unwrap()
}

/// Writes `columns` (as `List` / `Utf8` with i32 offsets, as most writers do) to a Parquet file
/// with row groups of at most `row_group_rows` rows.
fn write_parquet(path: &Path, columns: &[(&str, &RaggedTensor)], row_group_rows: usize) {
    let to_arrow = ToArrow::new().offsets(OffsetWidth::I32);
    let arrays: Vec<(&str, ArrayRef)> = columns.iter().map(|(name, t)| (*name, to_arrow.convert(t).unwrap())).collect();
    write_arrays(path, arrays, row_group_rows);
}

fn write_arrays(path: &Path, arrays: Vec<(&str, ArrayRef)>, row_group_rows: usize) {
    let batch = RecordBatch::try_from_iter(arrays).unwrap();
    let properties = WriterProperties::builder().set_max_row_group_row_count(Some(row_group_rows)).build();
    let mut writer = ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(properties)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Every column of a Parquet file, read whole, as (name, tensor), and the number of row groups.
fn read_parquet(path: &Path) -> (Vec<(String, RaggedTensor)>, usize) {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let row_groups = builder.metadata().num_row_groups();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.with_batch_size(1 << 20).build().unwrap().map(Result::unwrap).collect();
    let batch = arrow_select_concat(&schema, &batches);
    let columns = schema
        .fields()
        .iter()
        .zip(batch.columns())
        .map(|(field, column)| (field.name().clone(), ragtime_arrow::from_arrow(field.name(), column.clone()).unwrap()))
        .collect();
    (columns, row_groups)
}

/// The one batch of a file read with a batch size above its row count (an empty file has none).
fn arrow_select_concat(schema: &arrow_schema::SchemaRef, batches: &[RecordBatch]) -> RecordBatch {
    assert!(batches.len() <= 1, "the test files are read in one batch, got {}", batches.len());
    batches.first().cloned().unwrap_or_else(|| RecordBatch::new_empty(schema.clone()))
}

/// Asserts the output file holds, column by column, exactly the function's results on the
/// whole inputs.
fn assert_output_is_whole_call(output: &Path, names: &[&str], expected: &[RaggedTensor]) {
    let (columns, _) = read_parquet(output);
    let got_names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(got_names, names, "the output columns are named after the outputs");
    for ((name, got), want) in columns.iter().zip(expected) {
        assert!(got.equals(want), "output {name}: streamed in batches gave {got:#}, one whole call gave {want:#}");
    }
}

fn temp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// The files of `dir`, to check a failed run left nothing behind.
fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    files
}

#[test]
fn list_float32_in_many_batches_and_row_groups_equals_one_call() {
    let dir = temp();
    let (input, output) = (dir.path().join("scores.parquet"), dir.path().join("out.parquet"));
    let scores = floats(103, 1);
    // Row groups of 10 rows, batches of 7: batches straddle row groups.
    write_parquet(&input, &[("scores", &scores)], 10);
    assert_eq!(read_parquet(&input).1, 11, "the input has several row groups");

    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&x], &[&x.softmax(), &(&x * 2.0 + 1.0).reduce_sum(1), &x.reduce_max(1)]).unwrap();
    let options = ParquetOptions::new().batch_size(7).output_names(["softmax", "sum", "max"]);
    let mut seen = Vec::new();
    let run = ParquetRun::open(&f, &[ParquetInput::new("x", &input, "scores")], &options).unwrap();
    assert_eq!(run.total_rows(), 103);
    let summary = run.write_to(&output, |p| seen.push(p)).unwrap();

    assert_eq!((summary.rows, summary.batches), (103, 15), "103 rows in batches of 7");
    assert_eq!(summary.outputs, ["softmax", "sum", "max"]);
    assert_eq!(seen.len(), 15, "one progress report per batch");
    assert_eq!(seen.last(), Some(&Progress { rows: 103, total_rows: 103, batches: 15 }));
    let rows: Vec<u64> = seen.iter().map(|p| p.rows).collect();
    let expected_rows: Vec<u64> = (1..=15).map(|k| (7 * k).min(103)).collect();
    assert_eq!(rows, expected_rows, "full batches of 7 rows, then the 5 left");
    let expected = f.call(std::slice::from_ref(&scores)).unwrap();
    assert_output_is_whole_call(&output, &["softmax", "sum", "max"], &expected);
    assert_eq!(read_parquet(&output).1, 15, "each batch is one row group of the output");
    assert_eq!(files_in(dir.path()), [output.clone(), input.clone()], "no partial file is left");
}

#[test]
fn list_utf8_and_nested_list_int64_from_two_files_with_default_names() {
    let dir = temp();
    let (a, b, output) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"), dir.path().join("o.parquet"));
    let tokens = words(50, 2);
    let ids = nested_ints(50, 3);
    write_parquet(&a, &[("tokens", &tokens)], 50);
    write_parquet(&b, &[("other", &floats(50, 9)), ("ids", &ids)], 16);

    let g = Graph::new();
    let t = g.input("t", TensorType::ragged(DType::String, 1));
    let n = g.input("n", TensorType::ragged(DType::I64, 2));
    let f = compile(&[&t, &n], &[&t.upper(), &t.length(), &(&n * 3).reduce_sum(2), &n]).unwrap();
    let inputs = [ParquetInput::new("n", &b, "ids"), ParquetInput::new("t", &a, "tokens")];
    let summary = run_parquet(&f, &inputs, &output, &ParquetOptions::new().batch_size(8)).unwrap();

    assert_eq!((summary.rows, summary.batches), (50, 7));
    let expected = f.call(&[tokens, ids]).unwrap();
    assert_output_is_whole_call(&output, &["out0", "out1", "out2", "out3"], &expected);
}

/// Float columns are written without a dictionary (their values almost never repeat: building
/// one is only cost); other columns keep the writer's default, a dictionary while it pays.
#[test]
fn float_output_columns_are_written_without_a_dictionary_and_others_with_one() {
    let dir = temp();
    let (input, output) = (dir.path().join("in.parquet"), dir.path().join("out.parquet"));
    let tokens = words(60, 4);
    write_parquet(&input, &[("tokens", &tokens), ("x", &floats(60, 5))], 60);
    let g = Graph::new();
    let t = g.input("t", TensorType::ragged(DType::String, 1));
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&t, &x], &[&t.upper(), &x.softmax(), &t.length(), &x.cast(DType::F64)]).unwrap();
    let inputs = [ParquetInput::new("t", &input, "tokens"), ParquetInput::new("x", &input, "x")];
    run_parquet(&f, &inputs, &output, &ParquetOptions::new().batch_size(20)).unwrap();

    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&output).unwrap()).unwrap();
    for group in reader.metadata().row_groups() {
        let dictionary: Vec<bool> = group.columns().iter().map(|c| c.dictionary_page_offset().is_some()).collect();
        assert_eq!(dictionary, [true, false, true, false], "string, float32, int, float64 columns");
    }
    let expected = f.call(&[tokens, floats(60, 5)]).unwrap();
    assert_output_is_whole_call(&output, &["out0", "out1", "out2", "out3"], &expected);
}

#[test]
fn the_default_batch_size_reads_a_small_file_in_one_batch_and_i32_offsets_can_be_written() {
    let dir = temp();
    let (input, output) = (dir.path().join("in.parquet"), dir.path().join("out.parquet"));
    let x = floats(20, 4);
    write_parquet(&input, &[("x", &x)], 3);
    let g = Graph::new();
    let v = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&v], &[&(&v - 1.0)]).unwrap();
    let options = ParquetOptions::new().to_arrow(ToArrow::new().offsets(OffsetWidth::I32));
    let summary = run_parquet(&f, &[("x", &input, "x").into()], &output, &options).unwrap();
    assert_eq!((summary.rows, summary.batches), (20, 1));
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&output).unwrap()).unwrap();
    assert!(matches!(builder.schema().field(0).data_type(), DataType::List(_)), "{:?}", builder.schema());
    assert_output_is_whole_call(&output, &["out0"], &f.call(&[x]).unwrap());
}

#[test]
fn an_empty_file_gives_an_empty_output_with_the_outputs_types() {
    let dir = temp();
    let (input, output) = (dir.path().join("in.parquet"), dir.path().join("out.parquet"));
    write_parquet(&input, &[("x", &floats(0, 1))], 10);
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&x], &[&x.softmax(), &x.reduce_mean(1)]).unwrap();
    let summary = run_parquet(&f, &[("x", &input, "x").into()], &output, &ParquetOptions::new()).unwrap();
    assert_eq!((summary.rows, summary.batches), (0, 0));
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&output).unwrap()).unwrap();
    let types: Vec<String> = builder.schema().fields().iter().map(|f| f.data_type().to_string()).collect();
    assert_eq!(types, ["List(Float32)", "Float32"], "the types of the outputs of a call on zero rows (List input)");
    assert_eq!(builder.metadata().file_metadata().num_rows(), 0);
}

#[test]
fn outputs_keep_the_offset_width_of_the_inputs() {
    let dir = temp();
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&x], &[&(&x * 2.0)]).unwrap();
    let data = floats(50, 3);
    for (width, expected) in [(OffsetWidth::I32, "List(Float32)"), (OffsetWidth::I64, "LargeList(Float32)")] {
        let (input, output) = (dir.path().join("in.parquet"), dir.path().join("out.parquet"));
        write_arrays(&input, vec![("x", ToArrow::new().offsets(width).convert(&data).unwrap())], 20);
        run_parquet(&f, &[("x", &input, "x").into()], &output, &ParquetOptions::new()).unwrap();
        let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&output).unwrap()).unwrap();
        assert_eq!(builder.schema().field(0).data_type().to_string(), expected, "input offsets {width:?}");
    }
    // An explicit choice wins.
    let (input, output) = (dir.path().join("in.parquet"), dir.path().join("out.parquet"));
    write_parquet(&input, &[("x", &data)], 20);
    let options = ParquetOptions::new().to_arrow(ToArrow::new());
    run_parquet(&f, &[("x", &input, "x").into()], &output, &options).unwrap();
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(&output).unwrap()).unwrap();
    assert_eq!(builder.schema().field(0).data_type().to_string(), "LargeList(Float32)");
}

/// A `List<Int64>` column with a null list at row 5 and a null value in row 2.
fn column_with_nulls() -> ArrayRef {
    let values = Int64Array::from(vec![Some(1), Some(2), Some(3), None, Some(5), Some(6), Some(7), Some(8), Some(9)]);
    let offsets = OffsetBuffer::from_lengths([2, 1, 2, 0, 1, 0, 3, 0]);
    let valid = NullBuffer::from(vec![true, true, true, true, true, false, true, true]);
    Arc::new(ListArray::new(
        Arc::new(Field::new_list_field(DataType::Int64, true)),
        offsets,
        Arc::new(values),
        Some(valid),
    ))
}

#[test]
fn nulls_are_refused_naming_the_file_column_and_rows_unless_a_policy_reads_them() {
    let dir = temp();
    let (input, output) = (dir.path().join("in.parquet"), dir.path().join("out.parquet"));
    write_arrays(&input, vec![("ids", column_with_nulls())], 100);
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I64, 1));
    let f = compile(&[&x], &[&x.reduce_sum(1)]).unwrap();

    let options = ParquetOptions::new().batch_size(4);
    let refused = run_parquet(&f, &[("x", &input, "ids").into()], &output, &options).unwrap_err();
    let message = refused.to_string();
    assert!(matches!(refused, ParquetError::Column { batch: 0, .. }), "{refused:?}");
    assert!(
        message.contains("in.parquet: column \"ids\", batch 0 (rows 0..4") && message.contains("null value at row 2"),
        "the error names the file, the column, the batch's rows and the row: {message}"
    );

    let values_read = FromArrow::new().null_values(NullValues::Replace(DenseTensor::scalar(100i64)));
    let input_spec = ParquetInput::new("x", &input, "ids").nulls(values_read.clone());
    let refused = run_parquet(&f, &[input_spec], &output, &options).unwrap_err();
    let message = refused.to_string();
    assert!(
        message.contains("column \"ids\", batch 1 (rows 4..8; rows below count from 4)")
            && message.contains("null list at row 1"),
        "the null list is file row 5, row 1 of the second batch: {message}"
    );
    assert_eq!(files_in(dir.path()), std::slice::from_ref(&input), "a failed run leaves no output");

    // Both policies: the output is what the function gives on the whole column read with them.
    let both = values_read.null_lists(NullLists::AsEmpty);
    run_parquet(&f, &[ParquetInput::new("x", &input, "ids").nulls(both.clone())], &output, &options).unwrap();
    let whole = both.convert("ids", column_with_nulls()).unwrap();
    assert_output_is_whole_call(&output, &["out0"], &f.call(&[whole]).unwrap());
}

#[test]
fn a_missing_column_names_the_file_and_lists_its_columns() {
    let dir = temp();
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &[("scores", &floats(5, 1)), ("weights", &floats(5, 2))], 10);
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&x], &[&(&x + 1.0)]).unwrap();
    let e = run_parquet(&f, &[("x", &input, "score").into()], &dir.path().join("o.parquet"), &ParquetOptions::new())
        .unwrap_err();
    assert!(matches!(e, ParquetError::MissingColumn { .. }), "{e:?}");
    let message = e.to_string();
    assert!(
        message.ends_with("in.parquet: no column \"score\" (input \"x\"); the file's columns: scores, weights"),
        "{message}"
    );
}

#[test]
fn a_column_of_another_type_is_refused_before_reading_any_batch() {
    let dir = temp();
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &[("ids", &nested_ints(5, 1)), ("words", &words(5, 1))], 10);
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::I64, 1));
    let f = compile(&[&x], &[&(&x + 1)]).unwrap();
    let output = dir.path().join("o.parquet");
    for (column, found) in [("ids", "reads as int64[?, *, *]"), ("words", "reads as string[?, *]")] {
        let e = run_parquet(&f, &[("x", &input, column).into()], &output, &ParquetOptions::new()).unwrap_err();
        assert!(matches!(e, ParquetError::ColumnType { .. }), "{e:?}");
        let message = e.to_string();
        assert!(
            message.contains(&format!("column \"{column}\" of Arrow type"))
                && message.contains(found)
                && message.ends_with("but input \"x\" takes int64[?, *]"),
            "{message}"
        );
    }
}

#[test]
fn inputs_with_different_row_counts_are_refused_naming_the_files() {
    let dir = temp();
    let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
    write_parquet(&a, &[("x", &floats(10, 1))], 4);
    write_parquet(&b, &[("y", &floats(9, 2))], 4);
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let y = g.input("y", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&x, &y], &[&x.reduce_sum(1), &y.reduce_sum(1)]).unwrap();
    let inputs = [ParquetInput::new("x", &a, "x"), ParquetInput::new("y", &b, "y")];
    let e = run_parquet(&f, &inputs, &dir.path().join("o.parquet"), &ParquetOptions::new().batch_size(3)).unwrap_err();
    assert!(matches!(e, ParquetError::RowCounts { first_row: 0, .. }), "{e:?}");
    let message = e.to_string();
    assert!(
        message.contains("a.parquet, column \"x\" has 10") && message.contains("b.parquet, column \"y\" has 9"),
        "{message}"
    );
}

#[test]
fn function_errors_and_outputs_that_are_not_per_row_name_the_batch() {
    let dir = temp();
    let (a, b, output) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"), dir.path().join("o.parquet"));
    // Same row count, different row lengths from row 4 on: `x + y` fails in the second batch.
    let x = RaggedTensor::from_row_lengths(vec![1.0f32; 12], &[2, 2, 2, 2, 2, 2]).unwrap();
    let y = RaggedTensor::from_row_lengths(vec![1.0f32; 12], &[2, 2, 2, 2, 1, 3]).unwrap();
    write_parquet(&a, &[("v", &x)], 10);
    write_parquet(&b, &[("v", &y)], 10);
    let g = Graph::new();
    let (xv, yv) = (g.input("x", TensorType::ragged(DType::F32, 1)), g.input("y", TensorType::ragged(DType::F32, 1)));
    let f = compile(&[&xv, &yv], &[&(&xv + &yv)]).unwrap();
    let inputs = [ParquetInput::new("x", &a, "v"), ParquetInput::new("y", &b, "v")];
    let e = run_parquet(&f, &inputs, &output, &ParquetOptions::new().batch_size(4)).unwrap_err();
    assert!(matches!(&e, ParquetError::Call { batch: 1, rows, .. } if *rows == (4..6)), "{e:?}");
    assert!(e.to_string().starts_with("batch 1 (rows 4..6): "), "{e}");

    // A total over all rows is one value, not a column.
    let g = Graph::new();
    let v = g.input("x", TensorType::ragged(DType::F32, 1));
    let total = v.reduce_sum(1).reduce_sum(0);
    let f = compile(&[&v], &[&total]).unwrap();
    let e =
        run_parquet(&f, &[("x", &a, "v").into()], &output, &ParquetOptions::new().output_names(["total"])).unwrap_err();
    let message = e.to_string();
    assert!(
        message.starts_with("output \"total\", batch 0 (rows 0..6): a column needs one value per input row (6)"),
        "{message}"
    );
    assert_eq!(files_in(dir.path()), [a, b], "failed runs leave no output");
}

#[test]
fn usage_errors_are_reported_before_any_file_is_written() {
    let dir = temp();
    let input = dir.path().join("in.parquet");
    write_parquet(&input, &[("x", &floats(3, 1))], 10);
    let g = Graph::new();
    let (x, y) = (g.input("x", TensorType::ragged(DType::F32, 1)), g.input("y", TensorType::ragged(DType::F32, 1)));
    let f = compile(&[&x, &y], &[&(&x * &y)]).unwrap();
    let output = dir.path().join("o.parquet");
    let x_in = ParquetInput::new("x", &input, "x");
    let cases: Vec<(Vec<ParquetInput>, ParquetOptions, &str)> = vec![
        (vec![x_in.clone()], ParquetOptions::new(), "function input \"y\" is given no Parquet column"),
        (
            vec![x_in.clone(), ParquetInput::new("z", &input, "x")],
            ParquetOptions::new(),
            "the function has no input \"z\" (its inputs: x, y)",
        ),
        (vec![x_in.clone(), x_in.clone()], ParquetOptions::new(), "input \"x\" is given more than once"),
        (vec![x_in.clone()], ParquetOptions::new().batch_size(0), "the batch size must be at least 1 row"),
        (vec![x_in.clone()], ParquetOptions::new().output_names(["a", "b"]), "2 output names given (a, b)"),
        (
            vec![x_in.clone(), ParquetInput::new("y", dir.path().join("nope.parquet"), "x")],
            ParquetOptions::new(),
            "nope.parquet: cannot open: ",
        ),
        (vec![x_in.clone(), ParquetInput::new("y", &output, "x")], ParquetOptions::new(), "o.parquet: cannot open"),
    ];
    for (inputs, options, expected) in cases {
        let e = run_parquet(&f, &inputs, &output, &options).unwrap_err();
        assert!(e.to_string().contains(expected), "expected an error containing {expected:?}, got: {e}");
    }
    std::fs::write(dir.path().join("text.parquet"), "not parquet").unwrap();
    let inputs = [x_in, ParquetInput::new("y", dir.path().join("text.parquet"), "x")];
    let e = run_parquet(&f, &inputs, &output, &ParquetOptions::new()).unwrap_err();
    assert!(matches!(e, ParquetError::Parquet { .. }) && e.to_string().contains("text.parquet: "), "{e:?}");
    assert_eq!(files_in(dir.path()), [input, dir.path().join("text.parquet")]);
}

#[test]
fn the_output_may_replace_an_input_file() {
    let dir = temp();
    let path = dir.path().join("data.parquet");
    let x = floats(30, 5);
    write_parquet(&path, &[("x", &x)], 8);
    let g = Graph::new();
    let v = g.input("x", TensorType::ragged(DType::F32, 1));
    let f = compile(&[&v], &[&(&v * &v)]).unwrap();
    run_parquet(&f, &[("x", &path, "x").into()], &path, &ParquetOptions::new().batch_size(4).output_names(["x"]))
        .unwrap();
    assert_output_is_whole_call(&path, &["x"], &f.call(&[x]).unwrap());
}
