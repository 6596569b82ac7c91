//! Nested-list literals: the `ragged!` macro, `RaggedTensor::from_literal` (with TensorFlow's dtype inference), `to_literal`, and `Display`.

use std::fmt;

use crate::{dispatch_dtype, DType, DenseTensor, Element, Error, RaggedTensor, Result, RowPartition, StringBuilder};

/// A nested list of scalars, as written in source (`ragged![[1, 2], [3]]`) or in a conformance file.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    /// A list (one nesting level).
    List(Vec<Literal>),
    /// A boolean.
    Bool(bool),
    /// An integer (wide enough for every i64 and u64).
    Int(i128),
    /// A float (including NaN and infinities).
    Float(f64),
    /// A byte string.
    Str(Vec<u8>),
}

macro_rules! literal_from {
    ($variant:ident: $($t:ty),*) => {$(
        impl From<$t> for Literal {
            fn from(v: $t) -> Self {
                Literal::$variant(v.into())
            }
        }
    )*};
}
literal_from!(Int: i8, i16, i32, i64, u8, u16, u32, u64);
literal_from!(Float: f32, f64);
literal_from!(Bool: bool);
impl From<&str> for Literal {
    fn from(v: &str) -> Self {
        Literal::Str(v.as_bytes().to_vec())
    }
}
impl From<String> for Literal {
    fn from(v: String) -> Self {
        Literal::Str(v.into_bytes())
    }
}
impl From<&[u8]> for Literal {
    fn from(v: &[u8]) -> Self {
        Literal::Str(v.to_vec())
    }
}
impl<T: Into<Literal>> From<Vec<T>> for Literal {
    fn from(v: Vec<T>) -> Self {
        Literal::List(v.into_iter().map(Into::into).collect())
    }
}

/// Builds a [`RaggedTensor`] from a nested list literal, inferring the dtype as TensorFlow's
/// `tf.ragged.constant` does (integers: int32, floats: float32, bools, strings) and making every
/// nested dimension ragged. Returns `Result<RaggedTensor>`: mixed dtypes or nesting depths are an
/// `invalid_value` error.
///
/// ```
/// let rt = ragtime_core::ragged![[3, 1, 4, 1], [], [5, 9, 2]].unwrap();
/// assert_eq!(rt.to_string(), "<Ragged int32 [[3, 1, 4, 1], [], [5, 9, 2]]>");
/// ```
#[macro_export]
macro_rules! ragged {
    (@list $($body:tt)*) => {
        $crate::Literal::List($crate::ragged!(@items [] $($body)*))
    };
    (@items [$($acc:expr),*]) => { ::std::vec![$($acc),*] };
    (@items [$($acc:expr),*] [$($inner:tt)*] $(, $($rest:tt)*)?) => {
        $crate::ragged!(@items [$($acc,)* $crate::ragged!(@list $($inner)*)] $($($rest)*)?)
    };
    (@items [$($acc:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::ragged!(@items [$($acc,)* $crate::Literal::from($e)] $($($rest)*)?)
    };
    ($($body:tt)*) => {
        $crate::RaggedTensor::from_literal(&$crate::ragged!(@list $($body)*))
    };
}

const OP: &str = "literal";

/// Nesting facts of a literal: the depth of its leaves and the deepest list.
#[derive(Default)]
struct Depths {
    leaf: Option<usize>,
    max_list: usize,
}

fn scan(lit: &Literal, depth: usize, d: &mut Depths) -> Result<()> {
    match lit {
        Literal::List(items) => {
            d.max_list = d.max_list.max(depth + 1);
            items.iter().try_for_each(|i| scan(i, depth + 1, d))
        }
        _ => match d.leaf {
            Some(l) if l != depth => {
                Err(Error::value(OP, format!("mixed nesting depths: scalars at depth {l} and at depth {depth}")))
            }
            _ => {
                d.leaf = Some(depth);
                Ok(())
            }
        },
    }
}

fn infer_dtype(lit: &Literal, acc: &mut Option<DType>) -> Result<()> {
    let this = match lit {
        Literal::List(items) => return items.iter().try_for_each(|i| infer_dtype(i, acc)),
        Literal::Bool(_) => DType::Bool,
        Literal::Int(v) if i32::try_from(*v).is_ok() => DType::I32,
        Literal::Int(_) => DType::I64,
        Literal::Float(_) => DType::F32,
        Literal::Str(_) => DType::String,
    };
    *acc = Some(match (*acc, this) {
        (None, t) => t,
        (Some(a), b) if a == b => a,
        (Some(DType::I32 | DType::I64), DType::F32) | (Some(DType::F32), DType::I32 | DType::I64) => DType::F32,
        (Some(DType::I32), DType::I64) | (Some(DType::I64), DType::I32) => DType::I64,
        (Some(a), b) => return Err(Error::value(OP, format!("mixed dtypes in one literal: {a} and {b}"))),
    });
    Ok(())
}

impl RaggedTensor {
    /// A tensor from a nested list, inferring dtype and making every nested dim ragged
    /// (a flat list is a dense vector, a scalar a 0-d tensor).
    pub fn from_literal(lit: &Literal) -> Result<Self> {
        Self::from_literal_typed(lit, None, None, None)
    }

    /// A tensor from a nested list with an explicit `dtype`, `ragged_rank` and shape hint (for a
    /// dense tensor, its full shape; for a ragged one, the uniform inner shape of its flat values).
    /// The hint fixes dims that an empty list cannot show.
    pub fn from_literal_typed(
        lit: &Literal,
        dtype: Option<DType>,
        ragged_rank: Option<usize>,
        shape_hint: Option<&[usize]>,
    ) -> Result<Self> {
        // A claimed rank is checked before anything is built for it: an empty list may claim any
        // ragged rank, and one partition is allocated per ragged dimension.
        if let Some(r) = ragged_rank {
            crate::limits::checked_rank(OP, r.saturating_add(1).saturating_add(shape_hint.map_or(0, <[usize]>::len)))?;
        }
        if let Some(h) = shape_hint {
            crate::limits::checked_rank(OP, h.len())?;
        }
        let mut d = Depths::default();
        scan(lit, 0, &mut d)?;
        let depth = d.leaf.unwrap_or(d.max_list).max(d.max_list);
        if let Some(leaf) = d.leaf {
            if leaf < d.max_list {
                return Err(Error::value(
                    OP,
                    format!("mixed nesting depths: scalars at depth {leaf} inside lists {} deep", d.max_list),
                ));
            }
        }
        let inner_len = match (ragged_rank, shape_hint) {
            (Some(0), _) => 0,
            (_, Some(h)) if ragged_rank.is_some() || shape_hint.is_some() => h.len(),
            _ => 0,
        };
        let rr = match ragged_rank {
            Some(r) => r,
            None => depth.saturating_sub(1 + inner_len),
        };
        // Without any element, an all-empty literal (`[]`, `[[], []]`) may stand for a deeper tensor.
        if rr > 0 && depth < rr + 1 && d.leaf.is_some() {
            return Err(Error::value(OP, format!("a literal nested {depth} deep cannot have ragged rank {rr}")));
        }
        let dtype = match dtype {
            Some(t) => t,
            None => {
                let mut acc = None;
                infer_dtype(lit, &mut acc)?;
                acc.unwrap_or(DType::F32)
            }
        };
        let (partitions, items): (Vec<RowPartition>, Vec<&Literal>) =
            if rr == 0 { (Vec::new(), vec![lit]) } else { peel_ragged_levels(list_items(lit), rr)? };
        let (shape, leaves) = uniform_items(&items, rr == 0, shape_hint)?;
        let flat = leaves_to_dense(&leaves, dtype, shape)?;
        RaggedTensor::new(flat, partitions).map_err(|e| Error::value(OP, e.to_string()))
    }

    /// The tensor as nested lists (`tf.RaggedTensor.to_list()`).
    pub fn to_literal(&self) -> Literal {
        let fv = self.flat_values();
        let leaves: Vec<Literal> = dispatch_dtype!(self.dtype(),
            T => fv.as_slice::<T>().unwrap_or(&[]).iter().map(|&v| elem_literal(v)).collect(),
            string => fv.as_strings().map(|s| s.iter().map(|b| Literal::Str(b.to_vec())).collect()).unwrap_or_default());
        let shape = fv.shape();
        let mut items = nest(leaves, &shape[shape.len().min(1)..]);
        if self.is_dense() {
            if shape.is_empty() {
                return items.pop().unwrap_or(Literal::List(vec![]));
            }
            return Literal::List(items);
        }
        for p in self.partitions().iter().rev() {
            let mut it = items.into_iter();
            items = p.row_lengths().iter().map(|&n| Literal::List(it.by_ref().take(n as usize).collect())).collect();
        }
        Literal::List(items)
    }
}

/// Turns the outer rows into `rr` partitions (row lengths level by level) and returns the value items.
fn peel_ragged_levels(rows: &[Literal], rr: usize) -> Result<(Vec<RowPartition>, Vec<&Literal>)> {
    let mut partitions = Vec::with_capacity(rr);
    let mut level: Vec<&Literal> = rows.iter().collect();
    for _ in 0..rr {
        let lengths = level.iter().map(|r| list_len(r)).collect::<Result<Vec<_>>>()?;
        partitions.push(RowPartition::from_row_lengths(&lengths)?);
        level = level.iter().flat_map(|r| list_items(r)).collect();
    }
    Ok((partitions, level))
}

fn list_len(l: &Literal) -> Result<i64> {
    match l {
        Literal::List(items) => Ok(items.len() as i64),
        _ => Err(Error::value(OP, "expected a list in a ragged dimension, got a scalar")),
    }
}

fn list_items(l: &Literal) -> &[Literal] {
    match l {
        Literal::List(items) => items,
        _ => &[],
    }
}

/// Checks that every item has one uniform shape and flattens the leaves. With `whole`, the single
/// item is the whole dense literal; otherwise items are the value rows and the shape gets the
/// item count in front.
fn uniform_items<'a>(
    items: &[&'a Literal],
    whole: bool,
    hint: Option<&[usize]>,
) -> Result<(Vec<usize>, Vec<&'a Literal>)> {
    fn shape_of(l: &Literal) -> Vec<usize> {
        match l {
            Literal::List(items) => {
                let mut s = vec![items.len()];
                if let Some(first) = items.first() {
                    s.extend(shape_of(first));
                }
                s
            }
            _ => vec![],
        }
    }
    fn flatten<'a>(l: &'a Literal, shape: &[usize], out: &mut Vec<&'a Literal>) -> Result<()> {
        match (l, shape.split_first()) {
            (Literal::List(items), Some((&n, rest))) if items.len() == n => {
                items.iter().try_for_each(|i| flatten(i, rest, out))
            }
            (Literal::List(items), Some((&n, _))) => Err(Error::value(
                OP,
                format!("not a tensor: a uniform dimension has rows of length {n} and {}", items.len()),
            )),
            (Literal::List(_), None) => Err(Error::value(OP, "not a tensor: mixed nesting depths")),
            (_, None) => {
                out.push(l);
                Ok(())
            }
            (_, Some(_)) => Err(Error::value(OP, "not a tensor: mixed nesting depths")),
        }
    }
    // A declared shape wins over what the first item shows (an empty list cannot show its inner
    // dims); `flatten` then checks every item against it.
    let item_shape = match hint {
        Some(h) => h.to_vec(),
        None => items.first().map(|i| shape_of(i)).unwrap_or_default(),
    };
    let mut leaves = Vec::new();
    for item in items {
        flatten(item, &item_shape, &mut leaves)?;
    }
    let shape = if whole {
        item_shape
    } else {
        let mut s = vec![items.len()];
        s.extend(item_shape);
        s
    };
    Ok((shape, leaves))
}

fn leaves_to_dense(leaves: &[&Literal], dtype: DType, shape: Vec<usize>) -> Result<DenseTensor> {
    fn convert<T: Element>(l: &Literal) -> Result<T> {
        let bad = || Error::value(OP, format!("{l:?} is not a valid {}", T::DTYPE));
        match l {
            Literal::Bool(b) if T::DTYPE == DType::Bool => Ok(T::from_i64(i64::from(*b))),
            Literal::Int(v) if T::DTYPE != DType::Bool => T::from_int_literal(*v).ok_or_else(bad),
            Literal::Float(v) if T::DTYPE.is_float() => Ok(T::from_f64(*v)),
            _ => Err(bad()),
        }
    }
    dispatch_dtype!(dtype,
    T => {
        let data = leaves.iter().map(|l| convert::<T>(l)).collect::<Result<Vec<T>>>()?;
        DenseTensor::from_vec(shape, data)
    },
    string => {
        let mut b = StringBuilder::with_capacity(leaves.len(), 0);
        for l in leaves {
            match l {
                Literal::Str(s) => b.push(s),
                other => return Err(Error::value(OP, format!("{other:?} is not a string"))),
            }
        }
        Ok(DenseTensor::String(b.finish(shape)?))
    })
}

fn elem_literal<T: Element>(v: T) -> Literal {
    match T::DTYPE {
        DType::Bool => Literal::Bool(v.to_i64() != 0),
        DType::F32 | DType::F64 => Literal::Float(v.to_f64()),
        DType::U64 => Literal::Int(v.to_i64() as u64 as i128),
        _ => Literal::Int(v.to_i64() as i128),
    }
}

/// Groups row-major leaves into nested lists of the given inner shape.
fn nest(leaves: Vec<Literal>, inner: &[usize]) -> Vec<Literal> {
    let mut items = leaves;
    for &n in inner.iter().rev() {
        let mut it = items.into_iter();
        let count = it.len().checked_div(n).unwrap_or(0);
        items = (0..count).map(|_| Literal::List(it.by_ref().take(n).collect())).collect();
    }
    items
}

fn write_elements(f: &mut fmt::Formatter<'_>, rt: &RaggedTensor) -> fmt::Result {
    let fv = rt.flat_values();
    let n = fv.len();
    let elem = |f: &mut fmt::Formatter<'_>, i: usize| -> fmt::Result {
        dispatch_dtype!(rt.dtype(),
        T => {
            let v = fv.as_slice::<T>().map(|s| s[i]).unwrap_or_default();
            if T::DTYPE.is_float() { write!(f, "{v:?}") } else { write!(f, "{v}") }
        },
        string => {
            let b = fv.as_strings().map(|s| s.get(i)).unwrap_or(&[]);
            match std::str::from_utf8(b) {
                Ok(s) => write!(f, "{s:?}"),
                Err(_) => write!(f, "b\"{}\"", b.escape_ascii()),
            }
        })
    };
    let shape = fv.shape();
    if shape.is_empty() {
        return if n == 1 { elem(f, 0) } else { Ok(()) };
    }
    // One level per dimension below the outer one: ragged levels give each item's children by
    // splits, uniform levels by a fixed size (never materialised, so `[2^40, 0]` costs nothing).
    enum Lvl<'a> {
        Splits(&'a [i64]),
        Uniform(usize),
    }
    let mut levels: Vec<Lvl<'_>> = rt.partitions().iter().map(|p| Lvl::Splits(p.row_splits())).collect();
    levels.extend(shape[1..].iter().map(|&d| Lvl::Uniform(d)));
    // An explicit stack instead of recursion (no stack overflow, whatever the rank); past
    // `DISPLAY_ITEMS` items the rest of every open list is elided as `...`, so printing any tensor
    // takes bounded time and output.
    struct Open {
        level: usize,
        next: usize,
        end: usize,
        first: bool,
    }
    let mut budget = DISPLAY_ITEMS;
    let mut stack = vec![Open { level: 0, next: 0, end: rt.nrows(), first: true }];
    f.write_str("[")?;
    while let Some(top) = stack.last_mut() {
        if top.next >= top.end {
            f.write_str("]")?;
            stack.pop();
            continue;
        }
        if !top.first {
            f.write_str(", ")?;
        }
        top.first = false;
        if budget == 0 {
            f.write_str("...]")?;
            stack.pop();
            continue;
        }
        budget -= 1;
        let (level, i) = (top.level, top.next);
        top.next += 1;
        match levels.get(level) {
            Some(Lvl::Splits(s)) => {
                f.write_str("[")?;
                stack.push(Open { level: level + 1, next: s[i] as usize, end: s[i + 1] as usize, first: true });
            }
            Some(Lvl::Uniform(d)) => {
                f.write_str("[")?;
                stack.push(Open { level: level + 1, next: i * d, end: (i + 1) * d, first: true });
            }
            None => elem(f, i)?,
        }
    }
    Ok(())
}

/// How many items (elements and lists) `Display` writes before eliding the rest as `...`.
pub const DISPLAY_ITEMS: usize = 100_000;

/// The values of a tensor as nested lists, without the `<Ragged ...>` frame: see
/// [`RaggedTensor::values_display`].
#[derive(Debug, Clone, Copy)]
pub struct ValuesDisplay<'a>(&'a RaggedTensor);

impl fmt::Display for ValuesDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_elements(f, self.0)
    }
}

impl RaggedTensor {
    /// The values alone, as `Display` shows them inside its frame (`[[1, 2], [3]]`, `3`).
    pub fn values_display(&self) -> ValuesDisplay<'_> {
        ValuesDisplay(self)
    }
}

impl fmt::Display for RaggedTensor {
    /// `<Ragged int32 [[3, 1, 4, 1], [], [5, 9, 2]]>` or `<Tensor float32 shape=[2] [1.0, 2.0]>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_dense() {
            write!(f, "<Tensor {} shape={:?} ", self.dtype(), self.flat_values().shape())?;
        } else {
            write!(f, "<Ragged {} ", self.dtype())?;
        }
        write_elements(f, self)?;
        f.write_str(">")
    }
}
