//! The per-call memory budget: a `Function`'s own budget, and the process default, refuse an op
//! whose buffers would take a call past them (before allocating), without touching the inputs;
//! calls under the budget are unaffected. One test function: the process default is global.

use ragtime::ops::{self, strings};
use ragtime::prelude::*;
use ragtime::{DenseTensor, ErrorKind, StringTensor};

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
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.to_string().contains("memory budget of 1048576 bytes"), "{e}");
    assert!(e.to_string().contains("Tile"), "the node is named: {e}");
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
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");

    // The process default applies to functions without a budget of their own.
    ragtime::limits::set_default_call_budget(1 << 20);
    let e = f.call(std::slice::from_ref(&kib)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(
        f.clone().with_memory_budget(64 << 20).call(std::slice::from_ref(&kib)).is_ok(),
        "a function's own budget wins"
    );
    ragtime::limits::set_default_call_budget(ragtime::limits::DEFAULT_CALL_BUDGET);
    assert!(f.call(std::slice::from_ref(&kib)).is_ok());
}
