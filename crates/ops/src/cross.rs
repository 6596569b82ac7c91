//! Feature crosses: `ragged.cross` (every combination of one row's items across the inputs,
//! joined with `_X_`) and `ragged.cross_hashed` (the same combinations hashed with TensorFlow's
//! FingerprintCat64 chain), as `tf.ragged.cross` / `tf.ragged.cross_hashed`.

use std::any::Any;
use std::io::Write;
use std::ops::Range;

use ragtime_core::{
    DType, DenseTensor, Dim, Error, ExecContext, RaggedTensor, Result, RowPartition, StringBuilder, StringTensor,
    TensorType,
};
use ragtime_graph::{Attrs, Cost, Op, OpProperties, OpRef};

use crate::util::{one, shared};

const CROSS: &str = "ragged.cross";
const CROSS_HASHED: &str = "ragged.cross_hashed";

/// TensorFlow's default `hash_key` for `cross_hashed`.
pub const DEFAULT_HASH_KEY: u64 = 0x00DE_CAFC_AFFE;

/// TensorFlow's `FingerprintCat64(a, b)`: combines two 64-bit fingerprints (all arithmetic mod
/// 2^64), as the vocabulary README and `tensorflow/core/lib/hash/hash.h` define it.
pub fn fingerprint_cat64(a: u64, b: u64) -> u64 {
    const MUL: u64 = 0xc6a4_a793_5bd1_e995;
    let shift_mix = |v: u64| v ^ (v >> 47);
    let mut r = a ^ MUL;
    r ^= shift_mix(b.wrapping_mul(MUL)).wrapping_mul(MUL);
    r = r.wrapping_mul(MUL);
    r = shift_mix(r).wrapping_mul(MUL);
    shift_mix(r)
}

/// `ragged.cross(x1, x2, ...)` (`hashed` false) or `ragged.cross_hashed(x1, x2, ...)`.
///
/// Each input is a ragged rank 1 tensor or a dense matrix of strings, int32 or int64, all with
/// the same number of rows. Row `r` of the result holds every combination of one item of row `r`
/// of each input, the first input varying slowest. `cross` joins the items with `_X_` (integers
/// in decimal); `cross_hashed` starts from `hash_key` and folds each item's fingerprint
/// (FarmHash Fingerprint64 of a string, the integer itself as uint64) with [`fingerprint_cat64`],
/// then takes the result mod `num_buckets` (mod 2^63 − 1 when `num_buckets` is 0), as int64.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Cross {
    /// Hash the combinations instead of joining them.
    pub hashed: bool,
    /// `cross_hashed`: the number of buckets (0: none, the full int64 range).
    pub num_buckets: u64,
    /// `cross_hashed`: the first fingerprint of every chain.
    pub hash_key: u64,
}

impl Cross {
    /// `ragged.cross`.
    pub fn strings() -> Self {
        Cross { hashed: false, num_buckets: 0, hash_key: DEFAULT_HASH_KEY }
    }

    /// `ragged.cross_hashed` with `num_buckets` (0: no bucketing) and `hash_key`.
    pub fn hashed(num_buckets: u64, hash_key: u64) -> Self {
        Cross { hashed: true, num_buckets, hash_key }
    }

    fn op_name(&self) -> &'static str {
        if self.hashed {
            CROSS_HASHED
        } else {
            CROSS
        }
    }

    /// From graph-file attributes: none for `cross`; `num_buckets` (>= 0, default 0) and
    /// `hash_key` (default 0xDECAFCAFFE) for `cross_hashed`.
    pub fn from_attrs(hashed: bool, attrs: &Attrs) -> Result<Self> {
        if !hashed {
            attrs.only(&[])?;
            return Ok(Cross::strings());
        }
        attrs.only(&["num_buckets", "hash_key"])?;
        let num_buckets = attrs.int_opt("num_buckets")?.unwrap_or(0);
        let num_buckets = u64::try_from(num_buckets)
            .map_err(|_| Error::argument(CROSS_HASHED, format!("num_buckets must be >= 0, got {num_buckets}")))?;
        // A graph file writes the key as a (signed) JSON integer: its 64 bits are the key.
        let hash_key = attrs.int_opt("hash_key")?.map_or(DEFAULT_HASH_KEY, |k| k as u64);
        Ok(Cross::hashed(num_buckets, hash_key))
    }
}

/// One input seen as rows of items: the item range of each row, and the items as text or hashes.
struct Column {
    rows: Vec<Range<usize>>,
    /// The items' text (`cross`).
    text: Option<StringTensor>,
    /// The items' fingerprints (`cross_hashed`).
    hashes: Vec<u64>,
}

impl Column {
    fn new(ctx: &ExecContext, op: &str, index: usize, x: &RaggedTensor, hashed: bool) -> Result<Column> {
        let values = x.flat_values();
        let rows: Vec<Range<usize>> = match (x.ragged_rank(), values.rank()) {
            (1, 1) => {
                let p = &x.partitions()[0];
                (0..p.nrows()).map(|r| p.row_range(r)).collect()
            }
            (0, 2) => {
                let width = values.shape()[1];
                (0..values.shape()[0]).map(|r| r * width..(r + 1) * width).collect()
            }
            _ => {
                return Err(Error::shapes(
                    op,
                    format!("input {index} must be ragged rank 1 or a dense matrix, got {}", TensorType::of(x)),
                ))
            }
        };
        let (text, hashes) = match (values, hashed) {
            (DenseTensor::String(s), false) => (Some(s.clone()), Vec::new()),
            (DenseTensor::String(s), true) => (None, s.iter().map(farmhash::fingerprint64).collect()),
            (_, _) => {
                let ints = values.to_i64_vec(op, &format!("input {index}"))?;
                if hashed {
                    // The integer's two's complement bits are its fingerprint.
                    (None, ints.into_iter().map(|v| v as u64).collect())
                } else {
                    let mut builder = StringBuilder::in_call(ctx, ints.len(), ints.len() * 4);
                    let mut digits = [0u8; 20];
                    for v in ints {
                        let mut cursor = std::io::Cursor::new(&mut digits[..]);
                        // 20 bytes hold any i64 in decimal.
                        let _ = write!(cursor, "{v}");
                        let n = cursor.position() as usize;
                        builder.push(&digits[..n]);
                    }
                    (Some(builder.finish(vec![values.len()])?), Vec::new())
                }
            }
        };
        Ok(Column { rows, text, hashes })
    }
}

fn check_input_type(op: &str, index: usize, ty: &TensorType) -> Result<()> {
    if !matches!(ty.dtype(), DType::String | DType::I32 | DType::I64) {
        return Err(Error::dtype(op, format!("input {index} must be string, int32 or int64, got {}", ty.dtype())));
    }
    if !(ty.ragged_rank() == 1 && ty.rank() == 2 || ty.ragged_rank() == 0 && ty.rank() == 2) {
        return Err(Error::shapes(op, format!("input {index} must be ragged rank 1 or a dense matrix, got {ty}")));
    }
    Ok(())
}

impl Op for Cross {
    fn name(&self) -> String {
        if self.hashed {
            format!("CrossHashed{{num_buckets={}, hash_key={:#x}}}", self.num_buckets, self.hash_key)
        } else {
            "Cross".into()
        }
    }

    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        let op = self.op_name();
        if inputs.is_empty() {
            return Err(Error::argument(op, "needs at least one input"));
        }
        let mut nrows = Dim::Unknown;
        for (i, ty) in inputs.iter().enumerate() {
            check_input_type(op, i, ty)?;
            match (nrows, ty.dims()[0]) {
                (Dim::Known(a), Dim::Known(b)) if a != b => {
                    return Err(Error::shapes(op, format!("input {i} has {b} rows, an earlier input {a}")));
                }
                (Dim::Unknown, d) => nrows = d,
                _ => {}
            }
        }
        let dtype = if self.hashed { DType::I64 } else { DType::String };
        Ok(vec![TensorType::new(dtype, 1, vec![nrows, Dim::Ragged])?])
    }

    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let op = self.op_name();
        let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
        self.output_types(&types)?;
        let columns = inputs
            .iter()
            .enumerate()
            .map(|(i, x)| Column::new(ctx, op, i, x, self.hashed))
            .collect::<Result<Vec<_>>>()?;
        let nrows = columns[0].rows.len();
        if let Some((i, c)) = columns.iter().enumerate().find(|(_, c)| c.rows.len() != nrows) {
            return Err(Error::shapes(op, format!("input {i} has {} rows, input 0 has {nrows}", c.rows.len())));
        }
        // Row lengths are products of the inputs' row lengths: checked before anything is built.
        let mut lengths = ctx.try_vec::<i64>(op, nrows)?;
        let mut total = 0usize;
        for r in 0..nrows {
            let len = columns.iter().try_fold(1usize, |acc, c| acc.checked_mul(c.rows[r].len()));
            total = len.and_then(|n| total.checked_add(n)).ok_or_else(|| too_many(op))?;
            lengths.push(len.unwrap_or(0) as i64);
        }
        ctx.checked_len(op, &[total])?;
        let partition = RowPartition::from_row_lengths(&lengths)?;
        let values = if self.hashed {
            let mut out = ctx.try_vec::<i64>(op, total)?;
            for_each_combination(&columns, |items| {
                let h = items.iter().zip(&columns).fold(self.hash_key, |h, (&i, c)| fingerprint_cat64(h, c.hashes[i]));
                let bucketed = if self.num_buckets > 0 { h % self.num_buckets } else { h % (i64::MAX as u64) };
                // Below 2^63 either way.
                out.push(bucketed as i64);
            });
            DenseTensor::vector(out)
        } else {
            let mut builder = StringBuilder::in_call(ctx, total, 0);
            for_each_combination(&columns, |items| {
                for (k, (&i, c)) in items.iter().zip(&columns).enumerate() {
                    if k > 0 {
                        builder.extend(b"_X_");
                    }
                    if let Some(text) = &c.text {
                        builder.extend(text.get(i));
                    }
                }
                builder.end_string();
            });
            DenseTensor::String(builder.finish(vec![total])?)
        };
        one(RaggedTensor::new(values, vec![partition])?)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn properties(&self) -> OpProperties {
        OpProperties { elementwise: false, keeps_partitions_of: None, can_fail: true, cost: Cost::Expensive }
    }
}

fn too_many(op: &str) -> Error {
    Error::exhausted(op, "the number of crosses overflows a machine word; split the data into smaller batches")
}

/// Calls `f` with the item indices of every combination of each row, row by row, the first
/// column varying slowest (an odometer over the columns' row ranges).
fn for_each_combination(columns: &[Column], mut f: impl FnMut(&[usize])) {
    let nrows = columns.first().map_or(0, |c| c.rows.len());
    let mut items = vec![0usize; columns.len()];
    for r in 0..nrows {
        let ranges: Vec<&Range<usize>> = columns.iter().map(|c| &c.rows[r]).collect();
        if ranges.iter().any(|range| range.is_empty()) {
            continue;
        }
        for (item, range) in items.iter_mut().zip(&ranges) {
            *item = range.start;
        }
        'combinations: loop {
            f(&items);
            // Advance the last column first; carry into the ones before it.
            for k in (0..columns.len()).rev() {
                items[k] += 1;
                if items[k] < ranges[k].end {
                    continue 'combinations;
                }
                items[k] = ranges[k].start;
            }
            break;
        }
    }
}

/// The cross op called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    Some(match name {
        CROSS => shared(Cross::from_attrs(false, attrs)),
        CROSS_HASHED => shared(Cross::from_attrs(true, attrs)),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragtime_core::limits::Limits;
    use ragtime_core::ExecContext;

    #[test]
    fn fingerprint_cat64_follows_its_definition() {
        // The README's definition, written out step by step with explicit wrapping.
        let m: u64 = 0xc6a4a7935bd1e995;
        let s = |v: u64| v ^ (v >> 47);
        for (a, b) in
            [(0u64, 0u64), (DEFAULT_HASH_KEY, 5), (u64::MAX, 1 << 63), (12345, farmhash::fingerprint64(b"hello"))]
        {
            let mut r = a ^ m;
            r ^= s(b.wrapping_mul(m)).wrapping_mul(m);
            r = r.wrapping_mul(m);
            r = s(r).wrapping_mul(m);
            assert_eq!(fingerprint_cat64(a, b), s(r), "({a}, {b})");
        }
    }

    #[test]
    fn combinations_vary_the_last_input_fastest_and_skip_empty_rows() {
        let ctx = &ExecContext::new(Limits::untrusted());
        let a = RaggedTensor::from_row_splits(DenseTensor::vector(vec![1i64, 2, 3]), vec![0, 2, 3]).unwrap();
        let b = RaggedTensor::from_row_splits(
            DenseTensor::String(StringTensor::from_strings(&["x", "y"], vec![2]).unwrap()),
            vec![0, 2, 2],
        )
        .unwrap();
        let y = Cross::strings().perform(ctx, &[a.clone(), b.clone()]).unwrap().remove(0);
        assert_eq!(y.partitions()[0].row_splits(), &[0, 4, 4]);
        let texts: Vec<&[u8]> = y.flat_values().as_strings().unwrap().iter().collect();
        assert_eq!(texts, [&b"1_X_x"[..], b"1_X_y", b"2_X_x", b"2_X_y"]);
        let h = Cross::hashed(0, 7).perform(ctx, &[a, b]).unwrap().remove(0);
        let first = fingerprint_cat64(fingerprint_cat64(7, 1), farmhash::fingerprint64(b"x")) % (i64::MAX as u64);
        assert_eq!(h.flat_slice::<i64>().unwrap()[0], first as i64);
    }

    #[test]
    fn inputs_must_have_one_row_count_and_a_crossable_type() {
        let a = TensorType::ragged(DType::String, 1);
        let f = TensorType::ragged(DType::F32, 1);
        assert_eq!(Cross::strings().infer(&[a.clone(), f]).unwrap_err().kind(), ragtime_core::ErrorKind::TypeMismatch);
        let rr2 = TensorType::ragged(DType::String, 2);
        assert_eq!(Cross::strings().infer(&[a, rr2]).unwrap_err().kind(), ragtime_core::ErrorKind::IncompatibleShapes);
        assert!(Cross::strings().infer(&[]).is_err());
    }
}
