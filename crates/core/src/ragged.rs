//! `RaggedTensor`: flat values plus nested row partitions; constructors from every encoding and the accessors.

use std::ops::Range;

use crate::{dispatch_dtype, DType, DenseTensor, Element, Error, Result, RowPartition, StringTensor};

/// A tensor with zero or more ragged dimensions, as in TensorFlow's `tf.RaggedTensor`.
///
/// `flat_values` holds every value, row-major, with shape `[nvals, inner...]`; `partitions` has one
/// [`RowPartition`] per ragged dimension, outermost first. With no partition the tensor is dense.
///
/// Invariants (checked by [`RaggedTensor::new`]): each partition's last split equals the next
/// partition's row count, and the innermost partition's last split equals the number of rows of
/// the flat values (which then have rank >= 1). Clones share all buffers.
///
/// `Display` prints the values (`<Ragged int32 [[1, 2], []]>`, summarized when large; `{:#}` prints
/// everything); `Debug` adds the dtype, shape and row splits.
#[derive(Clone)]
pub struct RaggedTensor {
    flat_values: DenseTensor,
    partitions: Vec<RowPartition>,
}

impl From<DenseTensor> for RaggedTensor {
    fn from(values: DenseTensor) -> Self {
        RaggedTensor { flat_values: values, partitions: Vec::new() }
    }
}

impl RaggedTensor {
    /// Assembles a ragged tensor, checking that the partitions chain up with the flat values.
    pub fn new(flat_values: DenseTensor, partitions: Vec<RowPartition>) -> Result<Self> {
        Self::new_for("RaggedTensor::new", flat_values, partitions)
    }

    fn new_for(op: &str, flat_values: DenseTensor, partitions: Vec<RowPartition>) -> Result<Self> {
        crate::limits::checked_rank(op, partitions.len().saturating_add(flat_values.rank()))?;
        if !partitions.is_empty() && flat_values.rank() == 0 {
            return Err(Error::partition(op, "the values of a ragged tensor must have rank >= 1, got a scalar"));
        }
        for (i, pair) in partitions.windows(2).enumerate() {
            if pair[0].nvals() != pair[1].nrows() {
                return Err(Error::partition(
                    op,
                    format!(
                        "partition {i} ends at {} but partition {} has {} rows",
                        pair[0].nvals(),
                        i + 1,
                        pair[1].nrows()
                    ),
                ));
            }
        }
        if let Some(last) = partitions.last() {
            let nvals = flat_values.shape()[0];
            if last.nvals() != nvals {
                return Err(Error::partition(
                    op,
                    format!("the last row split is {} but there are {nvals} values", last.nvals()),
                ));
            }
        }
        Ok(RaggedTensor { flat_values, partitions })
    }

    /// A dense tensor (ragged rank 0).
    pub fn dense(values: DenseTensor) -> Self {
        values.into()
    }

    fn with_outer(op: &str, values: RaggedTensor, outer: RowPartition) -> Result<Self> {
        if values.rank() == 0 {
            return Err(Error::partition(op, "values must have rank >= 1, got a scalar"));
        }
        let mut partitions = Vec::with_capacity(values.partitions.len() + 1);
        partitions.push(outer);
        partitions.extend(values.partitions);
        Self::new_for(op, values.flat_values, partitions)
    }

    /// Adds an outer ragged dimension given by row splits (`tf.RaggedTensor.from_row_splits`).
    ///
    /// `splits` may be a `Vec<i64>`, a slice or an array; `values` anything that converts into a
    /// tensor (`Vec<f32>`, a `DenseTensor`, another ragged tensor).
    ///
    /// ```
    /// use ragtime_core::RaggedTensor;
    /// let t = RaggedTensor::from_row_splits(vec![1.0f32, 2.0, 3.0], [0, 2, 2, 3]).unwrap();
    /// assert_eq!(t.to_string(), "<Ragged float32 [[1.0, 2.0], [], [3.0]]>");
    /// ```
    pub fn from_row_splits(values: impl Into<RaggedTensor>, splits: impl Into<Vec<i64>>) -> Result<Self> {
        let p = RowPartition::from_row_splits(splits.into())?;
        Self::with_outer("from_row_splits", values.into(), p)
    }

    /// Adds an outer ragged dimension given by row lengths.
    pub fn from_row_lengths(values: impl Into<RaggedTensor>, lengths: &[i64]) -> Result<Self> {
        let p = RowPartition::from_row_lengths(lengths)?;
        Self::with_outer("from_row_lengths", values.into(), p)
    }

    /// Adds an outer ragged dimension given by each value's row id; `nrows` adds trailing empty rows.
    pub fn from_value_rowids(values: impl Into<RaggedTensor>, rowids: &[i64], nrows: Option<usize>) -> Result<Self> {
        let values = values.into();
        if values.rank() > 0 && rowids.len() != values.nrows() {
            return Err(Error::partition(
                "from_value_rowids",
                format!("{} row ids for {} values", rowids.len(), values.nrows()),
            ));
        }
        let p = RowPartition::from_value_rowids(rowids, nrows)?;
        Self::with_outer("from_value_rowids", values, p)
    }

    /// Adds an outer dimension of rows of `row_length` values each.
    pub fn from_uniform_row_length(values: impl Into<RaggedTensor>, row_length: usize) -> Result<Self> {
        const OP: &str = "from_uniform_row_length";
        let values = values.into();
        if values.rank() == 0 {
            return Err(Error::partition(OP, "values must have rank >= 1, got a scalar"));
        }
        let n = values.nrows();
        let nrows = if row_length == 0 {
            0
        } else if n % row_length != 0 {
            return Err(Error::partition(OP, format!("{n} values do not split into rows of {row_length}")));
        } else {
            n / row_length
        };
        let p = RowPartition::from_uniform_row_length(row_length, nrows)?;
        Self::with_outer(OP, values, p)
    }

    /// Builds all ragged dimensions at once from nested row splits, outermost first.
    pub fn from_nested_row_splits(flat_values: impl Into<DenseTensor>, nested_splits: &[Vec<i64>]) -> Result<Self> {
        let flat_values = flat_values.into();
        let partitions =
            nested_splits.iter().map(|s| RowPartition::from_row_splits(s.clone())).collect::<Result<Vec<_>>>()?;
        Self::new_for("from_nested_row_splits", flat_values, partitions)
    }

    /// PaddlePaddle LoD view: `lod` holds offsets per level, outermost first (= nested row splits).
    pub fn from_lod(flat_values: impl Into<DenseTensor>, lod: &[Vec<i64>]) -> Result<Self> {
        Self::from_nested_row_splits(flat_values, lod).map_err(|e| retag(e, "from_lod"))
    }

    /// PaddlePaddle's length-based LoD ("recursive sequence lengths"): lengths per level, outermost first.
    pub fn from_recursive_sequence_lengths(flat_values: impl Into<DenseTensor>, lengths: &[Vec<i64>]) -> Result<Self> {
        let partitions = lengths
            .iter()
            .map(|l| RowPartition::from_row_lengths(l))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| retag(e, "from_recursive_sequence_lengths"))?;
        Self::new_for("from_recursive_sequence_lengths", flat_values.into(), partitions)
    }

    /// torch jagged view: `values` of shape `[sum(len), ...]` plus `offsets` of shape `[B + 1]`.
    pub fn from_jagged(values: impl Into<DenseTensor>, offsets: impl Into<Vec<i64>>) -> Result<Self> {
        let p = RowPartition::from_row_splits(offsets.into()).map_err(|e| retag(e, "from_jagged"))?;
        Self::new_for("from_jagged", values.into(), vec![p])
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.flat_values.dtype()
    }

    /// Number of ragged dimensions.
    pub fn ragged_rank(&self) -> usize {
        self.partitions.len()
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.flat_values.rank() + self.partitions.len()
    }

    /// True when there is no ragged dimension.
    pub fn is_dense(&self) -> bool {
        self.partitions.is_empty()
    }

    /// The row partitions, outermost first.
    pub fn partitions(&self) -> &[RowPartition] {
        &self.partitions
    }

    /// Where element `index` of dimension `dim` (`dim <= ragged_rank`; the elements of dimension
    /// `d >= 1` are the values of partition `d - 1`) stands: its index at every dimension `0..=dim`,
    /// for messages about a row of a nested tensor (`row [2, 5]`: user 2, session 5, rather than
    /// the flattened row 18). `None` when `index` is out of range.
    pub fn index_path(&self, dim: usize, index: usize) -> Option<Vec<usize>> {
        if dim > 0 && index >= self.partitions.get(dim - 1)?.nvals() || dim == 0 && index >= self.nrows() {
            return None;
        }
        row_path(&self.partitions[..dim], index)
    }

    /// `row 7` for a row of dimension 0, `row [2, 5]` for a row nested in others: how messages
    /// name element `index` of dimension `dim` (see [`RaggedTensor::index_path`]).
    pub fn describe_row(&self, dim: usize, index: usize) -> String {
        match self.index_path(dim, index) {
            Some(path) => show_row(&path),
            None => format!("row {index}"),
        }
    }

    /// All values, without any partition: shape `[nvals, inner...]` (the tensor itself if dense).
    pub fn flat_values(&self) -> &DenseTensor {
        &self.flat_values
    }

    /// The flat values by value (the partitions are dropped).
    pub fn into_flat_values(self) -> DenseTensor {
        self.flat_values
    }

    /// The values one level down (`tf.RaggedTensor.values`): drops the outermost partition.
    /// For a tensor of ragged rank 1 this is torch's jagged `values()`.
    pub fn values(&self) -> Result<RaggedTensor> {
        if self.partitions.is_empty() {
            return Err(Error::argument("values", "a dense tensor has no ragged values"));
        }
        Ok(RaggedTensor { flat_values: self.flat_values.clone(), partitions: self.partitions[1..].to_vec() })
    }

    /// The dense tensor, if there is no ragged dimension.
    pub fn as_dense(&self) -> Option<&DenseTensor> {
        self.partitions.is_empty().then_some(&self.flat_values)
    }

    /// Number of rows (the outer dimension). A scalar has none: 0.
    pub fn nrows(&self) -> usize {
        match self.partitions.first() {
            Some(p) => p.nrows(),
            None => self.flat_values.shape().first().copied().unwrap_or(0),
        }
    }

    /// The outermost row splits (`[0, nrows]`-style trivial splits are not invented for dense tensors).
    pub fn row_splits(&self) -> Result<&[i64]> {
        self.partitions
            .first()
            .map(|p| p.row_splits())
            .ok_or_else(|| Error::argument("row_splits", "a dense tensor has no row splits"))
    }

    /// torch jagged `offsets()`: the outermost row splits.
    pub fn offsets(&self) -> Result<&[i64]> {
        self.row_splits()
    }

    /// The row id of every value of the outermost partition.
    pub fn value_rowids(&self) -> Result<&[i64]> {
        self.partitions
            .first()
            .map(|p| p.value_rowids())
            .ok_or_else(|| Error::argument("value_rowids", "a dense tensor has no value row ids"))
    }

    /// Nested row splits, outermost first (= PaddlePaddle's LoD offsets).
    pub fn nested_row_splits(&self) -> Vec<Vec<i64>> {
        self.partitions.iter().map(|p| p.row_splits().to_vec()).collect()
    }

    /// PaddlePaddle's offset-based LoD (= nested row splits).
    pub fn lod(&self) -> Vec<Vec<i64>> {
        self.nested_row_splits()
    }

    /// PaddlePaddle's recursive sequence lengths (= nested row lengths).
    pub fn recursive_sequence_lengths(&self) -> Vec<Vec<i64>> {
        self.partitions.iter().map(|p| p.row_lengths().to_vec()).collect()
    }

    /// The lengths of the rows along `axis` (`tf.RaggedTensor.row_lengths(axis)`): for axis 1 a
    /// vector `[nrows]`; for a deeper ragged axis a ragged tensor of the outer dims; for a uniform
    /// axis its size repeated.
    pub fn row_lengths(&self, axis: i64) -> Result<RaggedTensor> {
        const OP: &str = "row_lengths";
        let rank = self.rank() as i64;
        let a = if axis < 0 { axis + rank } else { axis };
        if a < 1 || a >= rank {
            return Err(Error::argument(OP, format!("axis {axis} out of range for a tensor of rank {rank}")));
        }
        let a = a as usize;
        if a <= self.ragged_rank() {
            let lengths = DenseTensor::vector(self.partitions[a - 1].row_lengths().to_vec());
            return Ok(RaggedTensor { flat_values: lengths, partitions: self.partitions[..a - 1].to_vec() });
        }
        // A uniform inner axis: every row along it has the same length.
        let j = a - self.ragged_rank();
        let fshape = self.flat_values.shape();
        let size = fshape[j] as i64;
        let n: usize = fshape[..j].iter().product();
        let values = DenseTensor::from_vec(fshape[..j].to_vec(), vec![size; n])?;
        Ok(RaggedTensor { flat_values: values, partitions: self.partitions.clone() })
    }

    /// The shape, with `None` for ragged dimensions.
    pub fn shape(&self) -> Vec<Option<usize>> {
        let mut shape = Vec::with_capacity(self.rank());
        if self.partitions.is_empty() {
            return self.flat_values.shape().iter().map(|&d| Some(d)).collect();
        }
        shape.push(Some(self.nrows()));
        shape.extend(self.partitions.iter().map(|p| p.uniform_row_length()));
        shape.extend(self.flat_values.shape()[1..].iter().map(|&d| Some(d)));
        shape
    }

    /// The bytes this value's buffers hold: flat values (a string column's bytes plus 8 per offset)
    /// and every partition's row splits. What a call returning it allocated for it, unless it shares
    /// an input's buffers (views count their viewed range).
    pub fn buffer_bytes(&self) -> usize {
        let values = match self.flat_values.as_strings() {
            Some(s) => s.byte_len().saturating_add(8 * (s.len() + 1)),
            None => self.flat_values.len().saturating_mul(self.dtype().size_of()),
        };
        self.partitions.iter().fold(values, |sum, p| sum.saturating_add(8 * (p.nrows() + 1)))
    }

    /// The smallest dense shape that holds every row: `[nrows, longest row per ragged dim, inner...]`.
    pub fn bounding_shape(&self) -> Vec<usize> {
        if self.partitions.is_empty() {
            return self.flat_values.shape().to_vec();
        }
        let mut shape = vec![self.nrows()];
        shape.extend(self.partitions.iter().map(|p| p.max_row_length()));
        shape.extend_from_slice(&self.flat_values.shape()[1..]);
        shape
    }

    /// The same partitions around new flat values (same number of rows): how elementwise ops
    /// keep their input's structure (and its partition `Arc`s) for free.
    pub fn with_flat_values(&self, flat_values: DenseTensor) -> Result<Self> {
        Self::new_for("with_flat_values", flat_values, self.partitions.clone())
    }

    /// The same tensor with partition `k` (0 = the outermost) marked uniform: every row of it
    /// must have `row_length` values (else `invalid_row_partition`). This is how a value gets a
    /// [`crate::Dim::UniformRows`] type, as if built by [`RaggedTensor::from_uniform_row_length`];
    /// the values are shared, not copied.
    pub fn with_uniform_rows(&self, k: usize, row_length: usize) -> Result<Self> {
        const OP: &str = "with_uniform_rows";
        let p = self.partitions.get(k).ok_or_else(|| {
            Error::partition(OP, format!("partition {k} does not exist (ragged rank {})", self.ragged_rank()))
        })?;
        if p.uniform_row_length() == Some(row_length) {
            return Ok(self.clone());
        }
        if let Some(row) = p.row_splits().windows(2).position(|w| (w[1] - w[0]) as usize != row_length) {
            let len = p.row_splits()[row + 1] - p.row_splits()[row];
            return Err(Error::partition(
                OP,
                format!("row {row} of partition {k} has {len} values, not the uniform row length {row_length}"),
            ));
        }
        let mut partitions = self.partitions.clone();
        partitions[k] = RowPartition::from_uniform_row_length(row_length, p.nrows())?;
        Self::new_for(OP, self.flat_values.clone(), partitions)
    }

    /// True when both tensors have the same ragged structure (partition by partition; O(1) per
    /// partition when they share it).
    pub fn same_structure(&self, other: &RaggedTensor) -> bool {
        self.partitions.len() == other.partitions.len()
            && self.partitions.iter().zip(&other.partitions).all(|(a, b)| a.same(b))
    }

    /// The numeric flat values as a slice, if the tensor holds `T`.
    pub fn flat_slice<T: Element>(&self) -> Option<&[T]> {
        self.flat_values.as_slice::<T>()
    }

    /// The string column, if the tensor holds strings.
    pub fn flat_strings(&self) -> Option<&StringTensor> {
        self.flat_values.as_strings()
    }

    /// Converts to another dtype with TensorFlow's `cast` rules, keeping the structure.
    pub fn cast(&self, to: DType) -> Result<Self> {
        self.with_flat_values(self.flat_values.cast(to)?)
    }

    /// Structural and value equality, with floats compared exactly (NaN equal to NaN).
    pub fn equals(&self, other: &RaggedTensor) -> bool {
        self.dtype() == other.dtype()
            && self.same_structure(other)
            && self.flat_values.shape() == other.flat_values.shape()
            && dispatch_dtype!(self.dtype(),
            T => {
                let (a, b) = (self.flat_slice::<T>().unwrap_or(&[]), other.flat_slice::<T>().unwrap_or(&[]));
                #[allow(clippy::eq_op)]
                a.iter().zip(b).all(|(x, y)| x == y || (x != x && y != y))
            },
            string => match (self.flat_strings(), other.flat_strings()) {
                (Some(a), Some(b)) => a.iter().eq(b.iter()),
                _ => false,
            })
    }
}

/// One dimension of a tensor seen as the way it splits every row of the dimension above into
/// children: ragged (a row partition) or uniform (every row has `n` children, numbered row-major).
///
/// [`RaggedTensor::levels`] lists them outermost first, which lets one walk go down ragged and
/// uniform dimensions alike (densifying, sparse indices, moving rows).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Level<'a> {
    /// A ragged dimension: row `i` has the children `partition.row_range(i)`.
    Ragged(&'a RowPartition),
    /// A uniform dimension of this many children per row.
    Uniform(usize),
}

impl Level<'_> {
    /// The children of row `row` of the level above.
    ///
    /// # Panics
    /// When `row` is not a row of the level above (as [`RowPartition::row_range`]).
    pub fn children(self, row: usize) -> Range<usize> {
        match self {
            Level::Ragged(p) => p.row_range(row),
            Level::Uniform(n) => row * n..(row + 1) * n,
        }
    }
}

impl RaggedTensor {
    /// The levels of this tensor, outermost first: the outer dimension (uniform, one parent row),
    /// its ragged dimensions, then the uniform inner dimensions of its flat values. Empty for a
    /// scalar. `levels()[d]` is dimension `d`.
    pub fn levels(&self) -> Vec<Level<'_>> {
        let shape = self.flat_values.shape();
        if shape.is_empty() {
            return Vec::new();
        }
        let mut levels = Vec::with_capacity(self.rank());
        levels.push(Level::Uniform(self.nrows()));
        levels.extend(self.partitions.iter().map(Level::Ragged));
        levels.extend(shape[1..].iter().map(|&d| Level::Uniform(d)));
        levels
    }

    /// This tensor under more outer ragged dimensions, `outer` outermost first (the last one must
    /// have as many values as this tensor has rows). Partitions are shared, not copied.
    pub fn with_outer_partitions(&self, outer: &[RowPartition]) -> Result<Self> {
        let mut partitions = Vec::with_capacity(outer.len() + self.partitions.len());
        partitions.extend_from_slice(outer);
        partitions.extend_from_slice(&self.partitions);
        Self::new_for("with_outer_partitions", self.flat_values.clone(), partitions)
    }

    /// The full index (outer dimension, ragged dimensions, inner dimensions) of element `flat` of
    /// the flat values (counted row-major over all their elements): what error messages show,
    /// `[1, 0, 2]` rather than "element 5". Empty for a scalar; an element past the end gets an
    /// index past the end, never a panic.
    pub fn element_index(&self, flat: usize) -> Vec<usize> {
        let shape = self.flat_values.shape();
        if shape.is_empty() {
            return Vec::new();
        }
        let mut index = Vec::with_capacity(self.rank());
        let mut row = flat;
        for &d in shape[1..].iter().rev() {
            let d = d.max(1);
            index.push(row % d);
            row /= d;
        }
        for partition in self.partitions.iter().rev() {
            let parent = partition.value_rowids().get(row).map_or(0, |&r| r as usize);
            let start = partition.row_splits().get(parent).map_or(0, |&s| s as usize);
            index.push(row - start);
            row = parent;
        }
        index.push(row);
        index.reverse();
        index
    }
}

/// Renames the op of a partition error raised by a shared constructor.
fn retag(e: Error, op: &str) -> Error {
    match e {
        Error::InvalidRowPartition { reason, .. } => Error::partition(op, reason),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ragged, ErrorKind, Literal};

    #[test]
    fn levels_list_outer_ragged_then_uniform_dims() {
        let rt = RaggedTensor::from_literal_typed(
            &Literal::from(vec![vec![vec![1, 2], vec![3, 4]], vec![], vec![vec![5, 6]]]),
            None,
            Some(1),
            Some(&[2]),
        )
        .unwrap();
        let levels = rt.levels();
        assert_eq!(levels.len(), 3, "outer, one ragged, one uniform inner dimension");
        assert_eq!(levels[0], Level::Uniform(3));
        assert_eq!(levels[1], Level::Ragged(&rt.partitions()[0]));
        assert_eq!(levels[2], Level::Uniform(2));
        assert_eq!(levels[0].children(0), 0..3, "the outer level has one parent row");
        assert_eq!(levels[1].children(1), 2..2, "row 1 is empty");
        assert_eq!(levels[1].children(2), 2..3);
        assert_eq!(levels[2].children(2), 4..6, "item 2 owns elements 4 and 5");
        let dense = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 0], Vec::<i32>::new()).unwrap());
        assert_eq!(dense.levels(), [Level::Uniform(2), Level::Uniform(0)]);
        assert!(RaggedTensor::dense(DenseTensor::scalar(1i32)).levels().is_empty(), "a scalar has no levels");
    }

    #[test]
    fn with_outer_partitions_shares_and_checks() {
        let rt = ragged![[1, 2], [3]].unwrap();
        let outer = RowPartition::from_uniform_row_length(2, 1).unwrap();
        let nested = rt.with_outer_partitions(std::slice::from_ref(&outer)).unwrap();
        assert!(nested.equals(&ragged![[[1, 2], [3]]].unwrap()), "got {nested}");
        assert!(nested.partitions()[0].ptr_eq(&outer) && nested.partitions()[1].ptr_eq(&rt.partitions()[0]));
        assert!(rt.with_outer_partitions(&[]).unwrap().equals(&rt), "no outer partition: the same tensor");
        let three_rows = RowPartition::from_row_lengths(&[3]).unwrap();
        let e = rt.with_outer_partitions(&[three_rows]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition, "3 values for 2 rows: {e}");
        let e = RaggedTensor::dense(DenseTensor::scalar(1i32)).with_outer_partitions(&[outer]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidRowPartition, "a scalar cannot gain rows: {e}");
    }

    #[test]
    fn element_index_names_every_dimension() {
        let rt = ragged![[[1, 2], [3]], [], [[4, 5, 6]]].unwrap();
        assert_eq!(rt.element_index(0), [0, 0, 0]);
        assert_eq!(rt.element_index(2), [0, 1, 0]);
        assert_eq!(rt.element_index(5), [2, 0, 2]);
        let inner = RaggedTensor::from_literal_typed(
            &Literal::from(vec![vec![], vec![vec![1, 2], vec![3, 4]]]),
            None,
            Some(1),
            Some(&[2]),
        )
        .unwrap();
        assert_eq!(inner.element_index(3), [1, 1, 1]);
        let dense = RaggedTensor::dense(DenseTensor::from_vec(vec![2, 3], vec![0i32; 6]).unwrap());
        assert_eq!(dense.element_index(4), [1, 1]);
        assert!(RaggedTensor::dense(DenseTensor::scalar(1i32)).element_index(0).is_empty());
        assert_eq!(ragged![[1], [2]].unwrap().element_index(9).len(), 2, "past the end: no panic");
    }
}

#[cfg(test)]
mod index_path_tests {
    use crate::ragged;

    #[test]
    fn index_path_names_every_level() {
        let x = ragged![[[1, 2]], [[3], [4], []], [[5]]].unwrap();
        // Rows of the last partition (sessions), flattened: 0 | 1 2 3 | 4.
        assert_eq!(x.index_path(1, 0), Some(vec![0, 0]));
        assert_eq!(x.index_path(1, 3), Some(vec![1, 2]));
        assert_eq!(x.index_path(1, 4), Some(vec![2, 0]));
        assert_eq!(x.index_path(1, 5), None);
        // Values (dimension 2) and outer rows.
        assert_eq!(x.index_path(2, 2), Some(vec![1, 0, 0]));
        assert_eq!(x.index_path(0, 2), Some(vec![2]));
        assert_eq!(x.index_path(0, 3), None);
        assert_eq!(x.describe_row(1, 3), "row [1, 2]");
        assert_eq!(x.describe_row(0, 1), "row 1");
    }
}

/// The index at every level of element `index` of the values of the last of `partitions` (the
/// partitions of dimensions `1..=partitions.len()`, outermost first), by walking up the row ids.
fn row_path(partitions: &[RowPartition], index: usize) -> Option<Vec<usize>> {
    let mut path = Vec::with_capacity(partitions.len() + 1);
    let mut at = index;
    for p in partitions.iter().rev() {
        let parent = usize::try_from(*p.value_rowids().get(at)?).ok()?;
        let start = usize::try_from(*p.row_splits().get(parent)?).ok()?;
        path.push(at - start);
        at = parent;
    }
    path.push(at);
    path.reverse();
    Some(path)
}

/// `row 7`, or `row [2, 5]` for a path of several levels.
fn show_row(path: &[usize]) -> String {
    match path {
        [row] => format!("row {row}"),
        _ => format!("row [{}]", path.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// How messages name flat element `element` of values of shape `flat_shape` under `partitions`
/// (outermost first): `row 3 (flat element 17)`, `row [1, 2] (flat element 17)` when rows are
/// nested (the innermost row holding it, indexed at every level), `element 17` for a vector.
pub fn describe_element(partitions: &[RowPartition], flat_shape: &[usize], element: usize) -> String {
    if partitions.is_empty() && flat_shape.len() <= 1 {
        return format!("element {element}");
    }
    let inner: usize = flat_shape.iter().skip(1).product();
    let value = element / inner.max(1);
    // The innermost row holding the value: a row of the last partition, or of the dense values.
    let path = match partitions.split_last() {
        Some((last, outer)) => {
            let row = last.row_splits().partition_point(|&s| s as usize <= value).saturating_sub(1);
            row_path(outer, row)
        }
        None => Some(vec![value]),
    };
    match path {
        Some(path) => format!("{} (flat element {element})", show_row(&path)),
        None => format!("element {element}"),
    }
}
