//! The reduction family: `reduce_*` over any axes ([`Reduce`], in `fold`), the statistics
//! (`reduce_variance`, `reduce_std`, `reduce_logsumexp`.. in `statistics`), the [`Axes`] a reduction
//! folds (`axes`) and the [`ReductionPlan`] that says which elements fold into which result
//! element (`plan`), shared with string `reduce_join`. The op types are declared in `defs`.

pub(crate) mod axes;
pub(crate) mod defs;
pub(crate) mod fold;
pub(crate) mod plan;
pub(crate) mod statistics;

#[cfg(test)]
mod tests;

pub use axes::Axes;
pub use defs::{Reduce, ReduceKind, Statistic, StatisticKind};
pub use fold::{add_item, fold_rows, fold_uniform_rows, RowSum};
pub use plan::{fold_group, fold_items, plan_reduction, reduced_type, ReductionPlan, ReductionStage, FOLD_BLOCK};

use ragtime_core::Result;
use ragtime_graph::{Attrs, OpRef};

/// The reduction called `name`, if any.
pub(crate) fn lookup(name: &str, attrs: &Attrs) -> Option<Result<OpRef>> {
    if let Some(kind) = StatisticKind::from_name(name) {
        return Some(crate::util::shared(Statistic::from_kind_and_attrs(kind, attrs)));
    }
    let kind = ReduceKind::from_name(name)?;
    Some(crate::util::shared(Reduce::from_kind_and_attrs(kind, attrs)))
}
