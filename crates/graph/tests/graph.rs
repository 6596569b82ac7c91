//! FunctionGraph cloning, clients, replace, the verifier and golden `debugprint` outputs.

use std::any::Any;
use std::sync::Arc;

use ragtime_core::{DType, DenseTensor, Error, ErrorKind, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{debugprint, debugprint_function, expect_arity, Client, FunctionGraph, Graph, Op, PrintOptions};

/// A test op: elementwise sum of dense int64 tensors of one shape.
#[derive(Debug, Clone, PartialEq)]
struct Sum {
    tag: &'static str,
}

impl Op for Sum {
    fn name(&self) -> String {
        format!("Sum{{{}}}", self.tag)
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        expect_arity("sum", inputs, 1..=usize::MAX)?;
        if inputs.iter().any(|t| t.dtype() != DType::I64 || t.is_ragged()) {
            return Err(Error::dtype("sum", "int64 dense inputs only"));
        }
        Ok(vec![inputs[0].clone()])
    }
    fn perform(&self, _ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        let first = inputs[0].flat_values();
        let mut acc: Vec<i64> = first.as_slice::<i64>().unwrap().to_vec();
        for x in &inputs[1..] {
            let s = x.flat_values().as_slice::<i64>().unwrap();
            if s.len() != acc.len() {
                return Err(Error::shapes("sum", "shapes differ"));
            }
            acc.iter_mut().zip(s).for_each(|(a, b)| *a += b);
        }
        Ok(vec![DenseTensor::from_vec(first.shape().to_vec(), acc)?.into()])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn vec_i64(v: &[i64]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}

/// Builds `y = Sum{outer}(Sum{inner}(x, 10), Sum{inner}(x, 10), x)`, sharing the inner node.
fn sample() -> (Graph, Vec<ragtime_graph::VarId>, ragtime_graph::VarId) {
    let mut g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::I64, &[Some(2)])).unwrap();
    let ten = g.constant(vec_i64(&[10, 10]));
    let inner = g.apply(Arc::new(Sum { tag: "inner" }), &[x, ten]).unwrap()[0];
    let y = g.apply(Arc::new(Sum { tag: "outer" }), &[inner, inner, x]).unwrap()[0];
    g.set_name(y, "y");
    (g, vec![x], y)
}

fn golden(name: &str, text: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("RAGTIME_BLESS").is_some() {
        std::fs::write(&path, text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {}; run with RAGTIME_BLESS=1 to create it", path.display()));
    assert_eq!(text, want, "debugprint differs from {} (RAGTIME_BLESS=1 regenerates it)", path.display());
}

#[test]
fn debugprint_user_graph_golden() {
    let (g, _, y) = sample();
    golden("user_graph.txt", &debugprint(&g, &[y], PrintOptions::default()));
    golden("user_graph_types.txt", &debugprint(&g, &[y], PrintOptions { types: true, positions: false }));
}

#[test]
fn debugprint_function_golden() {
    let (g, inputs, y) = sample();
    let fg = FunctionGraph::new(&g, &inputs, &[y]).unwrap();
    golden("function_graph.txt", &debugprint_function(&fg, PrintOptions { types: false, positions: true }));
}

#[test]
fn function_graph_clients_and_verify() {
    let (g, inputs, y) = sample();
    let fg = FunctionGraph::new(&g, &inputs, &[y]).unwrap();
    assert!(fg.verify().is_empty(), "verifier found {:?}", fg.verify());
    let x = fg.inputs()[0];
    assert_eq!(fg.clients(x).len(), 2, "x is read by the inner and the outer node");
    let out = fg.outputs()[0];
    assert_eq!(fg.clients(out), &[Client::Output(0)]);
    assert_eq!(fg.toposort().unwrap().len(), 2);
}

#[test]
fn missing_input_is_an_error() {
    let (g, _, y) = sample();
    let err = FunctionGraph::new(&g, &[], &[y]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph);
    assert!(err.to_string().contains("`x`"), "{err}");
}

#[test]
fn replace_redirects_clients_and_dead_code_elimination_prunes() {
    let (g, inputs, y) = sample();
    let mut fg = FunctionGraph::new(&g, &inputs, &[y]).unwrap();
    let x = fg.inputs()[0];
    let before = fg.node_count();
    // Replace the output by x itself: both nodes become dead; they stay until DCE runs.
    fg.replace(fg.outputs()[0], x, "test").unwrap();
    assert_eq!(fg.outputs(), &[x]);
    assert!(fg.verify().is_empty(), "{:?}", fg.verify());
    assert_eq!(fg.node_count(), before, "replace alone removes nothing");
    assert_eq!(fg.remove_dead(), before);
    assert_eq!(fg.toposort().unwrap().len(), 0);
    assert!(fg.verify().is_empty(), "{:?}", fg.verify());
}

#[test]
fn replace_refuses_a_cycle_and_changes_nothing() {
    let (g, inputs, y) = sample();
    let mut fg = FunctionGraph::new(&g, &inputs, &[y]).unwrap();
    let out = fg.outputs()[0];
    // A node computed from the output cannot replace it.
    let above = fg.add_node(Arc::new(Sum { tag: "above" }), &[out]).unwrap()[0];
    let x = fg.inputs()[0];
    // The first pair is fine, the second makes a cycle: neither may be applied.
    let err = fg.replace_all(&[(x, x), (out, above)], "cycle").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph);
    assert!(err.to_string().contains("cycle"), "{err}");
    assert_eq!(fg.outputs(), &[out], "a refused replace_all changes nothing");
    assert!(fg.verify().is_empty(), "{:?}", fg.verify());
}

#[test]
fn replace_refuses_a_type_change() {
    let (g, inputs, y) = sample();
    let mut fg = FunctionGraph::new(&g, &inputs, &[y]).unwrap();
    let other = fg.add_node(Arc::new(Sum { tag: "x" }), &[fg.inputs()[0]]).unwrap()[0];
    assert!(fg.replace(fg.outputs()[0], other, "same type").is_ok());
    let mut g3 = Graph::new();
    let a = g3.input("a", TensorType::dense(DType::I64, &[Some(2)])).unwrap();
    let b = g3.apply(Arc::new(Sum { tag: "b" }), &[a]).unwrap()[0];
    let c = g3.constant(vec_i64(&[1, 2, 3]));
    let c2 = g3.apply(Arc::new(Sum { tag: "c" }), &[c]).unwrap()[0];
    let both = g3.apply(Arc::new(Sum { tag: "both" }), &[b, b]).unwrap()[0];
    let mut fg3 = FunctionGraph::new(&g3, &[a], &[both, c2]).unwrap();
    let (o0, o1) = (fg3.outputs()[0], fg3.outputs()[1]);
    let err = fg3.replace(o0, o1, "shape change").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidGraph, "int64[2] cannot become int64[3]");
}

#[test]
fn make_node_refuses_bad_types() {
    let mut g = Graph::new();
    let f = g.input("f", TensorType::vector(DType::F32)).unwrap();
    let err = g.apply(Arc::new(Sum { tag: "t" }), &[f]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::TypeMismatch);
    assert!(err.to_string().contains("Sum{t}"), "{err}");
}

#[test]
fn constants_print_their_values_or_their_type() {
    use ragtime_graph::constant_label;
    let m: RaggedTensor = DenseTensor::from_vec(vec![2, 2], vec![1i64, 2, 3, 4]).unwrap().into();
    assert_eq!(constant_label(&m), "Constant{[[1, 2], [3, 4]]}");
    assert_eq!(constant_label(&DenseTensor::scalar(3i32).into()), "Constant{3}");
    assert_eq!(constant_label(&ragtime_core::ragged![["a"], []].unwrap()), "Constant{[[\"a\"], []]}");
    assert_eq!(constant_label(&vec_i64(&[0; 9])), "Constant{int64[9]}");
}
