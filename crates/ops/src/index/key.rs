//! [`Key`] and [`KeyItem`]: a subscript (`[1, :, ::2, newaxis]`), parsed from text, built
//! from Rust ranges or with the `s!` macro.

use std::fmt;
use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};
use std::str::FromStr;

use ragtime_core::{Error, Result};

pub(crate) const OP: &str = "getitem";

/// What a [`Key`] takes along one dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyItem {
    /// One position (negative counts from the end); the dimension disappears.
    Index(i64),
    /// Positions `start..stop` every `step` with Python's rules (negative bounds count from the end,
    /// bounds are clipped to the dimension, a negative step walks backwards; `None` is the default).
    Slice {
        /// First position (default: the first, or the last for a negative step).
        start: Option<i64>,
        /// Position to stop before (default: past the end, or before the start for a negative step).
        stop: Option<i64>,
        /// Stride (default 1; 0 is refused).
        step: Option<i64>,
    },
    /// `...`: as many full slices as needed to cover the dimensions the other items leave out.
    Ellipsis,
    /// `None` (`tf.newaxis`): inserts a dimension of size 1.
    NewAxis,
}

impl KeyItem {
    /// The slice `start:stop:step` (each part optional).
    pub fn slice(start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Self {
        KeyItem::Slice { start, stop, step }
    }

    /// The full slice `:`.
    pub fn all() -> Self {
        KeyItem::slice(None, None, None)
    }

    /// A range with a step (`s![..;2]`, `s![1..;-1]` in the macro): `start:stop:step`. An index
    /// `i` counts as the range `i..=i`.
    pub fn stepped(range: impl Into<KeyItem>, step: i64) -> Self {
        match range.into() {
            KeyItem::Slice { start, stop, .. } => KeyItem::Slice { start, stop, step: Some(step) },
            KeyItem::Index(i) => KeyItem::Slice { start: Some(i), stop: inclusive_stop(i), step: Some(step) },
            other => other,
        }
    }
}

impl fmt::Display for KeyItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |v: &Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
        match self {
            KeyItem::Index(i) => write!(f, "{i}"),
            KeyItem::Slice { start, stop, step: None } => write!(f, "{}:{}", part(start), part(stop)),
            KeyItem::Slice { start, stop, step } => write!(f, "{}:{}:{}", part(start), part(stop), part(step)),
            KeyItem::Ellipsis => f.write_str("..."),
            KeyItem::NewAxis => f.write_str("None"),
        }
    }
}

macro_rules! key_item_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for KeyItem {
            fn from(i: $t) -> Self {
                KeyItem::Index(i64::from(i))
            }
        }
        impl From<Range<$t>> for KeyItem {
            fn from(r: Range<$t>) -> Self {
                KeyItem::slice(Some(i64::from(r.start)), Some(i64::from(r.end)), None)
            }
        }
        impl From<RangeFrom<$t>> for KeyItem {
            fn from(r: RangeFrom<$t>) -> Self {
                KeyItem::slice(Some(i64::from(r.start)), None, None)
            }
        }
        impl From<RangeTo<$t>> for KeyItem {
            fn from(r: RangeTo<$t>) -> Self {
                KeyItem::slice(None, Some(i64::from(r.end)), None)
            }
        }
        impl From<RangeInclusive<$t>> for KeyItem {
            fn from(r: RangeInclusive<$t>) -> Self {
                KeyItem::slice(Some(i64::from(*r.start())), inclusive_stop(i64::from(*r.end())), None)
            }
        }
        impl From<RangeToInclusive<$t>> for KeyItem {
            fn from(r: RangeToInclusive<$t>) -> Self {
                KeyItem::slice(None, inclusive_stop(i64::from(r.end)), None)
            }
        }
    )*};
}
key_item_from_int!(i32, i64);

/// The exclusive stop of an inclusive end: `..=-1` runs to the end of the dimension.
fn inclusive_stop(end: i64) -> Option<i64> {
    if end == -1 {
        None
    } else {
        end.checked_add(1)
    }
}

impl From<RangeFull> for KeyItem {
    fn from(_: RangeFull) -> Self {
        KeyItem::all()
    }
}

/// A whole index expression, one [`KeyItem`] per comma: what `x[...]` holds in Python.
///
/// The graph-file syntax is Python's without the brackets: `"1, 2"`, `":, -2:"`, `"::2"`, `"...,
/// 0"`, `"None, :"`; `"()"` is the empty key (the whole tensor). [`Key`]'s `Display` prints that syntax back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Key(pub Vec<KeyItem>);

impl Key {
    /// The items, in order.
    pub fn items(&self) -> &[KeyItem] {
        &self.0
    }
}

impl<T: Into<KeyItem>> From<T> for Key {
    fn from(item: T) -> Self {
        Key(vec![item.into()])
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("()");
        }
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

impl FromStr for Key {
    type Err = Error;

    /// Parses Python index syntax without brackets; a malformed key is an `invalid_argument` error.
    fn from_str(text: &str) -> Result<Self> {
        let bad = |why: &str| Error::argument(OP, format!("malformed key {text:?}: {why}"));
        let trimmed = text.trim();
        if trimmed == "()" {
            return Ok(Key::default());
        }
        if trimmed.is_empty() {
            return Err(bad("the key is empty (write \"()\" for the whole tensor)"));
        }
        if trimmed.split(',').nth(MAX_KEY_ITEMS + 1).is_some() {
            return Err(bad(&format!("more than {MAX_KEY_ITEMS} items")));
        }
        let mut parts: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        // Python accepts one trailing comma (`x[1,]`).
        if parts.len() > 1 && parts.last() == Some(&"") {
            parts.pop();
        }
        let int = |s: &str| -> Result<Option<i64>> {
            if s.is_empty() {
                return Ok(None);
            }
            let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(&format!("{s:?} is not an integer")));
            }
            s.parse::<i64>().map(Some).map_err(|_| bad(&format!("{s:?} does not fit in 64 bits")))
        };
        let items = parts
            .into_iter()
            .map(|part| match part {
                "" => Err(bad("an item is empty")),
                "..." => Ok(KeyItem::Ellipsis),
                "None" | "newaxis" | "tf.newaxis" => Ok(KeyItem::NewAxis),
                _ if part.contains(':') => {
                    let bounds: Vec<&str> = part.split(':').map(str::trim).collect();
                    if bounds.len() > 3 {
                        return Err(bad(&format!("{part:?} has more than two colons")));
                    }
                    Ok(KeyItem::Slice {
                        start: int(bounds[0])?,
                        stop: int(bounds[1])?,
                        step: bounds.get(2).map(|s| int(s)).transpose()?.flatten(),
                    })
                }
                _ => Ok(KeyItem::Index(int(part)?.ok_or_else(|| bad("an item is empty"))?)),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Key(items))
    }
}

/// Builds a [`Key`] from Rust index expressions: integers, ranges and [`KeyItem`]s; a range
/// followed by `;step` has a step, as in `ndarray::s!` (`s![..;2]` is Python's `::2`).
///
/// ```
/// use ragtime_ops::index::{Key, KeyItem};
/// assert_eq!(ragtime_ops::s![.., -2..].to_string(), ":, -2:");
/// assert_eq!(ragtime_ops::s![1, 2], "1, 2".parse::<Key>().unwrap());
/// assert_eq!(ragtime_ops::s![1.., KeyItem::slice(None, None, Some(-1))].to_string(), "1:, ::-1");
/// assert_eq!(ragtime_ops::s![..;-1, 1..4;2].to_string(), "::-1, 1:4:2");
/// ```
#[macro_export]
macro_rules! s {
    (@items [$($acc:expr),*]) => {
        $crate::index::Key(::std::vec![$($acc),*])
    };
    (@items [$($acc:expr),*] $range:expr ; $step:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@items [$($acc,)* $crate::index::KeyItem::stepped($range, $step)] $($($rest)*)?)
    };
    (@items [$($acc:expr),*] $item:expr $(, $($rest:tt)*)?) => {
        $crate::s!(@items [$($acc,)* $crate::index::KeyItem::from($item)] $($($rest)*)?)
    };
    ($($items:tt)*) => {
        $crate::s!(@items [] $($items)*)
    };
}

/// The most items a key may have: each item consumes an input dim or adds an output dim, both
/// at most [`MAX_RANK`](ragtime_core::limits::MAX_RANK), plus one `...`. Longer keys are refused
/// before they are walked (the walk recurses once per item).
pub const MAX_KEY_ITEMS: usize = 2 * ragtime_core::limits::MAX_RANK + 1;

pub(crate) fn check_key_len(key: &Key) -> Result<()> {
    if key.0.len() > MAX_KEY_ITEMS {
        return Err(Error::argument(
            OP,
            format!("the key has {} items, more than the limit of {MAX_KEY_ITEMS}", key.0.len()),
        ));
    }
    Ok(())
}
