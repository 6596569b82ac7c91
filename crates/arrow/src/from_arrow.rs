//! Arrow arrays → `RaggedTensor`: list levels become row partitions, fixed-size lists uniform
//! partitions or uniform dims, the leaf array the flat values; nulls follow the caller's policy.
//!
//! The conversion walks the levels top-down. At each level it holds the *selection*: the runs of
//! slots of the current array that end up in the tensor (every slot of the top array; below, the
//! children of the selected slots). A selection is one run unless null lists with children are
//! turned into empty rows, which drops their children.

use std::ops::Range;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    BinaryType, BinaryViewType, ByteArrayType, ByteViewType, LargeBinaryType, LargeUtf8Type, StringViewType, Utf8Type,
};
use arrow_array::{new_empty_array, Array, ArrayRef};
use arrow_buffer::NullBuffer;
use arrow_schema::DataType;
use ragtime_core::TensorType;
use ragtime_core::{
    dispatch_dtype, limits, DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, RowPartition,
};
use ragtime_core::{SharedSlice, StringBuilder, StringTensor};

use crate::element::ArrowElement;
use crate::offsets::{self, Offset, OffsetFault};
use crate::shared::adopt_bytes;
use crate::OP_FROM;

/// What to do with a null list (a null slot of a `List`, `LargeList` or `FixedSizeList` array,
/// the top-level array included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NullLists {
    /// Refuse the column: an `invalid_value` error names the column and the row (the default).
    #[default]
    Refuse,
    /// A null variable-size list is an empty row; any children its offsets span are dropped (which
    /// copies the levels below). A null fixed-size list cannot be empty and is still refused.
    AsEmpty,
}

/// What to do with a null value (a null slot of the leaf array).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum NullValues {
    /// Refuse the column: an `invalid_value` error names the column and the row (the default).
    #[default]
    Refuse,
    /// Replace every null value with this scalar, which must have the column's dtype.
    Replace(DenseTensor),
}

/// Options of the Arrow → ragtime conversion: how nulls are treated. The default refuses them.
///
/// ```
/// use std::sync::Arc;
/// use arrow_array::{ListArray, types::Int32Type};
/// use ragtime_arrow::{FromArrow, NullLists, NullValues};
/// use ragtime_core::DenseTensor;
///
/// let column = ListArray::from_iter_primitive::<Int32Type, _, _>([
///     Some(vec![Some(1), None]),
///     None,
///     Some(vec![Some(3)]),
/// ]);
/// let refused = ragtime_arrow::from_arrow("ids", Arc::new(column.clone())).unwrap_err();
/// assert!(refused.to_string().contains("column \"ids\": null list at row 1"), "{refused}");
///
/// let options = FromArrow::new().null_lists(NullLists::AsEmpty);
/// let refused = options.convert("ids", Arc::new(column.clone())).unwrap_err();
/// assert!(refused.to_string().contains("null value at row 0 (index [0, 1])"), "{refused}");
///
/// let options = options.null_values(NullValues::Replace(DenseTensor::scalar(-1i32)));
/// let t = options.convert("ids", Arc::new(column)).unwrap();
/// assert_eq!(t.to_string(), "<Ragged int32 [[1, -1], [], [3]]>");
/// ```
#[derive(Debug, Clone, Default)]
pub struct FromArrow {
    null_lists: NullLists,
    null_values: NullValues,
}

/// Converts an Arrow array (a column) into a ragged tensor, refusing nulls. See [`FromArrow`] for
/// the null policies and the crate documentation for the type mapping and what is copied.
///
/// `column` names the column in error messages. The tensor shares the array's buffers wherever
/// the layouts agree (see the crate documentation), whether or not the caller keeps the array.
pub fn from_arrow(column: &str, array: ArrayRef) -> Result<RaggedTensor> {
    FromArrow::new().convert(column, array)
}

/// How one level of a nested Arrow type is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LevelType {
    List,
    LargeList,
    Fixed(usize),
}

impl FromArrow {
    /// The default options: nulls are refused.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the policy for null lists.
    pub fn null_lists(mut self, policy: NullLists) -> Self {
        self.null_lists = policy;
        self
    }

    /// Sets the policy for null values.
    pub fn null_values(mut self, policy: NullValues) -> Self {
        self.null_values = policy;
        self
    }

    /// The type columns of Arrow type `data_type` read as with these options, their number of
    /// rows unknown: found by converting a zero-row array of that type, exactly as the data will
    /// be converted, so this check and the conversion cannot disagree. An Arrow type ragtime
    /// cannot read (or a replacement value of the wrong dtype) is the conversion's error.
    pub fn column_type(&self, column: &str, data_type: &DataType) -> Result<TensorType> {
        let empty = self.convert(column, new_empty_array(data_type))?;
        let found = TensorType::of(&empty);
        if found.rank() == 0 {
            return Ok(found);
        }
        found.with_dim(0, Dim::Unknown)
    }

    /// Converts `array` (the column named `column` in errors) into a ragged tensor.
    pub fn convert(&self, column: &str, array: ArrayRef) -> Result<RaggedTensor> {
        let (levels, dtype) = analyze(column, array.data_type())?;
        if let NullValues::Replace(fill) = &self.null_values {
            if fill.dtype() != dtype || fill.len() != 1 {
                return Err(Error::dtype(
                    OP_FROM,
                    format!(
                        "column \"{column}\": the replacement for null values must be one {dtype} value, got {} of shape {:?}",
                        fill.dtype(),
                        fill.shape()
                    ),
                ));
            }
        }
        // Fixed-size lists above the innermost variable-size list are uniform partitions; those
        // below it (or all of them, without one) are uniform dims of the values.
        let last_list = levels.iter().rposition(|l| !matches!(l, LevelType::Fixed(_)));
        let mut reader = Reader { column, options: self, partitions: Vec::new(), dims: Vec::new(), rows: array.len() };
        let mut runs: Vec<Range<usize>> = std::iter::once(0..array.len()).filter(|r| !r.is_empty()).collect();
        let mut current = array;
        for (depth, &level) in levels.iter().enumerate() {
            let (child, child_runs) = match level {
                LevelType::List => reader.list::<i32>(current, &runs)?,
                LevelType::LargeList => reader.list::<i64>(current, &runs)?,
                LevelType::Fixed(size) => {
                    reader.fixed(current, &runs, size, last_list.is_some_and(|last| depth < last))?
                }
            };
            current = child;
            runs = child_runs;
        }
        let mut shape = vec![reader.partitions.last().map_or(reader.rows, RowPartition::nvals)];
        shape.extend_from_slice(&reader.dims);
        let leaf = Leaf { reader: &reader, runs: &runs, shape };
        let flat = dispatch_dtype!(dtype, T => T::from_arrow(&leaf, current)?, string => leaf.strings(current)?);
        RaggedTensor::new(flat, reader.partitions)
            .map_err(|e| Error::value(OP_FROM, format!("column \"{column}\": {e}")))
    }
}

/// The levels of a (nested) Arrow type, outermost first, and the dtype of its leaf.
fn analyze(column: &str, data_type: &DataType) -> Result<(Vec<LevelType>, DType)> {
    let mut levels = Vec::new();
    let mut current = data_type;
    loop {
        let (level, child) = match current {
            DataType::List(field) => (LevelType::List, field.data_type()),
            DataType::LargeList(field) => (LevelType::LargeList, field.data_type()),
            DataType::FixedSizeList(field, size) => {
                let size = usize::try_from(*size).map_err(|_| {
                    Error::value(OP_FROM, format!("column \"{column}\": fixed-size list of negative size {size}"))
                })?;
                (LevelType::Fixed(size), field.data_type())
            }
            leaf => {
                let dtype = leaf_dtype(leaf).ok_or_else(|| {
                    Error::dtype(
                        OP_FROM,
                        format!(
                            "column \"{column}\": unsupported Arrow type {data_type} (values of type {leaf} have no ragtime dtype; \
                             supported: (Large)List / FixedSizeList of integers, floats, booleans, (Large)Utf8, (Large)Binary, Utf8View, BinaryView)"
                        ),
                    )
                })?;
                return Ok((levels, dtype));
            }
        };
        limits::checked_rank(OP_FROM, levels.len() + 2)
            // Not the whole type in the message: printing it recurses once per level.
            .map_err(|e| {
                Error::argument(
                    OP_FROM,
                    format!("column \"{column}\": list nesting of {} levels or more: {e}", levels.len() + 1),
                )
            })?;
        levels.push(level);
        current = child;
    }
}

/// The ragtime dtype of an Arrow leaf type, if it has one.
pub(crate) fn leaf_dtype(data_type: &DataType) -> Option<DType> {
    match data_type {
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::Utf8View
        | DataType::BinaryView => Some(DType::String),
        other => DType::ALL.into_iter().find(|&d| crate::arrow_leaf_type(d).as_ref() == Some(other)),
    }
}

/// The state of one conversion: the levels converted so far, for locating rows in messages.
struct Reader<'a> {
    column: &'a str,
    options: &'a FromArrow,
    /// Partitions built so far, outermost first.
    partitions: Vec<RowPartition>,
    /// Uniform dims below the partitions (inner dims, or a dense column's dims after the first).
    dims: Vec<usize>,
    /// Rows of the column (slots of the top-level array).
    rows: usize,
}

/// The position of slot `slot` within the selection `runs` (slots outside it are never asked for).
fn selected(runs: &[Range<usize>], slot: usize) -> usize {
    let mut before = 0;
    for run in runs {
        if run.contains(&slot) {
            return before + slot - run.start;
        }
        before += run.len();
    }
    before
}

/// The first slot of `runs` that `nulls` marks null.
fn first_null(nulls: Option<&NullBuffer>, runs: &[Range<usize>]) -> Option<usize> {
    let nulls = nulls.filter(|n| n.null_count() > 0)?;
    runs.iter().flat_map(|r| r.clone()).find(|&i| nulls.is_null(i))
}

impl Reader<'_> {
    /// The index (row, then position in each level) of selected item `item` of the level being
    /// read, counted in the tensor being built: what messages show.
    fn index(&self, mut item: usize) -> Vec<usize> {
        let mut index = Vec::with_capacity(self.partitions.len() + self.dims.len() + 1);
        for &d in self.dims.iter().rev() {
            let d = d.max(1);
            index.push(item % d);
            item /= d;
        }
        for partition in self.partitions.iter().rev() {
            let splits = partition.row_splits();
            let row = splits.partition_point(|&s| s as u64 <= item as u64).saturating_sub(1);
            index.push(item - splits.get(row).map_or(0, |&s| s as usize));
            item = row;
        }
        index.push(item);
        index.reverse();
        index
    }

    /// "row 3" or "row 3 (index [3, 1])" for selected item `item` of the level being read.
    fn at(&self, item: usize) -> String {
        let index = self.index(item);
        match index.as_slice() {
            [row] => format!("row {row}"),
            _ => format!("row {} (index {index:?})", index[0]),
        }
    }

    fn null_list(&self, item: usize, fixed: bool) -> Error {
        let hint = match (fixed, self.options.null_lists) {
            (true, _) => "a fixed-size list cannot be an empty row, so no policy accepts it",
            (false, NullLists::Refuse) => "choose NullLists::AsEmpty to read it as an empty row",
            (false, NullLists::AsEmpty) => "",
        };
        Error::value(OP_FROM, format!("column \"{}\": null list at {} ({hint})", self.column, self.at(item)))
    }

    fn malformed(&self, runs: &[Range<usize>], what: &str, fault: OffsetFault) -> Error {
        Error::partition(
            OP_FROM,
            format!(
                "column \"{}\": malformed {what} at {}: {}",
                self.column,
                self.at(selected(runs, fault.slot())),
                fault.describe()
            ),
        )
    }

    fn unexpected(&self, data_type: &DataType) -> Error {
        Error::dtype(
            OP_FROM,
            format!("column \"{}\": the array does not hold its declared type {data_type}", self.column),
        )
    }

    /// Reads a variable-size list level: its partition, its child array and the child selection.
    fn list<O: Offset>(&mut self, array: ArrayRef, runs: &[Range<usize>]) -> Result<(ArrayRef, Vec<Range<usize>>)> {
        let list = array.as_list_opt::<O>().ok_or_else(|| self.unexpected(array.data_type()))?.clone();
        // Hold no other reference to the child, so its buffers can be adopted.
        drop(array);
        let (_, offsets, values, nulls) = list.into_parts();
        offsets::check(&offsets, values.len()).map_err(|fault| self.malformed(runs, "list offsets", fault))?;
        if offsets.len() <= runs.last().map_or(0, |r| r.end) {
            return Err(self.malformed(runs, "list offsets", OffsetFault::Empty));
        }
        let null_slot = |i: usize| nulls.as_ref().is_some_and(|n| n.is_null(i));
        let mut drops_children = false;
        if let Some(slot) = first_null(nulls.as_ref(), runs) {
            if self.options.null_lists == NullLists::Refuse {
                return Err(self.null_list(selected(runs, slot), false));
            }
            drops_children = runs.iter().flat_map(|r| r.clone()).any(|i| null_slot(i) && offsets[i] != offsets[i + 1]);
        }
        let span = |i: usize| offsets[i].as_usize()..offsets[i + 1].as_usize();
        let (splits, child_runs) = match runs {
            [] => (SharedSlice::from_vec(vec![0]), Vec::new()),
            [run] if !drops_children => {
                let children = offsets[run.start].as_usize()..offsets[run.end].as_usize();
                (O::into_splits(offsets, run.clone())?, std::iter::once(children).filter(|r| !r.is_empty()).collect())
            }
            _ => {
                let count = runs.iter().map(|r| r.len()).sum::<usize>();
                let mut splits = ExecContext::detached().try_vec(OP_FROM, count + 1)?;
                splits.push(0i64);
                let mut child_runs: Vec<Range<usize>> = Vec::new();
                let mut total = 0i64;
                for i in runs.iter().flat_map(|r| r.clone()) {
                    let children = span(i);
                    if !null_slot(i) && !children.is_empty() {
                        total += children.len() as i64;
                        match child_runs.last_mut() {
                            Some(last) if last.end == children.start => last.end = children.end,
                            _ => child_runs.push(children),
                        }
                    }
                    splits.push(total);
                }
                (SharedSlice::from_vec(splits), child_runs)
            }
        };
        let partition = RowPartition::from_shared_row_splits(splits)
            .map_err(|e| Error::argument(OP_FROM, format!("column \"{}\": {e}", self.column)))?;
        self.partitions.push(partition);
        Ok((values, child_runs))
    }

    /// Reads a fixed-size list level: a uniform partition (`as_partition`) or a uniform dim.
    fn fixed(
        &mut self,
        array: ArrayRef,
        runs: &[Range<usize>],
        size: usize,
        as_partition: bool,
    ) -> Result<(ArrayRef, Vec<Range<usize>>)> {
        let list = array.as_fixed_size_list_opt().ok_or_else(|| self.unexpected(array.data_type()))?.clone();
        drop(array);
        let (_, _, values, nulls) = list.into_parts();
        if let Some(slot) = first_null(nulls.as_ref(), runs) {
            return Err(self.null_list(selected(runs, slot), true));
        }
        let end = runs.last().map_or(0, |r| r.end);
        if end.checked_mul(size).is_none_or(|n| n > values.len()) {
            return Err(Error::partition(
                OP_FROM,
                format!(
                    "column \"{}\": malformed fixed-size list: {end} lists of {size} need more than the {} values present",
                    self.column,
                    values.len()
                ),
            ));
        }
        let count = runs.iter().map(|r| r.len()).sum::<usize>();
        if as_partition {
            let partition = RowPartition::from_uniform_row_length(size, count)
                .map_err(|e| Error::argument(OP_FROM, format!("column \"{}\": {e}", self.column)))?;
            self.partitions.push(partition);
        } else {
            self.dims.push(size);
        }
        let child_runs = runs.iter().map(|r| r.start * size..r.end * size).filter(|r| !r.is_empty()).collect();
        Ok((values, child_runs))
    }
}

/// The leaf level of a conversion: which slots of the leaf array to read, and the shape of the
/// flat values they make.
pub(crate) struct Leaf<'a> {
    reader: &'a Reader<'a>,
    runs: &'a [Range<usize>],
    shape: Vec<usize>,
}

impl Leaf<'_> {
    /// The error for a leaf array whose Rust type does not match its declared Arrow type.
    pub(crate) fn unexpected(&self, data_type: &DataType) -> Error {
        self.reader.unexpected(data_type)
    }

    /// The replacement for null values if the selection has any and the policy replaces them;
    /// `None` when there is none; an error naming the first null when the policy refuses them.
    pub(crate) fn null_fill<T: Element>(&self, nulls: Option<&NullBuffer>) -> Result<Option<T>> {
        let Some(slot) = first_null(nulls, self.runs) else { return Ok(None) };
        match &self.reader.options.null_values {
            NullValues::Refuse => Err(self.null_value(slot)),
            NullValues::Replace(fill) => Ok(fill.as_slice::<T>().and_then(|s| s.first()).copied()),
        }
    }

    fn null_value(&self, slot: usize) -> Error {
        Error::value(
            OP_FROM,
            format!(
                "column \"{}\": null value at {} (choose NullValues::Replace to read nulls as a given value)",
                self.reader.column,
                self.reader.at(selected(self.runs, slot))
            ),
        )
    }

    /// The selection when it is one run (an empty selection is the empty run).
    pub(crate) fn single_run(&self) -> Option<Range<usize>> {
        match self.runs {
            [] => Some(0..0),
            [run] => Some(run.clone()),
            _ => None,
        }
    }

    /// Flat values viewing `run` of an adopted buffer: no copy (the rest of the buffer stays
    /// allocated with the tensor).
    pub(crate) fn view<T: Element>(&self, data: SharedSlice<T>, run: Range<usize>) -> Result<DenseTensor> {
        let column = self.reader.column;
        let data = data.slice(run.clone()).ok_or_else(|| {
            Error::partition(
                OP_FROM,
                format!("column \"{column}\": values {run:?} reach past the {} values", data.len()),
            )
        })?;
        DenseTensor::from_shared(&self.shape, data)
            .map_err(|e| Error::shapes(OP_FROM, format!("column \"{column}\": {e}")))
    }

    /// Flat values copied from the selected slots (`get(i)` reads slot `i`), nulls replaced by
    /// `fill` when given.
    pub(crate) fn gather<T: Element>(
        &self,
        get: impl Fn(usize) -> T,
        nulls: Option<&NullBuffer>,
        fill: Option<T>,
    ) -> Result<DenseTensor> {
        let count = self.runs.iter().map(|r| r.len()).sum::<usize>();
        let mut data = ExecContext::detached().try_vec(OP_FROM, count)?;
        let slots = self.runs.iter().flat_map(|r| r.clone());
        match (fill, nulls) {
            (Some(fill), Some(nulls)) => data.extend(slots.map(|i| if nulls.is_null(i) { fill } else { get(i) })),
            _ => data.extend(slots.map(get)),
        }
        DenseTensor::from_vec(self.shape.clone(), data)
    }

    /// The replacement string for null values (see [`Leaf::null_fill`]).
    fn null_fill_string(&self, nulls: Option<&NullBuffer>) -> Result<Option<&[u8]>> {
        let Some(slot) = first_null(nulls, self.runs) else { return Ok(None) };
        match &self.reader.options.null_values {
            NullValues::Refuse => Err(self.null_value(slot)),
            NullValues::Replace(fill) => Ok(fill.as_strings().map(|s| s.get(0))),
        }
    }

    /// Flat string values from any of Arrow's string and binary arrays: the bytes (and i64
    /// offsets) shared when one run is read without null replacement, copied otherwise.
    pub(crate) fn strings(&self, array: ArrayRef) -> Result<DenseTensor> {
        match array.data_type() {
            DataType::Utf8 => self.byte_array::<Utf8Type>(&array),
            DataType::LargeUtf8 => self.byte_array::<LargeUtf8Type>(&array),
            DataType::Binary => self.byte_array::<BinaryType>(&array),
            DataType::LargeBinary => self.byte_array::<LargeBinaryType>(&array),
            DataType::Utf8View => self.byte_views::<StringViewType>(&array),
            DataType::BinaryView => self.byte_views::<BinaryViewType>(&array),
            other => Err(self.unexpected(other)),
        }
    }

    fn byte_array<T: ByteArrayType>(&self, array: &ArrayRef) -> Result<DenseTensor>
    where
        T::Offset: Offset,
    {
        let typed = array.as_bytes_opt::<T>().ok_or_else(|| self.unexpected(array.data_type()))?;
        let (offsets, bytes) = (typed.value_offsets(), typed.values().as_slice());
        offsets::check(offsets, bytes.len())
            .map_err(|fault| self.reader.malformed(self.runs, "string offsets", fault))?;
        if offsets.len() <= self.runs.last().map_or(0, |r| r.end) {
            return Err(self.reader.malformed(self.runs, "string offsets", OffsetFault::Empty));
        }
        let fill = self.null_fill_string(typed.nulls())?;
        let span = |i: usize| offsets[i].widen() as usize..offsets[i + 1].widen() as usize;
        if let (Some(run), None) = (self.single_run(), fill) {
            // No copy of the bytes: the column views the Arrow buffer up to its last string, with
            // the offsets as they are (shared when i64, widened when i32).
            let end = offsets[run.end].widen();
            let start = offsets[run.start].widen();
            ExecContext::detached().checked_bytes(OP_FROM, (end - start) as usize, "the strings of the column")?;
            let text = adopt_bytes(typed.values()).slice(0..end as usize).ok_or_else(|| {
                let column = self.reader.column;
                Error::partition(
                    OP_FROM,
                    format!("column \"{column}\": string offsets reach past the {} bytes", bytes.len()),
                )
            })?;
            let starts = T::Offset::string_offsets(typed.offsets(), run)?;
            return StringTensor::from_parts(text, starts, self.shape.clone()).map(DenseTensor::String);
        }
        let nulls = typed.nulls();
        self.build_strings(|i| match (fill, nulls) {
            (Some(fill), Some(nulls)) if nulls.is_null(i) => fill,
            _ => &bytes[span(i)],
        })
    }

    fn byte_views<T: ByteViewType>(&self, array: &ArrayRef) -> Result<DenseTensor> {
        let typed = array.as_byte_view_opt::<T>().ok_or_else(|| self.unexpected(array.data_type()))?;
        let (views, buffers) = (typed.views(), typed.data_buffers());
        let fill = self.null_fill_string(typed.nulls())?;
        let nulls = typed.nulls();
        let mut builder = StringBuilder::with_capacity(self.runs.iter().map(|r| r.len()).sum(), 0);
        for i in self.runs.iter().flat_map(|r| r.clone()) {
            if let (Some(fill), Some(nulls)) = (fill, nulls) {
                if nulls.is_null(i) {
                    builder.push(fill);
                    continue;
                }
            }
            // Arrow's view layout: the length in the low 4 bytes, then up to 12 bytes inline, or a
            // 4-byte prefix, the data buffer's index and the offset in it (checked before use).
            let view = views[i];
            let len = view as u32 as usize;
            if len <= 12 {
                builder.push(&view.to_le_bytes()[4..4 + len]);
                continue;
            }
            let (buffer, offset) = ((view >> 64) as u32 as usize, (view >> 96) as u32 as usize);
            match buffers.get(buffer).and_then(|b| b.get(offset..offset.checked_add(len)?)) {
                Some(bytes) => builder.push(bytes),
                None => {
                    return Err(Error::partition(
                        OP_FROM,
                        format!(
                            "column \"{}\": malformed string view at {}: {len} bytes at offset {offset} of data buffer {buffer}, outside the {} buffers",
                            self.reader.column,
                            self.reader.at(selected(self.runs, i)),
                            buffers.len()
                        ),
                    ))
                }
            }
        }
        builder.finish(self.shape.clone()).map(DenseTensor::String)
    }

    /// A string column of the selected slots, `get(i)` giving slot `i`'s bytes.
    fn build_strings<'s>(&self, get: impl Fn(usize) -> &'s [u8]) -> Result<DenseTensor> {
        let count = self.runs.iter().map(|r| r.len()).sum::<usize>();
        let mut builder = StringBuilder::with_capacity(count, 0);
        for i in self.runs.iter().flat_map(|r| r.clone()) {
            builder.push(get(i));
        }
        builder.finish(self.shape.clone()).map(DenseTensor::String)
    }
}
