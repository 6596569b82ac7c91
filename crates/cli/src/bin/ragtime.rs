//! The `ragtime` binary: the command line of `ragtime_cli::command`.
#![forbid(unsafe_code)]

/// Counts allocated bytes for `ragtime bench --json` (`ragtime_cli::bench::memory`).
#[global_allocator]
static ALLOCATOR: ragtime_cli::bench::memory::CountingAllocator = ragtime_cli::bench::memory::CountingAllocator;

fn main() -> std::process::ExitCode {
    ragtime_cli::command::main_with_args(std::env::args_os())
}
