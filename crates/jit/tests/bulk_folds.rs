//! The bulk row folds (`ragtime_jit::bulk_folds`, AVX-512): a row's sum has the bits of the
//! documented order (modelled here in plain Rust), maxima are exact unless flagged, and every
//! row's result lands in its slot and over its values. On a CPU without AVX-512 there is nothing
//! to test here (kernels keep the IR folds; `tests/plans.rs` checks that plan).

use ragtime_jit::bulk::Isa;
use ragtime_jit::bulk_folds::{row_fold_f32_on_slices, RowFold, RowFolds};

mod rng;
use rng::Rng;

/// Whether this CPU has the bulk folds (AVX-512); without, there is nothing to test here.
fn runs() -> bool {
    let runs = row_fold_f32_on_slices(RowFold::Sum, &[1.0], &[0, 1]).is_some();
    assert_eq!(runs, Isa::Avx512.runs() && Isa::Avx2.runs(), "the bulk folds run exactly where AVX-512 does");
    if !runs {
        eprintln!("this CPU has no AVX-512: no bulk row folds to test");
    }
    runs
}

/// Mostly ordinary values of mixed magnitudes and signs, sometimes a special one.
fn value(rng: &mut Rng, specials: bool) -> f32 {
    if specials && rng.below(40) == 0 {
        let special = [0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, -f32::MAX, 1e-40, -1e-40];
        return special[rng.below(special.len() as u64) as usize];
    }
    let mantissa = (rng.below(2_000_001) as f32 - 1e6) / 1e6;
    mantissa * [1.0, 1e3, 1e-3, 3e7][rng.below(4) as usize]
}

/// Rows of every length up to 80 and then random ones, as offsets, and their values.
fn rows(rng: &mut Rng, specials: bool) -> (Vec<i64>, Vec<f32>) {
    let mut lengths: Vec<u64> = (0..=80).collect();
    lengths.extend((0..600).map(|_| if rng.below(8) == 0 { rng.below(200) } else { rng.below(21) }));
    let mut splits = vec![0i64];
    for l in lengths {
        splits.push(splits.last().unwrap() + l as i64);
    }
    let values = (0..*splits.last().unwrap()).map(|_| value(rng, specials)).collect();
    (splits, values)
}

/// The documented order of a row's sum: lane `l` folds values `l, l + 16, …` left to right from
/// the first two chunks (`+0` past the row), the lanes fold as `(Q0 + Q1) + (Q2 + Q3)` with
/// `Q(q) = (x[4q] + x[4q+2]) + (x[4q+1] + x[4q+3])`, then `+ 0.0`.
fn model_sum(row: &[f32]) -> f32 {
    let at = |i: usize| row.get(i).copied().unwrap_or(0.0);
    let lanes: Vec<f32> = (0..16)
        .map(|l| {
            let mut acc = at(l) + at(16 + l);
            let mut i = 32 + l;
            while i < row.len().div_ceil(16) * 16 {
                acc += at(i);
                i += 16;
            }
            acc
        })
        .collect();
    let q = |q: usize| (lanes[4 * q] + lanes[4 * q + 2]) + (lanes[4 * q + 1] + lanes[4 * q + 3]);
    ((q(0) + q(1)) + (q(2) + q(3))) + 0.0
}

fn same(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Each row's result is in its slot's four copies and over its values.
fn check_kept(folds: &RowFolds, splits: &[i64], what: &str) {
    for (r, w) in splits.windows(2).enumerate() {
        let v = folds.results[r];
        assert!(
            folds.copies[r].iter().all(|c| same(*c, v)),
            "{what}: row {r}'s slot copies {:?}, result {v}",
            folds.copies[r]
        );
        let over = &folds.expanded[w[0] as usize..w[1] as usize];
        assert!(
            over.iter().all(|x| same(*x, v)),
            "{what}: row {r} ({} values) expanded as {over:?}, result {v}",
            w[1] - w[0]
        );
    }
}

#[test]
fn row_sums_have_the_bits_of_the_documented_order() {
    if !runs() {
        return;
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for specials in [false, true] {
        let (splits, values) = rows(&mut rng, specials);
        // Whole tiles, a partial last tile, and blocks starting mid-way.
        for (from, to) in [(0, splits.len() - 1), (3, 40), (17, 18), (5, 5)] {
            let part = &splits[from..=to];
            let folds = row_fold_f32_on_slices(RowFold::Sum, &values, part).expect("this CPU runs it");
            assert!(!folds.flagged, "sums flag nothing");
            for (r, w) in part.windows(2).enumerate() {
                let row = &values[w[0] as usize..w[1] as usize];
                let want = model_sum(row);
                assert!(
                    same(folds.results[r], want),
                    "sum of row {} ({} values, specials {specials}): {:e}, the documented order gives {want:e}",
                    from + r,
                    row.len(),
                    folds.results[r]
                );
            }
            check_kept(&folds, part, "sums");
        }
    }
}

#[test]
fn row_maxima_are_exact_or_flag_their_block() {
    if !runs() {
        return;
    }
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    // Without NaNs and zeros nothing is flagged and every maximum is exact (from `-f32::MAX`).
    let (splits, mut values) = rows(&mut rng, false);
    for v in &mut values {
        if *v == 0.0 {
            *v = 1.0;
        }
    }
    let folds = row_fold_f32_on_slices(RowFold::Max, &values, &splits).expect("this CPU runs it");
    assert!(!folds.flagged, "no NaN, no zero: nothing to refold");
    for (r, w) in splits.windows(2).enumerate() {
        let want = values[w[0] as usize..w[1] as usize].iter().fold(-f32::MAX, |m, &x| m.max(x));
        assert_eq!(folds.results[r].to_bits(), want.to_bits(), "max of row {r}");
    }
    check_kept(&folds, &splits, "maxima");
    // One NaN, or one row whose maximum is a zero, anywhere in a block flags it.
    for (at, x, values_row) in [(7usize, f32::NAN, 30usize), (3, -0.0, 12), (40, 0.0, 41)] {
        let mut bad = values.clone();
        let (s, e) = (splits[values_row] as usize, splits[values_row + 1] as usize);
        if x.is_nan() {
            bad[s + at % (e - s)] = x;
        } else {
            bad[s..e].iter_mut().for_each(|v| *v = -v.abs());
            bad[s + at % (e - s)] = x;
        }
        let folds = row_fold_f32_on_slices(RowFold::Max, &bad, &splits).unwrap();
        assert!(folds.flagged, "row {values_row} holds {x}: the block must be refolded exactly");
    }
}
