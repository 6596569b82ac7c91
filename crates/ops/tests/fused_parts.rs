//! Fused ops cannot be built from parts that do not fit: a scalar graph whose nodes or outputs
//! name missing values, a `Composite` whose graph has more inputs than the op has operands, a
//! `RowKernel` whose reductions read results not computed yet. The fast paths and the JIT index
//! operands and values by these references, so each mismatch is refused at construction.

use ragtime_core::{DType, ErrorKind};
use ragtime_ops::elemwise::ScalarOp;
use ragtime_ops::fused::{
    Composite, OperandKind, OriginalOps, RowKernel, RowOutput, RowReduction, ScalarGraph, ScalarRef,
};
use ragtime_ops::reduce::ReduceKind;

fn refused<T: std::fmt::Debug>(what: &str, r: ragtime_core::Result<T>) {
    let e = r.expect_err(what);
    assert_eq!(e.kind(), ErrorKind::InvalidGraph, "{what}: {e}");
}

#[test]
fn scalar_graphs_refuse_dangling_references() {
    let mut g = ScalarGraph::new(vec![DType::F32]);
    refused("a missing input", g.push(ScalarOp::Tanh, vec![ScalarRef::Input(1)]));
    refused("a node not built yet", g.push(ScalarOp::Tanh, vec![ScalarRef::Node(0)]));
    let t = g.push(ScalarOp::Tanh, vec![ScalarRef::Input(0)]).unwrap();
    assert_eq!(t, ScalarRef::Node(0));
    refused("an output past the nodes", g.set_outputs(vec![ScalarRef::Node(1)]));
    g.set_outputs(vec![t, ScalarRef::Input(0)]).unwrap();
    assert_eq!(g.outputs(), [t, ScalarRef::Input(0)]);
}

/// `i0 + i1` over two float32 inputs.
fn sum_graph() -> ScalarGraph {
    let mut g = ScalarGraph::new(vec![DType::F32, DType::F32]);
    let s = g.push(ScalarOp::Add, vec![ScalarRef::Input(0), ScalarRef::Input(1)]).unwrap();
    g.set_outputs(vec![s]).unwrap();
    g
}

#[test]
fn composites_have_one_graph_input_per_operand() {
    let one = vec![OperandKind::Full];
    refused("two graph inputs, one operand", Composite::new(sum_graph(), one, OriginalOps::default()));
    let two = vec![OperandKind::Full, OperandKind::Scalar];
    let c = Composite::new(sum_graph(), two.clone(), OriginalOps::default()).unwrap();
    assert_eq!((c.graph(), c.operands()), (&sum_graph(), two.as_slice()));
}

#[test]
fn row_kernels_check_how_their_parts_fit() {
    let sum = |arg| RowReduction { kind: ReduceKind::Sum, arg };
    // One operand (i0) and one reduction (its result is i1): `r0 = sum(i0); out = i0 + r0`.
    let ok = || {
        let graph = sum_graph();
        let out = graph.outputs()[0];
        (
            graph,
            vec![sum(ScalarRef::Input(0))],
            vec![RowOutput::Elements(out), RowOutput::Reduction { index: 0, keepdims: true }],
        )
    };
    let build = |graph, reductions, outputs| {
        RowKernel::new(graph, vec![OperandKind::Full], reductions, outputs, OriginalOps::default())
    };
    let (graph, reductions, outputs) = ok();
    let k = build(graph, reductions, outputs).unwrap();
    assert_eq!(k.reductions().len(), 1);

    let (graph, _, outputs) = ok();
    refused("one graph input too many", build(graph, vec![], outputs));
    let (graph, _, outputs) = ok();
    refused("a reduction reading its own result", build(graph, vec![sum(ScalarRef::Input(1))], outputs));
    let (graph, _, outputs) = ok();
    refused("a reduction reading its result through a node", build(graph, vec![sum(ScalarRef::Node(0))], outputs));
    let (graph, _, outputs) = ok();
    refused("a reduction of a missing node", build(graph, vec![sum(ScalarRef::Node(5))], outputs));
    let (graph, reductions, _) = ok();
    refused(
        "the output of a missing reduction",
        build(graph, reductions, vec![RowOutput::Reduction { index: 1, keepdims: false }]),
    );
    let (graph, reductions, _) = ok();
    refused(
        "element outputs that are not the graph's outputs",
        build(graph, reductions, vec![RowOutput::Elements(ScalarRef::Input(0))]),
    );
}
