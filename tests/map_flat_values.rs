//! `map_flat_values` / `with_flat_values` (TensorFlow's `tf.ragged.map_flat_values` and
//! `RaggedTensor.with_flat_values`): the same results as the ops applied to the ragged tensor
//! itself, in every mode, and typed errors for another structure or another number of values.

use ragtime::prelude::*;

const MODES: [Mode; 3] = [Mode::FastRun, Mode::FastCompile, Mode::Debug];

fn data() -> (RaggedTensor, RaggedTensor) {
    let x = ragged![[0.5f32, -1.0, 2.0], [], [3.0], [-0.25, 0.75]].unwrap();
    let w = RaggedTensor::from_row_splits(
        ragtime::DenseTensor::vector(vec![1.0f32, 2.0, -1.0, 0.5, 4.0, 0.0]),
        x.partitions()[0].row_splits().to_vec(),
    )
    .unwrap();
    (x, w)
}

#[test]
fn a_mapped_function_equals_the_same_ops_on_the_ragged_tensor_in_every_mode() {
    let (xs, ws) = data();
    for mode in MODES {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let w = g.input("w", TensorType::ragged(DType::F32, 1));
        let mapped = ragtime::ops::map_flat_values(&[&x, &w], |v| (&v[0] * 2.0 + &v[1]).tanh());
        let direct = (&x * 2.0 + &w).tanh();
        let one = x.map_flat_values(|v| v.square()).reduce_sum(1);
        let f = g.compile_with(&[&x, &w], &[&mapped, &direct, &one, &x.square().reduce_sum(1)], mode).unwrap();
        let out = f.call(&[xs.clone(), ws.clone()]).unwrap();
        assert!(out[0].equals(&out[1]), "{mode:?}: map_flat_values {} != direct {}", out[0], out[1]);
        assert!(out[0].partitions()[0].same(&xs.partitions()[0]));
        assert!(out[2].equals(&out[3]), "{mode:?}: a reduction after the map: {} != {}", out[2], out[3]);
    }
}

#[test]
fn the_function_may_change_the_inner_dimensions() {
    let (xs, _) = data();
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    // Each value becomes a row of two: [v, v + 1].
    let y = x.map_flat_values(|v| v.expand_dims(1).concat(&[&(v + 1.0).expand_dims(1)], 1));
    let out = compile(&[&x], &[&y]).unwrap().call(std::slice::from_ref(&xs)).unwrap();
    let expected: Vec<Vec<Vec<f32>>> = xs
        .to_nested::<Vec<Vec<f32>>>()
        .unwrap()
        .into_iter()
        .map(|row| row.into_iter().map(|v| vec![v, v + 1.0]).collect())
        .collect();
    assert_eq!(out[0].to_nested::<Vec<Vec<Vec<f32>>>>().unwrap(), expected);
}

#[test]
fn another_structure_or_another_number_of_values_is_refused() {
    let (xs, _) = data();
    for mode in MODES {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let y = g.input("y", TensorType::ragged(DType::F32, 1));
        let both = ragtime::ops::map_flat_values(&[&x, &y], |v| &v[0] + &v[1]);
        let f = g.compile_with(&[&x, &y], &[&both], mode).unwrap();
        let other = ragged![[1.0f32, 2.0], [3.0, 4.0, 5.0], [], [6.0]].unwrap();
        let err = f.call(&[xs.clone(), other]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::IncompatibleShapes, "{mode:?}: {err}");

        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let fewer = x.map_flat_values(|v| v.get(s![..2]));
        let f = g.compile_with(&[&x], &[&fewer], mode).unwrap();
        let err = f.call(std::slice::from_ref(&xs)).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::IncompatibleShapes, "{mode:?}: {err}");
        assert!(err.to_string().contains("must keep their number"), "{err}");
    }
    // A scalar result is refused when the graph is built.
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    assert!(x.map_flat_values(|v| v.reduce_sum(None)).check().is_err());
}

#[test]
fn gradients_flow_through_the_mapped_function_to_the_flat_values() {
    let (xs, _) = data();
    for mode in MODES {
        let g = Graph::new();
        let x = g.input("x", TensorType::ragged(DType::F32, 1));
        let mapped = x.map_flat_values(|v| v.square()).reduce_sum(None);
        let direct = x.square().reduce_sum(None);
        let dm = ragtime::grad(&mapped, &[&x]).unwrap().remove(0);
        let dd = ragtime::grad(&direct, &[&x]).unwrap().remove(0);
        let f = g.compile_with(&[&x], &[&dm, &dd], mode).unwrap();
        let out = f.call(std::slice::from_ref(&xs)).unwrap();
        assert!(out[0].equals(&out[1]), "{mode:?}: d/dx through map_flat_values {} != direct {}", out[0], out[1]);
    }
}
