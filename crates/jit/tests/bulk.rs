//! The bulk (AVX2) `exp`, `tanh` and `sigmoid` give every value the bits of the JIT's own 128-bit
//! ones.

use ragtime_jit::{bulk, Jit, UnaryMath};

/// Every 4099th f32 bit pattern (all signs, binades, denormals, infinities and NaNs), a dense
/// sweep over the range where `exp` is finite and nonzero, and the edges of that range.
fn inputs() -> Vec<f32> {
    let mut x: Vec<f32> = (0..=u32::MAX / 4099).map(|k| f32::from_bits(k * 4099)).collect();
    x.extend((-110_000..=110_000).map(|k| k as f32 * 1e-3));
    for edge in [88.72283f32, 88.72284, 88.7229, 89.0, -87.33654, -87.3366, -103.972, -103.9721, -104.0, -104.1] {
        let b = edge.to_bits();
        x.extend((b - 8..=b + 8).map(f32::from_bits));
    }
    x.extend([0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN, f32::MIN_POSITIVE, f32::MAX, f32::MIN]);
    x
}

#[test]
fn bulk_exp_and_tanh_have_the_bits_of_the_jit_functions() {
    let x = inputs();
    let mut jit = Jit::new().unwrap();
    for op in [UnaryMath::Exp, UnaryMath::Tanh, UnaryMath::Sigmoid] {
        let f = jit.compile_unary::<f32>(op, true).unwrap();
        let mut expected = vec![0f32; x.len()];
        f.run(&[&x], &mut expected).unwrap();
        // Lengths that leave every tail size (0 to 7 values past the last whole vector).
        for len in [x.len(), x.len() - 1, x.len() - 3, x.len() - 7, 13, 8, 5, 1, 0] {
            let mut got = x[..len].to_vec();
            if !bulk::unary_f32_in_place(op, &mut got) {
                assert_eq!(got, x[..len], "without the bulk path the data must be left alone");
                eprintln!("this CPU has no AVX2 + FMA: the bulk path is not used here");
                return;
            }
            for (i, (g, e)) in got.iter().zip(&expected[..len]).enumerate() {
                assert_eq!(
                    g.to_bits(),
                    e.to_bits(),
                    "{}({:e}) (bits {:#010x}), value {i} of {len}: bulk gives {g:e}, the JIT's {e:e}",
                    op.name(),
                    x[i],
                    x[i].to_bits()
                );
            }
        }
    }
    let mut log = vec![1.0f32];
    assert!(!bulk::unary_f32_in_place(UnaryMath::Log, &mut log), "log has no bulk path");
    assert_eq!(log, [1.0], "a function without a bulk path leaves the data alone");
}

#[test]
fn bulk_exp_of_a_difference_has_the_bits_of_the_jit_exp_of_the_difference() {
    let x = inputs();
    // Each value against a shifted copy (so NaNs, infinities and zeros meet every kind of
    // value on either side) and against typical row maxima.
    let y: Vec<f32> = x.iter().cycle().skip(12_345).take(x.len()).copied().collect();
    let z: Vec<f32> = (0..x.len()).map(|i| [0.0f32, -0.0, 2.5, -7.0, f32::INFINITY][i % 5]).collect();
    let mut jit = Jit::new().unwrap();
    let exp = jit.compile_unary::<f32>(UnaryMath::Exp, true).unwrap();
    for b in [&y, &z] {
        let difference: Vec<f32> = x.iter().zip(b.iter()).map(|(p, q)| p - q).collect();
        let mut expected = vec![0f32; x.len()];
        exp.run(&[&difference], &mut expected).unwrap();
        for len in [x.len(), x.len() - 5, 7, 0] {
            let mut got = vec![0f32; len];
            if !bulk::exp_sub_f32_into(&x[..len], &b[..len], &mut got) {
                assert!(got.iter().all(|&v| v == 0.0), "without the bulk path the output must be left alone");
                eprintln!("this CPU has no AVX2 + FMA: the bulk path is not used here");
                return;
            }
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert!(
                    g.to_bits() == e.to_bits(),
                    "exp({:e} - {:e}), value {i} of {len}: bulk gives {g:e} ({:#010x}), the JIT's exp {e:e} ({:#010x})",
                    x[i],
                    b[i],
                    g.to_bits(),
                    e.to_bits()
                );
            }
        }
    }
}
