//! The `ragtime` console script of the Python package: the Rust command line (`ragtime_cli`), run in
//! this process with the GIL released.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use pyo3::prelude::*;

/// Runs the `ragtime` command line on `args` (the arguments after the program name) and gives its
/// exit status: 0 on success, 1 when a case fails or a file cannot be run, 2 on bad usage.
#[pyfunction]
pub fn cli_main(py: Python<'_>, args: Vec<OsString>) -> u8 {
    let code = py.detach(|| {
        let code = ragtime_cli::command::main_with_args(std::iter::once(OsString::from("ragtime")).chain(args));
        // A process that is not a Rust `main` does not flush Rust's stdout on exit.
        let _ = std::io::stdout().flush();
        code
    });
    exit_status(code)
}

/// The number behind an `ExitCode` (which offers only comparison).
fn exit_status(code: ExitCode) -> u8 {
    (0..=u8::MAX).find(|&n| ExitCode::from(n) == code).unwrap_or(1)
}
