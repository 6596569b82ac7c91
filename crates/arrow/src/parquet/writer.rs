//! The output file's writer: one row group per batch; columns of (nested) lists of floats without
//! nulls go straight through the parquet crate's column writer, with levels computed from the
//! row offsets, every other column through arrow-rs's `ArrowColumnWriter`.
//!
//! Why not `ArrowWriter` alone: for every column it builds levels value by value and gathers the
//! values by index into a new buffer, even when the column holds no null (`write_mini_batch`'s
//! `Vec::from_iter`), then buffers each column chunk in memory and copies it into the file. A
//! graph's outputs are ragged float tensors without nulls: their definition and repetition levels
//! follow from the offsets a row at a time, and their values are written from the Arrow buffer
//! as they are. The file is the one `ArrowWriter` writes: it is created by an `ArrowWriter` (same
//! Parquet schema, same `ARROW:schema` metadata, same properties) and each column is encoded by
//! the same column writer with the same levels, in the same slices of rows.

use std::fs::File;
use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Float64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use parquet::arrow::arrow_writer::{compute_leaves, ArrowColumnWriter, ArrowRowGroupWriterFactory};
use parquet::arrow::{ArrowSchemaConverter, ArrowWriter};
use parquet::basic::Type as PhysicalType;
use parquet::column::writer::ColumnWriterImpl;
use parquet::data_type::{DataType as ParquetType, DoubleType, FloatType};
use parquet::errors::{ParquetError, Result};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter, SerializedRowGroupWriter};

use super::{Compression, WRITE_SLICE_ROWS};

/// Writes the output file a row group (one batch) at a time.
pub(super) struct OutputWriter {
    file: SerializedFileWriter<File>,
    /// Column writers of the columns written the Arrow way.
    arrow_writers: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// Per field of `schema`: its levels if it is a list-of-floats column (written directly).
    direct: Vec<Option<ListLevels>>,
    /// Per field of `schema`: how many Parquet leaf columns it has.
    leaves: Vec<usize>,
    /// Scratch of the direct columns, reused slice after slice.
    levels: LevelBuffers,
}

impl std::fmt::Debug for OutputWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputWriter").field("schema", &self.schema).finish_non_exhaustive()
    }
}

impl OutputWriter {
    /// Starts a file of `schema` in `file`: row groups of up to `batch_size` rows, pages of
    /// `compression`.
    pub(super) fn new(file: File, schema: SchemaRef, compression: Compression, batch_size: usize) -> Result<Self> {
        let properties = writer_properties(&schema, compression, batch_size)?;
        let (file, arrow_writers) =
            ArrowWriter::try_new(file, schema.clone(), Some(properties))?.into_serialized_writer()?;
        let descriptor = file.schema_descr();
        let mut leaves = vec![0; schema.fields().len()];
        for leaf in 0..descriptor.num_columns() {
            leaves[descriptor.get_column_root_idx(leaf)] += 1;
        }
        let mut first_leaf = 0;
        let direct = schema
            .fields()
            .iter()
            .zip(&leaves)
            .map(|(field, &count)| {
                let plan = ListLevels::of(field).filter(|plan| {
                    // The Parquet column must be the one the levels are computed for.
                    let column = descriptor.column(first_leaf);
                    count == 1
                        && column.max_def_level() == plan.value
                        && column.max_rep_level() as usize == plan.empty.len()
                        && column.physical_type() == plan.physical_type
                });
                first_leaf += count;
                plan
            })
            .collect();
        Ok(OutputWriter { file, arrow_writers, schema, direct, leaves, levels: LevelBuffers::default() })
    }

    /// The file, for a second handle (the flush-behind thread's).
    pub(super) fn file(&self) -> &File {
        self.file.inner()
    }

    /// Writes `batch` (of the file's schema) as one row group; a batch of no rows writes none.
    pub(super) fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if batch.schema().fields() != self.schema.fields() {
            return Err(ParquetError::General("a batch's schema is not the file's".into()));
        }
        let direct: Vec<bool> = self
            .direct
            .iter()
            .zip(batch.columns())
            .map(|(plan, column)| plan.is_some() && !has_nulls(column))
            .collect();
        let mut arrow_writers = match direct.iter().all(|&d| d) {
            true => Vec::new().into_iter(),
            false => self.arrow_writers.create_column_writers(self.file.flushed_row_groups().len())?.into_iter(),
        };
        let rows = batch.num_rows();
        let mut row_group = self.file.next_row_group()?;
        for (k, (field, column)) in self.schema.fields().iter().zip(batch.columns()).enumerate() {
            let mut writers: Vec<ArrowColumnWriter> = arrow_writers.by_ref().take(self.leaves[k]).collect();
            match (&self.direct[k], direct[k]) {
                (Some(plan), true) => {
                    let mut writer = next_column(&mut row_group)?;
                    write_list_column(&mut writer, plan, column, &mut self.levels)?;
                    writer.close()?;
                }
                _ => {
                    for start in (0..rows).step_by(WRITE_SLICE_ROWS) {
                        let slice = column.slice(start, WRITE_SLICE_ROWS.min(rows - start));
                        for (leaf, writer) in compute_leaves(field, &slice)?.iter().zip(&mut writers) {
                            writer.write(leaf)?;
                        }
                    }
                    for writer in writers {
                        writer.close()?.append_to_row_group(&mut row_group)?;
                    }
                }
            }
        }
        row_group.close()?;
        Ok(())
    }

    /// Per field, whether its batches are written directly (when they hold no null).
    #[cfg(test)]
    pub(super) fn direct_fields(&self) -> Vec<bool> {
        self.direct.iter().map(Option::is_some).collect()
    }

    /// Writes the footer and returns the file (written, not synced).
    pub(super) fn finish(self) -> Result<File> {
        self.file.into_inner()
    }
}

/// How the output file is written: row groups of one batch, the codec asked for, and no
/// dictionary for float columns. The writer otherwise builds a dictionary for every page of every
/// column, hashing each value, until the dictionary outgrows its limit and it falls back to plain
/// encoding; float values (a softmax's, a mean's) almost never repeat, so for them that is only
/// cost (about a fifth of a run's encoding time on `tools/parquet_at_size.py`'s file).
pub(super) fn writer_properties(
    schema: &Schema,
    compression: Compression,
    batch_size: usize,
) -> Result<WriterProperties> {
    let mut properties =
        WriterProperties::builder().set_compression(compression).set_max_row_group_row_count(Some(batch_size));
    for column in ArrowSchemaConverter::new().convert(schema)?.columns() {
        if matches!(column.physical_type(), PhysicalType::FLOAT | PhysicalType::DOUBLE) {
            properties = properties.set_column_dictionary_enabled(column.path().clone(), false);
        }
    }
    Ok(properties.build())
}

fn next_column<'a>(row_group: &'a mut SerializedRowGroupWriter<'_, File>) -> Result<SerializedColumnWriter<'a>> {
    row_group
        .next_column()?
        .ok_or_else(|| ParquetError::General("the row group has fewer columns than the schema".into()))
}

/// The definition levels of a column of `List` / `LargeList` levels (none or more) over float
/// values, when no list and no value is null: which level a list that is empty at each depth
/// gets, and which a value gets (the column's maximum). A nullable list or item adds one level
/// (present), each list one more (not empty), as Parquet's three-level lists nest.
#[derive(Debug, Clone, PartialEq)]
struct ListLevels {
    /// Per list depth, from the column's top: the definition level of an empty list there.
    empty: Vec<i16>,
    /// The definition level of a value.
    value: i16,
    physical_type: PhysicalType,
}

impl ListLevels {
    /// The levels of a field of lists of `Float32` / `Float64` (or of such a leaf itself);
    /// `None` for any other type.
    fn of(field: &Field) -> Option<ListLevels> {
        let (mut empty, mut level, mut field) = (Vec::new(), 0i16, field);
        loop {
            level += i16::from(field.is_nullable());
            match field.data_type() {
                DataType::List(item) | DataType::LargeList(item) => {
                    empty.push(level);
                    level += 1;
                    field = item;
                }
                DataType::Float32 => {
                    return Some(ListLevels { empty, value: level, physical_type: PhysicalType::FLOAT })
                }
                DataType::Float64 => {
                    return Some(ListLevels { empty, value: level, physical_type: PhysicalType::DOUBLE })
                }
                _ => return None,
            }
        }
    }
}

/// Whether an array of lists (to any depth) or its values hold a null.
fn has_nulls(array: &ArrayRef) -> bool {
    let mut array = array.as_ref();
    loop {
        if array.null_count() > 0 {
            return true;
        }
        match array.data_type() {
            DataType::List(_) => array = array.as_list::<i32>().values().as_ref(),
            DataType::LargeList(_) => array = array.as_list::<i64>().values().as_ref(),
            _ => return false,
        }
    }
}

/// One list level's offsets, either width.
#[derive(Clone, Copy)]
enum Offsets<'a> {
    Narrow(&'a [i32]),
    Wide(&'a [i64]),
}

impl Offsets<'_> {
    /// The `i`-th offset; offsets were checked by Arrow (non-negative, within the child).
    fn at(&self, i: usize) -> usize {
        match self {
            Offsets::Narrow(o) => o[i] as usize,
            Offsets::Wide(o) => o[i] as usize,
        }
    }
}

/// The definition and repetition levels of a slice of rows.
#[derive(Default)]
struct LevelBuffers {
    definition: Vec<i16>,
    repetition: Vec<i16>,
}

impl LevelBuffers {
    /// The levels of the lists `lists` at `depth` (the rows at depth 0), the first one's first
    /// level repeated at `repetition`, each later one's at the list's own depth.
    fn push_lists(
        &mut self,
        offsets: &[Offsets<'_>],
        plan: &ListLevels,
        depth: usize,
        lists: Range<usize>,
        repetition: i16,
    ) {
        let (this, inner) = (offsets[depth], depth + 1 < offsets.len());
        for list in lists.clone() {
            let first_repetition = if list == lists.start { repetition } else { depth as i16 };
            let (start, end) = (this.at(list), this.at(list + 1));
            if start == end {
                self.definition.push(plan.empty[depth]);
                self.repetition.push(first_repetition);
            } else if inner {
                self.push_lists(offsets, plan, depth + 1, start..end, first_repetition);
            } else {
                let n = end - start;
                self.definition.resize(self.definition.len() + n, plan.value);
                self.repetition.push(first_repetition);
                self.repetition.resize(self.repetition.len() + n - 1, depth as i16 + 1);
            }
        }
    }
}

/// Writes a list-of-floats column without nulls (`plan`'s) in slices of `WRITE_SLICE_ROWS` rows:
/// each slice's levels from the offsets, its values straight from the Arrow buffer.
fn write_list_column(
    writer: &mut SerializedColumnWriter<'_>,
    plan: &ListLevels,
    column: &ArrayRef,
    levels: &mut LevelBuffers,
) -> Result<()> {
    let mut offsets = Vec::with_capacity(plan.empty.len());
    let mut leaf = column.as_ref();
    for _ in 0..plan.empty.len() {
        leaf = match leaf.data_type() {
            DataType::List(_) => {
                let list = leaf.as_list::<i32>();
                offsets.push(Offsets::Narrow(list.value_offsets()));
                list.values().as_ref()
            }
            _ => {
                let list = leaf.as_list::<i64>();
                offsets.push(Offsets::Wide(list.value_offsets()));
                list.values().as_ref()
            }
        };
    }
    match plan.physical_type {
        PhysicalType::FLOAT => write_slices(
            writer.typed::<FloatType>(),
            leaf.as_primitive::<Float32Type>().values(),
            &offsets,
            plan,
            column.len(),
            levels,
        ),
        _ => write_slices(
            writer.typed::<DoubleType>(),
            leaf.as_primitive::<Float64Type>().values(),
            &offsets,
            plan,
            column.len(),
            levels,
        ),
    }
}

fn write_slices<T: ParquetType>(
    writer: &mut ColumnWriterImpl<'_, T>,
    values: &[T::T],
    offsets: &[Offsets<'_>],
    plan: &ListLevels,
    rows: usize,
    levels: &mut LevelBuffers,
) -> Result<()> {
    // The first value of row `row`: its offset followed down the list levels.
    let first_value = |row: usize| offsets.iter().fold(row, |i, level| level.at(i));
    for start in (0..rows).step_by(WRITE_SLICE_ROWS) {
        let slice = start..rows.min(start + WRITE_SLICE_ROWS);
        let values = &values[first_value(slice.start)..first_value(slice.end)];
        levels.definition.clear();
        levels.repetition.clear();
        if offsets.is_empty() {
            // A column of values: a definition level only if the field is nullable.
            let definition = (plan.value > 0).then(|| {
                levels.definition.resize(values.len(), plan.value);
                &levels.definition[..]
            });
            writer.write_batch(values, definition, None)?;
            continue;
        }
        levels.push_lists(offsets, plan, 0, slice, 0);
        writer.write_batch(values, Some(&levels.definition), Some(&levels.repetition))?;
    }
    Ok(())
}
