//! A deterministic mutation fuzzer on the stable toolchain: seeded mutants of the conformance
//! cases (numbers replaced by extremes, strings by other op names, dtypes or keys, fields dropped
//! or duplicated, lists grown) go through the library path of `ragtime run` (load, build,
//! debugprint, call, print). Each must give values or a typed error: no panic, and quickly.
//! `RAGTIME_MUTANTS` sets the number of mutants (default 1500), `RAGTIME_MUTANTS_SEED` the seed.

use std::path::Path;
use std::time::{Duration, Instant};

use ragtime::case::CaseFile;
use ragtime::Mode;
use serde_json::{json, Value};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const NUMBERS: &[&str] = &[
    "-1",
    "0",
    "1",
    "3",
    "255",
    "2147483648",
    "4294967296",
    "1099511627776",
    "4611686018427387904",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551615",
    "1e300",
    "-0.0",
    "1.5",
];
const STRINGS: &[&str] = &[
    "",
    "x",
    "None, None",
    "..., 0",
    "::-1",
    "float32",
    "string",
    "int8",
    "uint64",
    "bool",
    "tile",
    "fill",
    "strings.ngrams",
    "reduce_sum",
    "getitem",
    "gather",
    "to_tensor",
    "ragged.range",
    "from_row_splits",
];

/// Every value node of `v` (depth first), as JSON pointers.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    out.push(at.clone());
    match v {
        Value::Array(items) => {
            for (i, x) in items.iter().enumerate() {
                pointers(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(map) => {
            for (k, x) in map {
                pointers(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out);
            }
        }
        _ => {}
    }
}

/// One random mutation of `case`, in place.
fn mutate(rng: &mut Rng, case: &mut Value) {
    let mut all = Vec::new();
    pointers(case, String::new(), &mut all);
    let target = all[rng.below(all.len())].clone();
    let Some(node) = case.pointer_mut(&target) else { return };
    match rng.below(8) {
        0 | 1 => *node = serde_json::from_str(NUMBERS[rng.below(NUMBERS.len())]).unwrap(),
        2 => *node = Value::String(STRINGS[rng.below(STRINGS.len())].to_string()),
        3 => {
            if let Value::Array(items) = node {
                if let Some(first) = items.first().cloned() {
                    let n = 1 + rng.below(4);
                    items.extend(std::iter::repeat_n(first, n));
                }
            }
        }
        4 => {
            if let Value::Array(items) = node {
                if !items.is_empty() {
                    let i = rng.below(items.len());
                    items.remove(i);
                }
            }
        }
        5 => {
            if let Value::Object(map) = node {
                if let Some(k) = map.keys().nth(rng.below(map.len())).cloned() {
                    map.remove(&k);
                }
            }
        }
        6 => *node = json!([]),
        _ => *node = json!([[]]),
    }
}

#[test]
fn mutants_of_the_conformance_cases_never_panic_or_hang() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<Value> = Vec::new();
    for dir in ["tests/conformance", "tests/conformance_extra"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir)).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        for f in files.iter().filter(|p| p.extension().is_some_and(|x| x == "json")) {
            let doc: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
            cases.extend(doc["cases"].as_array().unwrap().iter().cloned());
        }
    }
    assert!(cases.len() > 300, "{} cases", cases.len());
    let count: usize = std::env::var("RAGTIME_MUTANTS").ok().and_then(|s| s.parse().ok()).unwrap_or(1500);
    let seed: u64 = std::env::var("RAGTIME_MUTANTS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    let mut rng = Rng(seed.wrapping_mul(2).wrapping_add(1));
    let (mut ok, mut errors) = (0usize, 0usize);
    let mut problems = Vec::new();
    for k in 0..count {
        let mut case = cases[rng.below(cases.len())].clone();
        for _ in 0..1 + rng.below(3) {
            mutate(&mut rng, &mut case);
        }
        let text = json!({"format": "ragged-conformance/1", "group": "mutant", "cases": [case]}).to_string();
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(|| -> Result<String, ragtime::Error> {
            let file = CaseFile::parse(&text)?;
            let mut printed = String::new();
            for case in &file.cases {
                let built = case.build(Mode::default())?;
                printed.push_str(&built.function.debugprint_types());
                for v in built.function.call(&built.inputs)? {
                    printed.push_str(&v.to_string());
                }
            }
            Ok(printed)
        });
        match outcome {
            Err(_) => problems.push(format!("mutant {k} panicked:\n{text}")),
            Ok(Ok(_)) => ok += 1,
            Ok(Err(_)) => errors += 1,
        }
        if start.elapsed() > Duration::from_secs(5) {
            problems.push(format!("mutant {k} took {:?}:\n{text}", start.elapsed()));
        }
    }
    eprintln!("{count} mutants (seed {seed}): {ok} ran, {errors} typed errors, {} problems", problems.len());
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
