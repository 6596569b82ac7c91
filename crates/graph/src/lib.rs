//! ragtime-graph: the graph IR — `Variable` / `Apply` / `Op` / `Constant` in slotmap arenas, the
//! `FunctionGraph` that `compile()` clones them into, its verifier and `debugprint`
//! (graphs run in `ragtime-runtime`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod debugprint;
mod fgraph;
mod graph;
mod op;
mod structure;

pub use debugprint::{debugprint, debugprint_function, PrintOptions};
pub use fgraph::{Client, FunctionGraph};
pub use graph::{constant_label, Apply, ApplyId, Graph, VarId, Variable};
pub use op::{expect_arity, Attr, Attrs, Cost, Op, OpEq, OpProperties, OpRef};
