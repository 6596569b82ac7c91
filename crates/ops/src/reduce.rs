//! (being written)

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

/// The op of this module called `name`, if any.
pub(crate) fn lookup(_name: &str, _attrs: &Attrs) -> Option<Result<OpRef>> {
    None
}
