//! `ragtime bench` through the binary, on tiny data: one JSON object with every workload checked and
//! timed, `--only`, the table, and typed refusals of bad options.

use std::process::Command;

use serde_json::Value;

/// Every workload, in the JSON object's (sorted) order.
const KEYS: [&str; 17] = [
    "W1_fused_elemwise",
    "W2_axpy",
    "W3_row_mean",
    "W3_row_mean_inner8",
    "W3_row_mean_rank2",
    "W4_feature_layer_norm",
    "W4_row_layer_norm",
    "W4_row_log_softmax",
    "W4_row_softmax",
    "W4_row_softmax_inner8",
    "W4_row_softmax_rank2",
    "W5_compile",
    "W6_small_call",
    "W7_bigram",
    "W7_bigram_variants",
    "W8_train_step",
    "W9_nested_attention",
];

fn ragtime() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ragtime"))
}

fn bench_json(args: &[&str]) -> Value {
    let out = ragtime().args(["bench", "--json"]).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "exit {:?}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout.trim().lines().count(), 1, "exactly one JSON line: {stdout}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[test]
fn json_has_every_workload_checked_and_timed() {
    let v = bench_json(&["--rows", "4096", "--runs", "1"]);
    let object = v.as_object().unwrap();
    assert_eq!(object.keys().map(String::as_str).collect::<Vec<_>>(), KEYS, "{v}");
    for key in KEYS {
        let w = &v[key];
        assert_eq!(w["checked"], true, "{key}: {w}");
        let t = w["ragtime_s"].as_f64().unwrap_or_else(|| panic!("{key}: no ragtime_s in {w}"));
        assert!(t > 0.0 && t.is_finite(), "{key}: {w}");
        assert!(w["threads"].as_u64().is_some_and(|n| n >= 1), "{key}: threads: {w}");
        let against: Vec<&str> = w["checked_against"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
        assert!(against.contains(&"fast_compile"), "{key} is checked against the interpreter: {w}");
        match key {
            "W7_bigram_variants" => {
                // Its baseline is the seed's spelling, timed in the same run.
                assert!(w["baseline_s"].as_f64().is_some_and(|b| b > 0.0), "{key}: {w}");
                assert!(against.contains(&"expected"), "{key}: every variant is checked against the seed: {w}");
            }
            "W5_compile" | "W6_small_call" => {
                assert!(w.get("baseline_s").is_none() && w.get("ratio").is_none(), "{key} has no baseline: {w}");
            }
            _ => {
                let b = w["baseline_s"].as_f64().unwrap_or_else(|| panic!("{key}: no baseline_s in {w}"));
                assert!(b > 0.0, "{key}: {w}");
                let ratio = w["ratio"].as_f64().unwrap();
                assert!((ratio - t / b).abs() <= 1e-9 * ratio, "{key}: the ratio is ragtime / baseline: {w}");
                assert!(against.contains(&"baseline"), "{key}: {w}");
                assert!(w["baseline_threads"].as_u64().unwrap() >= 1, "{key}: {w}");
                assert_eq!(
                    w["threads"], w["baseline_threads"],
                    "ragtime and its baseline use the same threads: {key}: {w}"
                );
            }
        }
    }
    assert_eq!(v["W1_fused_elemwise"]["rows"], 4096);
    // The values of 4096 rows of lengths (i * 7919) % 21.
    let values: u64 = (0..4096u64).map(|i| (i * 7919) % 21).sum();
    assert_eq!(v["W2_axpy"]["values"], values);
    // W7's 100,000 queries scale with the rows: 100,000 * 4096 / 2^20, rounded up.
    assert_eq!(v["W7_bigram"]["queries"], 391);
    // The rank 2 forms cover the same values; each compiles to one row kernel.
    for key in ["W3_row_mean_rank2", "W4_row_softmax_rank2"] {
        assert_eq!(v[key]["values"], values, "{key}");
        assert_eq!(v[key]["nodes_after"], 1, "{key}");
    }
    // W4's family on W4's data: one row kernel each (the per-row `log(sum)` and `rsqrt(var +
    // eps)` inside), against the memory limit and a loop (log-softmax also a vectorized `exp`).
    for key in ["W4_row_log_softmax", "W4_row_layer_norm"] {
        assert_eq!((&v[key]["values"], &v[key]["nodes_after"]), (&Value::from(values), &Value::from(1)), "{key}");
        assert!(v[key]["limit_ratio"].as_f64().is_some_and(|r| r > 0.0), "{key}: {}", v[key]);
    }
    assert!(v["W4_row_log_softmax"]["approx_baseline_s"].as_f64().is_some_and(|t| t > 0.0));
    // The inner-dim forms: 4096 / 8 rows of W3's lengths, 8 values per item, against the memory limit.
    let items: u64 = (0..512u64).map(|i| (i * 7919) % 21).sum();
    for key in ["W3_row_mean_inner8", "W4_row_softmax_inner8", "W4_feature_layer_norm"] {
        assert_eq!((v[key]["rows"].as_u64(), v[key]["values"].as_u64()), (Some(512), Some(items * 8)), "{key}");
        assert!(v[key]["limit_ratio"].as_f64().is_some_and(|r| r > 0.0), "{key}: {}", v[key]);
    }
    // The layer norm over the features (the uniform last axis) is one row kernel.
    assert_eq!(v["W4_feature_layer_norm"]["nodes_after"], 1, "{}", v["W4_feature_layer_norm"]);
    // W9's users scale with the rows (2^17 at 2^20: 512 here), with (u * 7919) % 7 sessions of
    // (s * 104729) % 9 events; its optimized graph is one node (the pooling with the softmax
    // kernel fused in).
    let sessions: u64 = (0..512u64).map(|u| (u * 7919) % 7).sum();
    let events: u64 = (0..sessions).map(|s| (s * 104729) % 9).sum();
    let w9 = &v["W9_nested_attention"];
    assert_eq!(
        (w9["rows"].as_u64(), w9["sessions"].as_u64(), w9["values"].as_u64()),
        (Some(512), Some(sessions), Some(events))
    );
    assert_eq!(w9["nodes_after"], 1, "{w9}");
    // W1-W4 against the memory limit W2's loop sets: W2's limit is its own loop's time.
    for key in ["W1_fused_elemwise", "W2_axpy", "W3_row_mean", "W4_row_softmax"] {
        let (limit, ratio) = (v[key]["memory_limit_s"].as_f64(), v[key]["limit_ratio"].as_f64());
        assert!(limit.is_some_and(|l| l > 0.0) && ratio.is_some_and(|r| r > 0.0), "{key}: {}", v[key]);
    }
    // Each limit comes from the bandwidth probe timed in the workload's own rounds (W2: its baseline).
    for key in ["W1_fused_elemwise", "W3_row_mean", "W4_row_softmax", "W3_row_mean_inner8", "W4_row_softmax_rank2"] {
        let w = &v[key];
        assert_eq!(w["bandwidth_probe"], "W2_axpy loop, same rounds", "{key}: {w}");
        let bandwidth = w["bandwidth_bytes_per_s"].as_f64().unwrap_or_else(|| panic!("{key}: no bandwidth in {w}"));
        let (limit, values) = (w["memory_limit_s"].as_f64().unwrap(), w["values"].as_f64().unwrap());
        // Every form reads `x` (and W3 `z`): at least 8 bytes per value.
        assert!(limit * bandwidth >= 8.0 * values * (1.0 - 1e-12), "{key}: {w}");
    }
    assert_eq!(v["W2_axpy"]["bandwidth_probe"], "baseline");
    // (bytes / (bytes / time) is the time up to the last bit of the two divisions.)
    let (limit, loop_s) = (v["W2_axpy"]["memory_limit_s"].as_f64(), v["W2_axpy"]["baseline_s"].as_f64());
    assert!(
        limit.zip(loop_s).is_some_and(|(l, t)| (l - t).abs() <= 1e-12 * t),
        "W2's memory limit {limit:?} should be its own loop's time {loop_s:?}"
    );
    // W7's spellings compile to the seed's one node (a `HashedGatherReduce`).
    let variants = &v["W7_bigram_variants"];
    assert_eq!((variants["variants"].as_u64(), variants["nodes_after"].as_u64()), (Some(8), Some(1)), "{variants}");
}

#[test]
fn only_threads_and_queries_select_and_are_reported() {
    let v = bench_json(&["--only", "W4_row_softmax,W3_row_mean", "--rows", "100", "--runs", "2", "--threads", "3"]);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["W3_row_mean", "W4_row_softmax"]);
    assert_eq!(v["W3_row_mean"]["baseline_threads"], 3);
    assert_eq!(v["W3_row_mean"]["runs"], 2);
    let v = bench_json(&["--only", "W7_bigram", "--queries", "10", "--runs", "1"]);
    assert_eq!(v["W7_bigram"]["queries"], 10);
    assert_eq!(v["W7_bigram"]["checked"], true);
}

#[test]
fn the_table_shows_ratios() {
    let out =
        ragtime().args(["bench", "--rows", "64", "--runs", "1", "--only", "W2_axpy,W6_small_call"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let line = stdout.lines().find(|l| l.starts_with("W2_axpy")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(line.contains('x') && line.contains("yes (baseline, fast_compile)"), "{line}");
    assert!(stdout.lines().any(|l| l.starts_with("W6_small_call") && l.contains("µs")), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("memory limit (W2's loop moved")), "{stdout}");
}

#[test]
fn bad_options_are_refused_without_a_panic() {
    for args in [
        &["--only", "W9_nothing"][..],
        &["--rows", "0"],
        &["--runs", "0"],
        &["--threads", "0"],
        &["--threads", "many"],
        &["--rows", "-3"],
        &["--queries", "0"],
    ] {
        let out = ragtime().arg("bench").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error:") && !stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
