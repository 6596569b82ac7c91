//! W7 spelt the ways users write it: the seed's bigram-embedding pipeline with the n-grams, the
//! lookups, the row markers and the mean written differently. The optimizer's canonicalizing
//! rewrites bring each to the seed's compiled form, so each runs at the seed's speed
//! (`W7_bigram_variants` in `ragtime bench`; the test below checks the compiled graphs).

use ragtime::ops::strings::{self, ngrams_with, NgramOptions};
use ragtime::ops::{self};
use ragtime::prelude::*;
use ragtime::TensorType as Ty;

use super::data::{BUCKETS, DIM};
use super::workloads::Built;

/// How a variant writes the `[n, 1]` (or `[n, (1)]`) column of `#` markers put on each side of a query.
#[derive(Debug, Clone, Copy)]
enum Markers {
    /// `fill(stack([nrows(q), 1]), "#")`: the seed's.
    Stacked,
    /// `fill(concat([expand_dims(nrows(q), 0), [1]]), "#")`.
    ConcatDims,
    /// `fill(stack([size(row_lengths(q)), 1]), "#")`.
    SizeOfLengths,
    /// `from_uniform_row_length(fill([nrows(q)], "#"), 1)`: a ragged column.
    UniformRows,
    /// `from_row_lengths(fill([nrows(q)], "#"), ones_like(row_lengths(q)))`.
    OnesLikeLengths,
}

/// How a variant makes the bigrams.
#[derive(Debug, Clone, Copy)]
enum Bigrams {
    /// `join([padded[:, :-1], padded[:, 1:]], "+")` over the queries with markers: the seed's.
    JoinSlices(Markers),
    /// `strings.ngrams(q, 2, "+", pad_values=("#", "#"), padding_width=1)`.
    PaddedNgrams,
}

/// A spelling of W7.
#[derive(Debug, Clone, Copy)]
struct Spelling {
    bigrams: Bigrams,
    /// `gather(table, ids)` instead of `embedding_lookup(table, ids)`.
    gather: bool,
    /// The mean as `reduce_sum(x, 1) / cast(row_lengths(x))[:, None]`.
    sum_over_count: bool,
}

/// The variants, by name (and the key of their time in microseconds in the bench's JSON): each
/// differs from the seed's spelling in one way.
const SPELLINGS: [(&str, &str, Spelling); 8] = {
    const SEED: Spelling =
        Spelling { bigrams: Bigrams::JoinSlices(Markers::Stacked), gather: false, sum_over_count: false };
    [
        ("seed", "seed_us", SEED),
        ("ngrams_pad_values", "ngrams_pad_values_us", Spelling { bigrams: Bigrams::PaddedNgrams, ..SEED }),
        ("gather", "gather_us", Spelling { gather: true, ..SEED }),
        (
            "markers_concat_dims",
            "markers_concat_dims_us",
            Spelling { bigrams: Bigrams::JoinSlices(Markers::ConcatDims), ..SEED },
        ),
        (
            "markers_size_of_lengths",
            "markers_size_of_lengths_us",
            Spelling { bigrams: Bigrams::JoinSlices(Markers::SizeOfLengths), ..SEED },
        ),
        (
            "markers_uniform_rows",
            "markers_uniform_rows_us",
            Spelling { bigrams: Bigrams::JoinSlices(Markers::UniformRows), ..SEED },
        ),
        (
            "markers_ones_like_lengths",
            "markers_ones_like_lengths_us",
            Spelling { bigrams: Bigrams::JoinSlices(Markers::OnesLikeLengths), ..SEED },
        ),
        ("mean_as_sum_over_count", "mean_as_sum_over_count_us", Spelling { sum_over_count: true, ..SEED }),
    ]
};

/// The marker column for the queries `q`.
fn markers(q: &Var, how: Markers) -> Var {
    let hash = q.scalar_like("#");
    let nrows = q.nrows();
    match how {
        Markers::Stacked => ops::fill(&ops::stack(&[&nrows, &nrows.scalar_like(1)], 0), &hash),
        Markers::ConcatDims => {
            let one = q.graph().constant(RaggedTensor::from(DenseTensor::from_vec(vec![1], vec![1i64]).expect("[1]")));
            ops::fill(&ops::concat(&[&nrows.expand_dims(0), &one], 0), &hash)
        }
        Markers::SizeOfLengths => {
            let n = ops::size_with(&q.row_lengths(1), DType::I64);
            ops::fill(&ops::stack(&[&n, &n.scalar_like(1)], 0), &hash)
        }
        Markers::UniformRows => ops::from_uniform_row_length(&ops::fill(&ops::stack(&[&nrows], 0), &hash), 1),
        Markers::OnesLikeLengths => {
            ops::from_row_lengths(&ops::fill(&nrows.expand_dims(0), &hash), &ops::ones_like(&q.row_lengths(1)))
        }
    }
}

fn build(spelling: Spelling) -> Built {
    let g = Graph::new();
    let queries = g.input("queries", Ty::ragged(DType::String, 1));
    let table = g.input("table", Ty::dense(DType::F32, &[Some(BUCKETS), Some(DIM)]));
    let buckets = BUCKETS as i64;
    let lookup =
        |ids: &Var| if spelling.gather { ops::gather(&table, ids) } else { ops::embedding_lookup(&table, ids) };
    let word_emb = lookup(&strings::to_hash_bucket_fast(&queries, buckets));
    let bigrams = match spelling.bigrams {
        Bigrams::JoinSlices(how) => {
            let marker = markers(&queries, how);
            let padded = ops::concat(&[&marker, &queries, &marker], 1);
            strings::join(&[&padded.get(s![.., ..-1]), &padded.get(s![.., 1..])], "+")
        }
        Bigrams::PaddedNgrams => ngrams_with(&queries, NgramOptions::new(&[2]).separator("+").pad("#", "#", Some(1))),
    };
    let bigram_emb = lookup(&strings::to_hash_bucket_fast(&bigrams, buckets));
    let all = ops::concat(&[&word_emb, &bigram_emb], 1);
    let output = if spelling.sum_over_count {
        all.reduce_sum(1) / all.row_lengths(1).cast(DType::F32).expand_dims(1)
    } else {
        all.reduce_mean(1)
    };
    Built { inputs: vec![queries, table], output }
}

/// A spelling of W7 built for `compile`.
#[derive(Debug)]
pub struct Variant {
    /// What differs from the seed's spelling.
    pub name: &'static str,
    /// The key of its time (microseconds) in `ragtime bench --json`.
    pub time_key: &'static str,
    /// The graph.
    pub built: Built,
}

/// Every spelling of W7, the seed's first.
pub fn bigram_variants() -> Vec<Variant> {
    SPELLINGS.iter().map(|&(name, time_key, spelling)| Variant { name, time_key, built: build(spelling) }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::data::Queries;

    #[test]
    fn every_spelling_compiles_to_the_seeds_graph_and_values() {
        let variants = bigram_variants();
        let seed = variants[0].built.compile().unwrap();
        let seed_ops = op_names(&seed);
        let data = Queries::new(300).unwrap();
        let inputs = [data.queries.clone(), data.table.clone()];
        let want = seed.call(&inputs).unwrap();
        for Variant { name, built, .. } in &variants[1..] {
            let f = built.compile().unwrap();
            assert_eq!(
                op_names(&f),
                seed_ops,
                "{name}: the optimized graph should be the seed's; it is\n{}\nthe seed's is\n{}",
                f.debugprint(),
                seed.debugprint()
            );
            let got = f.call(&inputs).unwrap();
            assert_eq!(bits(&got), bits(&want), "{name}: the values differ from the seed spelling's");
            let reference = built.compile_with(Mode::FastCompile).unwrap().call(&inputs).unwrap();
            assert_eq!(bits(&reference), bits(&want), "{name}: the unoptimized graph's values differ from the seed's");
        }
    }

    /// The one output's shape and the bits of its float32 values.
    fn bits(out: &[RaggedTensor]) -> (Vec<usize>, Vec<u32>) {
        let values = out[0].flat_slice::<f32>().unwrap().iter().map(|v| v.to_bits()).collect();
        (out[0].flat_values().shape().to_vec(), values)
    }

    /// The op names of the optimized graph's nodes, sorted: the compiled form without variable ids.
    /// The seed's markers pad rows even in a batch without any token, where TensorFlow's padded
    /// `ngrams` gives no n-gram at all; that flag of the one n-gram kernel is left out.
    fn op_names(f: &Function) -> Vec<String> {
        let fg = f.fgraph();
        let name = |a: &ragtime::ir::Apply| a.op.name().replace(", pad_without_tokens=true", "");
        let mut names: Vec<String> =
            fg.toposort().unwrap().into_iter().filter_map(|id| fg.node(id)).map(name).collect();
        names.sort();
        names
    }
}
