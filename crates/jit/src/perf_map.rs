//! Symbol maps for profilers: with `RAGTIME_PERF_MAP=1`, every compiled kernel's address range and
//! name is appended to `/tmp/perf-<pid>.map`, the file Linux `perf report` reads to name JIT code,
//! and its machine code is written to `/tmp/perf-<pid>-<name>.bin`, so samples can be matched to
//! instructions (`objdump -D -b binary -m i386:x86-64 --adjust-vma=<address>`).

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

/// Writes a kernel's machine code next to the map, when profiling is asked for (best effort).
pub(crate) fn dump_code(name: &str, code: &[u8]) {
    if map_file().lock().unwrap_or_else(|e| e.into_inner()).is_some() {
        let path = std::env::temp_dir().join(format!("perf-{}-{name}.bin", std::process::id()));
        let _ = std::fs::write(path, code);
    }
}

/// Records that `size` bytes of machine code at `code` are the kernel `name`. Profiling output
/// is best effort: a failed write is ignored rather than failing the compilation.
pub(crate) fn record(code: *const u8, size: u32, name: &str) {
    let mut guard = map_file().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(file) = guard.as_mut() {
        let _ = writeln!(file, "{:x} {:x} {name}", code as usize, size);
    }
}
