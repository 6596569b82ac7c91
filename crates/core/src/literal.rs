//! Nested-list literals: the `ragged!` macro, `RaggedTensor::from_literal` (with TensorFlow's dtype inference), `to_literal`, and `Display`.

use std::fmt;

use crate::{
    dispatch_dtype, DType, DenseTensor, Element, Error, Level, RaggedTensor, Result, RowPartition, StringBuilder,
};

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

/// Builds a [`RaggedTensor`] from a nested list literal, making every nested dimension ragged
/// (`tf.ragged.constant`). Returns `Result<RaggedTensor>`: mixed dtypes or nesting depths are an
/// `invalid_value` error.
///
/// The dtype comes from the Rust types of the elements: `1i64` is int64, `1.5f64` float64,
/// `1u64 << 63` uint64, a variable its type, `true` bool, `"a"` string. Unsuffixed numeric
/// literals take the type of the suffixed or typed elements around them (`[1i64, 2]` is int64),
/// and when every number is unsuffixed TensorFlow's defaults apply: int32 for integers (int64
/// past its range), float32 for floats and for integers mixed with floats. A list without any
/// element is float32. Elements of two different Rust types (`[1i32, 2i64]`) are an error.
///
/// ```
/// use ragtime_core::{ragged, DType};
/// let rt = ragged![[3, 1, 4, 1], [], [5, 9, 2]].unwrap();
/// assert_eq!(rt.to_string(), "<Ragged int32 [[3, 1, 4, 1], [], [5, 9, 2]]>");
/// assert_eq!(ragged![[1i64, 2], []].unwrap().dtype(), DType::I64);
/// assert_eq!(ragged![[1.5f64]].unwrap().dtype(), DType::F64);
/// assert_eq!(ragged![[1u64 << 63]].unwrap().to_nested::<Vec<Vec<u64>>>().unwrap(), [[1u64 << 63]]);
/// assert_eq!(ragged![[0.5, 1]].unwrap().dtype(), DType::F32);
/// ```
#[macro_export]
macro_rules! ragged {
    (@list $($body:tt)*) => {
        $crate::TypedLiteral::list($crate::ragged!(@items [] $($body)*))
    };
    (@items [$($acc:expr),*]) => { ::std::vec![$($acc),*] };
    (@items [$($acc:expr),*] [$($inner:tt)*] $(, $($rest:tt)*)?) => {
        $crate::ragged!(@items [$($acc,)* $crate::ragged!(@list $($inner)*)] $($($rest)*)?)
    };
    (@items [$($acc:expr),*] $e:expr $(, $($rest:tt)*)?) => {
        $crate::ragged!(@items [$($acc,)* $crate::TypedLiteral::leaf($e, ::core::stringify!($e))] $($($rest)*)?)
    };
    ($($body:tt)*) => {
        $crate::ragged!(@list $($body)*).build()
    };
}

/// A literal with the dtype evidence of its Rust elements: what [`ragged!`] builds before
/// choosing the dtype (see the macro for the rules).
#[derive(Debug, Clone, PartialEq)]
pub struct TypedLiteral {
    literal: Literal,
    /// The dtype of the typed elements (suffixed literals, variables), or the first two that differ.
    typed: Option<std::result::Result<DType, (DType, DType)>>,
    /// Some element is an unsuffixed float literal.
    unsuffixed_float: bool,
    /// Some element is an unsuffixed numeric literal.
    unsuffixed: bool,
}

impl TypedLiteral {
    /// One element: `text` is its source (`stringify!`), which tells an unsuffixed numeric literal
    /// (`2`, `1.5`, `-3e2`), whose Rust type is only Rust's default, from a typed one.
    pub fn leaf<N: crate::Nested>(value: N, text: &str) -> Self {
        let unsuffixed = N::DEPTH == 0 && is_unsuffixed_number(text);
        let dtype = <N::Leaf as crate::Scalar>::DTYPE;
        TypedLiteral {
            literal: value.into_literal(),
            typed: (!unsuffixed).then_some(Ok(dtype)),
            unsuffixed_float: unsuffixed && dtype.is_float(),
            unsuffixed,
        }
    }

    /// A list of elements or lists.
    pub fn list(items: Vec<TypedLiteral>) -> Self {
        let mut typed = None;
        let (mut unsuffixed_float, mut unsuffixed) = (false, false);
        let mut list = Vec::with_capacity(items.len());
        for item in items {
            unsuffixed_float |= item.unsuffixed_float;
            unsuffixed |= item.unsuffixed;
            typed = match (typed, item.typed) {
                (None, t) | (t, None) => t,
                (Some(Err(e)), _) | (_, Some(Err(e))) => Some(Err(e)),
                (Some(Ok(a)), Some(Ok(b))) if a == b => Some(Ok(a)),
                (Some(Ok(a)), Some(Ok(b))) => Some(Err((a, b))),
            };
            list.push(item.literal);
        }
        TypedLiteral { literal: Literal::List(list), typed, unsuffixed_float, unsuffixed }
    }

    /// The untyped literal.
    pub fn literal(&self) -> &Literal {
        &self.literal
    }

    /// The dtype the elements call for, `None` when every element is an unsuffixed literal.
    pub fn dtype(&self) -> Result<Option<DType>> {
        match self.typed {
            None => Ok(None),
            Some(Err((a, b))) => Err(Error::value(
                OP,
                format!("mixed dtypes in one literal: {a} and {b} (give every element the same Rust type)"),
            )),
            Some(Ok(t)) if self.unsuffixed && !t.is_numeric() => {
                Err(Error::value(OP, format!("mixed dtypes in one literal: {t} and unsuffixed numbers")))
            }
            Some(Ok(t)) if self.unsuffixed_float && !t.is_float() => Err(Error::value(
                OP,
                format!(
                    "mixed dtypes in one literal: {t} and an unsuffixed float (write it as an integer, or the others as floats)"
                ),
            )),
            Some(Ok(t)) => Ok(Some(t)),
        }
    }

    /// The tensor, with every nested dimension ragged.
    pub fn build(&self) -> Result<RaggedTensor> {
        RaggedTensor::from_literal_typed(&self.literal, self.dtype()?, None, None)
    }
}

/// True for the source of an unsuffixed numeric literal or an expression of them only (`2`,
/// `-1.5`, `1e-3`, `(1 + 2)`): no type suffix, no identifier.
fn is_unsuffixed_number(text: &str) -> bool {
    let mut chars = text.chars().filter(|c| !c.is_whitespace() && !matches!(c, '-' | '('));
    matches!(chars.next(), Some(c) if c.is_ascii_digit())
        && text.chars().all(|c| c.is_ascii_digit() || c.is_whitespace() || "._eE+-*/%()".contains(c))
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

/// Writes the values as nested lists. Unless `full`, a tensor of more than [`SUMMARY_THRESHOLD`]
/// items (elements and lists) is summarized as numpy does: each list longer than
/// `2 * SUMMARY_EDGE_ITEMS` shows its first and last [`SUMMARY_EDGE_ITEMS`] items around `...`.
fn write_elements(f: &mut fmt::Formatter<'_>, rt: &RaggedTensor, full: bool) -> fmt::Result {
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
    let edge = (!full && item_count(rt) > SUMMARY_THRESHOLD).then_some(SUMMARY_EDGE_ITEMS);
    // An explicit stack instead of recursion (no stack overflow, whatever the rank); unless
    // `full`, past `DISPLAY_ITEMS` items the rest of every open list is elided as `...`, so
    // printing any tensor takes bounded time and output.
    struct Open {
        level: usize,
        next: usize,
        start: usize,
        end: usize,
        first: bool,
    }
    let mut budget = if full { usize::MAX } else { DISPLAY_ITEMS };
    let mut stack = vec![Open { level: 0, next: 0, start: 0, end: rt.nrows(), first: true }];
    f.write_str("[")?;
    while let Some(top) = stack.last_mut() {
        if top.next >= top.end {
            f.write_str("]")?;
            stack.pop();
            continue;
        }
        if let Some(e) = edge {
            if top.end - top.start > 2 * e && top.next == top.start + e {
                f.write_str(", ...")?;
                top.next = top.end - e;
                continue;
            }
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
                let (start, end) = (s[i] as usize, s[i + 1] as usize);
                stack.push(Open { level: level + 1, next: start, start, end, first: true });
            }
            Some(Lvl::Uniform(d)) => {
                f.write_str("[")?;
                stack.push(Open { level: level + 1, next: i * d, start: i * d, end: (i + 1) * d, first: true });
            }
            None => elem(f, i)?,
        }
    }
    Ok(())
}

/// The number of items (elements and lists) of a tensor, saturating.
fn item_count(rt: &RaggedTensor) -> usize {
    let mut count = rt.nrows();
    let mut total = count;
    for level in rt.levels().iter().skip(1) {
        count = match level {
            Level::Ragged(p) => p.nvals(),
            Level::Uniform(d) => count.saturating_mul(*d),
        };
        total = total.saturating_add(count);
    }
    total
}

/// How many items (elements and lists) `Display` writes before eliding the rest as `...`
/// (`{:#}` writes everything).
pub const DISPLAY_ITEMS: usize = 100_000;

/// Tensors with more items (elements and lists) than this are summarized by `Display` (numpy's
/// `threshold`); `{:#}` writes everything.
pub const SUMMARY_THRESHOLD: usize = 1000;

/// How many items a summarized list shows at each end (numpy's `edgeitems`).
pub const SUMMARY_EDGE_ITEMS: usize = 3;

/// The values of a tensor as nested lists, without the `<Ragged ...>` frame: see
/// [`RaggedTensor::values_display`].
#[derive(Debug, Clone, Copy)]
pub struct ValuesDisplay<'a>(&'a RaggedTensor);

impl fmt::Display for ValuesDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_elements(f, self.0, f.alternate())
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
    /// A tensor of more than `SUMMARY_THRESHOLD` (1,000) items is summarized (`[0, 1, 2, ..., 7, 8, 9]`
    /// at every level); `{:#}` prints every value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_dense() {
            write!(f, "<Tensor {} shape={:?} ", self.dtype(), self.flat_values().shape())?;
        } else {
            write!(f, "<Ragged {} ", self.dtype())?;
        }
        write_elements(f, self, f.alternate())?;
        f.write_str(">")
    }
}

impl fmt::Debug for RaggedTensor {
    /// `RaggedTensor { dtype: int32, shape: [3, None], row_splits: [[0, 4, 4, 7]], values: [[3, 1, 4, 1], [], [5, 9, 2]] }`,
    /// with long splits and values summarized (`{:#?}` prints every value).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RaggedTensor");
        d.field("dtype", &DebugText(self.dtype().name()));
        d.field("shape", &self.shape());
        if !self.is_dense() {
            d.field("row_splits", &DebugText(&summarize_splits(self.partitions())));
        }
        d.field("values", &DebugText(&self.values_display().to_string()));
        d.finish()
    }
}

/// Writes a string as is in a `Debug` struct field.
pub(crate) struct DebugText<'a>(pub(crate) &'a str);

impl fmt::Debug for DebugText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

/// `[[0, 4, 4, 7], ...]`: the row splits of each partition, long ones summarized.
fn summarize_splits(partitions: &[RowPartition]) -> String {
    let lists: Vec<String> = partitions.iter().map(|p| summarize_list(p.row_splits())).collect();
    format!("[{}]", lists.join(", "))
}

/// A list of numbers, summarized past [`SUMMARY_THRESHOLD`] items.
pub(crate) fn summarize_list<T: fmt::Display>(items: &[T]) -> String {
    let show = |items: &[T]| items.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ");
    if items.len() > SUMMARY_THRESHOLD {
        let e = SUMMARY_EDGE_ITEMS;
        format!("[{}, ..., {}]", show(&items[..e]), show(&items[items.len() - e..]))
    } else {
        format!("[{}]", show(items))
    }
}

#[cfg(test)]
mod tests {
    use crate::{DType, ErrorKind};

    #[test]
    fn macro_dtypes_follow_rust_suffixes_and_types() {
        assert_eq!(ragged![[1i64, 2], []].unwrap().dtype(), DType::I64, "an unsuffixed 2 joins the int64");
        assert_eq!(ragged![[1], [2i64]].unwrap().dtype(), DType::I64, "suffixes count in any row");
        assert_eq!(ragged![[1.5f64]].unwrap().dtype(), DType::F64);
        assert_eq!(ragged![[1.5f64, 2]].unwrap().dtype(), DType::F64, "an unsuffixed integer joins floats");
        assert_eq!(ragged![[0.1f64, 0.2]].unwrap().to_nested::<Vec<Vec<f64>>>().unwrap(), [[0.1, 0.2]]);
        assert_eq!(ragged![[1u64 << 63]].unwrap().to_nested::<Vec<Vec<u64>>>().unwrap(), [[1u64 << 63]]);
        assert_eq!(ragged![[255u8], [0]].unwrap().dtype(), DType::U8);
        assert_eq!(ragged![[-1i8]].unwrap().dtype(), DType::I8);
        let n: i16 = 7;
        assert_eq!(ragged![[n, 1], []].unwrap().dtype(), DType::I16, "a variable has its type");
        let row = vec![1u32, 2];
        assert_eq!(ragged![row, [3]].unwrap().to_nested::<Vec<Vec<u32>>>().unwrap(), [vec![1, 2], vec![3]]);
        assert_eq!(ragged![[[1i64]], [[]]].unwrap().ragged_rank(), 2, "deep nesting keeps the dtype");
        assert_eq!(ragged![[[1i64]], [[]]].unwrap().dtype(), DType::I64);
        assert_eq!(ragged![[true, false], []].unwrap().dtype(), DType::Bool);
        assert_eq!(ragged![["a"], []].unwrap().dtype(), DType::String);
        let owned = String::from("b");
        assert_eq!(ragged![[owned, "c"]].unwrap().dtype(), DType::String);
    }

    #[test]
    fn unsuffixed_literals_keep_tensorflow_defaults() {
        assert_eq!(ragged![[1, 2], []].unwrap().dtype(), DType::I32);
        assert_eq!(ragged![[1.5, 2.0]].unwrap().dtype(), DType::F32);
        assert_eq!(ragged![[1, 2.5]].unwrap().dtype(), DType::F32, "integers among floats: float32");
        assert_eq!(ragged![[-1e3, (2.5)]].unwrap().dtype(), DType::F32);
        assert_eq!(ragged![[], []].unwrap().dtype(), DType::F32, "no element: float32");
        assert_eq!(ragged![1, 2, 3].unwrap().rank(), 1, "a flat list is a dense vector");
    }

    #[test]
    fn mixed_rust_types_are_refused() {
        let e = ragged![[1i32, 2i64]].unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidValue);
        assert!(e.to_string().contains("int32 and int64"), "{e}");
        let e = ragged![[1i64, 2.5]].unwrap_err();
        assert!(e.to_string().contains("unsuffixed float"), "{e}");
        assert_eq!(ragged![[300, 1u8]].unwrap_err().kind(), ErrorKind::InvalidValue, "300 does not fit uint8");
        let e = ragged![[true, 1]].unwrap_err();
        assert!(e.to_string().contains("mixed dtypes in one literal: bool and unsuffixed numbers"), "{e}");
        assert!(ragged![["a"], [1.5]].unwrap_err().to_string().contains("mixed dtypes"));
        assert_eq!(ragged![[1i64], 2].unwrap_err().kind(), ErrorKind::InvalidValue, "mixed depths");
    }
}

#[cfg(test)]
mod display_tests {
    use crate::{DenseTensor, RaggedTensor, StringTensor};

    #[test]
    fn large_tensors_are_summarized_like_numpy_and_alternate_prints_everything() {
        let big = RaggedTensor::from((0..1_000_000).collect::<Vec<i32>>());
        let text = big.to_string();
        assert_eq!(text, "<Tensor int32 shape=[1000000] [0, 1, 2, ..., 999997, 999998, 999999]>");
        let all = format!("{big:#}");
        assert!(all.len() > 6_000_000 && all.contains(", 500000, "), "{{:#}} prints every value");
        let small = RaggedTensor::from((0..1000).collect::<Vec<i32>>());
        assert!(!small.to_string().contains("..."), "1000 items or fewer: printed in full");
        let rows: Vec<Vec<i64>> = (0..2000).map(|i| (0..i % 5).collect()).collect();
        let ragged = RaggedTensor::try_from(rows).unwrap();
        assert_eq!(
            ragged.to_string(),
            "<Ragged int64 [[], [0], [0, 1], ..., [0, 1], [0, 1, 2], [0, 1, 2, 3]]>",
            "summarized rows and short rows shown in full"
        );
    }

    #[test]
    fn debug_shows_dtype_shape_splits_and_values() {
        let t = ragged![[3, 1, 4, 1], [], [5, 9, 2]].unwrap();
        assert_eq!(
            format!("{t:?}"),
            "RaggedTensor { dtype: int32, shape: [Some(3), None], row_splits: [[0, 4, 4, 7]], values: [[3, 1, 4, 1], [], [5, 9, 2]] }"
        );
        assert_eq!(format!("{:?}", t.partitions()[0]), "RowPartition { row_splits: [0, 4, 4, 7] }");
        let d = DenseTensor::from(vec![1.5f32, 2.0]);
        assert_eq!(format!("{d:?}"), "DenseTensor { dtype: float32, shape: [2], values: [1.5, 2.0] }");
        let s = StringTensor::from_strings(&["a", "b"], vec![2]).unwrap();
        assert_eq!(format!("{s:?}"), r#"StringTensor { shape: [2], values: ["a", "b"] }"#);
        let long = RaggedTensor::try_from((0..5000).map(|_| vec![1i32]).collect::<Vec<_>>()).unwrap();
        let text = format!("{long:?}");
        assert!(text.contains("row_splits: [[0, 1, 2, ..., 4998, 4999, 5000]]") && text.len() < 200, "{text}");
    }
}
