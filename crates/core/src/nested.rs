//! Rust data in and out of tensors: the [`Scalar`] / [`Nested`] traits behind `From` / `TryFrom`
//! (`Vec<T>`, `&[T]`, `Vec<Vec<T>>`, strings, `ndarray` arrays) and the typed readers (`to_vec`,
//! `to_nested`, `rows`, `string_rows`, `row`, `to_ndarray`).

use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn};

use crate::{DType, DenseTensor, Element, Error, Level, Literal, RaggedTensor, Result, RowPartition, StringTensor};

/// A Rust scalar that ragtime stores with one dtype: every numeric type, `bool`, and strings
/// (`&str`, `String`).
///
/// The dtype comes from the Rust type: `1i64` is int64, `1.5f64` float64, `"a"` string.
pub trait Scalar: Sized {
    /// The dtype of a tensor of this type.
    const DTYPE: DType;
    /// The value as a literal leaf (exact: integers as `i128`, floats as `f64`).
    fn into_literal(self) -> Literal;
    /// A dense tensor of `shape` from row-major values.
    fn dense(values: Vec<Self>, shape: Vec<usize>) -> Result<DenseTensor>;
}

macro_rules! scalar_numbers {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const DTYPE: DType = <$t as Element>::DTYPE;
            fn into_literal(self) -> Literal {
                Literal::from(self)
            }
            fn dense(values: Vec<Self>, shape: Vec<usize>) -> Result<DenseTensor> {
                DenseTensor::from_vec(shape, values)
            }
        }
    )*};
}
scalar_numbers!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool);

macro_rules! scalar_strings {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const DTYPE: DType = DType::String;
            fn into_literal(self) -> Literal {
                Literal::Str(<$t as AsRef<[u8]>>::as_ref(&self).to_vec())
            }
            fn dense(values: Vec<Self>, shape: Vec<usize>) -> Result<DenseTensor> {
                Ok(DenseTensor::String(StringTensor::from_strings(&values, shape)?))
            }
        }
    )*};
}
scalar_strings!(&str, String, &String);

/// Nested Rust data of one scalar type: a [`Scalar`] (depth 0), or a `Vec`, slice or array of
/// nested data (one level deeper). Every level below the outermost becomes a ragged dimension,
/// as in `tf.ragged.constant`, so rows may have any length.
pub trait Nested: Sized {
    /// The scalar type of the leaves.
    type Leaf: Scalar;
    /// The nesting depth: the rank of the tensor built from it.
    const DEPTH: usize;
    /// Appends the leaves in row-major order, and the length of every list to `lengths[level]`
    /// (`lengths[0]` for this value's own items).
    fn flatten(self, lengths: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>);
    /// The value as a (typed-by-context) literal.
    fn into_literal(self) -> Literal;
}

macro_rules! nested_scalars {
    ($($t:ty),*) => {$(
        impl Nested for $t {
            type Leaf = $t;
            const DEPTH: usize = 0;
            fn flatten(self, _: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>) {
                leaves.push(self);
            }
            fn into_literal(self) -> Literal {
                Scalar::into_literal(self)
            }
        }
    )*};
}
nested_scalars!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool, String);
impl<'a> Nested for &'a str {
    type Leaf = &'a str;
    const DEPTH: usize = 0;
    fn flatten(self, _: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>) {
        leaves.push(self);
    }
    fn into_literal(self) -> Literal {
        Scalar::into_literal(self)
    }
}
impl<'a> Nested for &'a String {
    type Leaf = &'a String;
    const DEPTH: usize = 0;
    fn flatten(self, _: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>) {
        leaves.push(self);
    }
    fn into_literal(self) -> Literal {
        Scalar::into_literal(self)
    }
}

impl<N: Nested> Nested for Vec<N> {
    type Leaf = N::Leaf;
    const DEPTH: usize = N::DEPTH + 1;
    fn flatten(self, lengths: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>) {
        if let Some((own, inner)) = lengths.split_first_mut() {
            own.push(self.len() as i64);
            for item in self {
                item.flatten(inner, leaves);
            }
        }
    }
    fn into_literal(self) -> Literal {
        Literal::List(self.into_iter().map(Nested::into_literal).collect())
    }
}

impl<N: Nested + Clone> Nested for &[N] {
    type Leaf = N::Leaf;
    const DEPTH: usize = N::DEPTH + 1;
    fn flatten(self, lengths: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>) {
        self.to_vec().flatten(lengths, leaves);
    }
    fn into_literal(self) -> Literal {
        self.to_vec().into_literal()
    }
}

impl<N: Nested, const K: usize> Nested for [N; K] {
    type Leaf = N::Leaf;
    const DEPTH: usize = N::DEPTH + 1;
    fn flatten(self, lengths: &mut [Vec<i64>], leaves: &mut Vec<Self::Leaf>) {
        Vec::from(self).flatten(lengths, leaves);
    }
    fn into_literal(self) -> Literal {
        Vec::from(self).into_literal()
    }
}

impl RaggedTensor {
    /// A tensor from nested Rust data, with the dtype of its scalar type and every nested
    /// dimension ragged (`tf.ragged.constant`): a scalar gives a 0-d tensor, a `Vec<T>` a dense
    /// vector, a `Vec<Vec<T>>` a ragged tensor of ragged rank 1, and so on.
    ///
    /// ```
    /// use ragtime_core::{DType, RaggedTensor};
    /// let t = RaggedTensor::from_nested(vec![vec![1i64, 2], vec![], vec![3]]).unwrap();
    /// assert_eq!((t.dtype(), t.ragged_rank()), (DType::I64, 1));
    /// let words = RaggedTensor::from_nested(vec![vec!["a", "b"], vec!["c"]]).unwrap();
    /// assert_eq!(words.to_string(), r#"<Ragged string [["a", "b"], ["c"]]>"#);
    /// ```
    pub fn from_nested<N: Nested>(data: N) -> Result<Self> {
        crate::limits::checked_rank("from_nested", N::DEPTH)?;
        let mut lengths = vec![Vec::new(); N::DEPTH];
        let mut leaves = Vec::new();
        data.flatten(&mut lengths, &mut leaves);
        if N::DEPTH == 0 {
            return Ok(N::Leaf::dense(leaves, vec![])?.into());
        }
        let n = leaves.len();
        let flat = N::Leaf::dense(leaves, vec![n])?;
        // The outer level's single length is the number of rows; each deeper level is a partition.
        let partitions = lengths[1..].iter().map(|l| RowPartition::from_row_lengths(l)).collect::<Result<Vec<_>>>()?;
        RaggedTensor::new(flat, partitions)
    }
}

macro_rules! from_vectors {
    ($($t:ty),*) => {$(
        impl From<Vec<$t>> for DenseTensor {
            /// A vector (rank 1) of the values.
            fn from(v: Vec<$t>) -> Self {
                let n = v.len();
                <$t as Scalar>::dense(v, vec![n]).unwrap_or_else(|_| unreachable!("n values fit shape [n]"))
            }
        }
        impl From<&[$t]> for DenseTensor {
            /// A vector (rank 1) of the values.
            fn from(v: &[$t]) -> Self {
                v.to_vec().into()
            }
        }
        impl From<Vec<$t>> for RaggedTensor {
            /// A dense vector of the values.
            fn from(v: Vec<$t>) -> Self {
                DenseTensor::from(v).into()
            }
        }
        impl From<&[$t]> for RaggedTensor {
            /// A dense vector of the values.
            fn from(v: &[$t]) -> Self {
                DenseTensor::from(v).into()
            }
        }
        impl From<$t> for RaggedTensor {
            /// A 0-d tensor.
            fn from(v: $t) -> Self {
                <$t as Scalar>::dense(vec![v], vec![]).unwrap_or_else(|_| unreachable!("one value fits shape []")).into()
            }
        }
    )*};
}
from_vectors!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, bool, &str, String);

impl<N: Nested> TryFrom<Vec<Vec<N>>> for RaggedTensor {
    type Error = Error;
    /// A ragged tensor whose nested dimensions are all ragged ([`RaggedTensor::from_nested`]).
    fn try_from(v: Vec<Vec<N>>) -> Result<Self> {
        RaggedTensor::from_nested(v)
    }
}

impl<N: Nested + Clone> TryFrom<&[Vec<N>]> for RaggedTensor {
    type Error = Error;
    /// A ragged tensor whose nested dimensions are all ragged ([`RaggedTensor::from_nested`]).
    fn try_from(v: &[Vec<N>]) -> Result<Self> {
        RaggedTensor::from_nested(v)
    }
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> From<ArrayBase<S, D>> for DenseTensor {
    /// A dense tensor of the array's shape; an array in any other layout than standard row-major
    /// (transposed, sliced with steps, Fortran order) is copied into standard layout.
    fn from(a: ArrayBase<S, D>) -> Self {
        DenseTensor::from_array(a.view())
    }
}

impl<T: Element, S: Data<Elem = T>, D: Dimension> From<ArrayBase<S, D>> for RaggedTensor {
    /// A dense tensor of the array (see `From<ArrayBase> for DenseTensor`).
    fn from(a: ArrayBase<S, D>) -> Self {
        DenseTensor::from(a).into()
    }
}

/// A Rust scalar a tensor's values can be read as: every numeric type, `bool`, and `String`
/// (for string tensors holding UTF-8).
pub trait ScalarOut: Sized + Default {
    /// The dtype a tensor must have to be read as this type.
    const DTYPE: DType;
    /// All values of `t` in row-major order (`t` has dtype [`ScalarOut::DTYPE`]).
    fn read_all(op: &str, t: &DenseTensor) -> Result<Vec<Self>>;
}

impl<T: Element> ScalarOut for T {
    const DTYPE: DType = <T as Element>::DTYPE;
    fn read_all(op: &str, t: &DenseTensor) -> Result<Vec<Self>> {
        Ok(slice_of::<T>(op, t)?.to_vec())
    }
}

impl ScalarOut for String {
    const DTYPE: DType = DType::String;
    fn read_all(op: &str, t: &DenseTensor) -> Result<Vec<Self>> {
        let s = strings_of(op, t)?;
        s.iter()
            .enumerate()
            .map(|(i, b)| {
                String::from_utf8(b.to_vec()).map_err(|_| {
                    Error::value(
                        op,
                        format!("string {i} is not UTF-8 ({:?}); read it as bytes", b.escape_ascii().to_string()),
                    )
                })
            })
            .collect()
    }
}

/// Rust data a tensor can be read into: a [`ScalarOut`] (depth 0) or a `Vec` of such data
/// (one level deeper), e.g. `Vec<Vec<f32>>` for a tensor of rank 2, ragged or not.
pub trait NestedOut: Sized {
    /// The scalar type of the leaves.
    type Leaf: ScalarOut;
    /// The nesting depth, which must equal the tensor's rank.
    const DEPTH: usize;
    /// Item `item` of the level above `levels[0]`, its leaves taken from `leaves` (each leaf is
    /// taken exactly once).
    fn build(levels: &[Level<'_>], item: usize, leaves: &mut [Self::Leaf]) -> Self;
}

impl<T: ScalarOut> NestedOut for T {
    type Leaf = T;
    const DEPTH: usize = 0;
    fn build(_: &[Level<'_>], item: usize, leaves: &mut [T]) -> Self {
        std::mem::take(&mut leaves[item])
    }
}

impl<N: NestedOut> NestedOut for Vec<N> {
    type Leaf = N::Leaf;
    const DEPTH: usize = N::DEPTH + 1;
    fn build(levels: &[Level<'_>], item: usize, leaves: &mut [Self::Leaf]) -> Self {
        match levels.split_first() {
            Some((level, inner)) => level.children(item).map(|c| N::build(inner, c, leaves)).collect(),
            None => Vec::new(),
        }
    }
}

fn check_dtype(op: &str, t: &RaggedTensor, want: DType, reader: &str) -> Result<()> {
    if t.dtype() != want {
        return Err(Error::dtype(
            op,
            format!(
                "the tensor is {} but was read as {reader} ({want}); read it as the Rust type of {}",
                t.dtype(),
                t.dtype()
            ),
        ));
    }
    Ok(())
}

fn slice_of<'a, T: Element>(op: &str, t: &'a DenseTensor) -> Result<&'a [T]> {
    if t.dtype() != T::DTYPE {
        return Err(Error::dtype(op, format!("the tensor is {} but was read as {}", t.dtype(), T::DTYPE)));
    }
    t.as_slice::<T>().ok_or_else(|| Error::value(op, "the values are not in standard layout"))
}

fn strings_of<'a>(op: &str, t: &'a DenseTensor) -> Result<&'a StringTensor> {
    t.as_strings().ok_or_else(|| Error::dtype(op, format!("the tensor is {} but was read as strings", t.dtype())))
}

impl DenseTensor {
    /// Every value in row-major order, as `T` (which must be this tensor's dtype: `i64` for
    /// int64, `String` for UTF-8 strings).
    pub fn to_vec<T: ScalarOut>(&self) -> Result<Vec<T>> {
        if self.dtype() != T::DTYPE {
            return Err(Error::dtype("to_vec", format!("the tensor is {} but was read as {}", self.dtype(), T::DTYPE)));
        }
        T::read_all("to_vec", self)
    }

    /// A copy as an `ndarray` array of the tensor's shape (`T` must be this tensor's dtype).
    pub fn to_ndarray<T: Element>(&self) -> Result<ArrayD<T>> {
        let data = slice_of::<T>("to_ndarray", self)?.to_vec();
        ArrayD::from_shape_vec(IxDyn(self.shape()), data)
            .map_err(|e| Error::value("to_ndarray", format!("shape {:?}: {e}", self.shape())))
    }
}

impl RaggedTensor {
    /// The values of a dense tensor in row-major order, as `T` (`i64` for int64, `String` for
    /// UTF-8 strings). A ragged tensor is refused: read it with [`RaggedTensor::to_nested`],
    /// [`RaggedTensor::rows`] or [`RaggedTensor::flat_values`].
    ///
    /// ```
    /// use ragtime_core::RaggedTensor;
    /// let t = RaggedTensor::from(vec![1.5f32, 2.5]);
    /// assert_eq!(t.to_vec::<f32>().unwrap(), [1.5, 2.5]);
    /// assert!(t.to_vec::<f64>().is_err(), "float32 is read as f32");
    /// ```
    pub fn to_vec<T: ScalarOut>(&self) -> Result<Vec<T>> {
        check_dtype("to_vec", self, T::DTYPE, std::any::type_name::<T>())?;
        if !self.is_dense() {
            return Err(Error::argument(
                "to_vec",
                format!(
                    "the tensor is ragged (ragged rank {}); read it with to_nested::<Vec<Vec<_>>>(), rows() or flat_values()",
                    self.ragged_rank()
                ),
            ));
        }
        self.flat_values().to_vec()
    }

    /// The values as nested `Vec`s (`tf.RaggedTensor.to_list()`), ragged or dense: `N` is
    /// `Vec<Vec<i64>>` for an int64 tensor of rank 2, `Vec<Vec<Vec<String>>>` for strings of
    /// rank 3, `f32` for a float32 scalar. The nesting depth must equal the rank and the scalar
    /// type the dtype.
    ///
    /// ```
    /// let t = ragtime_core::ragged![[1i64, 2], [], [3]].unwrap();
    /// assert_eq!(t.to_nested::<Vec<Vec<i64>>>().unwrap(), vec![vec![1, 2], vec![], vec![3]]);
    /// ```
    pub fn to_nested<N: NestedOut>(&self) -> Result<N> {
        const OP: &str = "to_nested";
        check_dtype(OP, self, N::Leaf::DTYPE, std::any::type_name::<N::Leaf>())?;
        if N::DEPTH != self.rank() {
            return Err(Error::argument(
                OP,
                format!(
                    "the tensor has rank {} but {} nests {} deep",
                    self.rank(),
                    std::any::type_name::<N>(),
                    N::DEPTH
                ),
            ));
        }
        let mut leaves = N::Leaf::read_all(OP, self.flat_values())?;
        if N::DEPTH == 0 {
            return Ok(N::build(&[], 0, &mut leaves));
        }
        let levels = self.levels();
        // The outer level is uniform with one parent: item 0 of the level above it.
        Ok(N::build(&levels, 0, &mut leaves))
    }

    /// The rows of a tensor of rank 2 (ragged rank 1 or dense) as slices of its values, without
    /// copying: `for row in t.rows::<f32>()? { ... }`.
    ///
    /// ```
    /// let t = ragtime_core::ragged![[1.0, 2.0], [], [3.0]].unwrap();
    /// let sums: Vec<f32> = t.rows::<f32>().unwrap().map(|r| r.iter().sum()).collect();
    /// assert_eq!(sums, [3.0, 0.0, 3.0]);
    /// ```
    pub fn rows<T: Element>(&self) -> Result<Rows<'_, T>> {
        const OP: &str = "rows";
        check_dtype(OP, self, T::DTYPE, std::any::type_name::<T>())?;
        let values = slice_of::<T>(OP, self.flat_values())?;
        Ok(Rows { values, bounds: self.row_bounds(OP)?, next: 0 })
    }

    /// The rows of a string tensor of rank 2 (ragged rank 1 or dense), each a view of its strings.
    ///
    /// ```
    /// let t = ragtime_core::ragged![["a", "b"], [], ["c"]].unwrap();
    /// let rows: Vec<Vec<&str>> = t.string_rows().unwrap().map(|r| r.to_strs().unwrap()).collect();
    /// assert_eq!(rows, vec![vec!["a", "b"], vec![], vec!["c"]]);
    /// ```
    pub fn string_rows(&self) -> Result<StringRows<'_>> {
        const OP: &str = "string_rows";
        let strings = strings_of(OP, self.flat_values())?;
        Ok(StringRows { strings, bounds: self.row_bounds(OP)?, next: 0 })
    }

    fn row_bounds(&self, op: &str) -> Result<RowBounds<'_>> {
        if self.rank() != 2 || self.flat_values().rank() != 1 && !self.is_dense() {
            return Err(Error::argument(
                op,
                format!(
                    "rows of slices need a tensor of rank 2 with at most one ragged dimension, got rank {} (ragged rank {}); use row(i) or to_nested()",
                    self.rank(),
                    self.ragged_rank()
                ),
            ));
        }
        Ok(match self.partitions().first() {
            Some(p) => RowBounds::Splits(p.row_splits()),
            None => {
                let s = self.flat_values().shape();
                RowBounds::Uniform { nrows: s[0], len: s[1] }
            }
        })
    }

    /// Row `i` (negative counts from the end) as a tensor of rank one less (`t[i]`).
    ///
    /// ```
    /// let t = ragtime_core::ragged![[[1, 2], [3]], [], [[4]]].unwrap();
    /// assert_eq!(t.row(0).unwrap().to_string(), "<Ragged int32 [[1, 2], [3]]>");
    /// assert_eq!(t.row(-1).unwrap().to_string(), "<Ragged int32 [[4]]>");
    /// ```
    pub fn row(&self, i: i64) -> Result<RaggedTensor> {
        const OP: &str = "row";
        if self.rank() == 0 {
            return Err(Error::argument(OP, "a scalar has no rows"));
        }
        let n = self.nrows();
        let r = if i < 0 { i + n as i64 } else { i };
        if r < 0 || r >= n as i64 {
            return Err(Error::out_of_range(OP, i, 0, n));
        }
        let r = r as usize;
        let Some((first, inner)) = self.partitions().split_first() else {
            let shape = self.flat_values().shape()[1..].to_vec();
            return Ok(self.flat_values().slice_rows(r, r + 1)?.reshape(shape)?.into());
        };
        let mut range = first.row_range(r);
        let mut partitions = Vec::with_capacity(inner.len());
        for p in inner {
            let splits = &p.row_splits()[range.start..=range.end];
            let base = splits[0];
            partitions.push(RowPartition::from_row_splits(splits.iter().map(|s| s - base).collect())?);
            range = base as usize..splits[splits.len() - 1] as usize;
        }
        RaggedTensor::new(self.flat_values().slice_rows(range.start, range.end)?, partitions)
    }

    /// Every row as a tensor ([`RaggedTensor::row`] for each `i`).
    pub fn row_tensors(&self) -> impl ExactSizeIterator<Item = Result<RaggedTensor>> + '_ {
        (0..self.nrows()).map(move |i| self.row(i as i64))
    }
}

#[derive(Debug, Clone, Copy)]
enum RowBounds<'a> {
    Splits(&'a [i64]),
    Uniform { nrows: usize, len: usize },
}

impl RowBounds<'_> {
    fn nrows(&self) -> usize {
        match self {
            RowBounds::Splits(s) => s.len() - 1,
            RowBounds::Uniform { nrows, .. } => *nrows,
        }
    }
    fn range(&self, i: usize) -> std::ops::Range<usize> {
        match self {
            RowBounds::Splits(s) => s[i] as usize..s[i + 1] as usize,
            RowBounds::Uniform { len, .. } => i * len..(i + 1) * len,
        }
    }
}

/// The rows of a rank-2 tensor as slices: see [`RaggedTensor::rows`].
#[derive(Debug, Clone)]
pub struct Rows<'a, T> {
    values: &'a [T],
    bounds: RowBounds<'a>,
    next: usize,
}

impl<'a, T> Iterator for Rows<'a, T> {
    type Item = &'a [T];
    fn next(&mut self) -> Option<&'a [T]> {
        if self.next >= self.bounds.nrows() {
            return None;
        }
        let r = self.bounds.range(self.next);
        self.next += 1;
        self.values.get(r)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bounds.nrows().saturating_sub(self.next);
        (n, Some(n))
    }
}
impl<T> ExactSizeIterator for Rows<'_, T> {}

/// The rows of a rank-2 string tensor: see [`RaggedTensor::string_rows`].
#[derive(Debug, Clone)]
pub struct StringRows<'a> {
    strings: &'a StringTensor,
    bounds: RowBounds<'a>,
    next: usize,
}

impl<'a> Iterator for StringRows<'a> {
    type Item = StringRow<'a>;
    fn next(&mut self) -> Option<StringRow<'a>> {
        if self.next >= self.bounds.nrows() {
            return None;
        }
        let range = self.bounds.range(self.next);
        self.next += 1;
        Some(StringRow { strings: self.strings, range })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.bounds.nrows().saturating_sub(self.next);
        (n, Some(n))
    }
}
impl ExactSizeIterator for StringRows<'_> {}

/// One row of a string tensor: a view of its strings, as bytes or `&str`.
#[derive(Debug, Clone)]
pub struct StringRow<'a> {
    strings: &'a StringTensor,
    range: std::ops::Range<usize>,
}

impl<'a> StringRow<'a> {
    /// Number of strings in the row.
    pub fn len(&self) -> usize {
        self.range.len()
    }
    /// True when the row is empty.
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
    /// The bytes of string `j` of the row.
    pub fn get(&self, j: usize) -> Option<&'a [u8]> {
        (j < self.len()).then(|| self.strings.get(self.range.start + j))
    }
    /// The strings as bytes.
    pub fn bytes(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let strings = self.strings;
        self.range.clone().map(move |i| strings.get(i))
    }
    /// The strings as `&str`; an `invalid_value` error if one is not UTF-8.
    pub fn to_strs(&self) -> Result<Vec<&'a str>> {
        self.bytes()
            .map(|b| {
                std::str::from_utf8(b).map_err(|_| {
                    Error::value("string_rows", format!("{:?} is not UTF-8", b.escape_ascii().to_string()))
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn vectors_of_every_dtype_keep_their_rust_type() {
        assert_eq!(RaggedTensor::from(vec![1i8, 2]).dtype(), DType::I8);
        assert_eq!(RaggedTensor::from(vec![1u64 << 63]).to_vec::<u64>().unwrap(), [1u64 << 63]);
        assert_eq!(RaggedTensor::from(&[1.5f64][..]).dtype(), DType::F64);
        assert_eq!(RaggedTensor::from(vec![true, false]).to_vec::<bool>().unwrap(), [true, false]);
        let words = RaggedTensor::from(vec!["a".to_string(), "bc".to_string()]);
        assert_eq!(words.to_vec::<String>().unwrap(), ["a", "bc"]);
        assert_eq!(RaggedTensor::from(vec!["x", "y"]).flat_values().shape(), &[2]);
        assert_eq!(RaggedTensor::from(3u16).rank(), 0);
        let empty: Vec<i64> = vec![];
        assert_eq!(RaggedTensor::from(empty).dtype(), DType::I64, "an empty vector keeps its type");
    }

    #[test]
    fn nested_vectors_become_ragged_with_their_rust_type() {
        let t = RaggedTensor::try_from(vec![vec![1i64, 2], vec![], vec![3]]).unwrap();
        assert_eq!(t.dtype(), DType::I64);
        assert_eq!(t.row_splits().unwrap(), [0, 2, 2, 3]);
        let deep = RaggedTensor::from_nested(vec![vec![vec![1u8], vec![]], vec![]]).unwrap();
        assert_eq!((deep.dtype(), deep.ragged_rank()), (DType::U8, 2));
        assert_eq!(deep.to_nested::<Vec<Vec<Vec<u8>>>>().unwrap(), vec![vec![vec![1u8], vec![]], vec![]]);
        let s = RaggedTensor::try_from(vec![vec!["a"], vec![], vec!["b", "c"]]).unwrap();
        assert_eq!(s.to_nested::<Vec<Vec<String>>>().unwrap(), vec![vec!["a"], vec![], vec!["b", "c"]]);
        let arrays = RaggedTensor::from_nested([[1.5f32, 2.0], [3.0, 4.0]]).unwrap();
        assert_eq!((arrays.dtype(), arrays.ragged_rank()), (DType::F32, 1));
        let rows: &[Vec<i16>] = &[vec![1], vec![2, 3]];
        assert_eq!(RaggedTensor::try_from(rows).unwrap().row_splits().unwrap(), [0, 1, 3]);
        let no_rows: Vec<Vec<f64>> = vec![];
        let t = RaggedTensor::try_from(no_rows).unwrap();
        assert_eq!((t.nrows(), t.dtype(), t.ragged_rank()), (0, DType::F64, 1));
    }

    #[test]
    fn ndarray_arrays_of_any_layout_become_standard_dense_tensors() {
        let a = ndarray::array![[1i32, 2, 3], [4, 5, 6]];
        let t = DenseTensor::from(a.t());
        assert_eq!(t.shape(), &[3, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), [1, 4, 2, 5, 3, 6], "a transposed view is copied in row-major order");
        let stepped = a.slice_axis(ndarray::Axis(1), ndarray::Slice::new(0, None, 2));
        assert_eq!(DenseTensor::from(stepped).to_vec::<i32>().unwrap(), [1, 3, 4, 6]);
        let r = RaggedTensor::from(a.clone());
        assert_eq!(r.to_nested::<Vec<Vec<i32>>>().unwrap(), vec![vec![1, 2, 3], vec![4, 5, 6]]);
        assert_eq!(r.flat_values().to_ndarray::<i32>().unwrap(), a.into_dyn());
    }

    #[test]
    fn readers_refuse_the_wrong_dtype_or_rank_with_typed_errors() {
        let t = RaggedTensor::from_nested(vec![vec![1i32, 2], vec![3]]).unwrap();
        let e = t.to_nested::<Vec<Vec<i64>>>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        assert!(e.to_string().contains("int32"), "{e}");
        let e = t.to_nested::<Vec<i32>>().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains("rank 2"), "{e}");
        assert_eq!(t.to_vec::<i32>().unwrap_err().kind(), ErrorKind::InvalidArgument, "to_vec is for dense tensors");
        assert_eq!(t.rows::<f32>().unwrap_err().kind(), ErrorKind::TypeMismatch);
        assert_eq!(t.string_rows().unwrap_err().kind(), ErrorKind::TypeMismatch);
        let bytes = RaggedTensor::from(DenseTensor::String(StringTensor::from_strings(&[b"\xff"], vec![1]).unwrap()));
        assert_eq!(bytes.to_vec::<String>().unwrap_err().kind(), ErrorKind::InvalidValue);
        let scalar = RaggedTensor::from(2.5f64);
        assert_eq!(scalar.to_nested::<f64>().unwrap(), 2.5);
        assert_eq!(scalar.row(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn rows_view_ragged_and_dense_rows() {
        let t = RaggedTensor::from_nested(vec![vec![1i64, 2], vec![], vec![3]]).unwrap();
        let rows: Vec<&[i64]> = t.rows::<i64>().unwrap().collect();
        assert_eq!(rows, [&[1, 2][..], &[], &[3]]);
        assert_eq!(t.rows::<i64>().unwrap().len(), 3);
        let dense = RaggedTensor::from(ndarray::array![[1.0f32, 2.0], [3.0, 4.0]]);
        assert_eq!(dense.rows::<f32>().unwrap().collect::<Vec<_>>(), [&[1.0, 2.0][..], &[3.0, 4.0]]);
        let deep = RaggedTensor::from_nested(vec![vec![vec![1i32]]]).unwrap();
        assert_eq!(deep.rows::<i32>().unwrap_err().kind(), ErrorKind::InvalidArgument);
        let s = RaggedTensor::from_nested(vec![vec!["ab", "c"], vec![]]).unwrap();
        let first = s.string_rows().unwrap().next().unwrap();
        assert_eq!((first.len(), first.get(0), first.get(2)), (2, Some(&b"ab"[..]), None));
        assert_eq!(first.bytes().collect::<Vec<_>>(), [&b"ab"[..], b"c"]);
    }

    #[test]
    fn row_gives_each_row_as_a_tensor() {
        let t = RaggedTensor::from_nested(vec![vec![vec![1i32, 2], vec![3]], vec![], vec![vec![4]]]).unwrap();
        assert_eq!(t.row(0).unwrap().to_nested::<Vec<Vec<i32>>>().unwrap(), vec![vec![1, 2], vec![3]]);
        assert_eq!(t.row(1).unwrap().nrows(), 0);
        assert_eq!(t.row(-1).unwrap().to_nested::<Vec<Vec<i32>>>().unwrap(), vec![vec![4]]);
        assert_eq!(t.row(3).unwrap_err().kind(), ErrorKind::IndexOutOfRange);
        assert_eq!(t.row_tensors().count(), 3);
        let dense = RaggedTensor::from(ndarray::array![[1u8, 2], [3, 4]]);
        assert_eq!(dense.row(1).unwrap().to_vec::<u8>().unwrap(), [3, 4]);
    }
}
