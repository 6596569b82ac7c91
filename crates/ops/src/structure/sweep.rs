//! A deterministic sweep over random shapes, ops and attributes of the structure ops: nothing may
//! panic, inferred types must accept computed values, and when both inference and evaluation fail
//! they agree on the kind.

use ragtime_core::limits::Limits;
use ragtime_core::ExecContext;
use ragtime_core::{DenseTensor, RaggedTensor, RowPartition, TensorType};
use ragtime_graph::Attr;

use crate::structure::testing::*;

/// A small linear congruential generator (the sweep must be reproducible, without new dependencies).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n.max(1)
    }
    fn int(&mut self, lo: i64, span: u64) -> i64 {
        lo + self.below(span) as i64
    }
    fn vector(&mut self, n: usize, lo: i64, span: u64) -> RaggedTensor {
        DenseTensor::vector((0..n).map(|_| self.int(lo, span)).collect::<Vec<i64>>()).into()
    }
    /// A tensor of `rank` dims, ragged rank 0 to 2, with short (often empty) rows.
    fn tensor(&mut self, rank: usize) -> RaggedTensor {
        let ragged_rank = (self.below(3) as usize).min(rank - 1);
        let mut count = self.below(4) as usize;
        let mut partitions = Vec::new();
        for _ in 0..ragged_rank {
            let lengths: Vec<i64> = (0..count).map(|_| self.int(0, 4)).collect();
            count = lengths.iter().sum::<i64>() as usize;
            partitions.push(RowPartition::from_row_lengths(&lengths).unwrap());
        }
        let mut shape = vec![count];
        shape.extend((ragged_rank + 1..rank).map(|_| self.below(3) as usize));
        let n: usize = shape.iter().product();
        RaggedTensor::new(DenseTensor::from_vec(shape, (0..n as i32).collect()).unwrap(), partitions).unwrap()
    }
}

fn check(name: &str, attrs: &[(&str, Attr)], inputs: &[RaggedTensor]) {
    let ctx = &ExecContext::new(Limits::untrusted());
    let op = build(name, attrs);
    let types: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let shown = || inputs.iter().map(|t| t.to_string()).collect::<Vec<_>>();
    match (op.output_types(&types), op.perform(ctx, inputs)) {
        (Ok(types), Ok(values)) => {
            for (t, v) in types.iter().zip(&values) {
                assert!(t.accepts(&TensorType::of(v)), "{name} {attrs:?} {:?}: inferred {t}, got {v}", shown());
            }
        }
        (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{name} {attrs:?} {:?}: {a} / {b}", shown()),
        // Data-dependent failures (row lengths, partition values) are only seen by `perform`.
        (Ok(_), Err(_)) => {}
        (Err(e), Ok(_)) => {
            panic!("{name} {attrs:?} {:?}: inference refused ({e}) what evaluation accepts", shown())
        }
    }
}

#[test]
fn structure_ops() {
    let mut rng = Lcg(7);
    for _ in 0..20_000 {
        let rank = 1 + rng.below(4) as usize;
        let a = rng.tensor(rank);
        let b = if rng.below(2) == 0 { rng.tensor(rank) } else { a.clone() };
        let axis = [("axis", Attr::Int(rng.int(-4, 9)))];
        match rng.below(8) {
            0 => check("concat", &axis, &[a, b]),
            1 => check("stack", &axis, &[a, b]),
            2 => check("stack", &axis, &[a]),
            3 => {
                let multiples = (0..a.rank()).map(|_| Attr::Int(rng.int(0, 3))).collect();
                check("tile", &[("multiples", Attr::List(multiples))], &[a]);
            }
            4 => {
                let axes = Attr::List(vec![Attr::Int(rng.int(-4, 9)), Attr::Int(rng.int(0, 3))]);
                check("reverse", &[("axis", axes)], &[a]);
            }
            5 => check("to_tensor", &[("default_value", Attr::Int(9))], &[a]),
            6 => check("to_sparse", &[], &[a]),
            _ => check("row_lengths", &axis, &[a]),
        }
    }
}

#[test]
fn constructors_with_random_partitions() {
    let mut rng = Lcg(11);
    for _ in 0..20_000 {
        let rank = 1 + rng.below(3) as usize;
        let a = rng.tensor(rank);
        let n = rng.below(5) as usize;
        match rng.below(9) {
            0 => check("from_row_splits", &[], &[a, rng.vector(n, -1, 6)]),
            1 => check("from_row_lengths", &[], &[a, rng.vector(n, -1, 4)]),
            2 => {
                let nrows = rng.int(0, 5);
                let attrs = if rng.below(2) == 0 { vec![] } else { vec![("nrows", Attr::Int(nrows))] };
                check("from_value_rowids", &attrs, &[a, rng.vector(n, -1, 4)]);
            }
            3 => check("from_nested_row_splits", &[], &[a, rng.vector(n, 0, 4), rng.vector(3, 0, 4)]),
            4 => check("from_uniform_row_length", &[("uniform_row_length", Attr::Int(rng.int(0, 3)))], &[a]),
            5 => {
                let rank = rng.below(3) as usize;
                check("fill", &[], &[rng.vector(rank, -1, 4), DenseTensor::scalar(1i32).into()]);
            }
            6 => {
                let operands = (0..1 + rng.below(3))
                    .map(|_| {
                        if rng.below(2) == 0 {
                            DenseTensor::scalar(rng.int(-3, 7)).into()
                        } else {
                            rng.vector(n, -3, 7)
                        }
                    })
                    .collect::<Vec<_>>();
                check("ragged.range", &[], &operands);
            }
            7 => {
                let padding = rng.int(0, 3);
                let attrs = if rng.below(2) == 0 { vec![] } else { vec![("padding", Attr::Int(padding))] };
                let mut inputs = vec![a.to_tensor(None, None).map(RaggedTensor::from).unwrap_or(a)];
                if rng.below(2) == 0 {
                    inputs.push(rng.vector(n, -1, 5));
                }
                check("from_tensor", &attrs, &inputs);
            }
            _ => {
                let indices = (0..2 * n).map(|_| rng.int(-1, 4)).collect::<Vec<_>>();
                let indices = DenseTensor::from_vec(vec![n, 2], indices).unwrap().into();
                check("from_sparse", &[], &[indices, rng.vector(n, 0, 9), rng.vector(2, 0, 4)]);
            }
        }
    }
}
