//! [`Tile`] and [`Reverse`].

use std::any::Any;
use std::collections::BTreeSet;

use ragtime_core::{Dim, Error, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{expect_arity, Attrs, Op};

use crate::structure::remap::{remap, too_large, DimMap};
use crate::util::{fixed_inputs, normalize_axis, one};

/// `tile(x)` with `multiples`: `tf.tile`, generalized to ragged dimensions as TensorFlow does:
/// `multiples[0]` repeats the list of rows, `multiples[d]` repeats the items of every row of
/// dimension `d` (ragged or uniform). A result over the call's element limit is an
/// `resource_exhausted` error, never an allocation attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct Tile {
    multiples: Vec<usize>,
}

impl Tile {
    /// Tiling with one multiple per dimension.
    pub fn new(multiples: Vec<usize>) -> Self {
        Tile { multiples }
    }
    /// From graph-file attributes: `multiples` (required, non-negative).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["multiples"])?;
        let multiples = attrs
            .ints_opt("multiples")?
            .ok_or_else(|| Error::argument("tile", "attribute `multiples` is required"))?
            .into_iter()
            .map(|m| {
                usize::try_from(m).map_err(|_| Error::argument("tile", format!("multiples must be >= 0, got {m}")))
            })
            .collect::<Result<_>>()?;
        Ok(Tile::new(multiples))
    }

    fn check_rank(&self, rank: usize) -> Result<()> {
        if self.multiples.len() == rank {
            return Ok(());
        }
        Err(Error::argument(
            "tile",
            format!("multiples has {} entries for a tensor of rank {rank}", self.multiples.len()),
        ))
    }
}

impl Op for Tile {
    fn name(&self) -> String {
        format!("Tile{{multiples={:?}}}", self.multiples)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("tile", inputs, 1..=1)?;
        let x = &inputs[0];
        self.check_rank(x.rank())?;
        let dims = x
            .dims()
            .iter()
            .zip(&self.multiples)
            .map(|(&d, &m)| match d {
                Dim::Known(n) => {
                    n.checked_mul(m).map(Dim::Known).ok_or_else(|| too_large(ExecContext::detached(), "tile"))
                }
                Dim::Unknown if m == 0 => Ok(Dim::Known(0)),
                other => Ok(other),
            })
            .collect::<Result<_>>()?;
        Ok(vec![TensorType::new(x.dtype(), x.ragged_rank(), dims)?])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("tile", inputs)?;
        self.check_rank(x.rank())?;
        let Some((&times, inner)) = self.multiples.split_first() else {
            return one(x.clone());
        };
        let nrows = x.nrows();
        ctx.checked_len("tile", &[times, nrows])?;
        let outer: Vec<usize> = (0..times).flat_map(|_| 0..nrows).collect();
        let maps: Vec<DimMap> = inner.iter().map(|&m| DimMap::Tile(m)).collect();
        one(remap(ctx, "tile", x, outer, &maps)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

/// `reverse(x)` along the axes in `axis`: `tf.reverse`. A ragged axis reverses the items of every
/// row. As in TensorFlow, a repeated axis is refused for a dense tensor and counts once for a
/// ragged one (whose reverse is a slice with step -1 per listed axis).
#[derive(Debug, Clone, PartialEq)]
pub struct Reverse {
    axes: Vec<i64>,
}

impl Reverse {
    /// Reversal along `axes` (negative counts from the end).
    pub fn new(axes: Vec<i64>) -> Self {
        Reverse { axes }
    }
    /// From graph-file attributes: `axis` (required; a list, or one integer).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis"])?;
        let axes = attrs.ints_opt("axis")?.ok_or_else(|| Error::argument("reverse", "attribute `axis` is required"))?;
        Ok(Reverse::new(axes))
    }

    /// The resolved axes of a tensor of type `x`.
    fn resolve(&self, x: &TensorType) -> Result<BTreeSet<usize>> {
        let mut axes = BTreeSet::new();
        for &a in &self.axes {
            let axis = normalize_axis("reverse", a, x.rank())?;
            if !axes.insert(axis) && !x.is_ragged() {
                return Err(Error::argument("reverse", format!("axis {axis} is listed more than once")));
            }
        }
        Ok(axes)
    }
}

impl Op for Reverse {
    fn name(&self) -> String {
        format!("Reverse{{axis={:?}}}", self.axes)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("reverse", inputs, 1..=1)?;
        self.resolve(&inputs[0])?;
        Ok(vec![inputs[0].clone()])
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs("reverse", inputs)?;
        let axes = self.resolve(&TensorType::of(x))?;
        if axes.is_empty() {
            return one(x.clone());
        }
        ctx.checked_len("reverse", &[x.nrows()])?;
        let outer: Vec<usize> =
            if axes.contains(&0) { (0..x.nrows()).rev().collect() } else { (0..x.nrows()).collect() };
        let maps: Vec<DimMap> =
            (1..x.rank()).map(|d| if axes.contains(&d) { DimMap::Reverse } else { DimMap::Keep }).collect();
        one(remap(ctx, "reverse", x, outer, &maps)?)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }

    crate::grad::structure::movement_vjp_method!();
}

// ---------------------------------------------------------------------------------------------
// fill and ragged.range.
