//! `docs/graph-files.md` stays true to the registry: its op table is exactly what
//! `ragtime_ops::registry::op_attributes` gives for every op of `OP_NAMES` (`RAGTIME_BLESS=1`
//! rewrites it), and every attribute in it is explained in the attributes table.

use std::collections::BTreeSet;

use ragtime_ops::registry::{op_attributes, OP_NAMES};

const DOC_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/graph-files.md");
const BEGIN: &str = "<!-- ops: generated from the registry by tests/graph_files_doc.rs -->\n";
const END: &str = "<!-- end ops -->";

/// The op table as the registry says it should be, and every attribute it names.
fn generated_table() -> (String, BTreeSet<String>) {
    let mut table = String::from("| op | attributes |\n| --- | --- |\n");
    let mut all = BTreeSet::new();
    let mut names: Vec<&str> = OP_NAMES.to_vec();
    names.sort_unstable();
    for op in names {
        let attrs = op_attributes(op).unwrap_or_else(|e| panic!("the registry cannot list {op}'s attributes: {e}"));
        let cell = if attrs.is_empty() {
            "none".to_string()
        } else {
            attrs.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ")
        };
        table.push_str(&format!("| `{op}` | {cell} |\n"));
        all.extend(attrs);
    }
    (table, all)
}

#[test]
fn the_op_table_is_the_registrys_and_every_attribute_is_explained() {
    let doc = std::fs::read_to_string(DOC_PATH).unwrap();
    let (table, attributes) = generated_table();
    let start = doc.find(BEGIN).expect("docs/graph-files.md has the generated section's start marker") + BEGIN.len();
    let end = doc[start..].find(END).expect("docs/graph-files.md has the end marker") + start;
    if std::env::var_os("RAGTIME_BLESS").is_some() {
        std::fs::write(DOC_PATH, format!("{}{table}{}", &doc[..start], &doc[end..])).unwrap();
        return;
    }
    assert_eq!(
        &doc[start..end],
        table,
        "the op table of docs/graph-files.md differs from the registry: run `RAGTIME_BLESS=1 cargo test --test \
         graph_files_doc` and explain any new attribute"
    );
    let explained: BTreeSet<String> = doc[end..]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .flat_map(|l| {
            let first = l.trim_start_matches('|').split(" | ").next().unwrap_or_default();
            first.split(", ").map(|a| a.trim().trim_matches('`').to_string()).collect::<Vec<_>>()
        })
        .collect();
    let missing: Vec<&String> = attributes.difference(&explained).collect();
    assert!(missing.is_empty(), "attributes with no row in the attributes table of docs/graph-files.md: {missing:?}");
    let stale: Vec<&String> = explained.difference(&attributes).collect();
    assert!(stale.is_empty(), "the attributes table explains attributes no op has: {stale:?}");
}
