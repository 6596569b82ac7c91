//! `ragtime::grad` / `grad_with` from the DSL: partitions kept, several clients summed,
//! disconnected inputs and integer paths, known gradients, and the errors (a cost that is not a
//! float scalar, an integer `wrt`, an op without a gradient on a connected path).

use ragtime::prelude::*;
use ragtime::{Dim, ExecContext};

fn x_value() -> RaggedTensor {
    ragged![[1.0f64, 2.0f64], [], [3.0f64, -1.0f64, 0.5f64]].unwrap()
}

fn rows(t: &RaggedTensor) -> Vec<Vec<f64>> {
    t.to_nested::<Vec<Vec<f64>>>().unwrap()
}

#[test]
fn a_variable_with_several_clients_sums_their_contributions() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F64, 1));
    // cost = sum(x * x + 3x): d/dx = 2x + 3, through two clients of x.
    let cost = (&x * &x + &x * 3.0).reduce_sum(None);
    let dx = ragtime::grad(&cost, &[&x]).unwrap().remove(0);
    let f = compile(&[&x], &[&dx]).unwrap();
    let out = f.call(&[x_value()]).unwrap().remove(0);
    assert_eq!(rows(&out), vec![vec![5.0, 7.0], vec![], vec![9.0, 1.0, 4.0]]);
    assert!(out.partitions()[0].row_splits() == x_value().partitions()[0].row_splits());
}

#[test]
fn disconnected_inputs_get_zeros_and_integer_paths_carry_no_gradient() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F64, 1));
    let z = g.input("z", TensorType::ragged(DType::F64, 1));
    // The cost reads x only through an integer cast and a comparison: no gradient reaches it.
    let through_ints = x.cast(DType::I32).cast(DType::F64).reduce_sum(None);
    let cost = through_ints + x.greater(&x.scalar_like(1.0)).cast(DType::F64).reduce_sum(None);
    let grads = ragtime::grad(&cost, &[&x, &z]).unwrap();
    let f = compile(&[&x, &z], &[&grads[0], &grads[1]]).unwrap();
    let out = f.call(&[x_value(), ragged![[1.0f64], [2.0f64, 3.0f64]].unwrap()]).unwrap();
    assert_eq!(rows(&out[0]), vec![vec![0.0, 0.0], vec![], vec![0.0, 0.0, 0.0]]);
    assert_eq!(rows(&out[1]), vec![vec![0.0], vec![0.0, 0.0]]);
}

#[test]
fn known_gradients_seed_intermediate_variables() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F64, 1));
    let h = x.exp();
    let cost = h.reduce_sum(None) * 0.0;
    let seed = g.input("seed", TensorType::ragged(DType::F64, 1));
    // d cost / dh is given as `seed` (on top of the zero that flows from the cost).
    let dx = ragtime::grad_with(&cost, &[&x], &[(&h, &seed)]).unwrap().remove(0);
    let f = compile(&[&x, &seed], &[&dx]).unwrap();
    let s = ragged![[1.0f64, 0.5f64], [], [2.0f64, 0.0f64, 1.0f64]].unwrap();
    let out = f.call(&[x_value(), s.clone()]).unwrap().remove(0);
    let want: Vec<Vec<f64>> = rows(&x_value())
        .iter()
        .zip(rows(&s))
        .map(|(xr, sr)| xr.iter().zip(sr).map(|(a, b)| a.exp() * b).collect())
        .collect();
    // The JIT's exp is a polynomial: equal within a few ulps, not bit for bit.
    for (got, want) in rows(&out).iter().flatten().zip(want.iter().flatten()) {
        assert!((got - want).abs() <= 1e-12 * want.abs(), "{got} vs {want}");
    }
}

#[test]
fn misuse_is_a_typed_error() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let k = g.input("k", TensorType::ragged(DType::I32, 1));
    let not_scalar = x.exp();
    assert_eq!(ragtime::grad(&not_scalar, &[&x]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    let int_cost = k.reduce_sum(None);
    assert_eq!(ragtime::grad(&int_cost, &[&k]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    let cost = (&x * k.cast(DType::F32)).reduce_sum(None);
    assert_eq!(ragtime::grad(&cost, &[&k]).unwrap_err().kind(), ErrorKind::TypeMismatch);
    // An op without a VJP (here a user-defined one) fails `grad` with its name, and only when
    // a gradient must cross it.
    let doubled = g.apply(Twice, &[&x]).remove(0).reduce_sum(None);
    let e = ragtime::grad(&doubled, &[&x]).unwrap_err();
    assert!(e.to_string().contains("Twice"), "{e}");
    let unrelated = g.input("u", TensorType::ragged(DType::F32, 1));
    let dz = ragtime::grad(&doubled, &[&unrelated]).unwrap().remove(0);
    let f = compile(&[&unrelated], &[&dz]).unwrap();
    let out = f.call(&[ragged![[1.0f32], []].unwrap()]).unwrap();
    assert_eq!(out[0].to_nested::<Vec<Vec<f32>>>().unwrap(), vec![vec![0.0], vec![]]);
}

/// A user-defined op with no gradient: `2 x`.
#[derive(Debug, PartialEq)]
struct Twice;

impl ragtime::ir::Op for Twice {
    fn name(&self) -> String {
        "Twice".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> ragtime::Result<Vec<TensorType>> {
        Ok(vec![inputs[0].clone()])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> ragtime::Result<Vec<RaggedTensor>> {
        let doubled: Vec<f32> = inputs[0].flat_values().as_slice::<f32>().unwrap().iter().map(|v| 2.0 * v).collect();
        Ok(vec![inputs[0].with_flat_values(DenseTensor::vector(doubled))?])
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn the_gradient_of_a_product_is_exact_at_zeros() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F64, 1));
    let cost = x.reduce_prod(1).reduce_sum(None);
    let dx = ragtime::grad(&cost, &[&x]).unwrap().remove(0);
    for mode in [Mode::FastRun, Mode::FastCompile] {
        let f = g.compile_with(&[&x], &[&dx], mode).unwrap();
        let out = f.call(&[ragged![[2.0f64, 0.0f64, 3.0f64], [0.0f64, 0.0f64], [], [4.0f64]].unwrap()]).unwrap();
        assert_eq!(rows(&out[0]), vec![vec![0.0, 6.0, 0.0], vec![0.0, 0.0], vec![], vec![1.0]]);
    }
}

#[test]
fn from_tensor_with_padding_sends_the_gradient_to_the_items_it_kept() {
    let g = Graph::new();
    let t = g.input("t", TensorType::dense(DType::F64, &[Some(3), Some(4)]));
    // Trailing zeros are cut: row 0 keeps 2 items, row 1 none, row 2 all four (its zero is not
    // trailing). cost = sum(exp(kept)), so a kept item gets exp(t) and a cut one 0 (exp(0) = 1
    // would show a cut item that leaked).
    let cost = ragtime::ops::from_tensor(&t, None, Some(Literal::Float(0.0))).exp().reduce_sum(None);
    let dt = ragtime::grad(&cost, &[&t]).unwrap().remove(0);
    let data: Vec<f64> = vec![1.5, -0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0, -1.0, 0.25];
    let value = RaggedTensor::from(DenseTensor::from_vec(vec![3, 4], data.clone()).unwrap());
    for mode in [Mode::FastRun, Mode::FastCompile] {
        let f = g.compile_with(&[&t], &[&dt], mode).unwrap();
        let got = f.call(std::slice::from_ref(&value)).unwrap().remove(0);
        // A plain loop: each row keeps its items up to the last non-zero one.
        let mut want = vec![0.0; 12];
        for row in 0..3 {
            let kept = (0..4).rev().find(|&j| data[row * 4 + j] != 0.0).map_or(0, |j| j + 1);
            for j in 0..kept {
                want[row * 4 + j] = data[row * 4 + j].exp();
            }
        }
        // (ragtime's `exp` and std's may differ in the last bit; the cut items are exactly 0.)
        let got = got.flat_slice::<f64>().unwrap();
        let close = got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-15 * b.abs());
        assert!(close && got.len() == want.len(), "{mode:?}: got {got:?}, want {want:?}");
    }
}

/// The gradient of a row mean over `[rows, (n), 2]` (an embedding bag's mean) divides each row's
/// gradient by the row's length before spreading it: no tensor of ones as large as `x` is built,
/// even unoptimized, and every item gets `g[row] / n`, empty rows none (a plain loop).
#[test]
fn a_row_mean_divides_by_the_row_lengths_without_a_tensor_of_ones() {
    let g = Graph::new();
    let ty = TensorType::new(DType::F64, 1, vec![Dim::Unknown, Dim::Ragged, Dim::Known(2)]).unwrap();
    let x = g.input("x", ty);
    let weights = g.constant(DenseTensor::from_vec(vec![3, 2], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap().into());
    let cost = (&x.reduce_mean(1) * &weights).reduce_sum(None);
    let dx = ragtime::grad(&cost, &[&x]).unwrap().remove(0);
    let value = RaggedTensor::from_row_lengths(
        DenseTensor::from_vec(vec![5, 2], vec![0.5f64, 1.0, -2.0, 3.0, 4.0, 0.0, 1.5, 2.5, -1.0, 7.0]).unwrap(),
        &[2, 0, 3],
    )
    .unwrap();
    for mode in [Mode::FastRun, Mode::FastCompile] {
        let f = g.compile_with(&[&x], &[&dx], mode).unwrap();
        assert!(!f.debugprint().contains("OnesLike"), "{}", f.debugprint());
        let got = f.call(std::slice::from_ref(&value)).unwrap().remove(0);
        let want: Vec<f64> = [(0, 2.0), (0, 2.0), (2, 3.0), (2, 3.0), (2, 3.0)]
            .iter()
            .flat_map(|&(row, n): &(usize, f64)| [(row * 2 + 1) as f64 / n, (row * 2 + 2) as f64 / n])
            .collect();
        assert_eq!(got.flat_values().as_slice::<f64>().unwrap(), &want[..]);
        assert_eq!(got.partitions()[0].row_splits(), value.partitions()[0].row_splits());
    }
}
