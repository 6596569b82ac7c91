//! `Function::estimate_memory` against what calls really allocate, counted by the bench's counting
//! allocator (installed here as this test binary's global allocator): the bound holds on the
//! benchmark workloads and on random graphs of elementwise ops and reductions over random ragged
//! inputs, and the estimate is near the measured peak where the bound exists.

use std::sync::Mutex;

use ragtime::estimate::ValueSize;
use ragtime::prelude::*;
use ragtime_cli::bench::data::{self, Data, Inner, Queries, Rank2};
use ragtime_cli::bench::memory::{self, CountingAllocator};
use ragtime_cli::bench::workloads::{self, WorkloadId};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Measurements are process-wide: one test measures at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The measured peak of one call (its outputs held, so nothing comes back from the pool), with
/// the prediction made before it.
fn measured(f: &Function, inputs: &[RaggedTensor]) -> (usize, ragtime::estimate::MemoryEstimate) {
    let sizes: Vec<ValueSize> = inputs.iter().map(ValueSize::of).collect();
    let predicted = f.estimate_memory(&sizes).unwrap();
    // A first call derives and caches what inputs keep (row ids): the bound covers it too.
    let (first, first_peak) = memory::measure(|| f.call(inputs).unwrap());
    let (second, peak) = memory::measure(|| f.call(inputs).unwrap());
    drop((first, second));
    (first_peak.unwrap().max(peak.unwrap()), predicted)
}

#[test]
fn the_bound_holds_on_the_workloads_and_the_estimate_is_close() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    assert!(memory::counting(), "the counting allocator is installed");
    let rows = 1 << 14;
    let d = Data::new(rows).unwrap();
    let rank2 = Rank2::new(&d).unwrap();
    let inner = Inner::new(rows).unwrap();
    let queries = Queries::new(2000).unwrap();
    let cases: Vec<(WorkloadId, Vec<RaggedTensor>)> = vec![
        (WorkloadId::FusedElemwise, vec![d.x.clone(), d.z.clone()]),
        (WorkloadId::Axpy, vec![d.x.clone(), d.z.clone()]),
        (WorkloadId::RowMean, vec![d.x.clone(), d.z.clone()]),
        (WorkloadId::RowSoftmax, vec![d.x.clone()]),
        (WorkloadId::RowMeanRank2, vec![rank2.x.clone(), rank2.z.clone()]),
        (WorkloadId::RowSoftmaxRank2, vec![rank2.x.clone()]),
        (WorkloadId::RowMeanInner8, vec![inner.x.clone(), inner.z.clone()]),
        (WorkloadId::RowSoftmaxInner8, vec![inner.x.clone()]),
        (WorkloadId::Bigram, vec![queries.queries.clone(), queries.table.clone()]),
    ];
    for (id, inputs) in cases {
        let f = workloads::build(id).compile().unwrap();
        let (peak, predicted) = measured(&f, &inputs);
        eprintln!(
            "{}: peak {peak}, estimate {}, bound {:?}, outputs {}",
            id.name(),
            predicted.estimate,
            predicted.upper_bound,
            predicted.outputs
        );
        match predicted.upper_bound {
            Some(bound) => {
                assert!(peak <= bound, "{}: measured {peak} bytes over the bound {bound}", id.name());
                // Where the sizes are exact, the estimate is within a factor of two of the peak.
                assert!(
                    predicted.estimate <= 2 * peak.max(1) && peak <= 2 * predicted.estimate,
                    "{}: estimate {} against {peak} measured",
                    id.name(),
                    predicted.estimate
                );
            }
            None => {
                assert_eq!(id, WorkloadId::Bigram, "only W7's string ops leave the bound open");
                assert!(!predicted.unbounded.is_empty());
                // W7 runs as one embedding bag over the queries: its output and some scratch.
                assert!(
                    predicted.estimate <= peak && peak <= predicted.estimate + predicted.estimate / 2,
                    "W7: estimate {} against {peak} measured",
                    predicted.estimate
                );
            }
        }
    }
    let _ = data::DEFAULT_ROWS;
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> usize {
        (self.next() % n) as usize
    }
}

/// A random float32 ragged input: `rows` rows of 0..2*mean values, `inner` inner dims.
fn random_input(rng: &mut Rng, rows: usize, mean: usize, inner: &[usize]) -> RaggedTensor {
    let lengths: Vec<i64> = (0..rows).map(|_| rng.below(2 * mean as u64 + 1) as i64).collect();
    let n: usize = lengths.iter().sum::<i64>() as usize;
    let per: usize = inner.iter().product();
    let mut shape = vec![n];
    shape.extend_from_slice(inner);
    let values: Vec<f32> = (0..n * per).map(|_| (rng.below(2000) as f32 - 1000.0) / 250.0).collect();
    let flat = DenseTensor::from_vec(shape, values).unwrap();
    RaggedTensor::new(flat, vec![RowPartition::from_row_lengths(&lengths).unwrap()]).unwrap()
}

#[test]
fn the_bound_holds_on_random_graphs() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut rng = Rng(24);
    let mut bounded = 0;
    for case in 0..40 {
        let inner: Vec<usize> = if rng.below(2) == 0 { vec![] } else { vec![1 + rng.below(6)] };
        let (rows, mean) = (1 + rng.below(5000), 1 + rng.below(30));
        let x = random_input(&mut rng, rows, mean, &inner);
        let z = x.with_flat_values(random_input(&mut rng, rows, mean, &inner).flat_values().clone());
        // `z` needs `x`'s structure: rebuild its values at `x`'s size.
        let z = match z {
            Ok(z) => z,
            Err(_) => {
                let n = x.flat_values().len();
                let values: Vec<f32> = (0..n).map(|_| (rng.below(2000) as f32 - 1000.0) / 250.0).collect();
                x.with_flat_values(DenseTensor::from_vec(x.flat_values().shape().to_vec(), values).unwrap()).unwrap()
            }
        };
        let g = Graph::new();
        let ty = TensorType::of(&x);
        let (xv, zv) = (g.input("x", ty.clone()), g.input("z", ty));
        let mut value = xv.clone();
        let mut pool = vec![xv.clone(), zv.clone()];
        for _ in 0..1 + rng.below(6) {
            let other = pool[rng.below(pool.len() as u64)].clone();
            value = match rng.below(7) {
                0 => &value + &other,
                1 => &value * &other,
                2 => (&value * 0.5f32).exp(),
                3 => &value - value.reduce_max(keepdims(1)),
                4 => &value / (value.abs().reduce_sum(keepdims(1)) + 1.0f32),
                5 => value.tanh() * 3.0f32,
                _ => &value - &other * 2.0f32,
            };
            pool.push(value.clone());
        }
        let out = match rng.below(3) {
            0 => value.reduce_sum(1),
            1 => value.reduce_mean(1),
            _ => value,
        };
        let f = compile(&[&xv, &zv], &[&out]).unwrap();
        let (peak, predicted) = measured(&f, &[x, z]);
        if let Some(bound) = predicted.upper_bound {
            bounded += 1;
            assert!(peak <= bound, "case {case}: measured {peak} over the bound {bound}\n{}", f.debugprint());
        }
    }
    assert!(bounded >= 30, "most random graphs of these ops are bounded: {bounded} of 40");
}
