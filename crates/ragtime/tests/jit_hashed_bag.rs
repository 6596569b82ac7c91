//! W7's embedding bag (`HashedGatherReduce`) as the JIT leaves it (its table rows added by the
//! JIT's AVX2 row sum where the CPU has AVX2) against the reference interpreter, bit for bit: row
//! widths with and without an unrolled loop, empty rows, long tokens, one to three threads.

use ragtime::ir::fused::HashedGatherReduce;
use ragtime::ops::{self, strings};
use ragtime::prelude::*;

/// W7's spelling (`crates/cli/src/bench/workloads.rs`): the mean of each query's word rows and
/// of its `#`-padded bigrams' rows, both hashed into `buckets` rows of a `[buckets, dim]` table.
fn bigram_bag(g: &Graph, buckets: usize, dim: usize) -> (Var, Var, Var) {
    let queries = g.input("queries", TensorType::ragged(DType::String, 1));
    let table = g.input("table", TensorType::dense(DType::F32, &[Some(buckets), Some(dim)]));
    let word_emb = ops::embedding_lookup(&table, &strings::to_hash_bucket_fast(&queries, buckets as i64));
    let marker_shape = ops::stack(&[&queries.nrows(), &queries.nrows().scalar_like(1)], 0);
    let marker = ops::fill(&marker_shape, &queries.scalar_like("#"));
    let padded = ops::concat(&[&marker, &queries, &marker], 1);
    let bigrams = strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+");
    let bigram_emb = ops::embedding_lookup(&table, &strings::to_hash_bucket_fast(&bigrams, buckets as i64));
    let output = ops::concat(&[&word_emb, &bigram_emb], 1).reduce_mean(1);
    (queries, table, output)
}

/// `rows` queries of 0 to 9 words drawn by a linear congruential generator from `seed`, among
/// empty, short, non-ASCII and long (FarmHash's looping path) words.
fn queries(seed: u64, rows: usize) -> RaggedTensor {
    const WORDS: [&str; 10] = [
        "",
        "a",
        "is",
        "café",
        "日本語",
        "naïve",
        "Smith",
        "x-ray",
        "sixteen-bytes!!!",
        "a long token, longer than sixty-four bytes, hashed by farmhash's loop",
    ];
    let mut state = seed;
    let mut next = |n: u64| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) % n) as usize
    };
    let rows: Vec<Vec<&str>> = (0..rows).map(|_| (0..next(10)).map(|_| WORDS[next(10)]).collect()).collect();
    RaggedTensor::from_literal_typed(&Literal::from(rows), Some(DType::String), Some(1), None).unwrap()
}

fn table(buckets: usize, dim: usize) -> RaggedTensor {
    let values: Vec<f32> =
        (0..buckets * dim).map(|k| ((k * 7919) % 1013) as f32 / 97.0 - 5.0 + 1e-7 * k as f32).collect();
    DenseTensor::from_vec(vec![buckets, dim], values).unwrap().into()
}

#[test]
fn the_jit_row_sums_give_the_interpreters_bits() {
    for dim in [3, 8, 16, 32] {
        let g = Graph::new();
        let (q, t, out) = bigram_bag(&g, 97, dim);
        let reference = g.compile_with(&[&q, &t], &[&out], Mode::FastCompile).unwrap();
        for threads in [1, 2, 3] {
            let f = g.compile_with(&[&q, &t], &[&out], CompileOptions::from(Mode::FastRun).threads(threads)).unwrap();
            let fg = f.fgraph();
            let bags: Vec<&HashedGatherReduce> = fg
                .toposort()
                .unwrap()
                .into_iter()
                .filter_map(|n| fg.node(n)?.op.as_any().downcast_ref::<HashedGatherReduce>())
                .collect();
            assert_eq!(bags.len(), 1, "{}", f.debugprint());
            #[cfg(target_arch = "x86_64")]
            assert_eq!(bags[0].has_rows_add(), std::is_x86_feature_detected!("avx2"), "{}", f.debugprint());
            // 70,000 rows: enough for every thread to get rows.
            for (seed, rows) in [(1, 0), (2, 1), (3, 33), (4, 70_000)] {
                let inputs = [queries(seed, rows), table(97, dim)];
                let want = reference.call(&inputs).unwrap();
                let got = f.call(&inputs).unwrap();
                assert!(got[0].equals(&want[0]), "dim {dim}, {threads} threads, {rows} rows: the bits differ");
            }
        }
    }
}
