//! The `ragtime` binary: the command line of `ragtime_cli::command`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ragtime_cli::command::main_with_args(std::env::args_os())
}
