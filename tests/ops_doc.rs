//! `docs/ops.md` stays true to the registry: every op in `ragtime_ops::registry::OP_NAMES` has a row
//! (its name in backticks in a "Graph op" column), no row names an op the registry lacks, and the
//! counts line at the top is what the tables hold.

use std::collections::BTreeSet;

use ragtime_ops::registry::OP_NAMES;

const DOC_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ops.md");

/// The statuses a row of TensorFlow's list may have.
const TF_STATUSES: [&str; 3] = ["supported", "partly", "not planned"];

/// One table row of `docs/ops.md`, split into its cells.
struct Row {
    /// The first column, for messages.
    first_cell: String,
    /// The ops named in backticks in the "Graph op" column.
    graph_ops: Vec<String>,
    /// The status column.
    status: String,
}

/// The two tables: TensorFlow's list (6 columns, graph op third, status fifth) and ragtime's extras
/// (4 columns, graph op first, status last).
fn table_rows(doc: &str) -> (Vec<Row>, Vec<Row>) {
    let mut tf_rows = Vec::new();
    let mut extra_rows = Vec::new();
    for line in doc.lines().map(str::trim) {
        if !line.starts_with('|') || line.starts_with("|---") {
            continue;
        }
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        if cells[0] == "TensorFlow op" || cells[0] == "Graph op" {
            continue;
        }
        let (graph_cell, status_cell, rows) = match cells.len() {
            6 => (cells[2], cells[4], &mut tf_rows),
            4 => (cells[0], cells[3], &mut extra_rows),
            n => panic!("docs/ops.md: a table row has {n} cells, expected 6 or 4: {line}"),
        };
        rows.push(Row {
            first_cell: cells[0].to_string(),
            graph_ops: backticked(graph_cell),
            status: status_cell.to_string(),
        });
    }
    (tf_rows, extra_rows)
}

/// The names written in backticks in `cell`.
fn backticked(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_string).collect()
}

/// The four numbers of the line `Counts: A supported, B partly, C not planned, D extra.`.
fn counts_line(doc: &str) -> [usize; 4] {
    let line =
        doc.lines().find(|l| l.starts_with("Counts: ")).expect("docs/ops.md has a line starting with `Counts: `");
    let mut numbers = [0usize; 4];
    let parts: Vec<&str> = line.trim_start_matches("Counts: ").trim_end_matches('.').split(", ").collect();
    let labels = ["supported", "partly", "not planned", "extra"];
    assert_eq!(parts.len(), 4, "the counts line names {labels:?} in that order: {line}");
    for ((part, label), slot) in parts.iter().zip(labels).zip(&mut numbers) {
        let (number, part_label) = part.split_once(' ').unwrap_or((part, ""));
        assert_eq!(part_label, label, "the counts line names {labels:?} in that order: {line}");
        *slot = number.parse().unwrap_or_else(|_| panic!("`{number}` in the counts line is not a count: {line}"));
    }
    numbers
}

#[test]
fn every_registry_op_has_a_row_and_no_row_names_an_unknown_op() {
    let doc = std::fs::read_to_string(DOC_PATH).expect("docs/ops.md exists");
    let (tf_rows, extra_rows) = table_rows(&doc);
    let documented: BTreeSet<&str> =
        tf_rows.iter().chain(&extra_rows).flat_map(|r| r.graph_ops.iter().map(String::as_str)).collect();
    let missing: Vec<&str> = OP_NAMES.iter().copied().filter(|op| !documented.contains(op)).collect();
    assert!(
        missing.is_empty(),
        "registry ops missing from the \"Graph op\" columns of docs/ops.md (add a row for each): {missing:?}"
    );
    let unknown: Vec<&str> = documented.iter().copied().filter(|op| !OP_NAMES.contains(op)).collect();
    assert!(unknown.is_empty(), "docs/ops.md names graph ops the registry does not have: {unknown:?}");
    let repeated: Vec<&str> = extra_rows
        .iter()
        .flat_map(|r| &r.graph_ops)
        .map(String::as_str)
        .filter(|op| tf_rows.iter().any(|r| r.graph_ops.iter().any(|g| g == op)))
        .collect();
    assert!(
        repeated.is_empty(),
        "ops listed beyond TensorFlow's list that a TensorFlow row already names: {repeated:?}"
    );
}

#[test]
fn counts_line_matches_the_tables() {
    let doc = std::fs::read_to_string(DOC_PATH).expect("docs/ops.md exists");
    let (tf_rows, extra_rows) = table_rows(&doc);
    for row in &tf_rows {
        assert!(
            TF_STATUSES.contains(&row.status.as_str()),
            "row {}: status `{}` is not one of {TF_STATUSES:?}",
            row.first_cell,
            row.status
        );
    }
    for row in &extra_rows {
        assert_eq!(row.status, "extra", "row {}: ops beyond TensorFlow's list have status `extra`", row.first_cell);
    }
    let count = |status: &str| tf_rows.iter().filter(|r| r.status == status).count();
    let counted = [count("supported"), count("partly"), count("not planned"), extra_rows.len()];
    assert_eq!(
        counts_line(&doc),
        counted,
        "the counts line of docs/ops.md (supported, partly, not planned, extra) disagrees with its tables"
    );
}
