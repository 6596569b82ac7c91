//! Fused ops cannot be built from parts that do not fit: a scalar graph whose nodes or outputs
//! name missing values, a `Composite` whose graph has more inputs than the op has operands, a
//! `RowKernel` whose reductions read results not computed yet or whose outer folds fold no
//! per-row reduction, a `RowPooling` whose weights kernel returns more than the weights. The fast paths and the JIT index
//! operands and values by these references, so each mismatch is refused at construction.

use ragtime_core::{DType, ErrorKind, TensorType};
use ragtime_fused::{
    op_ref, Composite, OperandKind, OuterFold, RowKernel, RowOutput, RowPooling, RowReduction, ScalarGraph, ScalarRef,
};
use ragtime_graph::Op;
use ragtime_ops::elemwise::{Elemwise, ScalarOp};
use ragtime_ops::reduce::{Reduce, ReduceKind};
use ragtime_runtime::{InnerGraph, InnerGraphBuilder};

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

/// The inner graph `add(i0, i1)` over a ragged and a scalar float32 input.
fn sum_inner() -> InnerGraph {
    let mut inner =
        InnerGraphBuilder::new([TensorType::ragged(DType::F32, 1), TensorType::scalar(DType::F32)]).unwrap();
    let (a, b) = (inner.input(0).unwrap(), inner.input(1).unwrap());
    let sum = inner.apply(op_ref(Elemwise::new(ScalarOp::Add)), &[a, b]).unwrap();
    inner.finish(&sum).unwrap()
}

#[test]
fn composites_have_one_graph_input_per_operand() {
    let one = vec![OperandKind::Full];
    refused("two graph inputs, one operand", Composite::new(sum_graph(), one, sum_inner()));
    let two = vec![OperandKind::Full, OperandKind::Scalar];
    let c = Composite::new(sum_graph(), two.clone(), sum_inner()).unwrap();
    assert_eq!((c.graph(), c.operands()), (&sum_graph(), two.as_slice()));
}

/// The inner graph `i0 + reduce_sum(i0, axis=1, keepdims)` over a ragged float32 input.
fn centered_inner() -> InnerGraph {
    let mut inner = InnerGraphBuilder::new([TensorType::ragged(DType::F32, 1)]).unwrap();
    let x = inner.input(0).unwrap();
    let r = inner.apply(op_ref(Reduce::new(ReduceKind::Sum, Some(1), true)), &[x]).unwrap();
    let out = inner.apply(op_ref(Elemwise::new(ScalarOp::Add)), &[x, r[0]]).unwrap();
    inner.finish(&[out[0], r[0]]).unwrap()
}

#[test]
fn fused_ops_have_one_inner_graph_input_per_operand() {
    let full = vec![OperandKind::Full];
    refused(
        "an inner graph of two inputs, one operand",
        Composite::new(ScalarGraph::new(vec![DType::F32]), full, sum_inner()),
    );
    let graph = sum_graph();
    let out = graph.outputs()[0];
    let reductions = vec![RowReduction { kind: ReduceKind::Sum, arg: ScalarRef::Input(0) }];
    let outputs = vec![RowOutput::Elements(out), RowOutput::Reduction { index: 0, keepdims: true }];
    let two = vec![OperandKind::Full, OperandKind::Full];
    refused(
        "an inner graph of one input, two operands",
        RowKernel::new(graph, two, reductions, outputs, centered_inner()),
    );
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
        RowKernel::new(graph, vec![OperandKind::Full], reductions, outputs, centered_inner())
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

#[test]
fn outer_folds_fold_per_row_reductions_once_each() {
    // `r0 = sum(i0); out = i0 + r0`, returning the elements (output 0) and r0 (output 1).
    let kernel = || {
        let graph = sum_graph();
        let out = graph.outputs()[0];
        let reductions = vec![RowReduction { kind: ReduceKind::Sum, arg: ScalarRef::Input(0) }];
        let outputs = vec![RowOutput::Elements(out), RowOutput::Reduction { index: 0, keepdims: true }];
        RowKernel::new(graph, vec![OperandKind::Full], reductions, outputs, centered_inner()).unwrap()
    };
    let fold = |output| OuterFold { output, kind: ReduceKind::Max, keepdims: false };
    refused("a fold of the element output", kernel().with_outer_folds(vec![fold(0)]));
    refused("a fold of a missing output", kernel().with_outer_folds(vec![fold(2)]));
    refused("one output folded twice", kernel().with_outer_folds(vec![fold(1), fold(1)]));
    let k = kernel().with_outer_folds(vec![fold(1)]).unwrap();
    assert_eq!(k.outer_folds(), [fold(1)]);
    assert!(k.name().contains("out = reduce_max(r0) over outer rows"), "{}", k.name());
}

#[test]
fn pooling_weights_kernels_return_only_the_weights() {
    // The pooling's own inner graph is not run here: any graph of two inputs stands for it.
    let two_inputs = || {
        let mut inner =
            InnerGraphBuilder::new([TensorType::ragged(DType::F32, 1), TensorType::ragged(DType::F32, 1)]).unwrap();
        let (a, b) = (inner.input(0).unwrap(), inner.input(1).unwrap());
        let product = inner.apply(op_ref(Elemwise::new(ScalarOp::Multiply)), &[a, b]).unwrap();
        inner.finish(&product).unwrap()
    };
    let pooling = || RowPooling::new(8, Some(ReduceKind::Max), two_inputs()).unwrap();
    let graph = sum_graph();
    let out = graph.outputs()[0];
    let reductions = vec![RowReduction { kind: ReduceKind::Sum, arg: ScalarRef::Input(0) }];
    let with_sum = vec![RowOutput::Elements(out), RowOutput::Reduction { index: 0, keepdims: true }];
    let kernel = |outputs| {
        RowKernel::new(graph.clone(), vec![OperandKind::Full], reductions.clone(), outputs, centered_inner()).unwrap()
    };
    refused("weights and a row sum", pooling().with_weights(kernel(with_sum), two_inputs()));
    let weights_only = || kernel(vec![RowOutput::Elements(out)]);
    refused(
        "weights over items of 8 values",
        pooling().with_weights(weights_only().over_items(8).unwrap(), two_inputs()),
    );
    let one_input = centered_inner();
    refused("an inner graph without `f`", pooling().with_weights(weights_only(), one_input));
    let fused = pooling().with_weights(weights_only(), two_inputs()).unwrap();
    assert!(fused.weights().is_some());
}
