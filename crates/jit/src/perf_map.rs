//! Symbol maps for profilers: with `RAGTIME_PERF_MAP=1`, every compiled kernel's address range and
//! name is appended to `/tmp/perf-<pid>.map`, the file Linux `perf report` reads to name JIT code.

use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The open map file, when profiling is asked for (`None` otherwise, or if the file can't be made).
fn map_file() -> &'static Mutex<Option<std::fs::File>> {
    static FILE: OnceLock<Mutex<Option<std::fs::File>>> = OnceLock::new();
    FILE.get_or_init(|| {
        let wanted = std::env::var_os("RAGTIME_PERF_MAP").is_some_and(|v| v != "0" && !v.is_empty());
        let file = wanted
            .then(|| {
                let path = std::env::temp_dir().join(format!("perf-{}.map", std::process::id()));
                std::fs::OpenOptions::new().create(true).append(true).open(path).ok()
            })
            .flatten();
        Mutex::new(file)
    })
}

/// Records that `size` bytes of machine code at `code` are the kernel `name`. Profiling output
/// is best effort: a failed write is ignored rather than failing the compilation.
pub(crate) fn record(code: *const u8, size: u32, name: &str) {
    let mut guard = map_file().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(file) = guard.as_mut() {
        let _ = writeln!(file, "{:x} {:x} {name}", code as usize, size);
    }
}
