//! The two renderings of a benchmark run: one JSON object keyed by workload id (`--json`), or a table
//! with the ratios. A workload whose check failed reports the first difference and no time.

use serde_json::{json, Map, Value};

use super::run::{Outcome, Settings, Sizes};
use super::WorkloadId;

/// Bytes W2's loop moves per value (reads `x` and `z`, writes the output).
const AXPY_BYTES_PER_VALUE: f64 = 12.0;

/// The memory bandwidth in bytes per second that the bandwidth probe beside `o` reached (`../shared/
/// BENCHMARKS.md`, "The memory limit"): W2's baseline loop, timed in the same rounds as `o` over as
/// many values (for W2, its own baseline), when `o` has one and checked.
pub fn bandwidth(o: &Outcome) -> Option<f64> {
    if o.check.is_err() {
        return None;
    }
    Some(AXPY_BYTES_PER_VALUE * o.size_of("values")? as f64 / o.bandwidth_probe_s?)
}

/// The least time the memory system allows a workload of W1-W4 (and the rank 2 and inner-dim forms of
/// W3, W4) at `bandwidth`: the bytes it must move (W1, W2: 12 per value; W3: 8 per value and 4 per
/// output value; W4: 8 per value) over the bandwidth.
pub fn memory_limit_s(o: &Outcome, bandwidth: f64) -> Option<f64> {
    use WorkloadId::*;
    let (values, rows) = (o.size_of("values")? as f64, o.size_of("rows")? as f64);
    let bytes = match o.id {
        FusedElemwise | Axpy => 12.0 * values,
        RowMean | RowMeanRank2 => 8.0 * values + 4.0 * rows,
        RowSoftmax | RowSoftmaxRank2 | RowLogSoftmax | RowLayerNorm => 8.0 * values,
        // The mean writes one value per row and column.
        RowMeanInner8 => 8.0 * values + 4.0 * rows * o.size_of("inner")? as f64,
        RowSoftmaxInner8 | FeatureLayerNorm => 8.0 * values,
        _ => return None,
    };
    Some(bytes / bandwidth)
}

/// The JSON entry of one workload: `ragtime_s`, `baseline_s` (where a baseline applies), `ratio`,
/// `threads`, `baseline_threads`, `single_thread_baseline_s` and `single_thread_ratio` (when the
/// baseline ran on several threads), `checked`, `checked_against`, `runs` and the input's size; on a failed
/// check, `checked: false` and `mismatch` instead of the times. W1-W4 (and their other forms) also get
/// `bandwidth_bytes_per_s` (their own probe's, [`bandwidth`]), `memory_limit_s` and `limit_ratio`
/// (ragtime's time over it).
pub fn entry(settings: &Settings, o: &Outcome) -> Value {
    let mut m = Map::new();
    m.insert("checked".into(), json!(o.check.is_ok()));
    match &o.check {
        Ok(against) => {
            m.insert("ragtime_s".into(), json!(o.ragtime_s));
            if let Some(b) = o.baseline_s {
                m.insert("baseline_s".into(), json!(b));
                m.insert("ratio".into(), json!(o.ragtime_s / b));
            }
            if let Some(b) = o.approx_baseline_s {
                m.insert("approx_baseline_s".into(), json!(b));
                m.insert("approx_ratio".into(), json!(o.ragtime_s / b));
            }
            if let Some(b) = o.single_thread_baseline_s {
                m.insert("single_thread_baseline_s".into(), json!(b));
                m.insert("single_thread_ratio".into(), json!(o.ragtime_s / b));
            }
            if let Some((bandwidth, limit)) = bandwidth(o).and_then(|b| Some((b, memory_limit_s(o, b)?))) {
                m.insert("bandwidth_bytes_per_s".into(), json!(bandwidth));
                m.insert(
                    "bandwidth_probe".into(),
                    json!(if o.id == WorkloadId::Axpy { "baseline" } else { "W2_axpy loop, same rounds" }),
                );
                m.insert("memory_limit_s".into(), json!(limit));
                m.insert("limit_ratio".into(), json!(o.ragtime_s / limit));
            }
            m.insert("checked_against".into(), json!(against.iter().map(|a| a.name()).collect::<Vec<_>>()));
        }
        Err(mismatch) => {
            m.insert(
                "mismatch".into(),
                json!({
                    "against": mismatch.against.name(),
                    "what": mismatch.what,
                    "index": mismatch.index,
                    "got": mismatch.got,
                    "want": mismatch.want,
                    "message": mismatch.to_string(),
                }),
            );
        }
    }
    m.insert("threads".into(), json!(o.threads));
    if let Some(t) = o.baseline_threads {
        m.insert("baseline_threads".into(), json!(t));
    }
    m.insert("runs".into(), json!(settings.runs));
    m.insert("freed_memory".into(), json!(if settings.memory_retained { "retained" } else { "returned" }));
    m.insert("outputs".into(), json!(if o.recycled_outputs { "recycled" } else { "fresh" }));
    if o.baseline_s.is_some() {
        m.insert("baseline_isa".into(), json!(super::baseline::instruction_set()));
        m.insert("baseline_pieces_per_thread".into(), json!(super::baseline::PIECES_PER_THREAD));
    }
    for (name, n) in &o.size {
        m.insert((*name).into(), json!(n));
    }
    Value::Object(m)
}

/// The one JSON object of `--json`, keyed by workload id.
pub fn json(settings: &Settings, outcomes: &[Outcome]) -> Value {
    Value::Object(outcomes.iter().map(|o| (o.id.name().to_string(), entry(settings, o))).collect())
}

/// The table's footer: the settings that change timings, and W1-W4 against the memory limit.
pub fn table_footer(settings: &Settings, outcomes: &[Outcome]) -> String {
    let mut out = format!(
        "freed memory {} to the system between calls (mallopt); outputs handed back with Function::recycle\n",
        if settings.memory_retained { "kept, not returned" } else { "returned" }
    );
    let limits: Vec<(f64, String)> = outcomes
        .iter()
        .filter_map(|o| {
            let b = bandwidth(o)?;
            Some((b, format!("{} {:.2}x", o.id.name(), o.ragtime_s / memory_limit_s(o, b)?)))
        })
        .collect();
    if !limits.is_empty() {
        let (low, high) = limits.iter().fold((f64::INFINITY, 0f64), |(l, h), &(b, _)| (l.min(b), h.max(b)));
        let ratios: Vec<&str> = limits.iter().map(|(_, r)| r.as_str()).collect();
        out += &format!(
            "memory limit (W2's loop moved {:.1}-{:.1} GB/s, timed beside each workload): {}\n",
            low / 1e9,
            high / 1e9,
            ratios.join(", ")
        );
    }
    out
}

/// Seconds in a readable unit.
pub fn seconds(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{s:.3} s"),
        s if s >= 1e-3 => format!("{:.2} ms", s * 1e3),
        s => format!("{:.2} µs", s * 1e6),
    }
}

/// The table's heading: the sizes, the runs, the threads, then the column names.
pub fn table_header(settings: &Settings) -> String {
    let mut out = format!(
        "ragtime bench: best of {} runs after a warm-up; baselines on {} thread(s)\n",
        settings.runs, settings.threads
    );
    out += &format!(
        "{:<18} {:>12} {:>12} {:>8} {:>10} {:>8}  {}\n",
        "workload", "ragtime", "baseline", "ratio", "1-thr ratio", "threads", "checked"
    );
    out
}

/// A line naming the inputs built since `before` (each family is built when the first workload
/// reading it runs); empty when there are none.
pub fn inputs_line(before: Sizes, now: Sizes) -> String {
    let new = |b: Option<(usize, usize)>, n: Option<(usize, usize)>| n.filter(|_| b != n);
    let mut parts = Vec::new();
    if let Some((rows, values)) = new(before.data, now.data) {
        parts.push(format!("{rows} rows, {values} values"));
    }
    if let Some((queries, words)) = new(before.queries, now.queries) {
        parts.push(format!("{queries} queries, {words} words"));
    }
    if let Some((users, events)) = new(before.sessions, now.sessions) {
        parts.push(format!("{users} users, {events} events"));
    }
    match parts.is_empty() {
        true => String::new(),
        false => format!("inputs: {}\n", parts.join("; ")),
    }
}

/// One line of the table.
pub fn table_line(o: &Outcome) -> String {
    let threads = match o.baseline_threads {
        Some(b) => format!("{}/{b}", o.threads),
        None => o.threads.to_string(),
    };
    match &o.check {
        Ok(against) => {
            let baseline = o.baseline_s.map_or_else(|| "-".to_string(), seconds);
            let ratio_to = |b: Option<f64>| b.map_or_else(|| "-".to_string(), |b| format!("{:.2}x", o.ragtime_s / b));
            let against: Vec<&str> = against.iter().map(|a| a.name()).collect();
            format!(
                "{:<18} {:>12} {:>12} {:>8} {:>10} {:>8}  yes ({})\n",
                o.id.name(),
                seconds(o.ragtime_s),
                baseline,
                ratio_to(o.baseline_s),
                ratio_to(o.single_thread_baseline_s),
                threads,
                against.join(", ")
            )
        }
        Err(m) => {
            format!("{:<18} {:>12} {:>12} {:>8} {:>10} {:>8}  NO: {m}\n", o.id.name(), "-", "-", "-", "-", threads)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::check::{Against, Mismatch};
    use crate::bench::WorkloadId;

    fn settings() -> Settings {
        Settings {
            only: WorkloadId::ALL.to_vec(),
            rows: 8,
            queries: 2,
            users: 1,
            runs: 3,
            threads: 2,
            memory_retained: false,
        }
    }

    #[test]
    fn the_inputs_line_names_only_the_families_built_since() {
        let none = Sizes { data: None, queries: None, sessions: None };
        let data = Sizes { data: Some((8, 80)), ..none };
        assert_eq!(inputs_line(none, data), "inputs: 8 rows, 80 values\n");
        assert_eq!(inputs_line(data, data), "", "nothing new");
        let both = Sizes { queries: Some((2, 9)), ..data };
        assert_eq!(inputs_line(data, both), "inputs: 2 queries, 9 words\n");
        assert_eq!(inputs_line(both, none), "", "dropped families are not named");
    }

    #[test]
    fn a_checked_entry_has_times_and_a_ratio() {
        let o = Outcome {
            id: WorkloadId::Axpy,
            ragtime_s: 0.02,
            baseline_s: Some(0.01),
            threads: 1,
            baseline_threads: Some(2),
            single_thread_baseline_s: Some(0.04),
            check: Ok(vec![Against::Baseline, Against::Interpreter]),
            size: vec![("rows", 8), ("values", 1_000_000)],
            recycled_outputs: true,
            approx_baseline_s: None,
            bandwidth_probe_s: Some(0.01),
        };
        let v = json(&settings(), std::slice::from_ref(&o));
        let e = &v["W2_axpy"];
        assert_eq!(e["checked"], true);
        assert_eq!(e["ratio"], 2.0);
        assert_eq!(e["threads"], 1);
        assert_eq!(e["baseline_threads"], 2);
        assert_eq!(e["single_thread_baseline_s"], 0.04);
        assert_eq!(e["single_thread_ratio"], 0.5);
        assert_eq!(e["rows"], 8);
        assert_eq!(e["outputs"], "recycled");
        // W2's own loop sets the bandwidth: 12 MB in 10 ms, so W2's limit is its baseline's time.
        assert_eq!(e["memory_limit_s"], 0.01);
        assert_eq!(e["limit_ratio"], 2.0);
        assert_eq!(e["bandwidth_bytes_per_s"], 1.2e9);
        assert!(table_footer(&settings(), std::slice::from_ref(&o)).contains("W2_axpy 2.00x"));
        assert!(table_line(&o).contains("2.00x"), "{}", table_line(&o));
        assert!(table_line(&o).contains("0.50x"), "{}", table_line(&o));
    }

    #[test]
    fn a_failed_entry_names_the_index_and_reports_no_time() {
        let o = Outcome {
            id: WorkloadId::RowMean,
            ragtime_s: 0.001,
            baseline_s: Some(0.01),
            threads: 1,
            baseline_threads: Some(2),
            single_thread_baseline_s: None,
            check: Err(Mismatch {
                against: Against::Baseline,
                what: "values",
                index: 7,
                got: Some(1.0),
                want: Some(2.0),
            }),
            size: vec![],
            recycled_outputs: true,
            approx_baseline_s: None,
            bandwidth_probe_s: Some(0.01),
        };
        let e = entry(&settings(), &o);
        assert_eq!(e["checked"], false);
        assert_eq!(e["mismatch"]["index"], 7);
        assert!(e.get("ragtime_s").is_none() && e.get("ratio").is_none());
        assert!(table_line(&o).contains("NO: values differs from baseline at index 7"));
    }

    #[test]
    fn seconds_pick_a_unit() {
        assert_eq!(seconds(2.5), "2.500 s");
        assert_eq!(seconds(0.0125), "12.50 ms");
        assert_eq!(seconds(2.7e-6), "2.70 µs");
    }
}
