//! The kernel plan: every decision about how a [`KernelSpec`] becomes machine code (loop shape,
//! block sizes, passes and folds, scratch buffers, expansions, bulk calls, thread split), made
//! from the spec before any IR is written. Emission (`crate::lower`) only translates a plan; its
//! `Display` is the stable, human-readable form the golden tests compare.
//!
//! The tuning constants live here with the measurements that chose them.

use std::fmt;

use ragtime_core::DType;
use ragtime_fused::{OperandKind, RowOutput, ScalarGraph, ScalarRef};
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::reduce::ReduceKind;

use crate::bulk_abi::EXPAND_SLACK;
pub(crate) use crate::bulk_abi::ROW_VALUE_BYTES;
use crate::elem::Elem;
use crate::spec::{expression, KernelSpec};
use crate::vmath::UnaryMath;

/// Vectors per iteration of the main loops.
pub(crate) const UNROLL: i64 = 2;

/// How far ahead of a one-pass row loop its flat inputs are prefetched ([`Prefetch`]). W3 at
/// 2^20 rows, one thread, `ragtime bench` ratios to the same-run loop, medians of 4-5 runs
/// alternated: 0.85-0.91 without; every 12 rows 1,536 bytes ahead 0.77-0.78; every 16 rows 1 KB
/// 0.78-0.81, 2 KB 0.79-0.83, 4 KB 0.87, 512 bytes 0.85; every 32 rows 0.92; every 4 or 8 rows
/// 0.82-0.93 (more calls). Two threads: 0.91 without, 0.79 with (`docs/perf-log.md`, "Issue 22,
/// W3: the inputs prefetched ahead of the rows").
pub const PREFETCH_AHEAD: i64 = 1536;

/// Rows per group of a one-pass row loop's prefetch (see [`PREFETCH_AHEAD`]).
pub const PREFETCH_ROWS: i64 = 12;

/// Fewest bytes of flat inputs a range of rows (a thread's piece of a call) must hold for the
/// prefetch ([`Prefetch::min_bytes`]). Where the data comes from the caches the prefetches cost
/// about a cycle each: W3, one thread, best of 50 calls, prefetching every range: 32,768 rows
/// (2.6 MB of inputs) 118 → 130 µs, 131,072 rows 472 → 522 µs, 262,144 rows (21 MB, pieces of
/// 5.2 MB) 0.97-1.00 → 1.02-1.06 ms; 2^20 rows (84 MB: pieces of 21 MB on one thread, 10.5 MB on
/// two) 18% faster. A piece of 8 MB is a call of 32 MB (this machine's L3) on one thread, 64 MB
/// on two.
pub const PREFETCH_MIN_BYTES: i64 = 8 << 20;

/// Rows per block of a row kernel with several passes (see [`Rows::Blocked`]). W4, one thread,
/// perf samples of kernel and baseline in one process: 0.61 → 0.54 of the baseline's time with
/// blocks of 8; 4 and 8 rows were best, 2 and 64 worse.
const ROW_BLOCK: i64 = 8;

/// Elements per chunk of a map kernel that calls bulk functions (see [`Chunked`]). W1, one
/// thread, medians of 5: 0.076 with 128, 0.075 with 256 and 512, 0.089 with 1,024, 0.105 with
/// 2,048 values.
const MAP_CHUNK: i64 = 256;

/// Most rows of a block evaluated flat (see [`FlatBlocks`]), when they hold at most
/// [`FLAT_BLOCK`] values: W4, one thread, 0.411 with 8 rows, 0.402 with 16, 0.386 with 32, 0.399
/// with 64 (and 2,048-value blocks).
const FLAT_ROWS: i64 = 32;

/// Most values a block may hold to be evaluated flat (see [`FlatBlocks`]): the size of each
/// scratch buffer, in elements.
const FLAT_BLOCK: i64 = 1024;

/// Vectors stored per iteration when a row's value is expanded over its elements: one
/// iteration covers the short rows, so its exit branch is predictable.
pub(crate) const EXPAND_VECTORS: i64 = 4;

/// What the machine offers that plans depend on: whether [`crate::bulk`]'s AVX2 + FMA functions
/// run on it, and whether its AVX-512 ones do (the row folds of [`crate::bulk_folds`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    bulk: bool,
    tiles: bool,
}

impl Target {
    /// This machine (AVX2 and FMA, and AVX-512 with BMI2, detected at run time).
    pub fn host() -> Target {
        let bulk = crate::bulk::supported();
        Target::with_features(bulk, bulk && crate::bulk_folds::supported())
    }

    /// A machine with or without the bulk functions, the AVX-512 ones included: plans for another
    /// CPU (tests, printouts).
    pub const fn with_bulk(bulk: bool) -> Target {
        Target { bulk, tiles: bulk }
    }

    /// A machine with the bulk functions (`bulk`), and with their AVX-512 row folds (`tiles`, which
    /// need `bulk`).
    pub const fn with_features(bulk: bool, tiles: bool) -> Target {
        Target { bulk, tiles: bulk && tiles }
    }

    /// Whether the bulk functions run.
    pub const fn bulk(&self) -> bool {
        self.bulk
    }

    /// Whether the bulk row folds run (AVX-512: sixteen rows at a time; an AVX2 machine keeps the
    /// IR folds, which a portable variant of the bulk order did not beat).
    pub const fn tiles(&self) -> bool {
        self.tiles
    }
}

/// How the work of one call is cut into ranges for the threads (`exec.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Split {
    /// Ranges of elements of equal size.
    Elements,
    /// Ranges of rows balanced by values plus rows.
    Rows,
}

/// How a reduction folds a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// Scalar kernels: in order, from the reference's identity, with the reference's combining
    /// op, so the reference's bits.
    Ordered,
    /// Vector kernels: two vector accumulators, then one vector per step, then one vector ending
    /// at the row's end (lanes already folded replaced by the identity), lanes folded by vector
    /// shuffles; rows shorter than a vector one by one.
    Vector,
    /// Float max / min of vector kernels: one NaN-dropping `maxps` / `minps` per vector and a
    /// NaN flag, the last vector overlapping the row's end; a row that held a NaN or whose result
    /// is a zero folds again with the exact ops, so every row has the exact fold's bits.
    DroppingNans,
    /// Items of several values ([`ItemRows`]): one accumulator per part of an item, each column
    /// folded in item order from the reference's identity with its combining op, so the
    /// reference's bits (vector kernels fold several columns per instruction, never reassociate).
    Columns,
    /// Rows along a trailing uniform axis ([`TrailingRows`]): a row per lane, its values folded in
    /// order from the reference's identity with the reference's combining op, so the reference's
    /// bits.
    Lanes,
    /// Float max / min over items of vector kernels: each column in item order with one
    /// NaN-dropping `maxps` / `minps` per part and a NaN flag; a row that held a NaN or has a zero
    /// in its result folds again as [`Fold::Columns`], so every row has the exact fold's bits.
    ColumnsDroppingNans,
}

/// A precompiled function of [`crate::bulk`] a kernel calls on a scratch buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkCall {
    /// The node's argument is evaluated (in IR) into the scratch buffer, then `op` replaces each
    /// value in place.
    InPlace {
        /// The function (`exp`, `tanh`, `sigmoid`).
        op: UnaryMath,
        /// Its argument.
        arg: ScalarRef,
    },
    /// `exp(x - y)` of graph inputs `x` and `y`, each read flat (a full operand, or a per-row
    /// value expanded over the block), written into the scratch buffer by one call.
    ExpSub {
        /// The minuend's graph input.
        x: usize,
        /// The subtrahend's graph input.
        y: usize,
    },
}

/// An element output `x / y` over a flat block by one call of the bulk division ([`crate::bulk`]):
/// `x` and `y` are each a full graph input, a per-row value expanded over the block, or a
/// reduction argument computed flat into its scratch buffer. The same IEEE division as the IR's,
/// eight or sixteen lanes at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkDivide {
    /// The output (index into the kernel's outputs).
    pub output: usize,
    /// The dividend.
    pub x: ScalarRef,
    /// The divisor.
    pub y: ScalarRef,
}

/// A node evaluated over a flat range into a scratch buffer, which later evaluations read
/// instead of computing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatNode {
    /// The node.
    pub node: usize,
    /// Its scratch buffer (index into [`KernelPlan::scratch`]).
    pub scratch: usize,
    /// The bulk call computing it, or `None` for a vector loop in IR.
    pub bulk: Option<BulkCall>,
}

/// What a scratch buffer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScratchUse {
    /// Reduction `k`'s result (scalar and splat) for each row of a block.
    RowValues(usize),
    /// A map chunk's values of node `n`.
    Chunk(usize),
    /// A flat block's values of reduction `k`'s argument.
    FlatArg(usize),
    /// Graph input `i` (a per-row operand or a reduction result) expanded over a flat block's
    /// elements.
    Expanded(usize),
    /// The range a row loop's prefetch routine reads (see [`Prefetch`]).
    PrefetchRange,
    /// Hoisted per-row value `j` (`KernelSpec::hoisted`) for each row of a block, computed for
    /// several rows per vector after the block's folds.
    HoistedValues(usize),
}

/// A stack buffer of the kernel's frame (16-byte aligned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scratch {
    /// Its size.
    pub bytes: i64,
    /// What it holds.
    pub holds: ScratchUse,
}

/// A map kernel whose outputs need bulk functions: the elements go in chunks, each bulk node
/// evaluated by one call into its scratch buffer (in order), then the outputs read them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunked {
    /// Elements per chunk.
    pub values: i64,
    /// The bulk nodes, in evaluation order.
    pub nodes: Vec<FlatNode>,
}

/// How a block of a multi-pass vector row kernel runs its expensive passes flat: one vector loop
/// over all the block's elements, with the per-row values it reads expanded over each row's
/// elements into scratch buffers. Every element gets the same operations as row by row, and the
/// folds the same order, so the results are the same bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlatBlocks {
    /// Most rows of a flat block.
    pub max_rows: i64,
    /// Most values of a flat block (the scratch buffers' size in elements).
    pub max_values: i64,
    /// Per reduction: its argument computed flat into a scratch buffer (it has an expensive op),
    /// which the row's fold and later passes read.
    pub args: Vec<Option<FlatNode>>,
    /// Per reduction: it folds by one call of [`crate::bulk_folds`] per block, sixteen rows at a
    /// time, on flat blocks and on row-by-row blocks alike (the bulk sum's order differs from the
    /// IR fold's, so every row of the kernel gets it); a maximum's flagged block folds again
    /// row by row in IR, exactly.
    pub bulk_folds: Vec<bool>,
    /// Per bulk-folded reduction of a computed argument: the element output whose buffer
    /// row-by-row blocks compute the argument into before the call (the one that keeps it for
    /// the element pass, or else one that the element pass writes afterwards, free until then).
    pub fold_buffers: Vec<Option<usize>>,
    /// The element outputs are computed flat (one of them has an expensive op).
    pub outputs: bool,
    /// Element outputs, computed flat, that are one float32 division of operands read flat: one
    /// bulk call each per block (softmax's `e / sum`); the other element outputs run in IR.
    pub divides: Vec<BulkDivide>,
    /// Per-row graph inputs a flat pass reads, each expanded into its scratch buffer:
    /// `(input, scratch)`; per-row operands at the block's start, reduction results after
    /// their fold.
    pub expanded: Vec<(usize, usize)>,
}

/// The row loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rows {
    /// One pass per row (a row map, or one reduction alone): row after row, the inputs' cache
    /// lines asked for ahead when the plan says so.
    OnePass {
        /// The prefetch ahead of the rows, where the machine has it.
        prefetch: Option<Prefetch>,
    },
    /// Several passes: blocks of rows, each pass over the block's rows (a row's passes are one
    /// dependency chain; a block's rows are independent work the core overlaps), each row's
    /// reduction results kept in a stack slot that later passes load.
    Blocked {
        /// Rows per block run row by row.
        rows: i64,
        /// Blocks small enough run their expensive passes flat.
        flat: Option<FlatBlocks>,
    },
}

/// A row loop's software prefetch: before each group of `rows` rows, the lines of every flat
/// input from `ahead` bytes past the group's first value to `ahead` bytes past its last are asked
/// for (consecutive groups ask for each line once). A one-pass row kernel reads its inputs
/// straight from memory with little work per byte (W3: 8 bytes a value, one add each, and each
/// row's fold), and with the hardware prefetcher alone the core waited: W3 at 2^20 rows, one
/// thread, took about the sum of its in-cache time and the time its bytes take at W2's
/// bandwidth, not the larger of the two (see [`PREFETCH_AHEAD`]). Multi-pass kernels (W4) are
/// bound by their instructions, and a prefetch per block made them slower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefetch {
    /// Rows per group.
    pub rows: i64,
    /// Bytes ahead of the group's values.
    pub ahead: i64,
    /// Fewest bytes of flat inputs a kernel call's range of rows must hold to be prefetched
    /// (smaller ranges run the plain row loop).
    pub min_bytes: i64,
    /// The scratch buffer the range is passed in: the routine takes its address, its only
    /// argument, in the register of the kernel's own first parameter, which no loop keeps
    /// (passed in registers, the range took the registers of the row offsets and the loop's end,
    /// which then went to the stack: W3's plain loop 4.6% slower in cache).
    pub range: usize,
}

/// One slice of an item that one op of the kernel computes: a vector of consecutive columns
/// (as many as the lane type holds) or a single column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    /// Its first column.
    pub column: i64,
    /// A vector of columns, or one column.
    pub vector: bool,
}

/// The row loop of a kernel over items of several values (`[.., *, k]`: uniform inner dims):
/// each row's items in order, each item in parts; per-row operands and reduction results are
/// items read part by part (never expanded over the row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRows {
    /// Values per item.
    pub width: i64,
    /// The parts of an item: vectors while whole vectors fit, then single columns.
    pub parts: Vec<Part>,
    /// Several passes: rows per block, each pass over the block's rows with each row's
    /// reduction results kept in a stack slot; `None`: one pass, row after row.
    pub block: Option<i64>,
    /// Bytes of one row's item in those slots (16-byte multiples, room for 8-byte values).
    pub row_bytes: i64,
    /// Per reduction of a blocked loop: a bulk function computing its argument over the block's
    /// values in an output buffer: the function's argument is written there item by item (it
    /// reads per-row items), one call replaces the block's values in place, then the fold (and,
    /// when the buffer keeps them, the outputs) read them. Same bits as the IR.
    pub bulk: Vec<Option<ItemBulk>>,
}

/// A reduction argument of an item loop computed by a bulk call (see [`ItemRows::bulk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemBulk {
    /// The call (in place).
    pub call: BulkCall,
    /// The element output whose buffer holds the values: the one keeping the argument
    /// ([`ReductionPlan::keep`]), or else one the element pass writes after every fold, used as
    /// scratch until then (log-softmax's `exp(x - max)`, which only its sum reads).
    pub output: usize,
    /// The buffer keeps the values for the element pass (else it is scratch).
    pub kept: bool,
}

/// The loop shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One loop over the elements `begin..end`, in chunks when bulk functions are called.
    Flat(Option<Chunked>),
    /// A loop over the rows `begin..end`.
    Rows(Rows),
    /// A loop over the rows `begin..end` of items of several values.
    Items(ItemRows),
    /// A loop over rows `begin..end` of a trailing uniform axis, a vector of rows at a time.
    Trailing(TrailingRows),
}

/// Rows along a trailing uniform axis of `length` values (`[n, *, k]` or dense `[n, k]` reduced
/// over its last axis), `lanes` rows at a time, a row per lane: value `j` of each row gathered into
/// one vector, so reductions fold lane-wise (no horizontal folds, no masks), per-row values are
/// vectors of rows, and element outputs are stored value by value; the rows past the last whole
/// vector one at a time, the same code on scalars. Every value of a row is read once per call
/// of the row's group: rows are short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrailingRows {
    /// Values per row.
    pub length: i64,
}

/// The longest trailing rows run a row per lane: their gathered values stay in registers (or
/// close to them). Longer rows run as ragged rows do.
pub const TRAILING_LANES_MAX: usize = 32;

/// One reduction's plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReductionPlan {
    /// What it computes.
    pub kind: ReduceKind,
    /// The value reduced.
    pub arg: ScalarRef,
    /// How the row is folded.
    pub fold: Fold,
    /// The element output whose buffer keeps the argument's values (row-by-row passes; see
    /// [`KernelPlan::stash`]).
    pub keep: Option<usize>,
}

/// Every decision of one kernel, from its spec. Built only by [`KernelPlan::new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelPlan {
    spec: KernelSpec,
    /// The lane type of the vector loops (`None`: scalar loops).
    pub simd: Option<Elem>,
    /// The loop shape.
    pub shape: Shape,
    /// The reductions, in pass order.
    pub reductions: Vec<ReductionPlan>,
    /// Expensive reduction arguments that an element output also needs, kept in that output's
    /// buffer by the reduction's pass and read back by the output pass instead of being computed
    /// twice (softmax's `exp(x - max)`): `(node, output)`.
    pub stash: Vec<(usize, usize)>,
    /// The stack buffers, in frame order.
    pub scratch: Vec<Scratch>,
    /// How the threads share a call.
    pub split: Split,
}

impl KernelPlan {
    /// The plan of `spec` on `target`.
    pub fn new(spec: &KernelSpec, target: Target) -> KernelPlan {
        let simd = spec.simd();
        let mut scratch = Vec::new();
        let items = spec.item_width() > 1;
        let trailing = match (simd, spec.trailing_length()) {
            (Some(_), Some(k)) if k <= TRAILING_LANES_MAX => Some(TrailingRows { length: k as i64 }),
            _ => None,
        };
        // Trailing rows compute each value of a row once per group: nothing to keep.
        let stash = if spec.reductions().is_empty() || trailing.is_some() { Vec::new() } else { stash_plan(spec) };
        let reductions: Vec<ReductionPlan> = spec
            .reductions()
            .iter()
            .map(|red| {
                let float = simd.and_then(Elem::float).is_some();
                let fold = match (simd, red.kind) {
                    _ if trailing.is_some() => Fold::Lanes,
                    (Some(_), ReduceKind::Max | ReduceKind::Min) if items && float => Fold::ColumnsDroppingNans,
                    _ if items => Fold::Columns,
                    (None, _) => Fold::Ordered,
                    (Some(_), ReduceKind::Max | ReduceKind::Min) if float => Fold::DroppingNans,
                    _ => Fold::Vector,
                };
                let keep = match red.arg {
                    ScalarRef::Node(n) => stash.iter().find(|(m, _)| *m == n).map(|&(_, j)| j),
                    _ => None,
                };
                ReductionPlan { kind: red.kind, arg: red.arg, fold, keep }
            })
            .collect();
        let shape = if let Some(rows) = trailing {
            Shape::Trailing(rows)
        } else if items {
            Shape::Items(items_plan(spec, target, &reductions, &mut scratch))
        } else if spec.rows() {
            Shape::Rows(rows_plan(spec, target, &reductions, &mut scratch))
        } else {
            Shape::Flat(chunked_plan(spec, target, &mut scratch))
        };
        let split = if spec.rows() { Split::Rows } else { Split::Elements };
        KernelPlan { spec: spec.clone(), simd, shape, reductions, stash, scratch, split }
    }

    /// The spec planned.
    pub fn spec(&self) -> &KernelSpec {
        &self.spec
    }
}

/// The chunks of a map kernel, when its outputs need functions the target evaluates in bulk.
fn chunked_plan(spec: &KernelSpec, target: Target, scratch: &mut Vec<Scratch>) -> Option<Chunked> {
    let (needed, _) = expression(spec.graph(), &RowOutput::elements(spec.outputs()), &[]);
    let flat_inputs = |i: usize| spec.operands().get(i) == Some(&OperandKind::Full);
    let nodes: Vec<FlatNode> = (0..needed.len())
        .filter(|&n| needed[n])
        .filter_map(|n| {
            let bulk = bulk_call(spec, target, n, &flat_inputs)?;
            scratch.push(Scratch { bytes: MAP_CHUNK * 4, holds: ScratchUse::Chunk(n) });
            Some(FlatNode { node: n, scratch: scratch.len() - 1, bulk: Some(bulk) })
        })
        .collect();
    (!nodes.is_empty()).then_some(Chunked { values: MAP_CHUNK, nodes })
}

/// The item loop of `spec` (items of several values): parts of the lane type's width while
/// they fit, then single columns (scalar kernels: single columns); blocks of rows pass by pass
/// when there are several passes, a kept reduction argument that `target` evaluates in bulk
/// (softmax's `exp(x - max)`) computed by one call per block.
fn items_plan(spec: &KernelSpec, target: Target, reductions: &[ReductionPlan], scratch: &mut Vec<Scratch>) -> ItemRows {
    let width = spec.item_width() as i64;
    let lanes = spec.simd().map_or(width + 1, Elem::lanes);
    let mut parts = Vec::new();
    let mut column = 0;
    while column + lanes <= width {
        parts.push(Part { column, vector: true });
        column += lanes;
    }
    parts.extend((column..width).map(|column| Part { column, vector: false }));
    let row_bytes = (width * 8 + 15) / 16 * 16;
    let passes = spec.reductions().len() + usize::from(!RowOutput::elements(spec.outputs()).is_empty());
    let block = (passes > 1).then(|| {
        for k in 0..spec.reductions().len() {
            scratch.push(Scratch { bytes: ROW_BLOCK * row_bytes, holds: ScratchUse::RowValues(k) });
        }
        ROW_BLOCK
    });
    // An element output no reduction keeps a value in is free until the element pass writes it.
    let scratch_output = |dtype: DType| {
        spec.outputs().iter().enumerate().find_map(|(j, o)| match o {
            RowOutput::Elements(r)
                if spec.graph().dtype(*r) == dtype && reductions.iter().all(|red| red.keep != Some(j)) =>
            {
                Some(j)
            }
            _ => None,
        })
    };
    // In place only: the argument reads per-row items, which only the item loop has.
    let bulk = reductions
        .iter()
        .map(|red| {
            let (Some(_), ScalarRef::Node(n)) = (block, red.arg) else { return None };
            let call @ BulkCall::InPlace { .. } = bulk_call(spec, target, n, &|_| false)? else { return None };
            match red.keep {
                Some(output) => Some(ItemBulk { call, output, kept: true }),
                None => {
                    scratch_output(spec.graph().dtype(red.arg)).map(|output| ItemBulk { call, output, kept: false })
                }
            }
        })
        .collect();
    ItemRows { width, parts, block, row_bytes, bulk }
}

/// The row loop of `spec`.
fn rows_plan(spec: &KernelSpec, target: Target, reductions: &[ReductionPlan], scratch: &mut Vec<Scratch>) -> Rows {
    let passes = spec.reductions().len() + usize::from(!RowOutput::elements(spec.outputs()).is_empty());
    if passes <= 1 {
        // Only where the plan may call out (the machines of the bulk functions), and only when
        // some input is read flat.
        let reads_flat = spec.operands().contains(&OperandKind::Full);
        let prefetch = (target.bulk && reads_flat).then(|| {
            scratch.push(Scratch { bytes: 32, holds: ScratchUse::PrefetchRange });
            Prefetch {
                rows: PREFETCH_ROWS,
                ahead: PREFETCH_AHEAD,
                min_bytes: PREFETCH_MIN_BYTES,
                range: scratch.len() - 1,
            }
        });
        return Rows::OnePass { prefetch };
    }
    for k in 0..spec.reductions().len() {
        scratch.push(Scratch { bytes: ROW_BLOCK.max(FLAT_ROWS) * ROW_VALUE_BYTES, holds: ScratchUse::RowValues(k) });
    }
    // Vector kernels compute the hoisted per-row values of a block's rows a vector of rows at a
    // time (a log-softmax's `log(sum)`: one polynomial per row was a third of its time).
    if spec.simd().is_some() {
        for j in 0..spec.hoisted().len() {
            scratch.push(Scratch {
                bytes: ROW_BLOCK.max(FLAT_ROWS) * ROW_VALUE_BYTES,
                holds: ScratchUse::HoistedValues(j),
            });
        }
    }
    Rows::Blocked { rows: ROW_BLOCK, flat: flat_blocks(spec, target, reductions, scratch) }
}

/// Which passes of a multi-pass vector row kernel run flat over a block's elements, or `None`
/// when none is worth it (or the kernel is scalar, whose loops stay row by row).
fn flat_blocks(
    spec: &KernelSpec,
    target: Target,
    reductions: &[ReductionPlan],
    scratch: &mut Vec<Scratch>,
) -> Option<FlatBlocks> {
    let elem = spec.simd()?;
    let graph = spec.graph();
    let mut computed: Vec<usize> = Vec::new();
    let mut read = vec![false; graph.inputs().len()];
    let mut reads = |roots: &[ScalarRef], stop: &[usize]| {
        for (i, r) in expression(graph, roots, stop).1.into_iter().enumerate() {
            read[i] |= r;
        }
    };
    let mut flat_args = Vec::new();
    for red in spec.reductions() {
        let flat = matches!(red.arg, ScalarRef::Node(_)) && expensive(graph, &[red.arg], &computed);
        match (flat, red.arg) {
            (true, ScalarRef::Node(n)) => {
                reads(&[red.arg], &computed);
                computed.push(n);
                flat_args.push(Some(n));
            }
            _ => flat_args.push(None),
        }
    }
    let elements = RowOutput::elements(spec.outputs());
    let outputs =
        !elements.is_empty() && (expensive(graph, &elements, &computed) || flat_args.iter().any(Option::is_some));
    if outputs {
        reads(&elements, &computed);
    }
    if !flat_args.iter().any(Option::is_some) && !outputs {
        return None;
    }
    // Full and scalar operands are read as they are; per-row operands and reduction results are
    // expanded.
    let expanded: Vec<usize> = (0..read.len())
        .filter(|&i| read[i] && spec.operands().get(i).is_none_or(|kind| *kind == OperandKind::PerRow))
        .collect();
    // Scratch buffers: one per flat reduction argument and per expanded input, with room for the
    // vectors an expansion writes past a row's end (the IR's, or a bulk fold's).
    let bytes = (FLAT_BLOCK + (EXPAND_VECTORS * elem.lanes()).max(EXPAND_SLACK)) * elem.bytes() as i64;
    let flat_input = |i: usize| spec.operands().get(i) == Some(&OperandKind::Full) || expanded.contains(&i);
    let (bulk_folds, fold_buffers) = bulk_folds(spec, target, reductions, &flat_args);
    let args = flat_args
        .iter()
        .enumerate()
        .map(|(k, n)| {
            let n = (*n)?;
            scratch.push(Scratch { bytes, holds: ScratchUse::FlatArg(k) });
            Some(FlatNode { node: n, scratch: scratch.len() - 1, bulk: bulk_call(spec, target, n, &flat_input) })
        })
        .collect();
    let divides = if outputs && target.bulk { bulk_divides(spec, &flat_input, &computed) } else { Vec::new() };
    let expanded = expanded
        .into_iter()
        .map(|i| {
            scratch.push(Scratch { bytes, holds: ScratchUse::Expanded(i) });
            (i, scratch.len() - 1)
        })
        .collect();
    Some(FlatBlocks {
        max_rows: FLAT_ROWS,
        max_values: FLAT_BLOCK,
        args,
        bulk_folds,
        fold_buffers,
        outputs,
        divides,
        expanded,
    })
}

/// Per reduction of a flat-block kernel: whether it folds in bulk ([`FlatBlocks::bulk_folds`]),
/// and the output buffer row-by-row blocks compute its argument into
/// ([`FlatBlocks::fold_buffers`]). A float32 sum or maximum of a float32 vector kernel, on a
/// machine with the bulk functions, when both kinds of block can hand the bulk fold its
/// argument's values: a full input, or an argument computed flat into scratch on flat blocks and
/// into an output's buffer on row-by-row blocks; and when no output of the kernel is the
/// reduction itself (its results go to slots and expansions only).
fn bulk_folds(
    spec: &KernelSpec,
    target: Target,
    reductions: &[ReductionPlan],
    flat_args: &[Option<usize>],
) -> (Vec<bool>, Vec<Option<usize>>) {
    let graph = spec.graph();
    // An element output of float32 that keeps no reduction's argument is free until the element
    // pass writes it (log-softmax's, for its `exp(x - max)`).
    let free_output = spec.outputs().iter().enumerate().find_map(|(j, o)| match o {
        RowOutput::Elements(r) if graph.dtype(*r) == DType::F32 && reductions.iter().all(|red| red.keep != Some(j)) => {
            Some(j)
        }
        _ => None,
    });
    reductions
        .iter()
        .enumerate()
        .map(|(k, red)| {
            let kind = matches!(red.kind, ReduceKind::Sum | ReduceKind::Max);
            let float32 = spec.simd() == Some(Elem::F32) && graph.dtype(red.arg) == DType::F32;
            let output = spec.outputs().iter().any(|o| matches!(*o, RowOutput::Reduction { index, .. } if index == k));
            let bulk = target.tiles && kind && float32 && !output;
            match red.arg {
                ScalarRef::Input(i) if bulk && spec.operands().get(i) == Some(&OperandKind::Full) => (true, None),
                ScalarRef::Node(_) if bulk && flat_args[k].is_some() => match red.keep.or(free_output) {
                    Some(j) => (true, Some(j)),
                    None => (false, None),
                },
                _ => (false, None),
            }
        })
        .unzip()
}

/// The element outputs of a float32 vector kernel that are one division of operands a flat block
/// reads flat (`flat_input` inputs, `computed` flat reduction arguments): see [`BulkDivide`].
fn bulk_divides(spec: &KernelSpec, flat_input: &dyn Fn(usize) -> bool, computed: &[usize]) -> Vec<BulkDivide> {
    let graph = spec.graph();
    if spec.simd() != Some(Elem::F32) {
        return Vec::new();
    }
    let flat = |r: ScalarRef| match r {
        ScalarRef::Input(i) => graph.inputs()[i] == DType::F32 && flat_input(i),
        ScalarRef::Node(n) => computed.contains(&n) && graph.nodes()[n].dtype == DType::F32,
        ScalarRef::Const(_) => false,
    };
    let mut divides = Vec::new();
    for (output, o) in spec.outputs().iter().enumerate() {
        let RowOutput::Elements(ScalarRef::Node(d)) = *o else { continue };
        let node = &graph.nodes()[d];
        if node.op == ScalarOp::Divide && node.dtype == DType::F32 && node.args.iter().all(|&a| flat(a)) {
            divides.push(BulkDivide { output, x: node.args[0], y: node.args[1] });
        }
    }
    divides
}

/// The bulk call evaluating node `n` over a flat range, when `target` has one for it: a float32
/// `exp`, `tanh` or `sigmoid` of a float32 vector kernel. `exp(x - y)` of graph inputs that the
/// range reads flat (`flat_input`) is one `exp_sub` call; anything else is evaluated in place.
fn bulk_call(spec: &KernelSpec, target: Target, n: usize, flat_input: &dyn Fn(usize) -> bool) -> Option<BulkCall> {
    let node = &spec.graph().nodes()[n];
    let op = match node.op {
        ScalarOp::Exp => UnaryMath::Exp,
        ScalarOp::Tanh => UnaryMath::Tanh,
        ScalarOp::Sigmoid => UnaryMath::Sigmoid,
        _ => return None,
    };
    if !target.bulk || node.dtype != DType::F32 || spec.simd() != Some(Elem::F32) {
        return None;
    }
    let arg = node.args[0];
    if let (UnaryMath::Exp, ScalarRef::Node(d)) = (op, arg) {
        let difference = &spec.graph().nodes()[d];
        let flat = |r: ScalarRef| match r {
            ScalarRef::Input(i) if spec.graph().inputs()[i] == DType::F32 && flat_input(i) => Some(i),
            _ => None,
        };
        if difference.op == ScalarOp::Subtract {
            if let (Some(x), Some(y)) = (flat(difference.args[0]), flat(difference.args[1])) {
                return Some(BulkCall::ExpSub { x, y });
            }
        }
    }
    Some(BulkCall::InPlace { op, arg })
}

/// True when computing the expressions `roots` (not below the nodes in `stop`) takes an
/// expensive op (a division, a square root, a transcendental function).
fn expensive(graph: &ScalarGraph, roots: &[ScalarRef], stop: &[usize]) -> bool {
    let (nodes, _) = expression(graph, roots, stop);
    let cost = |j: usize| graph.nodes()[j].op.cost() == ragtime_graph::Cost::Expensive;
    (0..nodes.len()).any(|j| nodes[j] && !stop.contains(&j) && cost(j))
}

/// Which reduction arguments to keep in an output buffer (see [`KernelPlan::stash`]): those
/// whose expression has an expensive op and that an element output of the same dtype reads.
fn stash_plan(spec: &KernelSpec) -> Vec<(usize, usize)> {
    let graph = spec.graph();
    let mut plan: Vec<(usize, usize)> = Vec::new();
    for red in spec.reductions() {
        let ScalarRef::Node(n) = red.arg else { continue };
        if plan.iter().any(|(m, _)| *m == n) || !expensive(graph, &[red.arg], &[]) {
            continue;
        }
        let reader = spec.outputs().iter().enumerate().find_map(|(j, o)| match o {
            // The buffer holds the node's values, so it must have the node's dtype.
            RowOutput::Elements(r)
                if expression(graph, &[*r], &[]).0[n]
                    && graph.dtype(*r) == graph.nodes()[n].dtype
                    && !plan.iter().any(|(_, k)| *k == j) =>
            {
                Some(j)
            }
            _ => None,
        });
        if let Some(j) = reader {
            plan.push((n, j));
        }
    }
    plan
}

/// `i0`, `%3`, `2:float32`.
fn name(r: ScalarRef) -> String {
    match r {
        ScalarRef::Input(i) => format!("i{i}"),
        ScalarRef::Node(j) => format!("%{j}"),
        ScalarRef::Const(c) => format!("{c}:{}", c.dtype()),
    }
}

impl fmt::Display for BulkCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BulkCall::InPlace { op, arg } => {
                write!(f, "bulk {} in place, argument {} written first", format!("{op:?}").to_lowercase(), name(arg))
            }
            BulkCall::ExpSub { x, y } => write!(f, "bulk exp_sub(i{x}, i{y})"),
        }
    }
}

impl fmt::Display for FlatNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{} into s{}: ", self.node, self.scratch)?;
        match &self.bulk {
            Some(call) => write!(f, "{call}"),
            None => f.write_str("vector loop"),
        }
    }
}

impl fmt::Display for KernelPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = &self.spec;
        match (self.simd, &self.shape) {
            (Some(elem), Shape::Items(_)) => writeln!(
                f,
                "kernel: vector {} ({} parts of each item, then single columns)",
                elem.dtype(),
                elem.vector_ty().to_string().to_lowercase()
            )?,
            (Some(elem), _) => writeln!(
                f,
                "kernel: vector {} ({}, {UNROLL} vectors per iteration, then 1, then scalars)",
                elem.dtype(),
                elem.vector_ty().to_string().to_lowercase()
            )?,
            (None, _) => writeln!(f, "kernel: scalar (one element per iteration)")?,
        }
        writeln!(f, "graph:")?;
        for line in spec.graph().listing().lines().filter(|l| !l.starts_with("outputs:")) {
            writeln!(f, "  {line}")?;
        }
        let operands: Vec<String> = spec
            .operands()
            .iter()
            .enumerate()
            .map(|(i, kind)| format!("i{i} {}", format!("{kind:?}").to_lowercase()))
            .collect();
        writeln!(f, "operands: {}", if operands.is_empty() { "none".to_string() } else { operands.join(", ") })?;
        let n_ops = spec.operands().len();
        for (k, red) in self.reductions.iter().enumerate() {
            let fold = match red.fold {
                Fold::Ordered => "ordered",
                Fold::Vector => "vector",
                Fold::DroppingNans => "vector dropping NaNs, exact refold of rows with a NaN or a zero result",
                Fold::Columns => "each column in item order",
                Fold::Lanes => "a row per lane, in order",
                Fold::ColumnsDroppingNans => {
                    "each column in item order dropping NaNs, exact refold of rows with a NaN or a zero result"
                }
            };
            write!(f, "reduction r{k}: {} of {} -> i{}, fold {fold}", red.kind.name(), name(red.arg), n_ops + k)?;
            if red.kind == ReduceKind::Mean {
                write!(f, ", sum divided by the count in float64")?;
            }
            writeln!(f)?;
        }
        for &(n, i) in spec.hoisted() {
            writeln!(f, "row value i{i}: %{n}, computed once per row")?;
        }
        for (j, out) in spec.outputs().iter().enumerate() {
            match *out {
                RowOutput::Elements(r) => writeln!(f, "output o{j}: elements {}", name(r))?,
                RowOutput::Reduction { index, keepdims } => {
                    writeln!(f, "output o{j}: r{index} per row{}", if keepdims { ", keepdims" } else { "" })?
                }
            }
        }
        for &(n, j) in &self.stash {
            writeln!(f, "stash: %{n} kept in o{j}'s buffer by its reduction's row-by-row pass")?;
        }
        match &self.shape {
            Shape::Flat(None) => writeln!(f, "loop: flat over elements, one pass")?,
            Shape::Flat(Some(chunked)) => {
                writeln!(f, "loop: flat over elements in chunks of {}", chunked.values)?;
                for node in &chunked.nodes {
                    writeln!(f, "  chunk pass: {node}")?;
                }
                writeln!(f, "  chunk pass: element outputs")?;
            }
            Shape::Rows(Rows::OnePass { prefetch: None }) => writeln!(f, "loop: rows, one pass per row")?,
            Shape::Rows(Rows::OnePass { prefetch: Some(p) }) => writeln!(
                f,
                "loop: rows, one pass per row; ranges of at least {} bytes in groups of {} rows, each prefetching the flat inputs {} bytes ahead",
                p.min_bytes, p.rows, p.ahead
            )?,
            Shape::Items(items) => {
                let lane_ty = self.simd.map(|elem| elem.vector_ty().to_string().to_lowercase());
                let parts: Vec<String> = items
                    .parts
                    .iter()
                    .map(|part| match (&lane_ty, part.vector) {
                        (Some(ty), true) => format!("{ty} at {}", part.column),
                        _ => format!("column {}", part.column),
                    })
                    .collect();
                write!(f, "loop: rows of items of {} values ({})", items.width, parts.join(", "))?;
                match items.block {
                    Some(rows) => {
                        writeln!(f, ", in blocks of {rows} rows pass by pass, {} bytes a row's item", items.row_bytes)?
                    }
                    None => writeln!(f, ", one pass per row")?,
                }
                for (k, bulk) in items.bulk.iter().enumerate() {
                    let Some(ItemBulk { call, output, kept }) = bulk else { continue };
                    let role = if *kept { "" } else { " (scratch until the element pass)" };
                    writeln!(
                        f,
                        "  block pass r{k}: {} over the block's values in o{output}'s buffer{role}: {call}; fold from it",
                        name(self.reductions[k].arg)
                    )?;
                }
            }
            Shape::Trailing(rows) => writeln!(
                f,
                "loop: rows of the trailing axis of {} values, a vector of rows at a time (a row per lane), then row by row",
                rows.length
            )?,
            Shape::Rows(Rows::Blocked { rows, flat }) => {
                match flat {
                    None => writeln!(f, "loop: rows in blocks of {rows}, pass by pass")?,
                    Some(flat) => writeln!(
                        f,
                        "loop: rows in blocks: up to {} rows holding at most {} values run flat, else {rows} rows pass by pass",
                        flat.max_rows, flat.max_values
                    )?,
                }
                if let Some(flat) = flat {
                    // In the order a flat block runs them.
                    let expand = |i: usize| flat.expanded.iter().find(|&&(j, _)| j == i).map(|&(_, s)| s);
                    for i in 0..n_ops {
                        if let Some(s) = expand(i) {
                            writeln!(f, "  flat block: expand i{i} into s{s}")?;
                        }
                    }
                    for (k, arg) in flat.args.iter().enumerate() {
                        write!(f, "  flat block: r{k}: ")?;
                        if let Some(node) = arg {
                            write!(f, "{node}; ")?;
                        }
                        if let Some(j) = flat.fold_buffers[k] {
                            write!(f, "bulk fold, 16 rows at a time (row-by-row blocks too, from o{j}'s buffer)")?;
                        } else if flat.bulk_folds[k] {
                            write!(f, "bulk fold, 16 rows at a time (row-by-row blocks too)")?;
                        } else {
                            write!(f, "fold row by row")?;
                        }
                        if let Some(s) = expand(n_ops + k) {
                            write!(f, "; expand i{} into s{s}", n_ops + k)?;
                        }
                        writeln!(f)?;
                    }
                    // Hoisted per-row values (inputs after the reductions' results), after the folds.
                    for i in n_ops + flat.args.len()..spec.graph().inputs().len() {
                        if let Some(s) = expand(i) {
                            writeln!(f, "  flat block: expand i{i} into s{s}")?;
                        }
                    }
                    let outputs = if flat.outputs { "flat over the block" } else { "row by row" };
                    writeln!(f, "  flat block: element outputs {outputs}")?;
                    for d in &flat.divides {
                        writeln!(f, "  flat block: output {} = bulk div({}, {})", d.output, name(d.x), name(d.y))?;
                    }
                }
            }
        }
        for (s, scratch) in self.scratch.iter().enumerate() {
            let what = match scratch.holds {
                ScratchUse::RowValues(k) => format!("r{k}'s row values"),
                ScratchUse::Chunk(n) => format!("%{n} over a chunk"),
                ScratchUse::FlatArg(k) => format!("r{k}'s argument over a flat block"),
                ScratchUse::Expanded(i) => format!("i{i} expanded over a flat block"),
                ScratchUse::PrefetchRange => "the prefetch routine's range".to_string(),
                ScratchUse::HoistedValues(j) => {
                    let input = spec.hoisted().get(j).map_or(0, |&(_, i)| i);
                    format!("i{input}'s row values, a vector of rows at a time")
                }
            };
            writeln!(f, "scratch s{s}: {} bytes, {what}", scratch.bytes)?;
        }
        let split = match self.split {
            Split::Elements => "ranges of elements",
            Split::Rows => "ranges of rows balanced by values plus rows",
        };
        writeln!(f, "threads: {split}")
    }
}
