//! Any bytes as a graph file: loading, compiling (FastRun and FastCompile) and running must give
//! values or typed errors, never a panic, an abort or a hang; both modes must agree.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragtime::case::{compare, CaseFile};
use ragtime::Mode;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(file) = CaseFile::parse(text) else { return };
    for case in file.cases.iter().take(4) {
        let run = |mode: Mode| {
            let built = case.build(mode).ok()?;
            let f = built.function.with_memory_budget(64 << 20);
            Some(f.call(&built.inputs))
        };
        let (Some(fast), Some(reference)) = (run(Mode::FastRun), run(Mode::FastCompile)) else { continue };
        match (fast, reference) {
            (Ok(a), Ok(b)) => {
                for (x, y) in b.iter().zip(&a) {
                    if let Err(why) = compare(x, y) {
                        // Polynomial math differs from libm in the last bits; only structural
                        // or large differences are findings.
                        assert!(
                            why.starts_with("flat value"),
                            "{}: FastRun differs from FastCompile: {why}",
                            case.name
                        );
                    }
                }
            }
            (Err(a), Err(b)) => assert_eq!(a.kind(), b.kind(), "{}: {a} vs {b}", case.name),
            // A budget or size error in one mode only is allowed (fused ops allocate differently).
            (Err(e), Ok(_)) | (Ok(_), Err(e)) => {
                assert_eq!(e.kind(), ragtime::ErrorKind::InvalidArgument, "{}: only one mode failed: {e}", case.name)
            }
        }
    }
});
