//! Parquet in, a compiled ragtime function, Parquet out.
//!
//! Writes a small Parquet file with a `List<Float32>` column of scores and a `List<Utf8>` column
//! of tokens (as pyarrow, Spark or DuckDB would), streams it through a compiled function two rows
//! at a time with `ragtime_arrow::run_parquet`, then reads the output file back and prints each
//! column. The same run from the command line, with a graph file:
//! `ragtime run graph.json --input scores=events.parquet:scores --output out.parquet`.
//! Run with `cargo run --example parquet`.

use std::fs::File;
use std::sync::Arc;

use arrow_array::types::Float32Type;
use arrow_array::{ArrayRef, ListArray, RecordBatch, StringArray};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType, Field};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use ragtime::prelude::*;
use ragtime_arrow::{run_parquet, ParquetInput, ParquetOptions};

fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("ragtime-parquet-example-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let (events, out) = (dir.join("events.parquet"), dir.join("out.parquet"));

    // Five sessions: scores per session (one without any) and the tokens typed in it.
    let scores: ArrayRef = Arc::new(ListArray::from_iter_primitive::<Float32Type, _, _>([
        Some(vec![Some(1.0), Some(2.0), Some(3.0)]),
        Some(vec![Some(0.5)]),
        Some(vec![]),
        Some(vec![Some(-1.0), Some(1.0)]),
        Some(vec![Some(4.0), Some(4.0)]),
    ]));
    let tokens: ArrayRef = Arc::new(ListArray::new(
        Arc::new(Field::new_list_field(DataType::Utf8, true)),
        OffsetBuffer::from_lengths([2, 1, 0, 3, 1]),
        Arc::new(StringArray::from(vec!["to", "be", "or", "not", "to", "be", "ragged"])),
        None,
    ));
    let batch = RecordBatch::try_from_iter([("scores", scores), ("tokens", tokens)])?;
    let mut writer = ArrowWriter::try_new(File::create(&events)?, batch.schema(), None)?;
    writer.write(&batch)?;
    writer.close()?;
    println!(
        "wrote {} ({} rows: scores {}, tokens {})",
        events.display(),
        batch.num_rows(),
        batch.column(0).data_type(),
        batch.column(1).data_type()
    );

    // Per session: the softmax of its scores, their mean, and its tokens in upper case.
    let g = Graph::new();
    let s = g.input("s", TensorType::ragged(DType::F32, 1));
    let t = g.input("t", TensorType::ragged(DType::String, 1));
    let f = compile(&[&s, &t], &[&s.softmax(), &s.reduce_mean(1), &t.upper()])?;

    let inputs = [ParquetInput::new("s", &events, "scores"), ParquetInput::new("t", &events, "tokens")];
    let options = ParquetOptions::new().batch_size(2).output_names(["probabilities", "mean", "shouted"]);
    let summary = run_parquet(&f, &inputs, &out, &options)?;
    println!(
        "ran {} rows in {} batches in {:.1} ms -> {}",
        summary.rows,
        summary.batches,
        summary.elapsed.as_secs_f64() * 1e3,
        out.display()
    );

    // Read the output back: one column per output, as Arrow arrays, then as ragged tensors.
    for batch in ParquetRecordBatchReaderBuilder::try_new(File::open(&out)?)?.build()? {
        let batch = batch?;
        for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
            let tensor = ragtime_arrow::from_arrow(field.name(), column.clone())?;
            println!("  {} ({}): {tensor}", field.name(), field.data_type());
        }
    }
    std::fs::remove_dir_all(&dir)?;
    Ok(())
}
