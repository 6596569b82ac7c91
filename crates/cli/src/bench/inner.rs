//! The inner-dimension forms of W3 and W4 (`W3_row_mean_inner8`, `W4_row_softmax_inner8`): their
//! reductions over the ragged axis of `[rows, *, 8]` float32 values, timed against row loops that
//! treat the 8 columns as one vector; and a layer norm over the 8 features of each item
//! (`W4_feature_layer_norm`, reductions over the uniform last axis) against a loop over the items.
//! All checked against those loops and the interpreter.

use std::ops::Range;

use ragtime::RaggedTensor;

use super::baseline::{self, Parallel};
use super::check::{self, Against, Mismatch};
use super::data::{Inner, INNER};
use super::rounds::{whole, Side};
use super::run::{against_baseline, compiled, reference, single, Outcome, Settings, Timed};
use super::workloads::{self, WorkloadId};
use super::BenchError;

/// Times and checks `id` (one of the two inner-dim forms) on `data`: ragtime on `settings.threads`,
/// the baseline on `parallel` and, when that has several threads, on `single` too.
pub fn run(
    settings: &Settings,
    (parallel, single_thread): (&Parallel, Option<&Parallel>),
    id: WorkloadId,
    data: &Inner,
) -> Result<Outcome, BenchError> {
    let (mean, features) = match id {
        WorkloadId::RowMeanInner8 => (true, false),
        WorkloadId::RowSoftmaxInner8 => (false, false),
        WorkloadId::FeatureLayerNorm => (false, true),
        _ => return Err(BenchError::Library { workload: id.name(), source: ragtime::Error::graph("not inner-dim") }),
    };
    let built = workloads::build(id);
    let (f, threads) = compiled(id, &built, settings)?;
    let inputs: Vec<RaggedTensor> = if mean { vec![data.x.clone(), data.z.clone()] } else { vec![data.x.clone()] };
    let (xs, zs, splits) = (data.xs(), data.zs(), data.splits());
    let out_len = if mean { data.nrows() * INNER } else { data.nvals() };
    // Where row `r`'s output starts: 8 values per row for the mean, 8 per item for the others.
    let at = |r: usize| if mean { r * INNER } else { splits[r] as usize * INNER };
    let baseline_loop = |par: &Parallel, chunks: &[Range<usize>], buf: &mut [f32], approx: bool| {
        par.run(chunks, buf, at, |rows, o| {
            let s = &splits[rows.start..=rows.end];
            match (mean, features, approx) {
                (true, _, _) => baseline::row_mean_inner8(s, xs, zs, o),
                (false, true, _) => {
                    let (a, b) = (s[0] as usize * INNER, s[s.len() - 1] as usize * INNER);
                    baseline::feature_layer_norm8(&xs[a..b], o)
                }
                (false, false, false) => baseline::row_softmax_inner8(s, xs, o),
                (false, false, true) => baseline::row_softmax_inner8_approx(s, xs, o),
            }
        })
    };
    let chunks = parallel.row_chunks(splits);
    // The softmax has a second loop, with the vectorized `exp` of ragtime's accuracy.
    let approx = !mean && !features;
    let mut approx_buf = vec![0f32; if approx { out_len } else { 0 }];
    let mut probe_buf = vec![0f32; data.nvals()];
    let timed = {
        let mut approx_side = whole(|| baseline_loop(parallel, &chunks, &mut approx_buf, true));
        // W2's loop over these values on the same threads: the bandwidth the memory limit is measured at.
        let value_start = |r: usize| splits[r] as usize * INNER;
        let mut probe_side = whole(|| baseline::axpy_rows(parallel, &chunks, value_start, xs, zs, &mut probe_buf));
        let mut extra: Vec<Side<'_, BenchError>> = Vec::new();
        if approx {
            extra.push(&mut approx_side);
        }
        extra.push(&mut probe_side);
        against_baseline(
            id,
            settings.runs,
            (&f, &inputs),
            (parallel, single_thread),
            (splits, out_len),
            |par, chunks, buf| baseline_loop(par, chunks, buf, false),
            &mut extra,
        )?
    };
    let Timed { ragtime_s, baseline_s, single_thread_baseline_s, extra_s, outputs, baseline_out: buf } = timed;
    let approx_baseline_s = approx.then(|| extra_s[0]);
    let bandwidth_probe_s = extra_s.last().copied();
    let out = single(id, outputs)?;

    let want = reference(id, &built, &inputs)?;
    let check = (|| {
        let shape_ok = if mean {
            out.is_dense() && out.flat_values().shape() == [data.nrows(), INNER]
        } else {
            out.flat_values().shape() == data.x.flat_values().shape() && out.nested_row_splits().len() == 1
        };
        if !shape_ok {
            return Err(Mismatch { against: Against::Baseline, what: "shape", index: 0, got: None, want: None });
        }
        if !mean {
            check::splits(Against::Baseline, &out.nested_row_splits()[0], splits)?;
        }
        check::row_output(&out, &buf, &want, approx_baseline_s.map(|_| &approx_buf[..]))
    })();
    Ok(Outcome {
        recycled_outputs: true,
        approx_baseline_s,
        bandwidth_probe_s,
        id,
        ragtime_s,
        baseline_s: Some(baseline_s),
        threads,
        baseline_threads: Some(parallel.threads()),
        single_thread_baseline_s,
        check,
        size: vec![
            ("nodes_after", f.rewrite_report().nodes_after),
            ("rows", data.nrows()),
            ("inner", INNER),
            ("values", data.nvals()),
        ],
    })
}
