//! [`Join`] (elementwise `strings.join`) and [`ReduceJoin`] (`strings.reduce_join` over axes).

use std::any::Any;
use std::borrow::Cow;

use ragtime_core::{
    DType, DenseTensor, Error, ExecContext, RaggedTensor, Result, StringBuilder, StringTensor, TensorType,
};
use ragtime_graph::{expect_arity, Attrs, Op};
use ragtime_runtime::parallel;

use crate::broadcast::{broadcast_types, broadcast_values};
use crate::reduce::axes::Axes;
use crate::reduce::plan::{plan_reduction, reduced_type, ReductionStage};
use crate::strings::common::{expect_string, string_column, string_column_of, JOIN, REDUCE_JOIN};
use crate::util::{fixed_inputs, one};

/// `tf.strings.join`: joins its inputs element by element with `separator`, broadcasting them as
/// the other elementwise ops do (scalars, per-row values, same-structure ragged tensors).
#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    separator: String,
}

impl Join {
    /// Joins with `separator` between the inputs' strings.
    pub fn new(separator: &str) -> Self {
        Join { separator: separator.to_owned() }
    }

    /// From graph-file attributes: `separator` (optional, `""` by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["separator"])?;
        Ok(Join::new(attrs.str_opt("separator")?.unwrap_or("")))
    }

    /// The separator.
    pub fn separator(&self) -> &str {
        &self.separator
    }
}

impl Op for Join {
    fn name(&self) -> String {
        format!("StringsJoin{{separator={:?}}}", self.separator)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(JOIN, inputs, 1..=usize::MAX)?;
        for (i, ty) in inputs.iter().enumerate() {
            expect_string(JOIN, i, ty)?;
        }
        Ok(vec![broadcast_types(JOIN, inputs)?.with_dtype(DType::String)])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        if inputs.is_empty() {
            return Err(Error::argument(JOIN, "takes at least 1 input, got 0"));
        }
        for (i, x) in inputs.iter().enumerate() {
            string_column(JOIN, i, x)?;
        }
        let b = broadcast_values(ctx, JOIN, inputs)?;
        let operands =
            b.operands.iter().enumerate().map(|(i, t)| string_column_of(JOIN, i, t)).collect::<Result<Vec<_>>>()?;
        let n = ctx.checked_size(JOIN, &b.flat_shape, 8)?;
        let sep = self.separator.as_bytes();
        // The result's bytes, counted before anything is joined (a broadcast operand repeats its
        // strings, and the separator comes once per join).
        let operand_bytes = operands.iter().map(|c| {
            let o = c.offsets();
            (o[o.len() - 1] - o[0]) as u128
        });
        let seps = n as u128 * operands.len().saturating_sub(1) as u128 * sep.len() as u128;
        let bytes = operand_bytes.sum::<u128>() + seps;
        ctx.checked_bytes(JOIN, usize::try_from(bytes).unwrap_or(usize::MAX), "the joined strings")?;
        if operands.iter().all(|c| c.len() == n) {
            // Every operand has one string per element (nothing broadcast): copy byte ranges
            // straight into a buffer of the exact size.
            let columns: Vec<(&[u8], &[i64])> = operands.iter().map(|c| (&c.bytes()[..], &c.offsets()[..])).collect();
            // Offsets first, then the bytes, filled in parallel by groups of elements.
            let seps_per_join = (sep.len() * columns.len().saturating_sub(1)) as i64;
            let mut offsets: Vec<i64> = ctx.try_vec(JOIN, n + 1)?;
            offsets.push(0);
            let mut end = 0i64;
            for e in 0..n {
                end += seps_per_join + columns.iter().map(|&(_, o)| o[e + 1] - o[e]).sum::<i64>();
                offsets.push(end);
            }
            let buf: Vec<u8> = parallel::spans_filled(ctx, JOIN, &offsets, |elements, chunk| {
                let mut at = 0;
                for e in elements {
                    for (k, &(b, o)) in columns.iter().enumerate() {
                        if k > 0 {
                            at = ragtime_core::append_bytes(chunk, at, sep, 0, sep.len());
                        }
                        at = ragtime_core::append_bytes(chunk, at, b, o[e] as usize, o[e + 1] as usize);
                    }
                }
            })?;
            let column = StringTensor::from_parts(buf, offsets, b.flat_shape.clone())?;
            return one(b.finish(DenseTensor::String(column))?);
        }
        let mut out = StringBuilder::in_call(ctx, n, bytes as usize);
        for e in 0..n {
            for (k, col) in operands.iter().enumerate() {
                if k > 0 {
                    out.extend(sep);
                }
                out.extend(col.get(e));
            }
            out.end_string();
        }
        one(b.finish(DenseTensor::String(out.finish(b.flat_shape.clone())?))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.reduce_join
// ---------------------------------------------------------------------------------------------

/// `tf.strings.reduce_join`: joins the strings along `axis` (every axis, one, or several) with
/// `separator`, in order; an empty group gives `""`. The grouping is the one of the numeric
/// reductions ([`plan_reduction`]): a ragged input is joined one axis at a time from the
/// innermost listed axis outwards, so an empty inner group still stands between separators
/// (`[["a"], [], ["b"]]` over `[0, 1]` with `"-"` gives `"a--b"`); a dense input joins each
/// group at once with the first listed axis varying fastest (`[["a", "b"], ["c", "d"]]` over
/// `[0, 1]` gives `"acbd"`, over `[1, 0]` `"abcd"`).
#[derive(Debug, Clone, PartialEq)]
pub struct ReduceJoin {
    axis: Axes,
    keepdims: bool,
    separator: String,
}

impl ReduceJoin {
    /// Joins along `axis` (negative counts from the end; `None` joins everything into a scalar).
    pub fn new(axis: Option<i64>, separator: &str) -> Self {
        Self::with_axes(axis, separator)
    }

    /// Joins along `axes`: `Axes::All`, an axis (`1`), or a list (`vec![0, 2]`, `[0, -1]`).
    pub fn with_axes(axes: impl Into<Axes>, separator: &str) -> Self {
        ReduceJoin { axis: axes.into(), keepdims: false, separator: separator.to_owned() }
    }

    /// Keeps each joined dimension with size 1.
    pub fn with_keepdims(mut self, keepdims: bool) -> Self {
        self.keepdims = keepdims;
        self
    }

    /// From graph-file attributes: `axis` (integer, list of integers, or null), `separator`
    /// (optional, `""` by default), `keepdims` (optional, false by default).
    pub fn from_attrs(attrs: &Attrs) -> Result<Self> {
        attrs.only(&["axis", "separator", "keepdims"])?;
        Ok(ReduceJoin::with_axes(Axes::from_attr(attrs, "axis")?, attrs.str_opt("separator")?.unwrap_or(""))
            .with_keepdims(attrs.bool_opt("keepdims")?.unwrap_or(false)))
    }

    /// The joined axes.
    pub fn axis(&self) -> &Axes {
        &self.axis
    }

    /// Whether each joined dimension is kept with size 1.
    pub fn keepdims(&self) -> bool {
        self.keepdims
    }

    /// The separator.
    pub fn separator(&self) -> &str {
        &self.separator
    }

    /// Joins the groups of one plan stage of `input`, giving a column of `shape`.
    fn join_stage(
        &self,
        ctx: &ExecContext,
        input: &StringTensor,
        stage: &ReductionStage,
        shape: Vec<usize>,
    ) -> Result<StringTensor> {
        let sep = self.separator.as_bytes();
        let mut out = StringBuilder::in_call(ctx, stage.len(), input.byte_len() + stage.members().len() * sep.len());
        for o in 0..stage.len() {
            for (k, &member) in stage.group(o).iter().enumerate() {
                if k > 0 {
                    out.extend(sep);
                }
                out.extend(input.get(member));
            }
            out.end_string();
        }
        out.finish(shape)
    }
}

impl Op for ReduceJoin {
    fn name(&self) -> String {
        format!("StringsReduceJoin{{axis={}, keepdims={}, separator={:?}}}", self.axis, self.keepdims, self.separator)
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity(REDUCE_JOIN, inputs, 1..=1)?;
        expect_string(REDUCE_JOIN, 0, &inputs[0])?;
        Ok(vec![reduced_type(REDUCE_JOIN, &inputs[0], &self.axis, self.keepdims)?.with_dtype(DType::String)])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let [x] = fixed_inputs::<1>(REDUCE_JOIN, inputs)?;
        let col = string_column(REDUCE_JOIN, 0, x)?;
        let plan = plan_reduction(ctx, REDUCE_JOIN, x, &self.axis, self.keepdims)?;
        plan.check_input(REDUCE_JOIN, col.len())?;
        // Stage by stage; intermediate columns are flat, the last one takes the result's shape.
        let last = plan.stages().len().saturating_sub(1);
        let shape_of =
            |k: usize, stage: &ReductionStage| if k == last { plan.flat_shape.clone() } else { vec![stage.len()] };
        let mut joined = Cow::Borrowed(col);
        for (k, stage) in plan.stages().iter().enumerate() {
            joined = Cow::Owned(self.join_stage(ctx, &joined, stage, shape_of(k, stage))?);
        }
        one(plan.finish(DenseTensor::String(joined.into_owned()))?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

// ---------------------------------------------------------------------------------------------
// strings.length, strings.lower, strings.upper, strings.to_hash_bucket_fast
// ---------------------------------------------------------------------------------------------
