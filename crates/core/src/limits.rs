//! Resource limits as policy: the [`Limits`] value (per-buffer bytes, elements, values per
//! partition, rank, per-call budget) with its two presets, and the size checks made against it.
//!
//! Every op that allocates a buffer whose size comes from an input value or an attribute checks
//! the size against its call's limits first ([`crate::ExecContext::checked_len`],
//! [`crate::ExecContext::checked_size`]) and allocates it with [`crate::ExecContext::try_vec`], so a
//! small input can never ask for an absurd allocation, and an allocation the machine cannot give is
//! an error instead of an abort. `docs/safety.md` gives the numbers and the reasons.

use std::sync::OnceLock;

use crate::{DenseTensor, Error, RaggedTensor, Result};

/// The highest rank of a tensor or a type (dims, ragged ones included), TensorFlow's limit. Both
/// presets use it: it bounds recursion and index vectors, not memory.
pub const MAX_RANK: usize = 254;

/// The bytes of scratch index vectors (row ids, source positions) that structure ops build per
/// output element, on top of the element itself; [`crate::ExecContext::checked_len`] counts them.
pub const INDEX_BYTES_PER_ELEMENT: usize = 16;

/// The worst element size of a numeric dtype (int64, float64), used where the dtype is not at hand.
pub const MAX_ELEMENT_BYTES: usize = 8;

/// The physical memory assumed when `/proc/meminfo` cannot be read (not Linux, or no `/proc`): 8 GiB.
pub const FALLBACK_PHYSICAL_MEMORY: usize = 8 << 30;

/// How much data one call may ask for: the policy every size computed from data or attributes is
/// checked against. Two presets: [`Limits::untrusted`] for graph files (a 2 KB file must not ask
/// for terabytes) and [`Limits::trusted`] for the library API (bounded by the machine).
///
/// ```
/// use ragtime_core::limits::Limits;
/// let mine = Limits::trusted().with_call_budget(2 << 30);
/// assert_eq!(mine.call_budget, 2 << 30);
/// assert_eq!(Limits::untrusted().partition_values, 1 << 27);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most bytes one result or scratch buffer of an op may take (string bytes included).
    pub buffer_bytes: usize,
    /// The most elements one result may have.
    pub elements: usize,
    /// The most values (and rows) one row partition may describe: its lazily derived row ids
    /// take 8 bytes per value.
    pub partition_values: usize,
    /// The highest rank (at most [`MAX_RANK`]).
    pub rank: usize,
    /// The bytes of data-sized buffers one call may allocate in all (its memory budget).
    pub call_budget: usize,
}

impl Limits {
    /// The preset for graph files and other untrusted input (`ragtime run`, `conformance`,
    /// `ragtime::case`): 1 GiB per buffer, 2^31 elements, 2^27 values per partition, rank 254,
    /// 4 GiB per call. Enough for the benchmark workloads at 10 million values, and a small file
    /// cannot ask for many gigabytes over a chain of ops.
    pub const fn untrusted() -> Self {
        Limits {
            buffer_bytes: 1 << 30,
            elements: 1 << 31,
            partition_values: (1 << 30) / 8,
            rank: MAX_RANK,
            call_budget: 4 << 30,
        }
    }

    /// The preset of the library API: bounded only by the machine. A buffer may take up to the
    /// physical memory ([`physical_memory`]), a partition up to an eighth of it in values (its
    /// row ids), and a call's budget is half the physical memory.
    pub fn trusted() -> Self {
        let memory = physical_memory();
        Limits {
            buffer_bytes: memory,
            elements: memory,
            partition_values: memory / 8,
            rank: MAX_RANK,
            call_budget: memory / 2,
        }
    }

    /// The preset named `name` (`trusted` or `untrusted`), as the CLI's `--limits` spells it.
    pub fn preset(name: &str) -> Result<Self> {
        match name {
            "trusted" => Ok(Limits::trusted()),
            "untrusted" => Ok(Limits::untrusted()),
            other => Err(Error::argument("limits", format!("unknown preset {other:?}: expected trusted or untrusted"))),
        }
    }

    /// These limits with a per-call memory budget of `bytes`.
    pub fn with_call_budget(self, bytes: usize) -> Self {
        Limits { call_budget: bytes, ..self }
    }

    /// The number of elements of `shape`, refusing a shape whose non-zero dims multiply past
    /// [`Limits::elements`] or whose elements take more than [`Limits::buffer_bytes`] at
    /// `bytes_per_element` each. Zero dims are left out of the check (builders may still walk
    /// the other dims: `[2^40, 0]` has 2^40 rows), but the result counts them (0 elements).
    pub fn checked_size(&self, op: &str, shape: &[usize], bytes_per_element: usize) -> Result<usize> {
        self.checked_rank(op, shape.len())?;
        let nonzero = shape.iter().filter(|&&d| d != 0).try_fold(1usize, |acc, &d| acc.checked_mul(d));
        match nonzero {
            Some(n) if n > self.elements => Err(self.exceeded(
                op,
                "elements",
                self.elements,
                format!("a result of shape {shape:?} would have {n} elements"),
            )),
            Some(n) if n.checked_mul(bytes_per_element).is_none_or(|b| b > self.buffer_bytes) => Err(self.exceeded(
                op,
                "bytes per buffer",
                self.buffer_bytes,
                format!(
                    "a result of shape {shape:?} would take {} bytes ({bytes_per_element} per element)",
                    n.saturating_mul(bytes_per_element)
                ),
            )),
            Some(n) => Ok(if shape.contains(&0) { 0 } else { n }),
            None => Err(self.exceeded(
                op,
                "elements",
                self.elements,
                format!("a result of shape {shape:?} would have more elements than a machine word counts"),
            )),
        }
    }

    /// Refuses a byte count past [`Limits::buffer_bytes`] (`what` says which buffer, e.g. "string bytes").
    pub fn checked_bytes(&self, op: &str, bytes: usize, what: &str) -> Result<usize> {
        if bytes > self.buffer_bytes {
            return Err(self.exceeded(
                op,
                "bytes per buffer",
                self.buffer_bytes,
                format!("{what} would take {bytes} bytes"),
            ));
        }
        Ok(bytes)
    }

    /// Refuses a rank past [`Limits::rank`] (and past [`MAX_RANK`] whatever the limits say).
    pub fn checked_rank(&self, op: &str, rank: usize) -> Result<usize> {
        let limit = self.rank.min(MAX_RANK);
        if rank > limit {
            return Err(rank_error(op, rank, limit));
        }
        Ok(rank)
    }

    /// Refuses a partition of more than [`Limits::partition_values`] values or rows.
    pub fn checked_partition(&self, op: &str, what: &str, n: usize) -> Result<usize> {
        if n > self.partition_values {
            return Err(self.exceeded(
                op,
                "values per partition",
                self.partition_values,
                format!("{n} {what} in one partition"),
            ));
        }
        Ok(n)
    }

    /// Checks a value an op produced against these limits: its rank, its flat values' elements
    /// and bytes, and every partition's rows and values. The executor calls it on every output,
    /// so a value built by a context-free constructor (bounded by the machine only) cannot carry
    /// an untrusted call past its limits.
    pub fn check_value(&self, op: &str, value: &RaggedTensor) -> Result<()> {
        self.checked_rank(op, value.rank())?;
        let flat = value.flat_values();
        if flat.len() > self.elements {
            return Err(self.exceeded(op, "elements", self.elements, format!("a result with {} elements", flat.len())));
        }
        let bytes = flat
            .len()
            .saturating_mul(flat.dtype().size_of())
            .saturating_add(flat.as_strings().map_or(0, |s| s.byte_len().saturating_add(s.len().saturating_mul(8))));
        self.checked_bytes(op, bytes, "a result")?;
        for p in value.partitions() {
            self.checked_partition(op, "rows", p.nrows())?;
            self.checked_partition(op, "values", p.nvals())?;
        }
        Ok(())
    }

    /// The error for going over limit `name` of value `limit`: `resource_exhausted`, saying how
    /// to raise the limit or batch the data.
    pub fn exceeded(&self, op: &str, name: &str, limit: usize, what: String) -> Error {
        exhausted(op, format!("{what}, over the limit of {limit} {name}; {HOW_TO_RAISE}"))
    }
}

/// How to get past a limit, said in every limit error.
pub const HOW_TO_RAISE: &str = "raise it (Limits::trusted(), CompileOptions::limits, `--limits trusted` or \
                                `--memory-budget`) or split the data into smaller batches";

/// The error of a request over a limit or a budget.
pub(crate) fn exhausted(op: &str, reason: String) -> Error {
    Error::exhausted(op, reason)
}

fn rank_error(op: &str, rank: usize, limit: usize) -> Error {
    Error::argument(op, format!("rank {rank} exceeds the limit of {limit}"))
}

/// The physical memory of the machine in bytes: `MemTotal` of `/proc/meminfo` on Linux, read
/// once; [`FALLBACK_PHYSICAL_MEMORY`] where it cannot be read.
pub fn physical_memory() -> usize {
    static MEMORY: OnceLock<usize> = OnceLock::new();
    *MEMORY.get_or_init(|| {
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| mem_total(&text))
            .unwrap_or(FALLBACK_PHYSICAL_MEMORY)
    })
}

/// `MemTotal` (in bytes) of a `/proc/meminfo` text.
fn mem_total(meminfo: &str) -> Option<usize> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let kib: usize = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => kib.checked_mul(1024),
        Some(_) => None,
    }
}

/// Refuses a rank past [`MAX_RANK`] (types and values outside any call).
pub fn checked_rank(op: &str, rank: usize) -> Result<usize> {
    if rank > MAX_RANK {
        return Err(rank_error(op, rank, MAX_RANK));
    }
    Ok(rank)
}

impl DenseTensor {
    /// The most elements a result may have under [`Limits::untrusted`] (2^31).
    pub const MAX_ELEMENTS: usize = Limits::untrusted().elements;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    #[test]
    fn sizes_are_checked_in_elements_and_bytes() {
        let limits = Limits::untrusted();
        assert_eq!(limits.checked_size("t", &[0, 5], 8).unwrap(), 0);
        assert_eq!(limits.checked_size("t", &[3, 5], 8).unwrap(), 15);
        assert_eq!(limits.checked_size("t", &[], 8).unwrap(), 1);
        let e = limits.checked_size("t", &[usize::MAX, 3], 1).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceExhausted);
        let e = limits.checked_size("t", &[1 << 29], 8).unwrap_err();
        assert!(e.to_string().contains("bytes"), "{e}");
        assert!(e.to_string().contains("smaller batches"), "the message says what to do: {e}");
        assert_eq!(limits.checked_size("t", &[1 << 29], 1).unwrap(), 1 << 29, "the same count of bytes fits");
        assert!(Limits::trusted().checked_size("t", &[1 << 29], 8).is_ok() || physical_memory() < 4 << 30);
        let e = limits.checked_size("t", &vec![1; MAX_RANK + 1], 1).unwrap_err();
        assert!(e.to_string().contains("rank"), "{e}");
        assert_eq!(checked_rank("t", MAX_RANK).unwrap(), MAX_RANK);
        assert_eq!(checked_rank("t", MAX_RANK + 1).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }

    #[test]
    fn physical_memory_is_read_from_meminfo() {
        assert_eq!(mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n"), Some(24576000 * 1024));
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
        assert_eq!(mem_total("MemTotal: lots kB\n"), None);
        assert!(physical_memory() > 0);
        let trusted = Limits::trusted();
        assert_eq!(trusted.call_budget, physical_memory() / 2);
        assert_eq!(Limits::preset("trusted").unwrap(), trusted);
        assert_eq!(Limits::preset("untrusted").unwrap(), Limits::untrusted());
        assert!(Limits::preset("lax").is_err());
    }
}
