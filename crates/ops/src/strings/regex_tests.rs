//! Unit tests of the regular expression ops.

use ragtime_core::limits::Limits;
use ragtime_core::RaggedTensor;
use ragtime_core::{ragged, ErrorKind, ExecContext};
use ragtime_graph::Op;

use crate::strings::regexp::{RegexFullMatch, RegexReplace};

fn texts(x: &RaggedTensor) -> Vec<String> {
    x.flat_values().as_strings().unwrap().iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}

#[test]
fn rewrites_use_backslash_groups_and_keep_dollars() {
    let x = ragged![["ab cd", "x"]].unwrap();
    let op = RegexReplace::new("([a-z]+) ([a-z]+)", r"\2-\1 \\ $1", true).unwrap();
    assert_eq!(
        texts(&op.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x)).unwrap()[0]),
        ["cd-ab \\ $1", "x"]
    );
    let first = RegexReplace::new("[a-z]", "_", false).unwrap();
    assert_eq!(
        texts(&first.perform(&ExecContext::new(Limits::untrusted()), std::slice::from_ref(&x)).unwrap()[0]),
        ["_b cd", "_"]
    );
    assert_eq!(RegexReplace::new("(a)", r"\2", true).unwrap_err().kind(), ErrorKind::InvalidValue);
    assert_eq!(RegexReplace::new("(?=a)", "x", true).unwrap_err().kind(), ErrorKind::InvalidValue);
    let full = RegexFullMatch::new("a|ab").unwrap();
    let y = full.perform(&ExecContext::new(Limits::untrusted()), &[ragged![["ab", "abc"]].unwrap()]).unwrap().remove(0);
    assert_eq!(y.flat_slice::<bool>(), Some(&[true, false][..]), "alternatives are anchored as a group");
}
