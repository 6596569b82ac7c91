//! ragtime-graph: the graph IR — `Variable` / `Apply` / `Op` / `Constant` in slotmap arenas, the
//! `FunctionGraph` that `compile()` clones them into, its verifier, the reference interpreter and `debugprint`.
#![forbid(unsafe_code)]

mod op;

pub use op::{expect_arity, Attr, Attrs, Op, OpRef};
