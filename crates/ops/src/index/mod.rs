//! Python-style indexing (`x[...]`, the `getitem` op): the [`Key`] of a subscript (`key`) and
//! the [`GetItem`] op that applies it (`getitem`).

pub(crate) mod getitem;
pub(crate) mod key;

#[cfg(test)]
mod tests;

pub use getitem::GetItem;
pub use key::MAX_KEY_ITEMS;
pub use key::{Key, KeyItem};

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

/// The op of this module called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    match name {
        "getitem" => Some(GetItem::from_attrs(attrs).map(|op| std::sync::Arc::new(op) as OpRef)),
        _ => None,
    }
}
