//! `RowPartition`: one ragged dimension as validated row splits, with lengths and row ids derived lazily.

use std::sync::{Arc, OnceLock};

use crate::{Error, ExecContext, Result, SharedSlice};

/// Refuses a partition of more `what` (rows or values) than the machine could hold row ids for
/// ([`crate::limits::Limits::partition_values`] of the trusted preset; the executor checks every
/// op's partitions against its call's limits, which may be tighter).
fn check_len(op: &str, what: &str, n: u64) -> Result<()> {
    let limit = ExecContext::detached().limits().partition_values;
    if n > limit as u64 {
        return Err(Error::partition(op, format!("{n} {what} exceed the limit of {limit} per partition (row ids of 8 bytes per value must fit the memory)")));
    }
    Ok(())
}

/// Refuses a row count asked for by a caller (not read from splits) that no partition could hold:
/// an argument error, before anything is allocated.
fn check_rows(op: &str, rows: usize) -> Result<()> {
    let limit = ExecContext::detached().limits().partition_values;
    if rows > limit {
        return Err(Error::argument(op, format!("{rows} rows exceed the limit of {limit} rows")));
    }
    Ok(())
}

#[derive(Debug)]
struct PartitionData {
    splits: SharedSlice<i64>,
    row_lengths: OnceLock<Arc<[i64]>>,
    value_rowids: OnceLock<Arc<[i64]>>,
    uniform_row_length: Option<usize>,
}

/// How a ragged dimension splits its values into rows, as row splits (`splits[i]..splits[i+1]`
/// are the values of row `i`).
///
/// Invariants, checked once at construction: at least one split, `splits[0] == 0`, splits never
/// decrease. Clones share the splits and the cached encodings (row lengths, value row ids), so
/// two partitions that are clones of each other are known to be equal in O(1) ([`RowPartition::same`]).
#[derive(Clone)]
pub struct RowPartition {
    data: Arc<PartitionData>,
}

impl std::fmt::Debug for RowPartition {
    /// `RowPartition { row_splits: [0, 4, 4, 7] }` (long splits summarized).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RowPartition")
            .field("row_splits", &crate::literal::DebugText(&crate::literal::summarize_list(self.row_splits())))
            .finish()
    }
}

impl RowPartition {
    fn build(splits: impl Into<SharedSlice<i64>>, uniform_row_length: Option<usize>) -> Self {
        RowPartition {
            data: Arc::new(PartitionData {
                splits: splits.into(),
                row_lengths: OnceLock::new(),
                value_rowids: OnceLock::new(),
                uniform_row_length,
            }),
        }
    }

    /// From row splits (`[0, 4, 4, 7]`: rows of 4, 0 and 3 values).
    pub fn from_row_splits(splits: Vec<i64>) -> Result<Self> {
        Self::from_shared_row_splits(SharedSlice::from_vec(splits))
    }

    /// From row splits in a shared buffer, used as they are (no copy): for splits that live in
    /// another library's memory (Arrow list offsets). They pass the same checks as
    /// [`RowPartition::from_row_splits`] (so offsets that do not start at 0 must be rebased, a
    /// copy, by the caller).
    pub fn from_shared_row_splits(splits: SharedSlice<i64>) -> Result<Self> {
        const OP: &str = "from_row_splits";
        match splits.first() {
            None => return Err(Error::partition(OP, "row splits must have at least one element")),
            Some(&s) if s != 0 => return Err(Error::partition(OP, format!("row splits must start with 0, got {s}"))),
            _ => {}
        }
        if let Some(i) = splits.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::partition(
                OP,
                format!(
                    "row splits must not decrease: splits[{}] = {} > splits[{}] = {} (row {i})",
                    i,
                    splits[i],
                    i + 1,
                    splits[i + 1]
                ),
            ));
        }
        check_len(OP, "rows", splits.len() as u64 - 1)?;
        check_len(OP, "values", *splits.last().unwrap_or(&0) as u64)?;
        Ok(Self::build(splits, None))
    }

    /// From row lengths (`[4, 0, 3]`).
    pub fn from_row_lengths(lengths: &[i64]) -> Result<Self> {
        check_len("from_row_lengths", "rows", lengths.len() as u64)?;
        let mut splits = ExecContext::detached().try_vec("from_row_lengths", lengths.len() + 1)?;
        splits.push(0i64);
        let mut total = 0i64;
        for (row, &len) in lengths.iter().enumerate() {
            if len < 0 {
                return Err(Error::partition("from_row_lengths", format!("row {row} has negative length {len}")));
            }
            total = total
                .checked_add(len)
                .ok_or_else(|| Error::partition("from_row_lengths", "row lengths overflow i64"))?;
            splits.push(total);
        }
        check_len("from_row_lengths", "values", total as u64)?;
        Ok(Self::build(splits, None))
    }

    /// From the row id of every value (sorted, non-negative); `nrows` adds trailing empty rows.
    pub fn from_value_rowids(rowids: &[i64], nrows: Option<usize>) -> Result<Self> {
        const OP: &str = "from_value_rowids";
        if let Some(&first) = rowids.first() {
            if first < 0 {
                return Err(Error::partition(OP, format!("value 0 has negative row id {first}")));
            }
        }
        if let Some(i) = rowids.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::partition(
                OP,
                format!(
                    "row ids must be sorted: value {} has row id {} after row id {}",
                    i + 1,
                    rowids[i + 1],
                    rowids[i]
                ),
            ));
        }
        let needed = rowids.last().map_or(0, |&r| r as usize + 1);
        // The splits take one entry per row: refuse row counts no tensor could hold before allocating.
        let rows = nrows.unwrap_or(0).max(needed);
        check_rows(OP, rows)?;
        check_len(OP, "values", rowids.len() as u64)?;
        let nrows = match nrows {
            Some(n) if n < needed => {
                return Err(Error::partition(OP, format!("nrows = {n} but a value has row id {}", needed - 1)))
            }
            Some(n) => n,
            None => needed,
        };
        let mut splits = ExecContext::detached().try_filled(OP, nrows + 1, 0i64)?;
        for &r in rowids {
            splits[r as usize + 1] += 1;
        }
        for i in 0..nrows {
            splits[i + 1] += splits[i];
        }
        let p = Self::build(splits, None);
        let _ = p.data.value_rowids.set(rowids.into());
        Ok(p)
    }

    /// `nrows` rows of `row_length` values each.
    pub fn from_uniform_row_length(row_length: usize, nrows: usize) -> Result<Self> {
        const OP: &str = "from_uniform_row_length";
        check_rows(OP, nrows)?;
        let total = row_length
            .checked_mul(nrows)
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(|| Error::argument(OP, format!("{nrows} rows of {row_length} values overflow")))?;
        check_len(OP, "values", total as u64)?;
        let splits = ExecContext::detached().try_collect(OP, (0..nrows + 1).map(|i| (i * row_length) as i64))?;
        Ok(Self::build(splits, Some(row_length)))
    }

    /// The row splits (`nrows() + 1` entries).
    #[inline]
    pub fn row_splits(&self) -> &[i64] {
        &self.data.splits
    }

    /// The row splits' shared buffer (to hand them to another library without copying).
    pub fn shared_row_splits(&self) -> &SharedSlice<i64> {
        &self.data.splits
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.data.splits.len() - 1
    }

    /// Number of values partitioned (the last split).
    pub fn nvals(&self) -> usize {
        *self.data.splits.last().unwrap_or(&0) as usize
    }

    /// Row `i`'s value range.
    pub fn row_range(&self, i: usize) -> std::ops::Range<usize> {
        self.data.splits[i] as usize..self.data.splits[i + 1] as usize
    }

    /// The length of every row (computed once, then cached).
    pub fn row_lengths(&self) -> &[i64] {
        self.data.row_lengths.get_or_init(|| self.data.splits.windows(2).map(|w| w[1] - w[0]).collect())
    }

    /// The row id of every value (computed once, then cached).
    pub fn value_rowids(&self) -> &[i64] {
        self.data.value_rowids.get_or_init(|| {
            let mut ids = Vec::with_capacity(self.nvals());
            for (row, w) in self.data.splits.windows(2).enumerate() {
                ids.extend(std::iter::repeat_n(row as i64, (w[1] - w[0]) as usize));
            }
            ids.into()
        })
    }

    /// The row length if this partition was built as uniform (`from_uniform_row_length`).
    pub fn uniform_row_length(&self) -> Option<usize> {
        self.data.uniform_row_length
    }

    /// The longest row (0 when there are no rows).
    pub fn max_row_length(&self) -> usize {
        self.row_lengths().iter().copied().max().unwrap_or(0) as usize
    }

    /// True when both partitions describe the same rows: O(1) when one is a clone of the other,
    /// O(rows) otherwise.
    pub fn same(&self, other: &RowPartition) -> bool {
        Arc::ptr_eq(&self.data, &other.data) || self.data.splits == other.data.splits
    }

    /// True when both are clones of one partition (the O(1) half of [`RowPartition::same`]).
    pub fn ptr_eq(&self, other: &RowPartition) -> bool {
        Arc::ptr_eq(&self.data, &other.data)
    }
}

impl PartialEq for RowPartition {
    fn eq(&self, other: &Self) -> bool {
        self.same(other)
    }
}
