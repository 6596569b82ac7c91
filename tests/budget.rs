//! The per-call execution context: a `Function`'s memory budget refuses an op whose buffers would
//! take a call past it (before allocating, naming the node, as `resource_exhausted`) without
//! touching the inputs; functions keep their own thread counts when called alternately on one
//! thread; graph files run under the untrusted limits unless told otherwise.

use ragtime::case::CaseFile;
use ragtime::ir::jit::JitKernel;
use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{CompileOptions, DenseTensor, ErrorKind, Limits, StringTensor};

#[test]
fn calls_stay_within_their_memory_budget() {
    let g = Graph::new();
    let x = g.input("x", TensorType::vector(DType::I32));
    let tiled = ops::tile(&x, &[1 << 16]);
    let f = g.compile(&[&x], &[&tiled]).unwrap();
    let input: RaggedTensor = DenseTensor::vector(vec![1i32, 2, 3, 4]).into();
    let before = input.clone();

    // 2^18 int32 values (1 MiB, plus its indices): fine under the default budget...
    let out = f.call(std::slice::from_ref(&input)).unwrap();
    assert_eq!(out[0].flat_values().len(), 1 << 18);
    // ...refused under a 1 MiB budget of the function's own, before allocating.
    let small = f.clone().with_memory_budget(1 << 20);
    let e = small.call(std::slice::from_ref(&input)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "{e}");
    assert!(e.to_string().contains("memory budget of 1048576 bytes"), "{e}");
    assert!(e.to_string().contains("in node Tile"), "the node is named: {e}");
    assert!(e.to_string().contains("smaller batches"), "the message says what to do: {e}");
    assert!(input.equals(&before));

    // Strings are charged by their bytes: 2^12 copies of a 1 KiB string take 4 MiB.
    let g = Graph::new();
    let s = g.input("s", TensorType::vector(DType::String));
    let joined = strings::join(&[&ops::tile(&s, &[1 << 12]), &s], "-");
    let kib =
        RaggedTensor::dense(DenseTensor::String(StringTensor::from_strings(&[vec![b'x'; 1024]], vec![1]).unwrap()));
    let f = g.compile(&[&s], &[&joined]).unwrap();
    assert_eq!(f.call(std::slice::from_ref(&kib)).unwrap()[0].flat_values().len(), 1 << 12);
    let e = f.clone().with_memory_budget(1 << 20).call(std::slice::from_ref(&kib)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "{e}");

    // The budget set at compile time, and the limits' own budget, apply the same way.
    let options = CompileOptions::default().memory_budget(1 << 20);
    let f = g.compile_with(&[&s], &[&joined], options).unwrap();
    assert_eq!(f.limits().call_budget, 1 << 20);
    assert_eq!(f.call(std::slice::from_ref(&kib)).unwrap_err().kind(), ErrorKind::ResourceExhausted);
    assert!(f.with_memory_budget(64 << 20).call(std::slice::from_ref(&kib)).is_ok(), "a larger budget lets it run");
}

#[test]
fn a_small_budget_names_the_node_that_went_over() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let big = ops::tile(&x, &[1, 64]).named("widened");
    let f = g.compile(&[&x], &[&big.reduce_sum(1)]).unwrap().with_memory_budget(64 << 10);
    let input = ragged![[1.0f32, 2.0], [3.0]].unwrap();
    assert!(f.clone().with_memory_budget(1 << 20).call(std::slice::from_ref(&input)).is_ok());
    let rows: Vec<Vec<f32>> = (0..1000).map(|i| vec![i as f32; 3]).collect();
    let many = RaggedTensor::try_from(rows).unwrap();
    let e = f.call(&[many]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "{e}");
    assert!(e.to_string().contains("in node Tile{multiples=[1, 64]} -> widened"), "{e}");
    assert!(e.to_string().contains("memory budget of 65536 bytes"), "{e}");
}

/// The JIT kernels of `f`.
fn kernels(f: &Function) -> Vec<JitKernel> {
    let fg = f.fgraph();
    fg.toposort()
        .unwrap()
        .into_iter()
        .filter_map(|n| fg.node(n).unwrap().op.as_any().downcast_ref::<JitKernel>().cloned())
        .collect()
}

#[test]
fn functions_keep_their_own_thread_counts_when_called_alternately() {
    let g = Graph::new();
    let x = g.input("x", TensorType::ragged(DType::F32, 1));
    let y = (&x * 2.0 + 1.0).tanh();
    let one = g.compile_with(&[&x], &[&y], CompileOptions::default().threads(1)).unwrap();
    let four = g.compile_with(&[&x], &[&y], CompileOptions::default().threads(4)).unwrap();
    let (k1, k4) = (kernels(&one), kernels(&four));
    assert_eq!((k1.len(), k4.len()), (1, 1), "one fused kernel each");
    // 2^20 values: enough work for several pieces on four threads.
    let rows: Vec<Vec<f32>> = (0..1 << 17).map(|i| vec![(i % 7) as f32 / 7.0; 8]).collect();
    let input = RaggedTensor::try_from(rows).unwrap();
    for round in 1..=3 {
        let a = one.call(std::slice::from_ref(&input)).unwrap();
        let b = four.call(std::slice::from_ref(&input)).unwrap();
        assert!(a[0].equals(&b[0]), "the thread count does not change the values");
        let (s1, s4) = (k1[0].stats(), k4[0].stats());
        assert_eq!((s1.calls(), s4.calls()), (round, round));
        assert_eq!((s1.last_threads(), s4.last_threads()), (1, 4), "round {round}: each call uses its own count");
        assert_eq!(s1.last_pieces(), 1, "one thread: one piece");
        assert!(s4.last_pieces() > 1, "four threads split the work: {} pieces", s4.last_pieces());
    }
}

/// A graph file asking for 2 GiB: a float32 vector of 2^29 ones, summed.
const TWO_GIB: &str = r#"{"format": "ragged-conformance/1", "group": "two_gib", "cases": [{"name": "two_gib/fill",
    "inputs": {"d": {"dtype": "int64", "ragged_rank": 0, "value": [536870912], "shape": [1]},
               "s": {"dtype": "float32", "ragged_rank": 0, "value": 1.0, "shape": []}},
    "nodes": [{"op": "fill", "in": ["d", "s"], "out": "y"}, {"op": "reduce_max", "in": ["y"], "out": "m"}],
    "outputs": ["m"]}]}"#;

#[test]
fn graph_files_run_under_the_untrusted_limits_unless_told_otherwise() {
    let file = CaseFile::parse(TWO_GIB).unwrap();
    let case = &file.cases[0];
    let e = case.run(Mode::FastRun).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ResourceExhausted, "{e}");
    assert!(e.to_string().contains("over the limit of 1073741824 bytes per buffer"), "{e}");
    // The same file under the trusted limits, where the machine has the memory. `fill` charges
    // its index vectors too (24 bytes per element, 12 GiB here), so the budget is raised; the
    // memory actually allocated is the 2 GiB of the result.
    if ragtime::limits::physical_memory() < 16 << 30 {
        eprintln!("skipped the trusted run: less than 16 GiB of memory");
        return;
    }
    let out = case.run(CompileOptions::default().limits(Limits::trusted().with_call_budget(16 << 30))).unwrap();
    assert_eq!(out[0].1.flat_values().as_slice::<f32>(), Some(&[1.0f32][..]));
    // A budget below 2 GiB refuses it again, as a budget.
    let e = case.run(CompileOptions::default().limits(Limits::trusted().with_call_budget(1 << 30))).unwrap_err();
    assert!(e.to_string().contains("memory budget of 1073741824 bytes"), "{e}");
}
