//! ragtime-fused: the fused ops the optimizer builds — [`Composite`] (elementwise groups), [`RowKernel`]
//! (row reductions with the maps around them), [`GatherReduce`] (sums of gathered table rows),
//! [`HashedGatherReduce`] (sums of table rows picked by hashed tokens and n-grams, in one pass over
//! the strings) and [`RowPooling`] (weighted sums of each row's vectors) — and their reference
//! implementations.
//!
//! Each fused op holds the ops it replaced as an [`InnerGraph`](ragtime_runtime::InnerGraph): a
//! `FunctionGraph` whose inputs are the fused op's inputs (one subgraph IR, printed by
//! `debugprint` under `Inner graphs:`). Its `infer` runs the inner graph's type inference, so a
//! fused op always has exactly the types of what it replaced. Its `perform` takes a fast path when
//! the operands have the shapes fusion assumed (every full operand of one structure, scalars,
//! per-row values), evaluating the scalar graph chunk by chunk so intermediates stay in cache and
//! no broadcast is materialized; otherwise it runs the inner graph through the executor
//! ([`ragtime_runtime::Interpreter`]) with the caller's context, which defines the semantics
//! (broadcasting, errors naming the inner node). Both paths use the same scalar kernels
//! ([`ragtime_ops::elemwise::apply_aligned`], [`ragtime_ops::reduce::fold_rows`]), so results are
//! bit-identical to the unfused graph. [`ScalarGraph`] stays beside the inner graph as the
//! JIT's input (dense, hashable, dtype per value; see `docs/architecture.md`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod gather_reduce;
mod hashed_bag;
mod kernels;
mod operands;
mod pooling;
mod scalar_graph;
mod trailing;

use std::sync::Arc;

use ragtime_graph::OpRef;

pub use gather_reduce::{GatherReduce, PrefetchBytes, PREFETCH_ROWS_AHEAD};
pub use hashed_bag::{HashedFeature, HashedGatherReduce, RowsAddF32};
pub use kernels::{Composite, OuterFold, RowKernel, RowReduction};
pub use operands::{Layout, OperandKind, RowOutput};
pub use pooling::{fill_block, ComputeWeights, FillBlock, PoolBlock, PoolFloat, RowPooling};
pub use scalar_graph::{ScalarConst, ScalarGraph, ScalarGraphBuilder, ScalarNode, ScalarRef};

/// A shared fused op.
pub fn op_ref<T: ragtime_graph::Op>(op: T) -> OpRef {
    Arc::new(op)
}
