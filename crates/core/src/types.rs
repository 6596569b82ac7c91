//! `TensorType`: the static type of a graph variable (dtype, ragged rank, known / unknown / ragged dims).

use std::fmt;

use crate::{DType, Error, RaggedTensor, Result};

/// One dimension of a [`TensorType`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dim {
    /// A uniform dimension of known size.
    Known(usize),
    /// A uniform dimension whose size is known only at run time.
    Unknown,
    /// A ragged dimension: each row has its own length.
    Ragged,
    /// A row-partitioned dimension whose rows all have this many values: the partition of
    /// `from_uniform_row_length` (TensorFlow's `uniform_row_length`, a known dimension size in
    /// its shapes). It sits where [`Dim::Ragged`] may sit, and a value has it when its row
    /// partition says so ([`crate::RowPartition::uniform_row_length`]), not merely when its
    /// rows happen to have equal lengths, as in TensorFlow.
    UniformRows(usize),
}

impl Dim {
    /// The size, if known.
    pub fn size(self) -> Option<usize> {
        match self {
            Dim::Known(n) => Some(n),
            _ => None,
        }
    }
    /// `Known(n)` for `Some(n)`, `Unknown` for `None`.
    pub fn from_option(size: Option<usize>) -> Dim {
        size.map_or(Dim::Unknown, Dim::Known)
    }
    /// True for a row-partitioned dim ([`Dim::Ragged`] or [`Dim::UniformRows`]): the dims at
    /// `1..=ragged_rank` of a type, each backed by a `RowPartition` in its values.
    pub fn is_partition(self) -> bool {
        matches!(self, Dim::Ragged | Dim::UniformRows(_))
    }
    /// The number of items along this dim when every row has the same one: the size of a
    /// known uniform dim or the row length of a uniform partition.
    pub fn static_len(self) -> Option<usize> {
        match self {
            Dim::Known(n) | Dim::UniformRows(n) => Some(n),
            Dim::Unknown | Dim::Ragged => None,
        }
    }
    /// The dim with a uniform row length forgotten ([`Dim::UniformRows`] becomes [`Dim::Ragged`]).
    pub fn widened(self) -> Dim {
        match self {
            Dim::UniformRows(_) => Dim::Ragged,
            other => other,
        }
    }
}

/// The constraints a value must meet to flow through a graph variable.
///
/// Architecture invariant: `dims().len()` is the rank; `dims()[0]` is uniform (the outer
/// dimension); `dims()[1..=ragged_rank()]` are partition dims ([`Dim::Ragged`], or
/// [`Dim::UniformRows`] when every row of that partition has the same known length); the
/// remaining dims are uniform inner dims of the flat values. A dense tensor has
/// `ragged_rank() == 0` and no partition dim.
///
/// The fields are private so that no value breaks the invariant: every constructor either
/// cannot break it ([`TensorType::ragged`], [`TensorType::dense`], [`TensorType::with_inner`])
/// or checks it and returns an error ([`TensorType::new`], [`TensorType::from_dims`],
/// [`TensorType::with_inner_dims`], [`TensorType::with_dim`]).
///
/// ```
/// use ragtime_core::{DType, Dim, TensorType};
///
/// let t = TensorType::from_dims(DType::F32, vec![Dim::Unknown, Dim::Ragged, Dim::Known(2)]).unwrap();
/// assert_eq!((t.ragged_rank(), t.to_string()), (1, "float32[?, *, 2]".to_string()));
/// assert_eq!(t, TensorType::ragged(DType::F32, 1).with_inner(&[Some(2)]));
/// // A ragged dim after a uniform inner dim is not a type.
/// assert!(TensorType::from_dims(DType::F32, vec![Dim::Unknown, Dim::Known(2), Dim::Ragged]).is_err());
/// // A partition whose rows all have 3 values (`from_uniform_row_length`) prints as `(3)`.
/// let u = TensorType::from_dims(DType::F32, vec![Dim::Known(2), Dim::UniformRows(3), Dim::Ragged]).unwrap();
/// assert_eq!((u.ragged_rank(), u.to_string()), (2, "float32[2, (3), *]".to_string()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    dtype: DType,
    ragged_rank: usize,
    dims: Vec<Dim>,
}

impl TensorType {
    /// A ragged tensor of `ragged_rank` ragged dims, an unknown number of rows and no inner dims
    /// (`TensorType::ragged(DType::F32, 1)` is `float32[?, *]`). A rank above
    /// [`crate::limits::MAX_RANK`] is refused where the type enters a graph ([`TensorType::validate`]).
    pub fn ragged(dtype: DType, ragged_rank: usize) -> Self {
        let mut dims = vec![Dim::Unknown];
        dims.extend(std::iter::repeat_n(Dim::Ragged, ragged_rank));
        TensorType { dtype, ragged_rank, dims }
    }

    /// A dense tensor whose dims are known (`Some`) or unknown (`None`).
    pub fn dense(dtype: DType, shape: &[Option<usize>]) -> Self {
        TensorType { dtype, ragged_rank: 0, dims: shape.iter().map(|&d| Dim::from_option(d)).collect() }
    }

    /// A 0-d tensor.
    pub fn scalar(dtype: DType) -> Self {
        TensorType { dtype, ragged_rank: 0, dims: vec![] }
    }

    /// A 1-d tensor of unknown length.
    pub fn vector(dtype: DType) -> Self {
        Self::dense(dtype, &[None])
    }

    /// Builds a type from its parts, checking that `dims` fits `ragged_rank` (ragged dims exactly
    /// at `1..=ragged_rank`) and the rank limit.
    pub fn new(dtype: DType, ragged_rank: usize, dims: Vec<Dim>) -> Result<Self> {
        let t = TensorType { dtype, ragged_rank, dims };
        t.check_invariant()?;
        Ok(t)
    }

    /// Builds a type from its dims alone, the ragged rank being the number of partition dims
    /// ([`Dim::Ragged`], [`Dim::UniformRows`]), which must directly follow the uniform outer dim;
    /// checks the rank limit.
    pub fn from_dims(dtype: DType, dims: Vec<Dim>) -> Result<Self> {
        let ragged_rank = dims.iter().filter(|d| d.is_partition()).count();
        Self::new(dtype, ragged_rank, dims)
    }

    /// Checks the limits of the type (its rank at most [`crate::limits::MAX_RANK`]). The
    /// placement of ragged dims needs no check (no constructor can get it wrong); the rank limit
    /// is checked here, where a type enters a graph, because the infallible constructors
    /// ([`TensorType::ragged`], [`TensorType::dense`]) cannot refuse.
    pub fn validate(&self) -> Result<()> {
        crate::limits::checked_rank("TensorType", self.dims.len())?;
        Ok(())
    }

    /// The invariant of the type: the rank limit, and partition dims exactly at `1..=ragged_rank`.
    fn check_invariant(&self) -> Result<()> {
        self.validate()?;
        let ok = if self.ragged_rank == 0 {
            !self.dims.iter().any(|d| d.is_partition())
        } else {
            self.dims.len() > self.ragged_rank
                && !self.dims[0].is_partition()
                && self.dims[1..=self.ragged_rank].iter().all(|d| d.is_partition())
                && !self.dims[self.ragged_rank + 1..].iter().any(|d| d.is_partition())
        };
        if ok {
            Ok(())
        } else {
            Err(Error::value("TensorType", format!("dims {:?} do not fit ragged rank {}", self.dims, self.ragged_rank)))
        }
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The number of ragged dimensions.
    pub fn ragged_rank(&self) -> usize {
        self.ragged_rank
    }

    /// Every dimension, outermost first.
    pub fn dims(&self) -> &[Dim] {
        &self.dims
    }

    /// The same type with these uniform inner dims appended (`Some` known, `None` unknown).
    pub fn with_inner(mut self, inner: &[Option<usize>]) -> Self {
        self.dims.extend(inner.iter().map(|&d| Dim::from_option(d)));
        self
    }

    /// The same type with these inner dims appended; they must be uniform (a partition dim
    /// after the inner dims is refused), and the rank stays within the limit.
    pub fn with_inner_dims(mut self, inner: &[Dim]) -> Result<Self> {
        if inner.iter().any(|d| d.is_partition()) {
            return Err(Error::value("TensorType", format!("inner dims {inner:?} must be uniform, not ragged")));
        }
        self.dims.extend_from_slice(inner);
        self.validate()?;
        Ok(self)
    }

    /// The same type with dim `axis` replaced by `dim`: a uniform dim by a uniform dim (known or
    /// unknown); a partition dim by a partition dim ([`Dim::Ragged`] or [`Dim::UniformRows`]).
    /// Anything else (an axis past the rank, a partition dim made uniform or the reverse) is an error.
    pub fn with_dim(mut self, axis: usize, dim: Dim) -> Result<Self> {
        let Some(slot) = self.dims.get_mut(axis) else {
            return Err(Error::value("TensorType", format!("axis {axis} is past the rank {}", self.dims.len())));
        };
        if slot.is_partition() != dim.is_partition() {
            return Err(Error::value(
                "TensorType",
                format!("dim {axis} is {slot:?}: a partition dim stays one and a uniform one uniform, got {dim:?}"),
            ));
        }
        *slot = dim;
        Ok(self)
    }

    /// The same type with every uniform row length forgotten ([`Dim::UniformRows`] made
    /// [`Dim::Ragged`]): what an op that does not keep uniform partitions can promise.
    pub fn widened(mut self) -> Self {
        for d in &mut self.dims {
            *d = d.widened();
        }
        self
    }

    /// True when some partition dim is a [`Dim::UniformRows`].
    pub fn has_uniform_rows(&self) -> bool {
        self.dims.iter().any(|d| matches!(d, Dim::UniformRows(_)))
    }

    /// The same type with another dtype.
    pub fn with_dtype(mut self, dtype: DType) -> Self {
        self.dtype = dtype;
        self
    }

    /// Number of dimensions.
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// True when at least one dim is ragged.
    pub fn is_ragged(&self) -> bool {
        self.ragged_rank > 0
    }

    /// The uniform dims of the flat values after the ragged ones.
    pub fn inner_dims(&self) -> &[Dim] {
        // `get`: a scalar (no dims) has no inner dims.
        if self.ragged_rank == 0 {
            self.dims.get(1..).unwrap_or(&[])
        } else {
            self.dims.get(self.ragged_rank + 1..).unwrap_or(&[])
        }
    }

    /// The exact type of a value (every uniform dim known; a partition built with a uniform row
    /// length is [`Dim::UniformRows`]).
    pub fn of(value: &RaggedTensor) -> Self {
        let dims = value
            .shape()
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                if i >= 1 && i <= value.ragged_rank() {
                    value.partitions()[i - 1].uniform_row_length().map_or(Dim::Ragged, Dim::UniformRows)
                } else {
                    Dim::from_option(d)
                }
            })
            .collect();
        TensorType { dtype: value.dtype(), ragged_rank: value.ragged_rank(), dims }
    }

    /// True when every value of `other` is also a value of `self` (same dtype, rank and ragged
    /// rank; each known dim of `self` known and equal in `other`; a ragged dim of `self` takes a
    /// uniform partition too, a uniform partition only one of the same row length).
    pub fn accepts(&self, other: &TensorType) -> bool {
        self.dtype == other.dtype
            && self.ragged_rank == other.ragged_rank
            && self.dims.len() == other.dims.len()
            && self.dims.iter().zip(&other.dims).all(|(a, b)| match a {
                Dim::Known(_) | Dim::UniformRows(_) => a == b,
                Dim::Unknown => !b.is_partition(),
                Dim::Ragged => b.is_partition(),
            })
    }

    /// True when `value` is a value of this type (as `accepts(&TensorType::of(value))`), without
    /// allocating: the per-call input check of compiled functions.
    pub fn admits(&self, value: &RaggedTensor) -> bool {
        let rr = value.ragged_rank();
        let flat = value.flat_values().shape();
        let rank = if rr == 0 { flat.len() } else { flat.len() + rr };
        if self.dtype != value.dtype() || self.ragged_rank != rr || self.dims.len() != rank {
            return false;
        }
        self.dims.iter().enumerate().all(|(i, d)| {
            let ragged = rr > 0 && (1..=rr).contains(&i);
            if let Dim::UniformRows(n) = d {
                return ragged && value.partitions()[i - 1].uniform_row_length() == Some(*n);
            }
            let size = if rr == 0 {
                Some(flat[i])
            } else if i == 0 {
                Some(value.nrows())
            } else if ragged {
                None
            } else {
                Some(flat[i - rr])
            };
            match d {
                Dim::Known(n) => size == Some(*n),
                Dim::Unknown => !ragged,
                Dim::Ragged => ragged,
                Dim::UniformRows(_) => false,
            }
        })
    }

    /// Checks a value against this type; `what` names the value in the error (e.g. `input "x"`).
    pub fn check(&self, value: &RaggedTensor, what: &str) -> Result<()> {
        let got = TensorType::of(value);
        if self.dtype != got.dtype {
            return Err(Error::dtype("check", format!("{what} must be {}, got {}", self.dtype, got.dtype)));
        }
        if self.ragged_rank != got.ragged_rank || self.rank() != got.rank() {
            return Err(Error::dtype("check", format!("{what} must be of type {self}, got a value of type {got}")));
        }
        if !self.accepts(&got) {
            // A partition typed uniform must be one built uniform, not one whose rows happen to agree.
            let hint = if self.has_uniform_rows() {
                " (a `(n)` dim needs a partition built with a uniform row length: `from_uniform_row_length` \
                 or `RaggedTensor::with_uniform_rows`)"
            } else {
                ""
            };
            return Err(Error::shapes(
                "check",
                format!("{what} must be of type {self}, got a value of type {got}{hint}"),
            ));
        }
        Ok(())
    }
}

impl fmt::Display for TensorType {
    /// `float32[?, *, 2]`: `?` an unknown dim, `*` a ragged dim, numbers known dims, `(3)` a
    /// partition whose rows all have 3 values (TensorFlow's shape shows `3`; the parentheses keep
    /// the ragged rank readable: `int32[3, (2)]` is not the dense `int32[3, 2]`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match d {
                Dim::Known(n) => write!(f, "{n}")?,
                Dim::Unknown => f.write_str("?")?,
                Dim::Ragged => f.write_str("*")?,
                Dim::UniformRows(n) => write!(f, "({n})")?,
            }
        }
        f.write_str("]")
    }
}
