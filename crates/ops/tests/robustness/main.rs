//! Robustness sweep: every op of the registry, built from random (valid and invalid) attributes and
//! run on random values, must never panic, must produce values of the types it inferred, and must
//! leave its inputs untouched.
//!
//! The sweep is deterministic: a splitmix64 generator seeded per op name (and by
//! `RAGTIME_SWEEP_SEED`) drives everything. `RAGTIME_SWEEP_ITERS` sets the number of cases per op
//! (default [`DEFAULT_ITERS`]); `RAGTIME_SWEEP_OPS` and `RAGTIME_SWEEP_SKIP` (comma-separated op
//! names) restrict the sweep, e.g. to go on past an op that hangs. A failing run prints one
//! reproducer per distinct failure: the op name, its attributes and every input value with its type.
//!
//! Properties checked for every case:
//! 1. nothing panics: building the op, `name`, `infer`, `perform`, and printing the outputs;
//! 2. when `infer` accepts the input types and `perform` succeeds, there are as many outputs as
//!    inferred types and each output is accepted by its type (`TensorType::check`);
//! 3. the inputs are unchanged after `perform` (compared with deep copies made before the call);
//! 4. no call takes long or allocates much (inputs are tiny; a call past [`SLOW_CALL`] is a
//!    failure, and a call past [`harness::HUNG_CALL`] or memory past [`harness::MAX_RESIDENT`] aborts the run with
//!    its reproducer, since neither can be unwound);
//! 5. `infer` is monotone: when it accepts types with some known dims made unknown and `perform`
//!    succeeds on the values, it accepts their exact types too, and the output types it gave for
//!    the less precise types accept the ones it gives for the exact types.
//!
//! `perform` is public API too, so the sweep also runs it on a share of the inputs whose types
//! `infer` rejected, checking only that it does not panic.

mod attrs;
mod harness;
mod inputs;
mod rng;
mod values;

use ragtime_core::limits::Limits;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ragtime_core::{ExecContext, RaggedTensor, TensorType};
use ragtime_graph::{Attrs, OpRef};
use ragtime_ops::{op_from_name, OP_NAMES};

use crate::attrs::attrs_for;
use crate::harness::{catch, deep_copy, describe, install_panic_hook, show_types, start_watchdog, types_for, Current};
use crate::inputs::{inputs_for, profile, wild_inputs};
use crate::rng::{hash_name, Rng};

/// Cases per op when `RAGTIME_SWEEP_ITERS` is not set.
const DEFAULT_ITERS: usize = 2000;
/// A single call slower than this is reported as a failure (sizes are tiny; only a loop driven by a
/// huge attribute or a quadratic blow-up gets here).
const SLOW_CALL: Duration = Duration::from_secs(2);
/// Reproducers printed per distinct failure.
const EXAMPLES_PER_FAILURE: usize = 2;

// ---------------------------------------------------------------------------------------------
// Deterministic randomness.

/// One distinct failure (op, what went wrong, where) with its first reproducers.
#[derive(Default)]
struct Failures {
    by_key: BTreeMap<(String, String), (usize, Vec<String>)>,
}

impl Failures {
    fn add(&mut self, op: &str, what: String, case: String) {
        let entry = self.by_key.entry((op.to_string(), what)).or_default();
        entry.0 += 1;
        if entry.1.len() < EXAMPLES_PER_FAILURE {
            entry.1.push(case);
        }
    }

    fn report(&self) -> String {
        let mut s = String::new();
        for ((op, what), (count, examples)) in &self.by_key {
            let _ = writeln!(s, "== {op}: {what} ({count} cases)");
            for e in examples {
                let _ = writeln!(s, "{e}");
            }
        }
        s
    }
}

/// Counts of what the sweep reached, to show it does more than hit argument checks.
#[derive(Default, Debug)]
struct Coverage {
    built: usize,
    inferred: usize,
    performed: usize,
    /// Cases where `infer` refused the exact input types but `perform` computed a value anyway:
    /// not a failure (a stricter `infer` is safe), shown to spot over-strict type rules.
    lenient_perform: usize,
}

/// Runs one case of `op_name`; records every property violation in `failures`.
fn run_case(rng: &mut Rng, op_name: &str, watch: &Current, failures: &mut Failures, coverage: &mut Coverage) {
    let inputs = if rng.chance(0.1) { wild_inputs(rng) } else { inputs_for(rng, profile(op_name)) };
    let attr_map = attrs_for(rng, op_name, inputs.first().map_or(0, RaggedTensor::rank));
    let types = types_for(rng, &inputs);
    let originals: Vec<RaggedTensor> = inputs.iter().map(deep_copy).collect();
    let case = || describe(op_name, &attr_map, &inputs, &types);
    // `what` keys the failure (one reproducer set per key); `detail` goes with the reproducer.
    let mut fail_with = |what: String, detail: String| failures.add(op_name, what, format!("{detail}\n{}", case()));

    let attrs = Attrs::new(op_name, attr_map.clone());
    let (built, elapsed) = catch(watch, "build", &case, || op_from_name(op_name, &attrs));
    let op: OpRef = match built {
        Err(p) => return fail_with(panic_key("op_from_name", &p), p),
        Ok(Err(_)) => return,
        Ok(Ok(op)) => op,
    };
    if elapsed > SLOW_CALL {
        fail_with("op_from_name is slow".into(), format!("took {elapsed:?}"));
    }
    coverage.built += 1;
    if let (Err(p), _) = catch(watch, "name", &case, || op.name()) {
        return fail_with(panic_key("name()", &p), p);
    }

    let (inferred, elapsed) = catch(watch, "infer", &case, || op.output_types(&types));
    if elapsed > SLOW_CALL {
        fail_with("infer is slow".into(), format!("took {elapsed:?}"));
    }
    let inferred = match inferred {
        Err(p) => return fail_with(panic_key("infer", &p), p),
        Ok(r) => r,
    };
    // `perform` must not panic on any value; on values whose types `infer` refused it is only
    // checked for panics, on a share of the cases.
    if inferred.is_err() && !rng.chance(0.3) {
        return;
    }
    let (performed, elapsed) =
        catch(watch, "perform", &case, || op.perform(&ExecContext::new(Limits::untrusted()), &inputs));
    if elapsed > SLOW_CALL {
        fail_with(
            format!("{} is slow", if inferred.is_ok() { "perform" } else { "perform (refused types)" }),
            format!("took {elapsed:?}"),
        );
    }
    let stage = if inferred.is_ok() { "perform" } else { "perform (types refused by infer)" };
    let performed = match performed {
        Err(p) => return fail_with(panic_key(stage, &p), p),
        Ok(r) => r,
    };
    for (i, (x, original)) in inputs.iter().zip(&originals).enumerate() {
        if !x.equals(original) || x.shape() != original.shape() {
            fail_with(format!("{stage} changed input {i}"), format!("input {i} is now {x}"));
        }
    }
    let exact: Vec<TensorType> = inputs.iter().map(TensorType::of).collect();
    let inferred = match inferred {
        Ok(inferred) => inferred,
        Err(_) => {
            if performed.is_ok() && types == exact {
                coverage.lenient_perform += 1;
            }
            return;
        }
    };
    coverage.inferred += 1;
    if types != exact && performed.is_ok() {
        // Property 5: the values are valid (perform computed them) and their exact types refine
        // the loosened ones, so infer must accept them too, with output types that refine the
        // loosened outputs.
        match catch(watch, "infer (exact types)", &case, || op.output_types(&exact)).0 {
            Err(p) => return fail_with(panic_key("infer", &p), p),
            Ok(Err(e)) => fail_with(
                "infer refuses exact types after accepting less precise ones".into(),
                format!("with exact types: {e}"),
            ),
            Ok(Ok(refined)) => {
                let agree =
                    refined.len() == inferred.len() && inferred.iter().zip(&refined).all(|(loose, r)| loose.accepts(r));
                if !agree {
                    fail_with(
                        "infer on exact types is not a refinement of infer on less precise ones".into(),
                        format!(
                            "less precise inputs gave {}, exact inputs gave {}",
                            show_types(&inferred),
                            show_types(&refined)
                        ),
                    );
                }
            }
        }
    }
    let Ok(outputs) = performed else { return };
    coverage.performed += 1;
    if outputs.len() != inferred.len() {
        fail_with(
            "infer and perform disagree on the number of outputs".into(),
            format!("infer gave {} types, perform gave {} outputs", inferred.len(), outputs.len()),
        );
        return;
    }
    for (i, (out, ty)) in outputs.iter().zip(&inferred).enumerate() {
        if let Err(e) = ty.check(out, &format!("output {i}")) {
            fail_with(format!("output {i} does not match its inferred type"), format!("{e}; the output is {out}"));
        }
        if let (Err(p), _) = catch(watch, "print output", &case, || out.to_string()) {
            fail_with(panic_key("printing an output", &p), p);
        }
    }
}

/// The failure key of a panic: the stage and the panic's location (messages carry data, locations
/// do not, so one bug gives one key).
fn panic_key(stage: &str, panic: &str) -> String {
    let location = panic.rsplit(" at ").next().unwrap_or(panic);
    format!("{stage} panicked at {location}")
}

/// Cases per op: `RAGTIME_SWEEP_ITERS` or [`DEFAULT_ITERS`].
fn iterations() -> usize {
    std::env::var("RAGTIME_SWEEP_ITERS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(DEFAULT_ITERS)
}

/// A comma-separated list of op names from the environment.
fn env_list(var: &str) -> Option<Vec<String>> {
    std::env::var(var).ok().map(|v| v.split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect())
}

/// The sweep's seed: `RAGTIME_SWEEP_SEED` (decimal) or a fixed default.
fn base_seed() -> u64 {
    std::env::var("RAGTIME_SWEEP_SEED").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0x5EED_5EED)
}

#[test]
fn every_op_survives_random_attributes_and_values() {
    install_panic_hook();
    let watch = start_watchdog();
    let iters = iterations();
    let seed = base_seed();
    let mut failures = Failures::default();
    let mut summary = String::new();
    let only = env_list("RAGTIME_SWEEP_OPS");
    let skip = env_list("RAGTIME_SWEEP_SKIP");
    for &op in OP_NAMES {
        if only.as_ref().is_some_and(|o| !o.iter().any(|n| n == op)) || skip.iter().flatten().any(|n| n == op) {
            continue;
        }
        let mut rng = Rng::new(seed ^ hash_name(op));
        let mut coverage = Coverage::default();
        for _ in 0..iters {
            run_case(&mut rng, op, &watch, &mut failures, &mut coverage);
        }
        let _ = writeln!(summary, "{op}: {coverage:?}");
        // A profile that never gets past the argument checks would make the sweep pointless.
        if iters >= 100 {
            assert!(coverage.performed > 0, "{op}: no case of {iters} reached perform successfully\n{summary}");
        }
    }
    println!("{summary}");
    assert!(
        failures.by_key.is_empty(),
        "robustness sweep failures (seed {seed}, {iters} cases per op):\n{}",
        failures.report()
    );
}

#[test]
fn catch_reports_panics_with_their_location() {
    install_panic_hook();
    let watch: Current = Arc::new(Mutex::new(None));
    let case = || "a deliberate panic".to_string();
    let (result, _) = catch(&watch, "self-test", &case, || -> usize { panic!("boom {}", 42) });
    let message = result.expect_err("the panic is caught");
    assert!(message.starts_with("boom 42 at ") && message.contains("robustness/main.rs"), "got {message:?}");
    assert_eq!(
        panic_key("perform", &message).split(':').next(),
        Some("perform panicked at crates/ops/tests/robustness/main.rs")
    );
    let (result, _) = catch(&watch, "self-test", &case, || 7);
    assert_eq!(result, Ok(7));
}
