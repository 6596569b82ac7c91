//! Output checks: float32 values within the conformance tolerance (`|got - want| <= 1e-6 + 1e-5 * |want|`,
//! NaN equal to NaN), ragged outputs with equal row splits; a failure names the first differing index.

use std::fmt;

use ragtime::RaggedTensor;

/// What a check compared the output with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Against {
    /// The same-run baseline loop.
    Baseline,
    /// The same graph compiled with `Mode::FastCompile` (the reference interpreter).
    Interpreter,
    /// Values computed by hand in the check itself (W5, W6).
    Expected,
    /// The baseline loop with a vectorized approximation of `tanh` / `exp` (W1, W4).
    ApproxBaseline,
}

impl Against {
    /// The JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Against::Baseline => "baseline",
            Against::Interpreter => "fast_compile",
            Against::Expected => "expected",
            Against::ApproxBaseline => "approx_baseline",
        }
    }
}

/// The first difference a check found.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// What the output was compared with.
    pub against: Against,
    /// What differed: `values`, `length`, `row_splits`, `dtype` or `shape`.
    pub what: &'static str,
    /// The first differing flat index (of the values, or of the row splits).
    pub index: usize,
    /// ragtime's value there (`None` past the end).
    pub got: Option<f64>,
    /// The reference value there (`None` past the end).
    pub want: Option<f64>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |v: Option<f64>| v.map_or_else(|| "nothing".to_string(), |v| v.to_string());
        write!(
            f,
            "{} differs from {} at index {}: ragtime {}, {} {}",
            self.what,
            self.against.name(),
            self.index,
            show(self.got),
            self.against.name(),
            show(self.want)
        )
    }
}

/// True when `got` is within the conformance tolerance of `want` (NaN equals NaN).
pub fn close(got: f32, want: f32) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == want {
        return true; // infinities of one sign
    }
    if got.is_infinite() || want.is_infinite() {
        return false; // an infinite tolerance would accept anything
    }
    ((got as f64) - (want as f64)).abs() <= 1e-6 + 1e-5 * (want as f64).abs()
}

/// Compares two float32 buffers element by element.
pub fn values(against: Against, got: &[f32], want: &[f32]) -> Result<(), Mismatch> {
    if let Some(index) = got.iter().zip(want).position(|(&g, &w)| !close(g, w)) {
        return Err(Mismatch {
            against,
            what: "values",
            index,
            got: Some(got[index] as f64),
            want: Some(want[index] as f64),
        });
    }
    if got.len() != want.len() {
        let index = got.len().min(want.len());
        return Err(Mismatch {
            against,
            what: "length",
            index,
            got: got.get(index).map(|&v| v as f64),
            want: want.get(index).map(|&v| v as f64),
        });
    }
    Ok(())
}

/// Compares two row-split vectors exactly.
pub fn splits(against: Against, got: &[i64], want: &[i64]) -> Result<(), Mismatch> {
    let differs = got.iter().zip(want).position(|(g, w)| g != w);
    let index = match differs {
        Some(i) => i,
        None if got.len() == want.len() => return Ok(()),
        None => got.len().min(want.len()),
    };
    Err(Mismatch {
        against,
        what: "row_splits",
        index,
        got: got.get(index).map(|&v| v as f64),
        want: want.get(index).map(|&v| v as f64),
    })
}

/// The float32 values of an output, or a mismatch saying it is not float32.
pub fn float_values(against: Against, t: &RaggedTensor) -> Result<&[f32], Mismatch> {
    t.flat_slice::<f32>().ok_or(Mismatch { against, what: "dtype", index: 0, got: None, want: None })
}

/// Compares two tensors: the same shape, nested row splits and float32 values within tolerance.
pub fn tensors(against: Against, got: &RaggedTensor, want: &RaggedTensor) -> Result<(), Mismatch> {
    let (gs, ws) = (got.nested_row_splits(), want.nested_row_splits());
    if gs.len() != ws.len() || got.flat_values().shape() != want.flat_values().shape() {
        return Err(Mismatch { against, what: "shape", index: 0, got: None, want: None });
    }
    for (g, w) in gs.iter().zip(&ws) {
        splits(against, g, w)?;
    }
    values(against, float_values(against, got)?, float_values(against, want)?)
}

/// The checks of a row workload's float output once its shape and splits are checked: its values
/// against the baseline's (`baseline`), the whole result against the interpreter's (`want`), and,
/// when an approximation baseline ran, that baseline's values against the exact one's. Returns
/// what the output was checked against.
pub fn row_output(
    out: &RaggedTensor,
    baseline: &[f32],
    want: &RaggedTensor,
    approx_baseline: Option<&[f32]>,
) -> Result<Vec<Against>, Mismatch> {
    values(Against::Baseline, float_values(Against::Baseline, out)?, baseline)?;
    tensors(Against::Interpreter, out, want)?;
    match approx_baseline {
        Some(approx) => {
            values(Against::ApproxBaseline, approx, baseline)?;
            Ok(vec![Against::Baseline, Against::ApproxBaseline, Against::Interpreter])
        }
        None => Ok(vec![Against::Baseline, Against::Interpreter]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_is_the_conformance_one() {
        assert!(close(1.0, 1.0 + 1e-5));
        assert!(!close(1.0, 1.0 + 1e-4));
        assert!(close(0.0, 1e-6));
        assert!(!close(0.0, 3e-6));
        assert!(close(f32::NAN, f32::NAN));
        assert!(!close(f32::NAN, 0.0));
        assert!(close(f32::INFINITY, f32::INFINITY));
        assert!(!close(f32::INFINITY, f32::NEG_INFINITY));
    }

    #[test]
    fn the_first_differing_index_is_named() {
        let m = values(Against::Baseline, &[1.0, 2.0, 3.0, 5.0], &[1.0, 2.0, 4.0, 6.0]).unwrap_err();
        assert_eq!((m.what, m.index, m.got, m.want), ("values", 2, Some(3.0), Some(4.0)));
        assert_eq!(m.to_string(), "values differs from baseline at index 2: ragtime 3, baseline 4");
        let m = values(Against::Interpreter, &[1.0], &[1.0, 2.0]).unwrap_err();
        assert_eq!((m.what, m.index, m.want), ("length", 1, Some(2.0)));
        let m = splits(Against::Baseline, &[0, 2, 3], &[0, 2, 4]).unwrap_err();
        assert_eq!((m.what, m.index), ("row_splits", 2));
        assert!(splits(Against::Baseline, &[0, 1], &[0, 1]).is_ok());
    }
}
