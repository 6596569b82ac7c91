//! [`Axes`]: the axes a reduction folds (one, several, or all).

use std::fmt;

use ragtime_core::{Error, Result};
use ragtime_graph::Attrs;

use crate::util::normalize_axis;

// ---------------------------------------------------------------------------------------------
// Axes
// ---------------------------------------------------------------------------------------------

/// The axes a reduction folds: all of them, or a list (negative entries count from the end).
///
/// A list of one axis is the single-axis reduction (`Axes::from(1) == Axes::from(vec![1])`, both
/// printed `1`); an empty list folds nothing. Entries are checked against the input's rank when
/// the op is applied ([`Axes::resolve`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Axes {
    /// Every axis (TensorFlow's `axis=None`): the result is a scalar.
    All,
    /// These axes, in the order given.
    List(Vec<i64>),
}

impl Axes {
    /// The axis when exactly one is listed.
    pub fn single(&self) -> Option<i64> {
        match self {
            Axes::List(list) => match list.as_slice() {
                [axis] => Some(*axis),
                _ => None,
            },
            Axes::All => None,
        }
    }

    /// Attribute `name` of a graph-file node: an integer, a list of integers, or null / absent
    /// for all axes.
    pub fn from_attr(attrs: &Attrs, name: &str) -> Result<Axes> {
        let axes = attrs.ints_opt(name)?.map_or(Axes::All, Axes::List);
        if let Axes::List(list) = &axes {
            // No tensor has more axes than the rank limit: a longer list is refused before it is read.
            ragtime_core::limits::checked_rank(attrs.op(), list.len()).map_err(|_| {
                Error::argument(
                    attrs.op(),
                    format!(
                        "attribute `{name}` lists {} axes, more than the rank limit {}",
                        list.len(),
                        ragtime_core::limits::MAX_RANK
                    ),
                )
            })?;
        }
        Ok(axes)
    }

    /// The listed axes resolved into `0..rank`, in the order given (`None` for [`Axes::All`]).
    /// An axis outside `-rank..rank`, or an axis named twice (`1` and `-1` of a rank-2 tensor
    /// included), is `invalid_argument`, naming `op`.
    pub fn resolve(&self, op: &str, rank: usize) -> Result<Option<Vec<usize>>> {
        let Axes::List(list) = self else {
            return Ok(None);
        };
        if list.len() > rank {
            // Some axis is out of range or named twice: find which, without quadratic work.
            let mut seen = vec![false; rank];
            for &axis in list {
                let a = normalize_axis(op, axis, rank)?;
                if std::mem::replace(&mut seen[a], true) {
                    return Err(Error::argument(
                        op,
                        format!(
                            "axis list of {} entries names axis {a} twice (for a tensor of rank {rank})",
                            list.len()
                        ),
                    ));
                }
            }
        }
        let mut resolved = Vec::with_capacity(list.len());
        for &axis in list {
            let a = normalize_axis(op, axis, rank)?;
            if resolved.contains(&a) {
                return Err(Error::argument(
                    op,
                    format!("axis list {self} names axis {a} twice (for a tensor of rank {rank})"),
                ));
            }
            resolved.push(a);
        }
        Ok(Some(resolved))
    }
}

impl fmt::Display for Axes {
    /// `None`, a single axis (`1`), or a list (`[0, 2]`): the form used in op names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Axes::All => f.write_str("None"),
            Axes::List(list) => match list.as_slice() {
                [axis] => write!(f, "{axis}"),
                _ => write!(f, "{list:?}"),
            },
        }
    }
}

impl From<i64> for Axes {
    fn from(axis: i64) -> Self {
        Axes::List(vec![axis])
    }
}

impl From<Vec<i64>> for Axes {
    fn from(axes: Vec<i64>) -> Self {
        Axes::List(axes)
    }
}

impl From<&[i64]> for Axes {
    fn from(axes: &[i64]) -> Self {
        Axes::List(axes.to_vec())
    }
}

impl<const N: usize> From<[i64; N]> for Axes {
    fn from(axes: [i64; N]) -> Self {
        Axes::List(axes.to_vec())
    }
}

impl From<Option<i64>> for Axes {
    /// `None` is every axis.
    fn from(axis: Option<i64>) -> Self {
        axis.map_or(Axes::All, Axes::from)
    }
}
