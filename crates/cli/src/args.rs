//! Command-line settings shared by the subcommands: the limits calls run under (`--limits`,
//! `--memory-budget`) and the byte sizes they are written in.

use clap::ValueEnum;
use ragtime::Limits;

/// `--limits` and `--memory-budget`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct LimitsArgs {
    /// The limits each call runs under: `untrusted` (1 GiB per buffer, 2^31 elements, 2^27
    /// values per partition, 4 GiB per call; the default of `run` and `conformance`, whose graph
    /// files are untrusted input) or `trusted` (bounded by the machine's memory; the default of
    /// `bench`, which builds its graphs itself).
    #[arg(long = "limits", value_enum, value_name = "PRESET")]
    pub preset: Option<Preset>,
    /// The per-call memory budget in bytes, with an optional K, M or G suffix (powers of 1024),
    /// e.g. `--memory-budget 8G`; overrides the preset's.
    #[arg(long, value_name = "BYTES", value_parser = byte_size)]
    pub memory_budget: Option<usize>,
}

/// A preset of [`Limits`].
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// [`Limits::untrusted`].
    Untrusted,
    /// [`Limits::trusted`].
    Trusted,
}

impl LimitsArgs {
    /// The limits asked for, `default` when no preset is named.
    pub fn limits(&self, default: Preset) -> Limits {
        let limits = match self.preset.unwrap_or(default) {
            Preset::Untrusted => Limits::untrusted(),
            Preset::Trusted => Limits::trusted(),
        };
        match self.memory_budget {
            Some(bytes) => limits.with_call_budget(bytes),
            None => limits,
        }
    }
}

/// A byte count: digits with an optional `K`, `M` or `G` suffix (powers of 1024, case-insensitive,
/// an optional trailing `B` or `iB`).
pub fn byte_size(text: &str) -> Result<usize, String> {
    let bad = || format!("expected a byte count such as 512M or 8G, got `{text}`");
    let upper = text.trim().to_ascii_uppercase();
    let number = upper.strip_suffix("IB").or_else(|| upper.strip_suffix('B')).unwrap_or(&upper);
    let (digits, shift) = match number.chars().last() {
        Some('K') => (&number[..number.len() - 1], 10),
        Some('M') => (&number[..number.len() - 1], 20),
        Some('G') => (&number[..number.len() - 1], 30),
        _ => (number, 0),
    };
    let n: usize = digits.parse().map_err(|_| bad())?;
    n.checked_mul(1 << shift).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes_take_binary_suffixes() {
        assert_eq!(byte_size("1024"), Ok(1024));
        assert_eq!(byte_size("4K"), Ok(4096));
        assert_eq!(byte_size("512m"), Ok(512 << 20));
        assert_eq!(byte_size("8G"), Ok(8 << 30));
        assert_eq!(byte_size("2GiB"), Ok(2 << 30));
        assert!(byte_size("").is_err());
        assert!(byte_size("G").is_err());
        assert!(byte_size("-1").is_err());
        assert!(byte_size("99999999999999999999G").is_err());
    }

    #[test]
    fn presets_and_budgets_combine() {
        let args = LimitsArgs { preset: None, memory_budget: Some(1 << 20) };
        assert_eq!(args.limits(Preset::Untrusted), Limits::untrusted().with_call_budget(1 << 20));
        let trusted = LimitsArgs { preset: Some(Preset::Trusted), memory_budget: None };
        assert_eq!(trusted.limits(Preset::Untrusted), Limits::trusted());
    }
}
