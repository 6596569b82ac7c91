//! Criterion benches guarding the kernels of `ragtime bench` against regressions: the workloads of
//! `docs/benchmarks.md` (W1-W7 and W9, the rank 2 and inner-dim forms of W3 and W4, same graphs and data generators as `ragtime bench`) at 2^16 rows and 6,250
//! queries, each next to its single-threaded baseline loop. Every workload's output is checked (against
//! its baseline and the interpreter) before it is timed. Run with `cargo bench --bench kernels`
//! (`-- --quick` for a short run, `-- W3` to filter).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ragtime::prelude::*;
use ragtime::RaggedTensor;
use ragtime_cli::bench::baseline::{self, Parallel};
use ragtime_cli::bench::data::{small_input, Data, Inner, Queries, Rank2, Sessions, DIM, FEATURES, INNER};
use ragtime_cli::bench::run::{Bench, Settings};
use ragtime_cli::bench::workloads::{self, WorkloadId};

const ROWS: usize = 1 << 16;
/// 100,000 queries scaled like the rows: 100,000 * 2^16 / 2^20.
const QUERIES: usize = 6_250;

/// Runs `ragtime bench`'s check of `id` at the bench size; panics (failing the bench) on a mismatch.
fn checked(id: WorkloadId) {
    let settings = Settings {
        only: vec![id],
        rows: ROWS,
        queries: QUERIES,
        users: ROWS / 8,
        runs: 1,
        threads: 1,
        memory_retained: false,
    };
    let outcome = Bench::new(&settings).and_then(|mut b| b.run(id)).expect("the workload runs");
    if let Err(m) = outcome.check {
        panic!("{}: {m}", id.name());
    }
}

fn compiled(id: WorkloadId) -> Function {
    workloads::build(id).compile().expect("the workload compiles")
}

fn call(f: &Function, inputs: &[RaggedTensor]) -> Vec<RaggedTensor> {
    f.call(inputs).expect("the workload runs")
}

/// W1-W4: ragtime's compiled function and the baseline loop over the same buffers.
fn arrays(c: &mut Criterion) {
    let data = Data::new(ROWS).expect("the data builds");
    let (xs, zs, splits) = (data.xs(), data.zs(), data.splits());
    let xz = [data.x.clone(), data.z.clone()];
    let mut group = c.benchmark_group("arrays");
    group.throughput(Throughput::Elements(data.nvals() as u64));
    let mut flat = vec![0f32; data.nvals()];
    let mut rows = vec![0f32; data.nrows()];

    let id = WorkloadId::FusedElemwise;
    checked(id);
    let f = compiled(id);
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &xz)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::fused_elemwise(xs, zs, &mut flat))
    });

    let id = WorkloadId::Axpy;
    checked(id);
    let f = compiled(id);
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &xz)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| b.iter(|| baseline::axpy(xs, zs, &mut flat)));

    let id = WorkloadId::RowMean;
    checked(id);
    let f = compiled(id);
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &xz)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::row_mean(splits, xs, zs, &mut rows))
    });

    let id = WorkloadId::RowSoftmax;
    checked(id);
    let f = compiled(id);
    let x = [data.x.clone()];
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &x)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::row_softmax(splits, xs, &mut flat))
    });
    group.finish();
}

/// W5 and W6: compiling W4's graph, and one call of W3's function on the 5-row input.
fn fixed_costs(c: &mut Criterion) {
    let mut group = c.benchmark_group("fixed_costs");
    checked(WorkloadId::Compile);
    let built = workloads::row_softmax();
    group.bench_function(WorkloadId::Compile.name(), |b| b.iter(|| built.compile().expect("W4 compiles")));
    checked(WorkloadId::SmallCall);
    let f = compiled(WorkloadId::SmallCall);
    let small = small_input().expect("the small input builds");
    let inputs = [small.clone(), small];
    group.bench_function(WorkloadId::SmallCall.name(), |b| b.iter(|| call(&f, &inputs)));
    group.finish();
}

/// W7: the bigram pipeline and its baseline.
fn bigram(c: &mut Criterion) {
    let id = WorkloadId::Bigram;
    checked(id);
    let q = Queries::new(QUERIES).expect("the queries build");
    let f = compiled(id);
    let inputs = [q.queries.clone(), q.table.clone()];
    let words = q.words_column().expect("a string column");
    let one = Parallel::new(1).expect("one thread");
    let chunks = one.row_chunks(q.splits());
    let mut out = vec![0f32; q.count() * DIM];
    let mut group = c.benchmark_group("bigram");
    group.throughput(Throughput::Elements(q.words() as u64));
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &inputs)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| {
            one.run(
                &chunks,
                &mut out,
                |r| r * DIM,
                |rows, o| baseline::bigram(&q.splits()[rows.start..=rows.end], words, q.table_values(), o),
            )
        })
    });
    group.finish();
}

/// The nested workloads: W3 and W4 over axis 2 of the rank 2 view (next to W3's and W4's loops
/// over the same inner rows) and over the ragged axis of `[rows, *, 8]` values (next to their
/// loops over vectors of 8), and W9 next to its two-level loop.
fn nested(c: &mut Criterion) {
    let data = Data::new(ROWS).expect("the data builds");
    let rank2 = Rank2::new(&data).expect("the rank 2 view builds");
    let (xs, zs, splits) = (data.xs(), data.zs(), data.splits());
    let mut group = c.benchmark_group("nested");
    group.throughput(Throughput::Elements(data.nvals() as u64));
    let mut flat = vec![0f32; data.nvals()];
    let mut rows = vec![0f32; data.nrows()];

    let id = WorkloadId::RowMeanRank2;
    checked(id);
    let f = compiled(id);
    let xz = [rank2.x.clone(), rank2.z.clone()];
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &xz)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::row_mean(splits, xs, zs, &mut rows))
    });

    let id = WorkloadId::RowSoftmaxRank2;
    checked(id);
    let f = compiled(id);
    let x = [rank2.x.clone()];
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &x)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::row_softmax(splits, xs, &mut flat))
    });

    let inner = Inner::new(ROWS).expect("the inner-dim data builds");
    let (ixs, izs, isplits) = (inner.xs(), inner.zs(), inner.splits());
    let mut inner_rows = vec![0f32; inner.nrows() * INNER];
    let mut inner_flat = vec![0f32; inner.nvals()];
    group.throughput(Throughput::Elements(inner.nvals() as u64));
    let id = WorkloadId::RowMeanInner8;
    checked(id);
    let f = compiled(id);
    let xz = [inner.x.clone(), inner.z.clone()];
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &xz)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::row_mean_inner8(isplits, ixs, izs, &mut inner_rows))
    });
    let id = WorkloadId::RowSoftmaxInner8;
    checked(id);
    let f = compiled(id);
    let x = [inner.x.clone()];
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &x)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| baseline::row_softmax_inner8(isplits, ixs, &mut inner_flat))
    });

    let id = WorkloadId::NestedAttention;
    checked(id);
    let s = Sessions::new(ROWS / 8).expect("the sessions build");
    let f = compiled(id);
    let inputs = [s.d.clone(), s.f.clone()];
    let mut out = vec![0f32; s.users() * FEATURES];
    group.throughput(Throughput::Elements(s.events() as u64));
    group.bench_function(BenchmarkId::new("ragtime", id.name()), |b| b.iter(|| call(&f, &inputs)));
    group.bench_function(BenchmarkId::new("baseline", id.name()), |b| {
        b.iter(|| {
            baseline::nested_attention(s.user_splits(), s.session_splits(), s.durations(), s.features(), &mut out)
        })
    });
    group.finish();
}

criterion_group!(benches, arrays, fixed_costs, bigram, nested);
criterion_main!(benches);
