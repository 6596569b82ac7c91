//! ragtime-graph: the graph IR — `Variable` / `Apply` / `Op` / `Constant` in slotmap arenas, the
//! `FunctionGraph` that `compile()` clones them into, its verifier, the reference interpreter and `debugprint`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod debugprint;
mod fgraph;
mod graph;
mod inner;
mod interp;
mod op;
mod structure;

pub use debugprint::{debugprint, debugprint_function, PrintOptions};
pub use fgraph::{Client, FunctionGraph};
pub use graph::{constant_label, Apply, ApplyId, Graph, VarId, Variable};
pub use inner::{InnerGraph, InnerGraphBuilder};
pub use interp::Interpreter;
pub use op::{expect_arity, Attr, Attrs, Cost, Op, OpEq, OpProperties, OpRef};
