//! Errors where the mistake is made: an op that cannot be built records the place in the user's
//! code that built it (every DSL method, operator and free function is `#[track_caller]`),
//! `Var::check` reports it at once, and `compile()` reports every problem among its outputs.

use ragtime::ops::{self, strings};
use ragtime::prelude::*;

/// Builds `$e` and gives it with the line it was built on (`line!()` in a macro names the line
/// of the macro's call).
macro_rules! at_line {
    ($e:expr) => {
        ($e, line!())
    };
}

struct Inputs {
    g: Graph,
    i: Var,
    f: Var,
    s: Var,
}

fn inputs() -> Inputs {
    let g = Graph::new();
    let i = g.input("i", TensorType::ragged(DType::I32, 1));
    let f = g.input("f", TensorType::ragged(DType::F32, 1));
    let s = g.input("s", TensorType::ragged(DType::String, 1));
    Inputs { g, i, f, s }
}

#[test]
fn every_kind_of_dsl_call_reports_the_callers_line() {
    let Inputs { g, i, f, s } = inputs();
    let other = Graph::new().input("o", TensorType::ragged(DType::I32, 1));
    let cases: Vec<(&str, (Var, u32))> = vec![
        ("operator +", at_line!(&i + &f)),
        ("operator on owned vars", at_line!(i.clone() * f.clone())),
        ("method", at_line!(i.add(&s))),
        ("free function", at_line!(ops::subtract(&i, &s))),
        ("scalar that does not fit", at_line!(&i + 2.5)),
        ("scalar on the left", at_line!(2.5 * &i)),
        ("negation", at_line!(-&s)),
        ("not", at_line!(!&f)),
        ("reduction", at_line!(s.reduce_sum(1))),
        ("reduction axis", at_line!(i.reduce_mean(5))),
        ("index", at_line!(i.get(s![.., 0]))),
        ("index text", at_line!(i.getitem(":, x"))),
        ("concat", at_line!(ops::concat(&[&i, &f], 0))),
        ("concat of nothing", at_line!(ops::concat(&[], 0))),
        ("add_n of nothing", at_line!(ops::add_n(&[]))),
        ("string op", at_line!(strings::length(&i))),
        ("string method", at_line!(i.split(None))),
        ("row op", at_line!(s.softmax())),
        ("top_k", at_line!(ops::top_k(&s.reduce_sum(1), 2).0)),
        ("cumsum axis", at_line!(i.cumsum(3))),
        ("gather", at_line!(i.gather(&f))),
        ("where", at_line!(ops::where_(&i, &i, &i))),
        (
            "input over the rank limit",
            at_line!(g.input("deep", TensorType::ragged(DType::F32, ragtime::limits::MAX_RANK))),
        ),
        ("input of another graph", at_line!(&i + &other)),
    ];
    for (what, (var, line)) in cases {
        let e = var.check().expect_err(what);
        let at = e.location().unwrap_or_else(|| panic!("{what}: the error has no location: {e}"));
        assert_eq!((at.file(), at.line()), (file!(), line), "{what}: {e}");
        assert!(e.to_string().ends_with(&format!("(built at {at})")), "{what}: {e}");
    }
}

#[test]
fn an_error_keeps_where_it_was_made_through_later_ops() {
    let Inputs { i, f, .. } = inputs();
    let (bad, line) = at_line!(&i + &f);
    let later = (bad.tanh() * 2).reduce_sum(1);
    let e = later.check().unwrap_err();
    assert_eq!(e.location().map(|l| l.line()), Some(line), "{e}");
    assert_eq!(e, bad.check().unwrap_err(), "later ops pass the first error on unchanged");
    assert_eq!(e.kind(), ragtime::ErrorKind::TypeMismatch);
}

#[test]
fn check_accepts_good_variables() {
    let Inputs { i, f, .. } = inputs();
    let good = (&f * 2.0).reduce_mean(keepdims(1));
    assert!(good.check().is_ok());
    assert!(i.check().is_ok());
}

#[test]
fn compile_reports_every_problem() {
    let Inputs { i, f, s, .. } = inputs();
    let (first, first_line) = at_line!(&i + &f);
    let (second, second_line) = at_line!(s.reduce_mean(1));
    // The first mistake, reached twice, is reported once.
    let again = first.abs();
    let e = compile(&[&i, &f, &s], &[&first, &second, &again]).unwrap_err();
    let lines: Vec<u32> = e.errors().iter().map(|e| e.location().expect("located").line()).collect();
    assert_eq!(lines, [first_line, second_line], "{e}");
    assert!(e.to_string().starts_with("2 errors:\n  1. "), "{e}");
    // An op over two broken operands passes both on.
    let both = &first + &second;
    assert_eq!(both.check().unwrap_err().errors().len(), 2);
    // One problem alone is reported as itself.
    let one = compile(&[&i, &f], &[&first]).unwrap_err();
    assert_eq!(one, first.check().unwrap_err());
}
