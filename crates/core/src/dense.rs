//! Dense tensors: the flat values of a ragged tensor, as typed arrays (shared row-major data plus a
//! shape) or a string column (bytes + offsets).

use ndarray::{ArrayViewD, Dimension, IxDyn};

use crate::{
    dispatch_dtype, limits, DType, Element, Error, ExecContext, Result, SharedSlice, StringBuilder, StringTensor,
};

/// The product of a shape, `None` when it overflows `usize` or the rank exceeds [`limits::MAX_RANK`].
pub(crate) fn shape_len(shape: &[usize]) -> Option<usize> {
    if shape.len() > limits::MAX_RANK {
        return None;
    }
    shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// The numeric or boolean data of a [`DenseTensor`]: a [`SharedSlice`] of the elements in
/// row-major order and the shape (`product(shape) == len`, checked when built). Clones and
/// reshapes share the elements.
#[derive(Clone)]
pub struct DenseArray<T: 'static> {
    data: SharedSlice<T>,
    shape: IxDyn,
}

impl<T: Element> DenseArray<T> {
    /// An array of `shape` viewing `data` (row-major), which must have `product(shape)` elements.
    pub fn new(shape: &[usize], data: SharedSlice<T>) -> Result<Self> {
        if shape_len(shape) != Some(data.len()) {
            return Err(Error::shapes("DenseTensor", format!("{} elements for shape {shape:?}", data.len())));
        }
        Ok(DenseArray { data, shape: IxDyn(shape) })
    }

    /// The shape.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        self.shape.slice()
    }

    /// The elements, row-major.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        self.data.as_slice()
    }

    /// The shared buffer of the elements.
    #[inline]
    pub fn data(&self) -> &SharedSlice<T> {
        &self.data
    }

    /// The shared buffer of the elements, by value.
    pub fn into_data(self) -> SharedSlice<T> {
        self.data
    }

    /// An `ndarray` view of the elements with the shape.
    pub fn view(&self) -> ArrayViewD<'_, T> {
        ArrayViewD::from_shape(self.shape.clone(), self.as_slice())
            .unwrap_or_else(|_| unreachable!("the shape's size equals the data's length (checked when built)"))
    }
}

impl<T: Element> std::fmt::Debug for DenseArray<T> {
    /// `DenseArray { shape: [2], values: [1, 2] }` (long data summarized).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DenseArray")
            .field("shape", &self.shape())
            .field("values", &crate::literal::DebugText(&crate::literal::summarize_list(self.as_slice())))
            .finish()
    }
}

/// A dense tensor of any dtype: numeric and boolean data in a [`DenseArray`] (shared row-major
/// data, possibly another library's memory), strings in a [`StringTensor`]. Clones share their buffers.
///
/// `Debug` shows the dtype, shape and values (`DenseTensor { dtype: int32, shape: [2], values: [1, 2] }`,
/// summarized when large, as `Display` of [`crate::RaggedTensor`]).
#[derive(Clone)]
#[allow(missing_docs)]
pub enum DenseTensor {
    Bool(DenseArray<bool>),
    I8(DenseArray<i8>),
    I16(DenseArray<i16>),
    I32(DenseArray<i32>),
    I64(DenseArray<i64>),
    U8(DenseArray<u8>),
    U16(DenseArray<u16>),
    U32(DenseArray<u32>),
    U64(DenseArray<u64>),
    F32(DenseArray<f32>),
    F64(DenseArray<f64>),
    String(StringTensor),
}

impl DenseTensor {
    /// A tensor of the given shape from row-major data.
    pub fn from_vec<T: Element>(shape: Vec<usize>, data: Vec<T>) -> Result<Self> {
        Self::from_shared(&shape, SharedSlice::from_vec(data))
            .map_err(|e| Error::shapes("DenseTensor::from_vec", e.to_string()))
    }

    /// A tensor of the given shape viewing shared row-major data without copying it: a
    /// ragtime buffer, or another library's memory ([`SharedSlice::from_owner`], such as an
    /// Arrow buffer), which is read in place and never written.
    pub fn from_shared<T: Element>(shape: &[usize], data: SharedSlice<T>) -> Result<Self> {
        DenseArray::new(shape, data).map(T::wrap)
    }

    /// A tensor from any `ndarray` array (copied, in row-major order).
    pub fn from_array<T: Element, D: ndarray::Dimension>(a: ndarray::ArrayView<'_, T, D>) -> Self {
        let shape = a.shape().to_vec();
        // `iter` walks in logical (row-major) order whatever the memory layout.
        let data = SharedSlice::from_vec(a.iter().copied().collect());
        T::wrap(DenseArray { data, shape: IxDyn(&shape) })
    }

    /// A 0-d tensor.
    pub fn scalar<T: Element>(v: T) -> Self {
        T::wrap(DenseArray { data: SharedSlice::from_vec(vec![v]), shape: IxDyn(&[]) })
    }

    /// A 1-d tensor.
    pub fn vector<T: Element>(data: Vec<T>) -> Self {
        let n = data.len();
        T::wrap(DenseArray { data: SharedSlice::from_vec(data), shape: IxDyn(&[n]) })
    }

    /// A tensor of `shape` whose every element is the first (only) element of `fill`, outside
    /// any call (see [`DenseTensor::full_in`]).
    pub fn full(shape: Vec<usize>, fill: &DenseTensor) -> Result<Self> {
        Self::full_in(ExecContext::detached(), shape, fill)
    }

    /// A tensor of `shape` whose every element is the first (only) element of `fill`, for an op
    /// of the call `ctx`: a size past its limits is refused (an empty shape is always fine:
    /// nothing is allocated for it), and the buffer is charged to its budget.
    pub fn full_in(ctx: &ExecContext, shape: Vec<usize>, fill: &DenseTensor) -> Result<Self> {
        const OP: &str = "fill";
        if fill.len() != 1 {
            return Err(Error::shapes(OP, format!("fill value must be a scalar, got shape {:?}", fill.shape())));
        }
        ctx.checked_rank(OP, shape.len())?;
        let n = if shape.contains(&0) { 0 } else { ctx.checked_size(OP, &shape, fill.dtype().size_of())? };
        // The value is repeated directly: a gather would first build an index per element.
        Ok(dispatch_dtype!(fill.dtype(),
        T => {
            let value = fill.as_slice::<T>().and_then(|s| s.first()).copied().unwrap_or_default();
            DenseTensor::from_vec(shape, ctx.try_filled(OP, n, value)?)?
        },
        string => {
            let value = fill.as_strings().map_or(&[][..], |s| s.get(0));
            ctx.checked_size(OP, &[n], 8)?;
            ctx.checked_bytes(OP, n.saturating_mul(value.len()), "the repeated strings")?;
            let mut b = StringBuilder::in_call(ctx, n, n * value.len());
            for _ in 0..n {
                b.push(value);
            }
            DenseTensor::String(b.finish(shape)?)
        }))
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        match self {
            DenseTensor::Bool(_) => DType::Bool,
            DenseTensor::I8(_) => DType::I8,
            DenseTensor::I16(_) => DType::I16,
            DenseTensor::I32(_) => DType::I32,
            DenseTensor::I64(_) => DType::I64,
            DenseTensor::U8(_) => DType::U8,
            DenseTensor::U16(_) => DType::U16,
            DenseTensor::U32(_) => DType::U32,
            DenseTensor::U64(_) => DType::U64,
            DenseTensor::F32(_) => DType::F32,
            DenseTensor::F64(_) => DType::F64,
            DenseTensor::String(_) => DType::String,
        }
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            DenseTensor::String(s) => s.shape(),
            _ => dispatch_dtype!(self.dtype(), T => T::array(self).map(|a| a.shape()).unwrap_or(&[]), string => &[]),
        }
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// Total number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// True when the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The row-major elements, if the tensor holds `T`.
    #[inline]
    pub fn as_slice<T: Element>(&self) -> Option<&[T]> {
        T::array(self).map(DenseArray::as_slice)
    }

    /// The shared buffer of the elements, if the tensor holds `T`.
    pub fn as_shared<T: Element>(&self) -> Option<&SharedSlice<T>> {
        T::array(self).map(DenseArray::data)
    }

    /// The tensor's buffer as a `Vec<T>` (its elements, no copy) when this tensor holds `T` and
    /// the buffer is one ragtime allocated, that no other value holds and that this tensor views
    /// from its start: for recycling buffers. Another library's memory is never given out.
    /// Otherwise the tensor comes back unchanged.
    pub fn try_into_buffer<T: Element>(self) -> std::result::Result<Vec<T>, DenseTensor> {
        let a = T::unwrap_array(self)?;
        let shape = a.shape;
        a.data.try_into_vec().map_err(|data| T::wrap(DenseArray { data, shape }))
    }

    /// The typed array, if the tensor holds `T`.
    pub fn as_array<T: Element>(&self) -> Option<&DenseArray<T>> {
        T::array(self)
    }

    /// An `ndarray` view of the elements with the tensor's shape, if the tensor holds `T`.
    pub fn as_ndarray<T: Element>(&self) -> Option<ArrayViewD<'_, T>> {
        T::array(self).map(DenseArray::view)
    }

    /// The string column, if the tensor holds strings.
    pub fn as_strings(&self) -> Option<&StringTensor> {
        match self {
            DenseTensor::String(s) => Some(s),
            _ => None,
        }
    }

    /// The elements of an integer tensor widened to i64 (for indices, splits, lengths).
    /// `what` names the argument in the error for other dtypes.
    pub fn to_i64_vec(&self, op: &str, what: &str) -> Result<Vec<i64>> {
        if !self.dtype().is_integer() {
            return Err(Error::dtype(op, format!("{what} must be an integer tensor, got {}", self.dtype())));
        }
        Ok(
            dispatch_dtype!(self.dtype(), T => self.as_slice::<T>().unwrap_or(&[]).iter().map(|v| v.to_i64()).collect(), string => Vec::new()),
        )
    }

    /// The same elements with another shape of the same size.
    pub fn reshape(&self, shape: Vec<usize>) -> Result<Self> {
        if shape_len(&shape) != Some(self.len()) {
            return Err(Error::shapes("reshape", format!("cannot reshape {:?} to {shape:?}", self.shape())));
        }
        Ok(dispatch_dtype!(self.dtype(),
            T => {
                // Shares the buffer: the data is row-major whatever the shape.
                let a = T::array(self).unwrap_or_else(|| unreachable_strings());
                T::wrap(DenseArray { data: a.data.clone(), shape: IxDyn(&shape) })
            },
            string => DenseTensor::String(self.as_strings().unwrap_or_else(|| unreachable_strings()).reshaped(shape)?)))
    }

    /// Size of one row along axis 0 (the product of the other dimensions); 1 for a scalar.
    pub fn row_size(&self) -> usize {
        self.shape().iter().skip(1).product()
    }

    /// Gathers elements by row-major flat index, giving a 1-d tensor. Every index must be `< len()`.
    pub fn take_rows_flat(&self, indices: &[usize]) -> Result<Self> {
        self.take_rows_flat_in(ExecContext::detached(), indices)
    }

    /// [`DenseTensor::take_rows_flat`] for an op of the call `ctx` (its limits and budget).
    pub fn take_rows_flat_in(&self, ctx: &ExecContext, indices: &[usize]) -> Result<Self> {
        let flat = self.reshape(vec![self.len()])?;
        flat.take_rows_in(ctx, indices)
    }

    /// Gathers rows along axis 0 (each row keeps its inner dimensions), in the order given;
    /// the one data-movement primitive behind gather, slicing, concat, tile and reverse.
    pub fn take_rows(&self, rows: &[usize]) -> Result<Self> {
        self.take_rows_in(ExecContext::detached(), rows)
    }

    /// [`DenseTensor::take_rows`] for an op of the call `ctx` (its limits and budget).
    pub fn take_rows_in(&self, ctx: &ExecContext, rows: &[usize]) -> Result<Self> {
        Self::gather_row_runs(ctx, "take_rows", &[self], rows.iter().map(|&r| (0, r..r + 1)))
    }

    /// Gathers runs of consecutive rows along axis 0 (`runs` in output order): one contiguous
    /// copy per run, strings included.
    pub fn take_row_runs(&self, runs: &[std::ops::Range<usize>]) -> Result<Self> {
        self.take_row_runs_in(ExecContext::detached(), runs)
    }

    /// [`DenseTensor::take_row_runs`] for an op of the call `ctx` (its limits and budget).
    pub fn take_row_runs_in(&self, ctx: &ExecContext, runs: &[std::ops::Range<usize>]) -> Result<Self> {
        Self::gather_row_runs(ctx, "take_rows", &[self], runs.iter().map(|r| (0, r.clone())))
    }

    /// The rows of several tensors, run by run: each `(source, rows)` of `runs` appends rows
    /// `rows` of `sources[source]`, with one contiguous copy (for strings, one copy of the bytes
    /// and the rebased offsets); when the rows are consecutive rows of one numeric tensor, the
    /// result views its buffer instead (no copy). Every source must have the dtype and the inner shape of the
    /// first; a row past a source's end is an `index_out_of_range` error. The result's size is
    /// checked against `ctx`'s limits before anything is allocated, and charged to its budget.
    pub fn gather_row_runs<I>(ctx: &ExecContext, op: &str, sources: &[&DenseTensor], runs: I) -> Result<Self>
    where
        I: Iterator<Item = (usize, std::ops::Range<usize>)> + Clone,
    {
        let first = sources.first().ok_or_else(|| Error::argument(op, "no tensor to take rows from"))?;
        let shape = first.shape();
        if shape.is_empty() {
            return Err(Error::shapes(op, "cannot take rows of a scalar"));
        }
        let dtype = first.dtype();
        for (i, t) in sources.iter().enumerate().skip(1) {
            if t.dtype() != dtype {
                return Err(Error::dtype(op, format!("input {i} is {}, input 0 is {dtype}", t.dtype())));
            }
            if t.rank() == 0 || t.shape()[1..] != shape[1..] {
                return Err(Error::shapes(
                    op,
                    format!("input {i} has shape {:?}, input 0 has shape {shape:?}", t.shape()),
                ));
            }
        }
        let row = first.row_size();
        let available: Vec<usize> = sources.iter().map(|t| t.shape()[0]).collect();
        let strings: Vec<Option<&StringTensor>> = sources.iter().map(|t| t.as_strings()).collect();
        // One pass checks the runs and counts the rows (and, for strings, the bytes: repeating
        // one long string many times is refused before anything is copied).
        let mut nrows = 0usize;
        let mut bytes = 0usize;
        // The rows as one contiguous run of one source, while they still are (`Err` once not).
        let mut contiguous: std::result::Result<Option<(usize, std::ops::Range<usize>)>, ()> = Ok(None);
        for (source, rows) in runs.clone() {
            let &available =
                available.get(source).ok_or_else(|| Error::argument(op, format!("there is no input {source}")))?;
            if rows.is_empty() {
                continue;
            }
            if rows.end > available {
                return Err(Error::out_of_range(op, rows.start.max(available) as i64, 0, available));
            }
            nrows = nrows.saturating_add(rows.len());
            if let Some(s) = strings[source] {
                let o = s.offsets();
                bytes = bytes.saturating_add((o[rows.end * row] - o[rows.start * row]) as usize);
            }
            contiguous = match contiguous {
                Ok(None) => Ok(Some((source, rows))),
                Ok(Some((first, run))) if first == source && run.end == rows.start => {
                    Ok(Some((first, run.start..rows.end)))
                }
                _ => Err(()),
            };
        }
        let mut out_shape = shape.to_vec();
        out_shape[0] = nrows;
        let n = ctx.checked_size(op, &out_shape, dtype.size_of().max(1))?;
        if let Ok(Some((source, rows))) = contiguous {
            // Consecutive rows of one tensor: a view of its buffer, no copy.
            if let Some(view) = sources[source].row_view(rows, out_shape.clone()) {
                return Ok(view);
            }
        }
        Ok(dispatch_dtype!(dtype,
        T => {
            let slices: Vec<&[T]> = sources.iter().map(|t| t.as_slice::<T>().unwrap_or(&[])).collect();
            let mut data = ctx.try_vec(op, n)?;
            for (source, rows) in runs.filter(|(_, rows)| !rows.is_empty()) {
                data.extend_from_slice(&slices[source][rows.start * row..rows.end * row]);
            }
            DenseTensor::from_vec(out_shape, data)?
        },
        string => {
            let column = |source: usize| strings[source].unwrap_or_else(|| unreachable_strings());
            ctx.checked_bytes(op, bytes, "the strings of the result")?;
            let mut buf: Vec<u8> = ctx.try_vec(op, bytes)?;
            let mut offsets: Vec<i64> = ctx.try_vec(op, n + 1)?;
            offsets.push(0);
            for (source, rows) in runs {
                if rows.is_empty() {
                    continue;
                }
                let s = column(source);
                let o = &s.offsets()[rows.start * row..=rows.end * row];
                let (begin, end) = (o[0], o[o.len() - 1]);
                let shift = buf.len() as i64 - begin;
                buf.extend_from_slice(&s.bytes()[begin as usize..end as usize]);
                offsets.extend(o[1..].iter().map(|&x| x + shift));
            }
            DenseTensor::String(StringTensor {
                bytes: SharedSlice::from_vec(buf),
                offsets: SharedSlice::from_vec(offsets),
                shape: out_shape,
            })
        }))
    }

    /// Rows `rows` (in range) as a view sharing this tensor's buffers, with shape `shape`; `None`
    /// for string columns, whose copies are compact (their kernels size buffers by the bytes).
    fn row_view(&self, rows: std::ops::Range<usize>, shape: Vec<usize>) -> Option<Self> {
        let row = self.row_size();
        dispatch_dtype!(self.dtype(),
            T => {
                let data = self.as_shared::<T>()?.slice(rows.start * row..rows.end * row)?;
                Some(T::wrap(DenseArray { data, shape: IxDyn(&shape) }))
            },
            string => None)
    }

    /// Rows `start..end` along axis 0 (a view of the same buffer: no copy).
    pub fn slice_rows(&self, start: usize, end: usize) -> Result<Self> {
        Self::gather_row_runs(ExecContext::detached(), "slice_rows", &[self], std::iter::once((0, start..end)))
    }

    /// Concatenates tensors along axis 0. All parts must have the same dtype and inner shape.
    pub fn concat_rows(parts: &[DenseTensor]) -> Result<Self> {
        Self::concat_rows_in(ExecContext::detached(), parts)
    }

    /// [`DenseTensor::concat_rows`] for an op of the call `ctx` (its limits and budget).
    pub fn concat_rows_in(ctx: &ExecContext, parts: &[DenseTensor]) -> Result<Self> {
        let first = parts.first().ok_or_else(|| Error::argument("concat", "nothing to concatenate"))?;
        let dtype = first.dtype();
        let inner = first.shape().get(1..).unwrap_or(&[]).to_vec();
        let mut nrows = 0;
        for (i, p) in parts.iter().enumerate() {
            if p.dtype() != dtype {
                return Err(Error::dtype("concat", format!("input {i} is {}, input 0 is {dtype}", p.dtype())));
            }
            if p.rank() == 0 || p.shape()[1..] != inner[..] {
                return Err(Error::shapes(
                    "concat",
                    format!("input {i} has shape {:?}, input 0 has shape {:?}", p.shape(), first.shape()),
                ));
            }
            nrows += p.shape()[0];
        }
        let mut shape = vec![nrows];
        shape.extend_from_slice(&inner);
        Ok(dispatch_dtype!(dtype,
        T => {
            let mut data: Vec<T> = ctx.try_vec("concat", ctx.checked_size("concat", &shape, T::DTYPE.size_of())?)?;
            for p in parts {
                data.extend_from_slice(p.as_slice::<T>().unwrap_or(&[]));
            }
            DenseTensor::from_vec(shape, data)?
        },
        string => {
            let mut b = StringBuilder::in_call(ctx, 0, 0);
            for p in parts {
                for s in p.as_strings().unwrap_or_else(|| unreachable_strings()).iter() {
                    b.push(s);
                }
            }
            DenseTensor::String(b.finish(shape)?)
        }))
    }

    /// Converts to another dtype with TensorFlow's `cast` rules (strings only to strings).
    pub fn cast(&self, to: DType) -> Result<Self> {
        if self.dtype() == to {
            return Ok(self.clone());
        }
        if self.dtype() == DType::String || to == DType::String {
            return Err(Error::dtype("cast", format!("cannot cast {} to {to}", self.dtype())));
        }
        let shape = self.shape().to_vec();
        Ok(dispatch_dtype!(self.dtype(),
            S => {
                let src = self.as_slice::<S>().unwrap_or(&[]);
                dispatch_dtype!(to,
                    D => {
                        let data: Vec<D> = if D::DTYPE.is_float() || S::DTYPE.is_float() || D::DTYPE == DType::Bool {
                            src.iter().map(|v| D::from_f64(v.to_f64())).collect()
                        } else {
                            src.iter().map(|v| D::from_i64(v.to_i64())).collect()
                        };
                        DenseTensor::from_vec(shape, data)?
                    },
                    string => unreachable_strings())
            },
            string => unreachable_strings()))
    }
}

impl std::fmt::Debug for DenseTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let values = crate::RaggedTensor::from(self.clone());
        f.debug_struct("DenseTensor")
            .field("dtype", &crate::literal::DebugText(self.dtype().name()))
            .field("shape", &self.shape())
            .field("values", &crate::literal::DebugText(&values.values_display().to_string()))
            .finish()
    }
}

/// Marks branches the dtype checks above make impossible; never reached through the public API.
#[cold]
fn unreachable_strings() -> ! {
    unreachable!("dtype and variant of a DenseTensor always agree")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn full_repeats_the_value_of_any_dtype() {
        let t = DenseTensor::full(vec![2, 3], &DenseTensor::scalar(7i32)).unwrap();
        assert_eq!((t.shape(), t.as_slice::<i32>().unwrap()), (&[2usize, 3][..], &[7; 6][..]));
        let s = StringTensor::from_strings(&["ab"], vec![]).unwrap();
        let t = DenseTensor::full(vec![2], &DenseTensor::String(s)).unwrap();
        assert_eq!(t.as_strings().unwrap().iter().collect::<Vec<_>>(), [b"ab", b"ab"]);
        let empty = DenseTensor::String(StringTensor::from_strings(&[""], vec![1]).unwrap());
        assert_eq!(DenseTensor::full(vec![0, 4], &empty).unwrap().shape(), &[0, 4]);
        let huge_but_empty = DenseTensor::full(vec![1 << 40, 0], &DenseTensor::scalar(1u8)).unwrap();
        assert!(huge_but_empty.is_empty(), "an empty shape allocates nothing, however long its other dim");
        let e = DenseTensor::full(vec![1 << 40, 1 << 40], &DenseTensor::scalar(1u8)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "too many elements: refused, not attempted");
        let e = DenseTensor::full(vec![2], &DenseTensor::vector(vec![1i32, 2])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes, "the fill value must have one element");
    }

    #[test]
    fn row_runs_copy_numbers_and_strings_from_several_tensors() {
        let a = DenseTensor::from_vec(vec![3, 2], vec![0i32, 1, 2, 3, 4, 5]).unwrap();
        let b = DenseTensor::from_vec(vec![2, 2], vec![10i32, 11, 12, 13]).unwrap();
        let runs = [(1, 1..2), (0, 0..2), (0, 3..3), (1, 0..2), (0, 2..3)];
        let t = DenseTensor::gather_row_runs(ExecContext::detached(), "t", &[&a, &b], runs.iter().cloned()).unwrap();
        assert_eq!(t.shape(), &[6, 2]);
        assert_eq!(t.as_slice::<i32>().unwrap(), &[12, 13, 0, 1, 2, 3, 10, 11, 12, 13, 4, 5]);
        // Strings: a column whose offsets do not start at 0 is rebased.
        let s = StringTensor::from_parts(b"xxabcdef".to_vec(), vec![2i64, 3, 5, 5, 8], vec![4]).unwrap();
        let u = StringTensor::from_strings(&["+", "uv"], vec![2]).unwrap();
        let (s, u) = (DenseTensor::String(s), DenseTensor::String(u));
        let t = DenseTensor::gather_row_runs(
            ExecContext::detached(),
            "t",
            &[&s, &u],
            [(0, 1..4), (1, 0..2), (0, 0..1)].into_iter(),
        )
        .unwrap();
        let got: Vec<&[u8]> = t.as_strings().unwrap().iter().collect();
        assert_eq!(got, [&b"bc"[..], b"", b"def", b"+", b"uv", b"a"]);
        assert_eq!(t.as_strings().unwrap().offsets()[0], 0);
        assert_eq!(
            s.take_rows(&[3, 0, 3]).unwrap().as_strings().unwrap().iter().collect::<Vec<_>>(),
            [&b"def"[..], b"a", b"def"]
        );
        assert_eq!(s.slice_rows(3, 1).unwrap().len(), 0, "a reversed range takes nothing");
        let e = s.take_rows(&[0, 4]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
        let e = DenseTensor::gather_row_runs(ExecContext::detached(), "t", &[&a, &s], std::iter::empty()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TypeMismatch);
        let e = DenseTensor::gather_row_runs(
            ExecContext::detached(),
            "t",
            &[&a, &DenseTensor::vector(vec![1i32])],
            std::iter::empty(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    }

    #[test]
    fn consecutive_rows_of_one_tensor_are_views_and_others_copies() {
        let a = DenseTensor::from_vec(vec![4, 2], (0..8).collect::<Vec<i64>>()).unwrap();
        let base = a.as_slice::<i64>().unwrap().as_ptr();
        let view = a.slice_rows(1, 3).unwrap();
        assert_eq!((view.shape(), view.as_slice::<i64>().unwrap()), (&[2usize, 2][..], &[2i64, 3, 4, 5][..]));
        assert_eq!(view.as_slice::<i64>().unwrap().as_ptr(), base.wrapping_add(2), "a slice views the buffer");
        let taken = a.take_rows(&[2, 3]).unwrap();
        assert_eq!(taken.as_slice::<i64>().unwrap().as_ptr(), base.wrapping_add(4), "consecutive rows: a view too");
        let copy = a.take_rows(&[3, 2]).unwrap();
        assert_eq!(copy.as_slice::<i64>().unwrap(), &[6, 7, 4, 5]);
        assert!(
            !std::ptr::eq(copy.as_slice::<i64>().unwrap().as_ptr(), base.wrapping_add(6)),
            "reordered rows: a copy"
        );
        let e = a.slice_rows(3, 5).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IndexOutOfRange, "a view is bounds-checked like a copy");
        drop(a);
        assert_eq!(view.try_into_buffer::<i64>().unwrap_err().as_slice::<i64>().unwrap(), &[2, 3, 4, 5]);
    }

    #[test]
    fn foreign_buffers_are_read_in_place_and_never_handed_out() {
        let owner: std::sync::Arc<[f32]> = vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0].into();
        let ptr = owner.as_ptr();
        let t = DenseTensor::from_shared(&[3, 2], SharedSlice::from(owner)).unwrap();
        assert_eq!((t.shape(), t.as_slice::<f32>().unwrap().as_ptr()), (&[3usize, 2][..], ptr));
        assert_eq!(t.as_ndarray::<f32>().unwrap()[[2, 1]], 6.0);
        assert_eq!(t.reshape(vec![6]).unwrap().as_slice::<f32>().unwrap().as_ptr(), ptr, "reshapes share");
        let back = t.try_into_buffer::<f32>().unwrap_err();
        assert_eq!(back.as_slice::<f32>().unwrap().as_ptr(), ptr, "a foreign buffer is never recycled");
        let e = DenseTensor::from_shared(&[4, 2], SharedSlice::from_vec(vec![0u8; 6])).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IncompatibleShapes, "{e}");
    }

    #[test]
    fn element_bounds_and_literals_per_kind() {
        assert_eq!((i8::lowest(), i8::highest()), (i8::MIN, i8::MAX));
        assert_eq!((u64::lowest(), u64::highest()), (0, u64::MAX));
        assert_eq!((f32::lowest(), f64::highest()), (f32::NEG_INFINITY, f64::INFINITY));
        assert_eq!(u8::from_int_literal(256), None, "integers take only literals in range");
        assert_eq!(i16::from_int_literal(-3), Some(-3));
        assert_eq!(f32::from_int_literal(16_777_217), Some(16_777_216.0), "floats take the nearest value");
        assert_eq!((bool::from_int_literal(1), bool::from_int_literal(2)), (Some(true), None));
        assert_eq!((<u8 as Element>::DTYPE, <f64 as Element>::DTYPE), (DType::U8, DType::F64));
    }
}
