//! Parquet in and out: stream record batches of Parquet list columns through a compiled
//! `ragtime::Function` and write its outputs as the columns of a new Parquet file (feature
//! `parquet`, on by default).
//!
//! Memory is bounded by the batch size: each input column is read `batch_size` rows at a time
//! (page by page from the file, whatever its row groups), the batch is converted with
//! [`FromArrow`], the function runs on it, its outputs are converted with [`ToArrow`] (no value
//! is copied) and written as one row group of the output, then dropped before the next batch.
//! The output is written to a hidden file beside it (`.NAME.partial`) and renamed over `output`
//! only when complete, so a failed run leaves no half-written file (and an output path that is
//! also an input is read to the end before it is replaced).

mod footer;
mod isolate;
mod writer;
#[cfg(test)]
mod writer_tests;

use std::fs::File;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow_array::{new_empty_array, ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use ragtime::Function;
use ragtime_core::{Error, RaggedTensor, TensorType};

use crate::{FromArrow, OffsetWidth, ToArrow};
use writer::OutputWriter;

/// Rows per batch when [`ParquetOptions::batch_size`] is not set.
pub const DEFAULT_BATCH_SIZE: usize = 65_536;

/// Rows of a batch's outputs handed to a Parquet column writer at a time: the writer's per-call
/// scratch (levels, and for the columns written the Arrow way value indices and gathered values)
/// then stays small and in cache, reused slice after slice, instead of growing to the batch's
/// size with a page fault per fresh page.
const WRITE_SLICE_ROWS: usize = 1024;

/// The Parquet codecs and their levels, for [`ParquetOptions::compression`].
pub use parquet::basic::{BrotliLevel, Compression, GzipLevel, ZstdLevel};

/// One function input read from a Parquet column.
#[derive(Debug, Clone)]
pub struct ParquetInput {
    /// The function input it feeds (see `Function::input_names`).
    pub name: String,
    /// The Parquet file.
    pub path: PathBuf,
    /// The top-level column of the file (a list column, or a primitive one for a dense input).
    pub column: String,
    /// How nulls of the column are read (refused by default).
    pub nulls: FromArrow,
}

impl ParquetInput {
    /// Input `name` read from column `column` of the file at `path`, refusing nulls.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>, column: impl Into<String>) -> Self {
        ParquetInput { name: name.into(), path: path.into(), column: column.into(), nulls: FromArrow::new() }
    }

    /// Reads nulls of this column with the given policies.
    pub fn nulls(mut self, nulls: FromArrow) -> Self {
        self.nulls = nulls;
        self
    }
}

impl<N: Into<String>, P: Into<PathBuf>, C: Into<String>> From<(N, P, C)> for ParquetInput {
    fn from((name, path, column): (N, P, C)) -> Self {
        ParquetInput::new(name, path, column)
    }
}

/// Options of [`run_parquet`]: the batch size, the output column names and how outputs are
/// written.
#[derive(Debug, Clone)]
pub struct ParquetOptions {
    batch_size: usize,
    output_names: Option<Vec<String>>,
    /// `None`: the offset width of the inputs (see [`ParquetOptions::to_arrow`]).
    to_arrow: Option<ToArrow>,
    compression: Compression,
}

impl Default for ParquetOptions {
    fn default() -> Self {
        ParquetOptions {
            batch_size: DEFAULT_BATCH_SIZE,
            output_names: None,
            to_arrow: None,
            compression: Compression::SNAPPY,
        }
    }
}

impl ParquetOptions {
    /// The defaults: [`DEFAULT_BATCH_SIZE`] rows per batch, outputs named `out0`, `out1`, ...,
    /// lists and strings with the inputs' offset width, Snappy compression.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows read, computed and written at a time (at least 1): memory use is proportional to it.
    pub fn batch_size(mut self, rows: usize) -> Self {
        self.batch_size = rows;
        self
    }

    /// The output column names, one per function output, in output order.
    pub fn output_names<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.output_names = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// How outputs convert to Arrow arrays (offset width, strings as UTF-8 or binary). Without
    /// it, outputs keep the offset width of the inputs: `List` / `Utf8` when every input column
    /// has 32-bit offsets at every level (what most writers produce), else `LargeList` /
    /// `LargeUtf8`; a batch whose output needs 64-bit offsets then fails, naming this option.
    pub fn to_arrow(mut self, to_arrow: ToArrow) -> Self {
        self.to_arrow = Some(to_arrow);
        self
    }

    /// The compression of the output's pages: `SNAPPY` by default, `UNCOMPRESSED`, `GZIP`,
    /// `LZ4_RAW` (what pyarrow writes as "lz4"), `ZSTD` or `BROTLI` (any level). Inputs of any of
    /// these codecs (and the older Hadoop-framed `LZ4`) are read.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }
}

/// How far a run is, given to the callback of [`ParquetRun::write_to`] after each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Rows processed so far.
    pub rows: u64,
    /// Rows of the inputs, from the Parquet metadata.
    pub total_rows: u64,
    /// Batches processed so far.
    pub batches: u64,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct ParquetSummary {
    /// Rows read and written.
    pub rows: u64,
    /// Batches (one row group of the output each).
    pub batches: u64,
    /// The output column names.
    pub outputs: Vec<String>,
    /// Wall time from the first read to the renamed output.
    pub elapsed: Duration,
}

/// Why a Parquet run failed. Every variant names the file, the column or output, and the batch
/// and rows where that applies.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParquetError {
    /// The options or the list of inputs do not fit the function.
    #[error("run_parquet: {0}")]
    Usage(String),
    /// A file could not be opened, created, renamed or synced.
    #[error("{}: cannot {action}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`open`, `create`, ...).
        action: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The Parquet reader or writer refused a file: not a Parquet file, a corrupt footer, or a
    /// failed write.
    #[error("{}: {source}", path.display())]
    Parquet {
        /// The file.
        path: PathBuf,
        /// The Parquet library's error.
        source: parquet::errors::ParquetError,
    },
    /// A batch of a column uses what this build cannot decode (an encoding the reader does not
    /// implement, a codec not compiled in). Pages that do not decode are [`ParquetError::Corrupt`].
    #[error("{}: column \"{column}\", batch {batch} (from row {first_row}): {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// The batch number, from 0.
        batch: u64,
        /// The batch's first row in the file.
        first_row: u64,
        /// The reader's error.
        source: ArrowError,
    },
    /// An input column is not in the file.
    #[error("{}: no column \"{column}\" (input \"{input}\"); the file's columns: {}", path.display(), columns.join(", "))]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
        /// The function input it was to feed.
        input: String,
        /// The top-level columns the file has.
        columns: Vec<String>,
    },
    /// The file has more than one top-level column of the name asked for: which one to read
    /// would be a guess.
    #[error("{}: {} columns are named \"{column}\" (input \"{input}\"); the file's columns: {}", path.display(), count, columns.join(", "))]
    DuplicateColumn {
        /// The file.
        path: PathBuf,
        /// The column asked for.
        column: String,
        /// The function input it was to feed.
        input: String,
        /// How many columns have that name.
        count: usize,
        /// The top-level columns the file has, in order.
        columns: Vec<String>,
    },
    /// The file is corrupt: metadata that contradicts the file (a negative row count, a column
    /// chunk outside the file), pages the reader refuses, or a value the upstream Parquet or
    /// Arrow IPC reader panicked on (caught; see `docs/safety.md`).
    /// `source` is an `invalid_value` error saying what was found.
    #[error("{}: corrupt file{}: {source}", path.display(), place_text(row_groups, column.as_deref()))]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The row groups being read, when the problem was found reading data.
        row_groups: Option<Range<usize>>,
        /// The column being read, when the problem is in one column.
        column: Option<String>,
        /// What was wrong (`invalid_value`).
        source: Box<Error>,
    },
    /// An input column's type is not the function input's type.
    #[error("{}: column \"{column}\" of Arrow type {arrow_type} {found}, but input \"{input}\" takes {expected}", path.display())]
    ColumnType {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// The function input.
        input: String,
        /// The column's Arrow type, as read from the file.
        arrow_type: Box<DataType>,
        /// What that type reads as (`reads as float32[?, ragged]`), or why it cannot be read.
        found: String,
        /// The function input's type.
        expected: Box<TensorType>,
    },
    /// The input columns do not have the same number of rows.
    #[error("the inputs do not have the same rows: from row {first_row}, {}", counts_text(counts))]
    RowCounts {
        /// The first row not every input has (0 when whole files are compared).
        first_row: u64,
        /// Each input (`file, column "c"`) with its number of rows from `first_row` on.
        counts: Vec<(String, u64)>,
    },
    /// A batch of a column could not be converted (a null without a policy, malformed offsets).
    /// Row numbers in `source` count from the batch's first row.
    #[error("{}: column \"{column}\", batch {batch} (rows {}..{}; rows below count from {}): {source}",
        path.display(), rows.start, rows.end, rows.start)]
    Column {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
        /// The batch number, from 0.
        batch: u64,
        /// The batch's rows in the file.
        rows: Range<u64>,
        /// The conversion's error.
        source: Box<Error>,
    },
    /// The function failed on a batch.
    #[error("batch {batch} (rows {}..{}): {source}", rows.start, rows.end)]
    Call {
        /// The batch number, from 0.
        batch: u64,
        /// The batch's rows in the inputs.
        rows: Range<u64>,
        /// The function's error.
        source: Box<Error>,
    },
    /// An output cannot be written as a column of this batch: not one row per input row, a
    /// value Arrow cannot hold, or an Arrow type that differs from the first batch's.
    #[error("output \"{output}\", batch {batch} (rows {}..{}): {reason}", rows.start, rows.end)]
    Output {
        /// The output's column name.
        output: String,
        /// The batch number, from 0.
        batch: u64,
        /// The batch's rows in the inputs.
        rows: Range<u64>,
        /// What is wrong.
        reason: String,
    },
}

fn place_text(row_groups: &Option<Range<usize>>, column: Option<&str>) -> String {
    let groups = match row_groups {
        Some(r) if r.len() == 1 => format!(", row group {}", r.start),
        Some(r) if r.is_empty() => format!(", after the last row group ({})", r.start),
        Some(r) => format!(", row groups {} to {}", r.start, r.end - 1),
        None => String::new(),
    };
    let column = column.map(|c| format!(", column \"{c}\"")).unwrap_or_default();
    format!("{groups}{column}")
}

fn counts_text(counts: &[(String, u64)]) -> String {
    counts.iter().map(|(input, n)| format!("{input} has {n}")).collect::<Vec<_>>().join(", ")
}

/// Streams the inputs' Parquet columns through `function` and writes its outputs to a Parquet
/// file at `output`, one column per output: [`ParquetRun::open`] then
/// [`ParquetRun::write_to`] without progress reports.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ListArray, RecordBatch, types::Float32Type};
/// use ragtime::prelude::*;
/// use ragtime_arrow::parquet::{run_parquet, ParquetOptions};
///
/// let dir = std::env::temp_dir().join(format!("ragtime-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let (input, output) = (dir.join("in.parquet"), dir.join("out.parquet"));
///
/// // A file with a List<Float32> column `x`.
/// let x = ListArray::from_iter_primitive::<Float32Type, _, _>([
///     Some(vec![Some(1.0), Some(2.0)]), Some(vec![]), Some(vec![Some(3.0)]),
/// ]);
/// let batch = RecordBatch::try_from_iter([("x", Arc::new(x) as _)]).unwrap();
/// let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&input).unwrap(), batch.schema(), None).unwrap();
/// writer.write(&batch).unwrap();
/// writer.close().unwrap();
///
/// let g = Graph::new();
/// let x = g.input("x", TensorType::ragged(DType::F32, 1));
/// let f = compile(&[&x], &[&(&x * 2.0)])?;
/// let options = ParquetOptions::new().batch_size(2).output_names(["doubled"]);
/// let summary = run_parquet(&f, &[("x", &input, "x").into()], &output, &options).unwrap();
/// assert_eq!((summary.rows, summary.batches), (3, 2));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok::<(), ragtime::Error>(())
/// ```
pub fn run_parquet(
    function: &Function,
    inputs: &[ParquetInput],
    output: &Path,
    options: &ParquetOptions,
) -> Result<ParquetSummary, ParquetError> {
    ParquetRun::open(function, inputs, options)?.write_to(output, |_| {})
}

/// A run with its inputs opened and checked against the function (columns exist, types fit,
/// row counts agree), ready to write: [`ParquetRun::total_rows`] is known before any batch is
/// read, for a progress bar.
#[derive(Debug)]
pub struct ParquetRun<'f> {
    function: &'f Function,
    /// In the function's input order.
    readers: Vec<InputReader>,
    output_names: Vec<String>,
    options: ParquetOptions,
    /// How outputs convert: the options' choice, or the inputs' offset width.
    to_arrow: ToArrow,
    total_rows: u64,
}

/// One input column being read.
struct InputReader {
    input: ParquetInput,
    batches: ParquetRecordBatchReader,
    /// A zero-row value of the column, converted as the batches will be: its type is checked
    /// against the function's, and an empty file still gets a typed output.
    empty: RaggedTensor,
    /// The rows of the file, from its metadata.
    rows: u64,
    /// The rows of each row group of the file (to name the row groups of a failed batch).
    group_rows: Vec<u64>,
    /// The rows of a full batch.
    batch_size: u64,
    /// Whether the column's lists and strings have 32-bit offsets at every level.
    narrow_offsets: bool,
}

impl std::fmt::Debug for InputReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputReader").field("input", &self.input).finish_non_exhaustive()
    }
}

impl InputReader {
    /// `file, column "c"`, as errors name an input.
    fn label(&self) -> String {
        format!("{}, column \"{}\"", self.input.path.display(), self.input.column)
    }
}

impl<'f> ParquetRun<'f> {
    /// Opens every input file, finds its column and checks it: the column's Arrow type must read
    /// as the function input's type (dtype, ragged rank, inner dims), and all inputs must have
    /// the same number of rows (from the files' metadata). Nothing is read yet but metadata.
    pub fn open(
        function: &'f Function,
        inputs: &[ParquetInput],
        options: &ParquetOptions,
    ) -> Result<Self, ParquetError> {
        if options.batch_size == 0 {
            return Err(ParquetError::Usage("the batch size must be at least 1 row".into()));
        }
        let output_names = output_names(function, options)?;
        let names = function.input_names();
        for input in inputs {
            if !names.contains(&input.name) {
                return Err(ParquetError::Usage(format!(
                    "the function has no input \"{}\" (its inputs: {})",
                    input.name,
                    names.join(", ")
                )));
            }
            if inputs.iter().filter(|i| i.name == input.name).count() > 1 {
                return Err(ParquetError::Usage(format!("input \"{}\" is given more than once", input.name)));
            }
        }
        let mut readers = Vec::with_capacity(names.len());
        for (name, expected) in names.iter().zip(function.input_types()) {
            let input = inputs
                .iter()
                .find(|i| &i.name == name)
                .ok_or_else(|| ParquetError::Usage(format!("function input \"{name}\" is given no Parquet column")))?;
            readers.push(InputReader::open(input, expected, options.batch_size)?);
        }
        let total_rows = readers.first().map_or(0, |r| r.rows_in_file());
        if readers.iter().any(|r| r.rows_in_file() != total_rows) {
            let counts = readers.iter().map(|r| (r.label(), r.rows_in_file())).collect();
            return Err(ParquetError::RowCounts { first_row: 0, counts });
        }
        let to_arrow = options.to_arrow.clone().unwrap_or_else(|| {
            let narrow = !readers.is_empty() && readers.iter().all(|r| r.narrow_offsets);
            ToArrow::new().offsets(if narrow { OffsetWidth::I32 } else { OffsetWidth::I64 })
        });
        Ok(ParquetRun { function, readers, output_names, options: options.clone(), to_arrow, total_rows })
    }

    /// The number of rows the run will process (every input has that many).
    pub fn total_rows(&self) -> u64 {
        self.total_rows
    }

    /// The output column names.
    pub fn output_names(&self) -> &[String] {
        &self.output_names
    }

    /// Runs every batch and writes the outputs to a Parquet file at `output` (replaced if it
    /// exists, only once the run has succeeded), calling `progress` after each batch.
    pub fn write_to(self, output: &Path, progress: impl FnMut(Progress)) -> Result<ParquetSummary, ParquetError> {
        let file_name = output
            .file_name()
            .ok_or_else(|| ParquetError::Usage(format!("the output path {} does not name a file", output.display())))?;
        let partial = output.with_file_name(format!(".{}.partial", file_name.to_string_lossy()));
        let result = self.write_partial(&partial, progress);
        let summary = match result {
            Ok(summary) => summary,
            Err(e) => {
                // Best effort: the run's own error is the one worth reporting.
                let _ = std::fs::remove_file(&partial);
                return Err(e);
            }
        };
        std::fs::rename(&partial, output).map_err(|source| {
            let _ = std::fs::remove_file(&partial);
            ParquetError::Io { path: output.to_path_buf(), action: "move the finished output into place", source }
        })?;
        Ok(summary)
    }

    /// Reads and converts every batch of the inputs as [`ParquetRun::write_to`] does (same
    /// readers, same batches), but calls no function and writes nothing: the baseline a run's
    /// throughput is measured against (`ragtime run --read-only`). The summary names no outputs.
    pub fn read_only(mut self, mut progress: impl FnMut(Progress)) -> Result<ParquetSummary, ParquetError> {
        let started = Instant::now();
        let (mut rows, mut batches) = (0u64, 0u64);
        while let Some(inputs) = next_batch(&mut self.readers, batches, rows)? {
            rows += inputs.first().map_or(0, RaggedTensor::nrows) as u64;
            drop(inputs);
            batches += 1;
            progress(Progress { rows, total_rows: self.total_rows, batches });
        }
        Ok(ParquetSummary { rows, batches, outputs: Vec::new(), elapsed: started.elapsed() })
    }

    fn write_partial(
        mut self,
        path: &Path,
        mut progress: impl FnMut(Progress),
    ) -> Result<ParquetSummary, ParquetError> {
        let started = Instant::now();
        let parquet_error = |source| ParquetError::Parquet { path: path.to_path_buf(), source };
        let (compression, batch_size) = (self.options.compression, self.options.batch_size);
        // The file is created once the first batch has succeeded (or the inputs are found empty),
        // with the schema of the outputs.
        let open_writer = |schema: SchemaRef| {
            let file = File::create(path).map_err(|source| ParquetError::Io {
                path: path.to_path_buf(),
                action: "create",
                source,
            })?;
            OutputWriter::new(file, schema, compression, batch_size).map_err(parquet_error)
        };
        let (mut rows, mut batches) = (0u64, 0u64);
        // Three stages, each on a thread of its own, one batch apart: the next batch is read and
        // converted while this one is computed, and the previous one is encoded and written.
        // Reading, encoding and the disk's writes then overlap, so a run takes about as long as
        // its slowest stage instead of their sum. Rendezvous channels keep at most one batch
        // between stages, so memory stays bounded by a few batches, not the file.
        let mut readers = std::mem::take(&mut self.readers);
        let empty: Vec<RaggedTensor> = readers.iter().map(|r| r.empty.clone()).collect();
        let (ahead, batches_read) = std::sync::mpsc::sync_channel(0);
        let (to_writer, batches_computed) = std::sync::mpsc::sync_channel::<(RecordBatch, Vec<RaggedTensor>)>(0);
        let (this, function) = (&self, self.function);
        // Flush-behind: a fourth thread asks the disk for each finished row group while later
        // ones are computed (`File::sync_data` on a handle of the output), so the run's final
        // sync waits for the last row groups only, not the gigabytes the page cache would
        // otherwise hold back until then. A request made while one is running is dropped: the
        // next covers it.
        let (to_flusher, flush_requests) = std::sync::mpsc::sync_channel::<File>(1);
        let (computed, written, flushed) = std::thread::scope(|scope| {
            scope.spawn(|| read_ahead(&mut readers, &ahead));
            let flushing = scope.spawn(move || flush_requests.into_iter().try_for_each(|file| file.sync_data()));
            let writing = scope.spawn(move || -> Result<Option<OutputWriter>, ParquetError> {
                let mut writer: Option<OutputWriter> = None;
                for (batch, outputs) in batches_computed {
                    let w = match writer.as_mut() {
                        Some(w) => w,
                        None => writer.insert(open_writer(batch.schema())?),
                    };
                    w.write(&batch).map_err(parquet_error)?;
                    // A batch is a row group, which the writer has written out now. Without a
                    // second handle (out of descriptors), the final sync does all the work.
                    if let Ok(file) = w.file().try_clone() {
                        // Full: a request is already waiting, and covers this row group too.
                        let _ = to_flusher.try_send(file);
                    }
                    // The Arrow arrays shared the outputs' buffers; once they are gone, the
                    // buffers can serve a later batch's outputs.
                    drop(batch);
                    function.recycle(outputs);
                }
                Ok(writer)
            });
            let mut schema: Option<SchemaRef> = None;
            let computed = (|| {
                while let Some(inputs) = batches_read.recv().unwrap_or(Ok(None))? {
                    let computed = this.compute_batch(inputs, &mut schema, (&mut rows, &mut batches))?;
                    if to_writer.send(computed).is_err() {
                        // The writer stopped on an error of its own, which it returns.
                        break;
                    }
                    progress(Progress { rows, total_rows: this.total_rows, batches });
                }
                Ok(())
            })();
            // Stops the reader at its next batch if this side failed, and lets the writer finish.
            drop(batches_read);
            drop(to_writer);
            let written = writing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            let flushed = flushing.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (computed, written, flushed)
        });
        // A batch's own error comes first; the writer's only when every batch was computed. A
        // failed flush is reported too: a later sync need not report the same lost write again.
        computed?;
        let writer = written?;
        flushed.map_err(|source| ParquetError::Io { path: path.to_path_buf(), action: "sync", source })?;
        let writer = match writer {
            Some(w) => w,
            None => {
                // No rows: the output still gets the outputs' column types, from a call on the
                // zero-row inputs.
                let outputs = self.function.call(&empty).map_err(|source| ParquetError::Call {
                    batch: 0,
                    rows: 0..0,
                    source: Box::new(source),
                })?;
                let columns = self.columns(&outputs, 0, &(0..0))?;
                open_writer(schema_of(&self.output_names, &columns))?
            }
        };
        // Writes the footer and flushes.
        let file = writer.finish().map_err(parquet_error)?;
        file.sync_all().map_err(|source| ParquetError::Io { path: path.to_path_buf(), action: "sync", source })?;
        Ok(ParquetSummary { rows, batches, outputs: self.output_names, elapsed: started.elapsed() })
    }

    /// Computes one batch's outputs as a record batch of the output file's schema (the first
    /// batch's); advances `(rows, batches)`. Returns the outputs too, to be recycled once the
    /// batch is written.
    fn compute_batch(
        &self,
        inputs: Vec<RaggedTensor>,
        schema: &mut Option<SchemaRef>,
        (rows, batches): (&mut u64, &mut u64),
    ) -> Result<(RecordBatch, Vec<RaggedTensor>), ParquetError> {
        let n = inputs.first().map_or(0, RaggedTensor::nrows);
        let range = *rows..*rows + n as u64;
        let outputs = self.function.call(&inputs).map_err(|source| ParquetError::Call {
            batch: *batches,
            rows: range.clone(),
            source: Box::new(source),
        })?;
        drop(inputs);
        let columns = self.columns(&outputs, *batches, &range)?;
        let schema = schema.get_or_insert_with(|| schema_of(&self.output_names, &columns));
        self.check_types(schema, &columns, *batches, &range)?;
        let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| ParquetError::Output {
            output: self.output_names.join(", "),
            batch: *batches,
            rows: range.clone(),
            reason: e.to_string(),
        })?;
        *rows = range.end;
        *batches += 1;
        Ok((batch, outputs))
    }

    /// The outputs of one batch as Arrow arrays, each checked to have one row per input row.
    fn columns(&self, outputs: &[RaggedTensor], batch: u64, rows: &Range<u64>) -> Result<Vec<ArrayRef>, ParquetError> {
        let expected = rows.end - rows.start;
        let failure = |k: usize, reason: String| ParquetError::Output {
            output: self.output_names[k].clone(),
            batch,
            rows: rows.clone(),
            reason,
        };
        outputs
            .iter()
            .enumerate()
            .map(|(k, value)| {
                let shape = value.shape();
                if shape.is_empty() || value.nrows() as u64 != expected {
                    return Err(failure(
                        k,
                        format!(
                            "a column needs one value per input row ({expected}), but the output has shape {shape:?}; \
                             the function must keep the rows of its inputs"
                        ),
                    ));
                }
                self.to_arrow.convert(value).map_err(|e| failure(k, e.to_string()))
            })
            .collect()
    }

    /// Checks that every column of a batch has the Arrow type the output file declares.
    fn check_types(
        &self,
        schema: &Schema,
        columns: &[ArrayRef],
        batch: u64,
        rows: &Range<u64>,
    ) -> Result<(), ParquetError> {
        for (k, (field, column)) in schema.fields().iter().zip(columns).enumerate() {
            if field.data_type() != column.data_type() {
                return Err(ParquetError::Output {
                    output: self.output_names[k].clone(),
                    batch,
                    rows: rows.clone(),
                    reason: format!(
                        "its Arrow type is {}, but the first batch's was {} (a column has one type)",
                        column.data_type(),
                        field.data_type()
                    ),
                });
            }
        }
        Ok(())
    }
}

/// The next batch of every input, converted to tensors; `None` at the end of the inputs.
fn next_batch(
    readers: &mut [InputReader],
    batch: u64,
    first_row: u64,
) -> Result<Option<Vec<RaggedTensor>>, ParquetError> {
    let mut arrays = Vec::with_capacity(readers.len());
    for reader in readers.iter_mut() {
        arrays.push(reader.next_array(batch, first_row)?);
    }
    let lengths: Vec<u64> = arrays.iter().map(|a| a.as_ref().map_or(0, |a| a.len() as u64)).collect();
    if lengths.iter().any(|&n| n != lengths[0]) {
        let counts = readers.iter().map(InputReader::label).zip(lengths).collect();
        return Err(ParquetError::RowCounts { first_row, counts });
    }
    if lengths.first().is_none_or(|&n| n == 0) {
        return Ok(None);
    }
    let rows = first_row..first_row + lengths[0];
    let mut tensors = Vec::with_capacity(arrays.len());
    for (reader, array) in readers.iter().zip(arrays) {
        let Some(array) = array else { continue };
        let input = &reader.input;
        let tensor = input.nulls.convert(&input.column, array).map_err(|source| ParquetError::Column {
            path: input.path.clone(),
            column: input.column.clone(),
            batch,
            rows: rows.clone(),
            source: Box::new(source),
        })?;
        tensors.push(tensor);
    }
    Ok(Some(tensors))
}

/// Reads batch after batch into `ahead` until the inputs end, a read fails, or the receiver is
/// gone (the run stopped).
fn read_ahead(
    readers: &mut [InputReader],
    ahead: &std::sync::mpsc::SyncSender<Result<Option<Vec<RaggedTensor>>, ParquetError>>,
) {
    let (mut rows, mut batch) = (0u64, 0u64);
    loop {
        let next = next_batch(readers, batch, rows);
        let more = match &next {
            Ok(Some(inputs)) => {
                rows += inputs.first().map_or(0, RaggedTensor::nrows) as u64;
                true
            }
            _ => false,
        };
        if ahead.send(next).is_err() || !more {
            return;
        }
        batch += 1;
    }
}

/// The output column names: the options' (one per output, distinct) or `out0`, `out1`, ...
fn output_names(function: &Function, options: &ParquetOptions) -> Result<Vec<String>, ParquetError> {
    let count = function.num_outputs();
    let Some(names) = &options.output_names else {
        return Ok((0..count).map(|k| format!("out{k}")).collect());
    };
    if names.len() != count {
        return Err(ParquetError::Usage(format!(
            "{} output names given ({}) for a function with {count} outputs",
            names.len(),
            names.join(", ")
        )));
    }
    if let Some((k, dup)) = names.iter().enumerate().find(|(k, n)| names[..*k].contains(n)) {
        return Err(ParquetError::Usage(format!("output name \"{dup}\" is given twice (output {k})")));
    }
    Ok(names.clone())
}

/// Whether an Arrow type has 64-bit offsets (`LargeList`, `LargeUtf8`, `LargeBinary`) at any level.
fn has_wide_offsets(ty: &DataType) -> bool {
    match ty {
        DataType::LargeList(_) | DataType::LargeUtf8 | DataType::LargeBinary | DataType::LargeListView(_) => true,
        DataType::List(f) | DataType::FixedSizeList(f, _) | DataType::ListView(f) => has_wide_offsets(f.data_type()),
        DataType::Dictionary(_, values) => has_wide_offsets(values),
        _ => false,
    }
}

/// The output file's schema: one non-null column per output, of the array's type.
fn schema_of(names: &[String], columns: &[ArrayRef]) -> SchemaRef {
    let fields: Vec<Field> =
        names.iter().zip(columns).map(|(name, column)| Field::new(name, column.data_type().clone(), false)).collect();
    Arc::new(Schema::new(fields))
}

impl InputReader {
    /// Opens `input`'s file, finds its column, checks the column's type against `expected` and
    /// prepares a reader of that column alone, `batch_size` rows at a time.
    ///
    /// The footer is decoded by the upstream reader, which panics on some corrupt values (the
    /// Arrow schema stored in it above all): it runs isolated, and what it trusts later (row
    /// counts, column-chunk ranges) is checked here first.
    fn open(input: &ParquetInput, expected: &TensorType, batch_size: usize) -> Result<InputReader, ParquetError> {
        let path = &input.path;
        let file =
            File::open(path).map_err(|source| ParquetError::Io { path: path.clone(), action: "open", source })?;
        let file_len = file
            .metadata()
            .map_err(|source| ParquetError::Io { path: path.clone(), action: "read the size of", source })?
            .len();
        let corrupt = |row_groups: Option<Range<usize>>, column: Option<&str>, reason: String| ParquetError::Corrupt {
            path: path.clone(),
            row_groups,
            column: column.map(str::to_string),
            source: Box::new(Error::value("parquet", reason)),
        };
        let parquet_error = |source| ParquetError::Parquet { path: path.clone(), source };
        let metadata = isolate::isolated(|| ArrowReaderMetadata::load(&file, ArrowReaderOptions::new()))
            .map_err(|panic| corrupt(None, None, format!("the reader failed on its footer: {panic}")))?
            .map_err(parquet_error)?;
        let schema = metadata.schema().clone();
        let columns = || schema.fields().iter().map(|f| f.name().clone()).collect::<Vec<_>>();
        let matching: Vec<usize> =
            schema.fields().iter().enumerate().filter(|(_, f)| f.name() == &input.column).map(|(k, _)| k).collect();
        let index = match matching[..] {
            [index] => index,
            [] => {
                return Err(ParquetError::MissingColumn {
                    path: path.clone(),
                    column: input.column.clone(),
                    input: input.name.clone(),
                    columns: columns(),
                })
            }
            _ => {
                return Err(ParquetError::DuplicateColumn {
                    path: path.clone(),
                    column: input.column.clone(),
                    input: input.name.clone(),
                    count: matching.len(),
                    columns: columns(),
                })
            }
        };
        let group_rows = footer::row_group_rows(metadata.metadata())
            .map_err(|(k, what)| corrupt(Some(k..k + 1), None, format!("its footer gives {what}")))?;
        footer::check_chunk_ranges(metadata.metadata(), index, file_len)
            .map_err(|(k, what)| corrupt(Some(k..k + 1), Some(&input.column), format!("its footer puts the {what}")))?;
        // A dictionary-encoded column is read as plain values: the reader decodes it.
        let metadata = match footer::without_dictionaries(&schema.fields()[index]) {
            None => metadata,
            Some(plain) => {
                let mut fields: Vec<Field> = schema.fields().iter().map(|f| f.as_ref().clone()).collect();
                fields[index] = plain;
                let plain = Arc::new(Schema::new_with_metadata(fields, schema.metadata().clone()));
                let options = ArrowReaderOptions::new().with_schema(plain);
                isolate::isolated(|| ArrowReaderMetadata::try_new(metadata.metadata().clone(), options))
                    .map_err(|panic| corrupt(None, None, format!("the reader failed on its footer: {panic}")))?
                    .map_err(parquet_error)?
            }
        };
        let arrow_type = metadata.schema().field(index).data_type().clone();
        let type_error = |found: String| ParquetError::ColumnType {
            path: path.clone(),
            column: input.column.clone(),
            input: input.name.clone(),
            arrow_type: Box::new(arrow_type.clone()),
            found,
            expected: Box::new(expected.clone()),
        };
        let found = input
            .nulls
            .column_type(&input.column, &arrow_type)
            .map_err(|e| type_error(format!("cannot be read ({e})")))?;
        // What a zero-row batch converts to (`column_type` succeeded, so this does too).
        let empty = input
            .nulls
            .convert(&input.column, new_empty_array(&arrow_type))
            .map_err(|e| type_error(format!("cannot be read ({e})")))?;
        if !crate::input_takes(expected, &found) {
            return Err(type_error(format!("reads as {found}")));
        }
        let builder = ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata);
        let mask = ProjectionMask::roots(builder.parquet_schema(), [index]);
        let batches = isolate::isolated(|| builder.with_projection(mask).with_batch_size(batch_size).build())
            .map_err(|panic| corrupt(None, Some(&input.column), format!("the reader failed to start: {panic}")))?
            .map_err(parquet_error)?;
        let rows = group_rows.iter().sum();
        let narrow_offsets = !has_wide_offsets(&arrow_type);
        Ok(InputReader {
            input: input.clone(),
            batches,
            empty,
            rows,
            group_rows,
            batch_size: batch_size as u64,
            narrow_offsets,
        })
    }

    /// The rows of the file, from its metadata.
    fn rows_in_file(&self) -> u64 {
        self.rows
    }

    /// The next batch of the column, or `None` at the end of the file.
    ///
    /// The upstream reader decodes pages with checks of its own but panics on some corrupt page
    /// and column-chunk metadata: it runs isolated, and after a panic the reader is never used
    /// again (the error ends the run, which drops it).
    fn next_array(&mut self, batch: u64, first_row: u64) -> Result<Option<ArrayRef>, ParquetError> {
        let next = isolate::isolated(|| self.batches.next()).map_err(|panic| {
            self.corrupt_batch(first_row, format!("the reader failed on batch {batch} (from row {first_row}): {panic}"))
        })?;
        match next {
            None => Ok(None),
            Some(Ok(record_batch)) => {
                // Hand the conversion the only reference to the column, so it may adopt buffers.
                let (_, mut columns, _) = record_batch.into_parts();
                Ok(columns.pop())
            }
            Some(Err(e)) if is_unsupported(&e) => Err(self.read_error(e, batch, first_row)),
            Some(Err(e)) => {
                Err(self
                    .corrupt_batch(first_row, format!("the reader refused batch {batch} (from row {first_row}): {e}")))
            }
        }
    }

    /// The error for the batch from row `first_row` of a file whose pages do not decode: the same kind whether the
    /// reader noticed itself or panicked (which of the two happens can depend on the build: some
    /// of its checks are debug assertions or overflow checks).
    fn corrupt_batch(&self, first_row: u64, reason: String) -> ParquetError {
        let rows = first_row..first_row.saturating_add(self.batch_size);
        ParquetError::Corrupt {
            path: self.input.path.clone(),
            row_groups: Some(footer::row_groups_of(&self.group_rows, rows)),
            column: Some(self.input.column.clone()),
            source: Box::new(Error::value("parquet", reason)),
        }
    }

    fn read_error(&self, source: ArrowError, batch: u64, first_row: u64) -> ParquetError {
        ParquetError::Read {
            path: self.input.path.clone(),
            column: self.input.column.clone(),
            batch,
            first_row,
            source,
        }
    }
}

/// Whether a batch's reader error says the file uses something this build cannot decode (an
/// encoding the reader does not implement, a codec not compiled in) rather than that the file is
/// corrupt. The Arrow reader hands Parquet's errors on as text (`ArrowError::ParquetError`), so
/// the text is all there is to tell them apart by.
fn is_unsupported(e: &ArrowError) -> bool {
    match e {
        ArrowError::NotYetImplemented(_) => true,
        ArrowError::ParquetError(text) => {
            text.starts_with("NYI: ") || text.contains("Disabled feature at compile time")
        }
        _ => false,
    }
}
