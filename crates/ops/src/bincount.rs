//! `bincount(arr [, weights])` (`tf.math.bincount`): how often each non-negative integer occurs, over
//! all values (`axis` null or 0) or per row (`axis` -1: the bag-of-words counts of ragged rows).

use std::any::Any;

use ragtime_core::{DType, DenseTensor, Dim, Element, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Op, OpRef};

use crate::util::{one, shared};

const NAME: &str = "bincount";

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    (name == NAME).then(|| shared(Bincount::from_attrs(attrs)))
}

/// `tf.math.bincount(arr, weights, minlength, maxlength, dtype, axis, binary_output)`.
///
/// The number of bins is `max(arr) + 1` (0 when `arr` has no values), raised to `minlength` and cut
/// to `maxlength`; values past the last bin are not counted. With `axis` -1 the result has one row of
/// bins per row of `arr` (a ragged tensor of ragged rank 1 or a dense matrix): a dense
/// `[nrows, bins]` tensor, TensorFlow's dense form (`tf.sparse.bincount` gives the same counts as a
/// sparse tensor). Each bin holds the count of its value, the sum of the `weights` of its value in
/// the order they come (`weights` has `arr`'s structure; the result has its dtype), or 1 where the
/// value occurs at all (`binary_output`). A negative value is an error naming its row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bincount {
    /// Count per row (`true`: axis -1) or over every value (axis null or 0).
    pub per_row: bool,
    /// At least this many bins.
    pub minlength: Option<usize>,
    /// At most this many bins.
    pub maxlength: Option<usize>,
    /// The result's dtype without weights (int32, int64, float32 or float64).
    pub dtype: DType,
    /// 1 where a value occurs instead of its count.
    pub binary_output: bool,
}

impl Default for Bincount {
    fn default() -> Self {
        Bincount { per_row: false, minlength: None, maxlength: None, dtype: DType::I32, binary_output: false }
    }
}

const BIN_DTYPES: [DType; 4] = [DType::I32, DType::I64, DType::F32, DType::F64];

impl Bincount {
    /// From a graph file's node: `axis` (null or 0, or -1), `minlength`, `maxlength`, `dtype`
    /// (default int32), `binary_output` (default false).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "minlength", "maxlength", "dtype", "binary_output"])?;
        let per_row = match attrs.int_opt("axis")? {
            None | Some(0) => false,
            Some(-1) => true,
            Some(other) => return Err(Error::argument(NAME, format!("axis must be null, 0 or -1, got {other}"))),
        };
        let length = |name: &str| -> Result<Option<usize>> {
            attrs
                .int_opt(name)?
                .map(|n| usize::try_from(n).map_err(|_| Error::argument(NAME, format!("{name} must be >= 0, got {n}"))))
                .transpose()
        };
        let dtype = match attrs.str_opt("dtype")? {
            None => DType::I32,
            Some(name) => DType::from_name(name).filter(|d| BIN_DTYPES.contains(d)).ok_or_else(|| {
                Error::argument(NAME, format!("dtype must be int32, int64, float32 or float64, got `{name}`"))
            })?,
        };
        Ok(Bincount {
            per_row,
            minlength: length("minlength")?,
            maxlength: length("maxlength")?,
            dtype,
            binary_output: attrs.bool_opt("binary_output")?.unwrap_or(false),
        })
    }

    /// The number of bins for values whose maximum is `max` (`None`: no values).
    fn bins(&self, max: Option<i64>) -> usize {
        let from_values = max.map_or(0, |m| usize::try_from(m).unwrap_or(0).saturating_add(1));
        let raised = self.minlength.map_or(from_values, |m| from_values.max(m));
        self.maxlength.map_or(raised, |m| raised.min(m))
    }
}

impl Op for Bincount {
    fn name(&self) -> String {
        let show = |v: Option<usize>| v.map_or("none".to_string(), |n| n.to_string());
        format!(
            "Bincount{{axis={}, minlength={}, maxlength={}, dtype={}, binary_output={}}}",
            if self.per_row { "-1" } else { "none" },
            show(self.minlength),
            show(self.maxlength),
            self.dtype,
            self.binary_output
        )
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(NAME, inputs, 1..=2)?;
        let arr = &inputs[0];
        if !matches!(arr.dtype(), DType::I32 | DType::I64) {
            return Err(Error::dtype(NAME, format!("input 0 must hold int32 or int64 values, got {arr}")));
        }
        if self.per_row && !(arr.rank() == 2 && arr.ragged_rank() <= 1) {
            return Err(Error::argument(
                NAME,
                format!("axis -1 counts the rows of a ragged tensor of ragged rank 1 or a dense matrix, got {arr}"),
            ));
        }
        let dtype = match inputs.get(1) {
            Some(w) => {
                if self.binary_output {
                    return Err(Error::argument(NAME, "weights and binary_output cannot be used together"));
                }
                if !BIN_DTYPES.contains(&w.dtype()) {
                    return Err(Error::dtype(
                        NAME,
                        format!("weights must be int32, int64, float32 or float64, got {w}"),
                    ));
                }
                if w.ragged_rank() != arr.ragged_rank() || w.rank() != arr.rank() {
                    return Err(Error::shapes(NAME, format!("weights {w} must have the structure of input 0 {arr}")));
                }
                w.dtype()
            }
            None => self.dtype,
        };
        let bins = match (self.minlength, self.maxlength) {
            (Some(a), Some(b)) if a >= b => Dim::Known(b),
            _ => Dim::Unknown,
        };
        let dims = if self.per_row { vec![arr.dims()[0], bins] } else { vec![bins] };
        Ok(vec![TensorType::new(dtype, 0, dims)?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        let out_type = self.infer(&types)?.remove(0);
        let arr = &inputs[0];
        let values = arr.flat_values().cast(DType::I64)?;
        let values = values.as_slice::<i64>().ok_or_else(|| Error::dtype(NAME, "input 0 must hold integers"))?;
        // Lines: each row (axis -1) or everything (axis 0), as ranges of the flat values.
        let lines: Vec<(usize, usize)> = if !self.per_row {
            vec![(0, values.len())]
        } else if let Some(p) = arr.partitions().first() {
            p.row_splits().windows(2).map(|w| (w[0] as usize, w[1] as usize)).collect()
        } else {
            let width = arr.flat_values().shape()[1];
            (0..arr.nrows()).map(|r| (r * width, (r + 1) * width)).collect()
        };
        if let Some(at) = values.iter().position(|&v| v < 0) {
            let row = lines.iter().position(|&(a, b)| (a..b).contains(&at)).unwrap_or(0);
            let place = if self.per_row { arr.describe_row(0, row) } else { format!("value {at}") };
            return Err(Error::argument(
                NAME,
                format!("{place} holds {}: bincount counts non-negative integers", values[at]),
            ));
        }
        let bins = self.bins(values.iter().copied().max());
        let shape = if self.per_row { vec![lines.len(), bins] } else { vec![bins] };
        let n = ctx.checked_size(NAME, &shape, out_type.dtype().size_of().max(1))?;
        if let Some(weights) = inputs.get(1) {
            if !weights.same_structure(arr) || weights.flat_values().shape() != arr.flat_values().shape() {
                return Err(Error::shapes(NAME, "weights must have the row partitions and shape of input 0"));
            }
        }
        let weights = inputs.get(1);
        let counts = match out_type.dtype() {
            DType::I32 => DenseTensor::from_vec(shape, fill::<i32>(ctx, self, n, bins, &lines, values, weights)?),
            DType::I64 => DenseTensor::from_vec(shape, fill::<i64>(ctx, self, n, bins, &lines, values, weights)?),
            DType::F32 => DenseTensor::from_vec(shape, fill::<f32>(ctx, self, n, bins, &lines, values, weights)?),
            _ => DenseTensor::from_vec(shape, fill::<f64>(ctx, self, n, bins, &lines, values, weights)?),
        };
        one(counts?.into())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The numbers a bin holds: the result dtypes of `bincount`.
trait Bin: Element + Copy {
    const ZERO: Self;
    const ONE: Self;
    /// Integers wrap, as TensorFlow's kernel adds them.
    fn plus(self, other: Self) -> Self;
}

macro_rules! bins {
    ($($t:ty: $zero:expr, $one:expr, $plus:expr;)*) => {$(
        impl Bin for $t {
            const ZERO: Self = $zero;
            const ONE: Self = $one;
            fn plus(self, other: Self) -> Self {
                $plus(self, other)
            }
        }
    )*};
}

bins! {
    i32: 0, 1, i32::wrapping_add;
    i64: 0, 1, i64::wrapping_add;
    f32: 0.0, 1.0, |a: f32, b: f32| a + b;
    f64: 0.0, 1.0, |a: f64, b: f64| a + b;
}

/// The `n = lines * bins` bins, each line's values added in order.
fn fill<T: Bin>(
    ctx: &ExecContext,
    op: &Bincount,
    n: usize,
    bins: usize,
    lines: &[(usize, usize)],
    values: &[i64],
    weights: Option<&RaggedTensor>,
) -> Result<Vec<T>> {
    let weights = match weights {
        Some(w) => Some(w.flat_values().as_slice::<T>().ok_or_else(|| Error::dtype(NAME, "weights of another dtype"))?),
        None => None,
    };
    let mut out = ctx.try_filled(NAME, n, T::ZERO)?;
    for (line, &(start, end)) in lines.iter().enumerate() {
        let row = &mut out[line * bins..(line + 1) * bins];
        for k in start..end {
            let Some(bin) = usize::try_from(values[k]).ok().filter(|&b| b < bins) else { continue };
            row[bin] = match (weights, op.binary_output) {
                (Some(w), _) => row[bin].plus(w[k]),
                (None, true) => T::ONE,
                (None, false) => row[bin].plus(T::ONE),
            };
        }
    }
    Ok(out)
}
