//! The conformance comparison: equal types and structure, exact integers, booleans and strings,
//! floats within TensorFlow's test tolerances. Shared by the conformance runner, `Mode::Debug`'s
//! check of JIT kernels and the benchmarks.

use crate::{dispatch_dtype, DType, RaggedTensor};

/// Compares a result with an expected value by the conformance rules: same dtype, ragged rank,
/// partitions and flat shape; integers, booleans and strings exact; floats within
/// `1e-6 + 1e-5·|want|` (float32) or `1e-12 + 1e-9·|want|` (float64), NaN equal to NaN.
pub fn compare(want: &RaggedTensor, got: &RaggedTensor) -> std::result::Result<(), String> {
    if want.dtype() != got.dtype() {
        return Err(format!("dtype {} (expected {})", got.dtype(), want.dtype()));
    }
    if want.ragged_rank() != got.ragged_rank() {
        return Err(format!("ragged rank {} (expected {})", got.ragged_rank(), want.ragged_rank()));
    }
    if want.flat_values().shape() != got.flat_values().shape() {
        return Err(format!(
            "flat values of shape {:?} (expected {:?})",
            got.flat_values().shape(),
            want.flat_values().shape()
        ));
    }
    for (k, (a, b)) in want.partitions().iter().zip(got.partitions()).enumerate() {
        if !a.same(b) {
            return Err(format!(
                "row splits of ragged dim {} are {:?} (expected {:?})",
                k + 1,
                b.row_splits(),
                a.row_splits()
            ));
        }
    }
    let (w, g) = (want.flat_values(), got.flat_values());
    match want.dtype() {
        DType::F32 | DType::F64 => {
            let (wv, gv): (Vec<f64>, Vec<f64>) = match want.dtype() {
                DType::F32 => (
                    w.as_slice::<f32>().unwrap_or(&[]).iter().map(|&x| x as f64).collect(),
                    g.as_slice::<f32>().unwrap_or(&[]).iter().map(|&x| x as f64).collect(),
                ),
                _ => (w.as_slice::<f64>().unwrap_or(&[]).to_vec(), g.as_slice::<f64>().unwrap_or(&[]).to_vec()),
            };
            let (abs, rel) = if want.dtype() == DType::F32 { (1e-6, 1e-5) } else { (1e-12, 1e-9) };
            for (i, (&x, &y)) in wv.iter().zip(&gv).enumerate() {
                let ok = if x.is_nan() || y.is_nan() {
                    x.is_nan() && y.is_nan()
                } else if x.is_infinite() || y.is_infinite() {
                    x == y
                } else {
                    (x - y).abs() <= abs + rel * x.abs()
                };
                if !ok {
                    return Err(format!("flat value {i} is {y} (expected {x})"));
                }
            }
            Ok(())
        }
        _ => {
            // Exact comparison: report the first differing flat value.
            let first_difference: Option<(usize, String, String)> = dispatch_dtype!(want.dtype(),
            T => {
                let (a, b) = (w.as_slice::<T>().unwrap_or(&[]), g.as_slice::<T>().unwrap_or(&[]));
                a.iter().zip(b).position(|(x, y)| x != y).map(|i| (i, b[i].to_string(), a[i].to_string()))
            },
            string => {
                let (a, b) = (w.as_strings(), g.as_strings());
                let (a, b) = (a.map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default(), b.map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default());
                a.iter().zip(&b).position(|(x, y)| x != y).map(|i| (i, format!("{:?}", b[i].escape_ascii().to_string()), format!("{:?}", a[i].escape_ascii().to_string())))
            });
            match first_difference {
                None => Ok(()),
                Some((i, got, want)) => Err(format!("flat value {i} is {got} (expected {want})")),
            }
        }
    }
}
