//! The executor running a function graph, and inner graphs (the one subgraph IR of fused ops):
//! type inference and evaluation through the executor, errors naming the fused node and the
//! inner node, structural equality and hashing, the verifier looking inside, and the golden
//! `debugprint` of a function with a fused node.

use std::any::Any;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ragtime_core::{DType, DenseTensor, Error, ErrorKind, ExecContext, RaggedTensor, Result, TensorType};
use ragtime_graph::{debugprint_function, expect_arity, FunctionGraph, Graph, Op, PrintOptions};
use ragtime_runtime::{InnerGraph, InnerGraphBuilder, Interpreter};

/// A test op: elementwise sum of dense int64 vectors of one length.
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
                return Err(Error::shapes("sum", format!("lengths {} and {} differ", acc.len(), s.len())));
            }
            acc.iter_mut().zip(s).for_each(|(a, b)| *a += b);
        }
        Ok(vec![DenseTensor::from_vec(first.shape().to_vec(), acc)?.into()])
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A test fused op: it has no fast path, so every call runs its inner graph.
#[derive(Debug, Clone, PartialEq)]
struct Fused {
    inner: InnerGraph,
}

impl Op for Fused {
    fn name(&self) -> String {
        "Fused".into()
    }
    fn infer(&self, inputs: &[TensorType]) -> Result<Vec<TensorType>> {
        self.inner.infer(inputs)
    }
    fn perform(&self, ctx: &ExecContext, inputs: &[RaggedTensor]) -> Result<Vec<RaggedTensor>> {
        self.inner.run(ctx, inputs)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn inner_graph(&self) -> Option<&FunctionGraph> {
        Some(self.inner.graph())
    }
}

fn vector() -> TensorType {
    TensorType::dense(DType::I64, &[None])
}

fn vec_i64(v: &[i64]) -> RaggedTensor {
    DenseTensor::vector(v.to_vec()).into()
}

/// `Sum{tag}(Sum{tag}(i0, c), i1)` and `i0`, with the constant `c`.
fn inner(tag: &'static str, c: &[i64]) -> InnerGraph {
    let mut b = InnerGraphBuilder::new([vector(), vector()]).unwrap();
    let (x, y) = (b.input(0).unwrap(), b.input(1).unwrap());
    let c = b.constant(vec_i64(c));
    let s = b.apply(Arc::new(Sum { tag }), &[x, c]).unwrap()[0];
    let t = b.apply(Arc::new(Sum { tag }), &[s, y]).unwrap()[0];
    b.finish(&[t, x]).unwrap()
}

fn hash_of(g: &InnerGraph) -> u64 {
    let mut h = DefaultHasher::new();
    g.hash(&mut h);
    h.finish()
}

/// A function computing `Fused` of `inner("a", [1, 2])` on inputs `x`, `y`.
fn function() -> FunctionGraph {
    let mut g = Graph::new();
    let x = g.input("x", vector()).unwrap();
    let y = g.input("y", vector()).unwrap();
    let outs = g.apply(Arc::new(Fused { inner: inner("a", &[1, 2]) }), &[x, y]).unwrap();
    g.set_name(outs[0], "z");
    FunctionGraph::new(&g, &[x, y], &outs).unwrap()
}

#[test]
fn the_executor_runs_a_schedule_and_reports_the_node() {
    // `y = Sum{outer}(Sum{inner}(x, 10), Sum{inner}(x, 10), x)`, the inner node shared.
    let mut g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::I64, &[Some(2)])).unwrap();
    let ten = g.constant(vec_i64(&[10, 10]));
    let inner = g.apply(Arc::new(Sum { tag: "inner" }), &[x, ten]).unwrap()[0];
    let y = g.apply(Arc::new(Sum { tag: "outer" }), &[inner, inner, x]).unwrap()[0];
    let fg = FunctionGraph::new(&g, &[x], &[y]).unwrap();
    let interp = Interpreter::new(&fg).unwrap();
    let out = interp.run(&fg, &ExecContext::default(), &[vec_i64(&[1, 2])]).unwrap();
    // (x + 10) + (x + 10) + x
    assert_eq!(out[0].flat_values().as_slice::<i64>().unwrap(), &[23, 26]);
    let err = interp.run(&fg, &ExecContext::default(), &[vec_i64(&[1, 2, 3])]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::IncompatibleShapes);
    assert!(err.to_string().contains("Sum{inner}"), "the error names the node: {err}");
}

#[test]
fn inner_graphs_infer_and_run_through_the_executor() {
    let g = inner("a", &[1, 2]);
    assert_eq!(g.infer(&[vector(), vector()]).unwrap(), vec![vector(), vector()]);
    let refused = g.infer(&[TensorType::ragged(DType::I64, 1), vector()]).unwrap_err();
    assert_eq!(refused.to_string(), "in node Sum{a}: sum: type mismatch: int64 dense inputs only");
    let out = g.run(ExecContext::detached(), &[vec_i64(&[10, 20]), vec_i64(&[100, 200])]).unwrap();
    assert!(out[0].equals(&vec_i64(&[111, 222])) && out[1].equals(&vec_i64(&[10, 20])));
}

#[test]
fn errors_from_inside_name_the_fused_node_and_the_inner_node() {
    let fg = function();
    let run = Interpreter::new(&fg).unwrap();
    let e = run.run(&fg, ExecContext::detached(), &[vec_i64(&[1, 2]), vec_i64(&[1, 2, 3])]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IncompatibleShapes);
    assert_eq!(e.to_string(), "in node Fused -> z: in node Sum{a}: sum: incompatible shapes: lengths 2 and 3 differ");
}

#[test]
fn equality_and_hash_are_structural() {
    let (a, b) = (inner("a", &[1, 2]), inner("a", &[1, 2]));
    assert_eq!(a, b, "two inner graphs built alike are equal, whatever their arena keys");
    assert_eq!(hash_of(&a), hash_of(&b));
    assert_ne!(a, inner("b", &[1, 2]), "another op");
    assert_ne!(a, inner("a", &[1, 3]), "another constant");
    let fused = |g: InnerGraph| -> Arc<dyn Op> { Arc::new(Fused { inner: g }) };
    assert!(fused(a.clone()).op_eq(&*fused(b)), "fused ops merge through their inner graphs");
    // The same ops read in another order are another computation.
    let mut swapped = InnerGraphBuilder::new([vector(), vector()]).unwrap();
    let (x, y) = (swapped.input(0).unwrap(), swapped.input(1).unwrap());
    let c = swapped.constant(vec_i64(&[1, 2]));
    let s = swapped.apply(Arc::new(Sum { tag: "a" }), &[y, c]).unwrap()[0];
    let t = swapped.apply(Arc::new(Sum { tag: "a" }), &[s, x]).unwrap()[0];
    assert_ne!(a, swapped.finish(&[t, x]).unwrap());
}

#[test]
fn the_verifier_and_the_builder_check_inner_graphs() {
    assert_eq!(function().verify(), Vec::<String>::new());
    let mut b = InnerGraphBuilder::new([TensorType::ragged(DType::I64, 1)]).unwrap();
    let x = b.input(0).unwrap();
    let e = b.apply(Arc::new(Sum { tag: "a" }), &[x]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TypeMismatch, "type inference runs as nodes are applied");
}

#[test]
fn debugprint_shows_the_inner_graph_under_the_fused_node() {
    let fg = function();
    let text = debugprint_function(&fg, PrintOptions { types: true, positions: true });
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/fused_function.txt");
    if std::env::var_os("RAGTIME_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("missing golden file {}; run with RAGTIME_BLESS=1 to create it", path.display()));
    assert_eq!(text, want, "debugprint differs from {} (RAGTIME_BLESS=1 regenerates it)", path.display());
}
