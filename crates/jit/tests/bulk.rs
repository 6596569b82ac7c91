//! The bulk `exp`, `tanh` and `sigmoid`, AVX2 and AVX-512, give every value the bits of the JIT's
//! own 128-bit ones (and of `vmath`'s scalar functions, which the interpreter runs); the bulk
//! division those of IEEE division.

use ragtime_jit::bulk::{self, Isa};
use ragtime_jit::{Jit, UnaryMath};

/// The instruction sets this CPU runs, each tested.
fn isas() -> Vec<Isa> {
    let isas: Vec<Isa> = [Isa::Avx2, Isa::Avx512].into_iter().filter(|isa| isa.runs()).collect();
    if isas.len() < 2 {
        eprintln!("this CPU runs the bulk functions of {isas:?} only: the others are not tested here");
    }
    isas
}

/// Each instruction set this CPU runs with prefixes of `n` inputs: all of them, a few short of a
/// whole vector or two, and short buffers (masked or padded tails only).
fn isas_and_lengths(n: usize) -> Vec<(Isa, usize)> {
    isas().into_iter().flat_map(|isa| [n, n - 5, n - 13, 17, 7, 0].map(|len| (isa, len))).collect()
}

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
        let scalar: fn(f32) -> f32 = match op {
            UnaryMath::Exp => ragtime_vmath::plain::exp_f32,
            UnaryMath::Tanh => ragtime_vmath::plain::tanh_f32,
            _ => ragtime_vmath::plain::sigmoid_f32,
        };
        for (v, e) in x.iter().zip(&expected) {
            assert_eq!(scalar(*v).to_bits(), e.to_bits(), "{}({v:e}): scalar vmath against the JIT", op.name());
        }
        // Lengths that leave every tail size (0 to 15 values past the last whole vector).
        let mut lengths = vec![x.len(), x.len() - 1, x.len() - 3, x.len() - 7, x.len() - 9, x.len() - 15];
        lengths.extend(0..=33);
        for isa in isas() {
            for &len in &lengths {
                let mut got = x[..len].to_vec();
                assert!(bulk::unary_f32_in_place_on(isa, op, &mut got), "{isa:?} runs here");
                for (i, (g, e)) in got.iter().zip(&expected[..len]).enumerate() {
                    assert_eq!(
                        g.to_bits(),
                        e.to_bits(),
                        "{isa:?} {}({:e}) (bits {:#010x}), value {i} of {len}: bulk gives {g:e}, the JIT's {e:e}",
                        op.name(),
                        x[i],
                        x[i].to_bits()
                    );
                }
            }
        }
        let mut got = x[..100].to_vec();
        if !bulk::unary_f32_in_place(op, &mut got) {
            assert_eq!(got, x[..100], "without the bulk path the data must be left alone");
            eprintln!("this CPU has no AVX2 + FMA: the bulk path is not used here");
            return;
        }
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            expected[..100].iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
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
        let mut got = vec![0f32; 9];
        if !bulk::exp_sub_f32_into(&x[..9], &b[..9], &mut got) {
            assert!(got.iter().all(|&v| v == 0.0), "without the bulk path the output must be left alone");
            eprintln!("this CPU has no AVX2 + FMA: the bulk path is not used here");
            return;
        }
        for (isa, len) in isas_and_lengths(x.len()) {
            let mut got = vec![0f32; len];
            assert!(bulk::exp_sub_f32_into_on(isa, &x[..len], &b[..len], &mut got), "{isa:?} runs here");
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert!(
                    g.to_bits() == e.to_bits(),
                    "{isa:?} exp({:e} - {:e}), value {i} of {len}: bulk gives {g:e} ({:#010x}), the JIT's exp {e:e} ({:#010x})",
                    x[i],
                    b[i],
                    g.to_bits(),
                    e.to_bits()
                );
            }
        }
    }
}

#[test]
fn bulk_division_gives_every_quotient_the_bits_of_ieee_division() {
    let x = inputs();
    // Each value over a shifted copy (NaNs, infinities, zeros and denormals meet every kind of
    // value on either side) and over typical softmax sums.
    let y: Vec<f32> = x.iter().cycle().skip(54_321).take(x.len()).copied().collect();
    let z: Vec<f32> = (0..x.len()).map(|i| [1.0f32, 3.7, 10.25, -0.0, 1e-40][i % 5]).collect();
    for b in [&y, &z] {
        let expected: Vec<f32> = x.iter().zip(b.iter()).map(|(p, q)| p / q).collect();
        for (isa, len) in isas_and_lengths(x.len()) {
            let mut got = vec![0f32; len];
            assert!(bulk::div_f32_into_on(isa, &x[..len], &b[..len], &mut got), "{isa:?} runs here");
            for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
                assert!(
                    g.to_bits() == e.to_bits(),
                    "{isa:?} {:e} / {:e}, value {i} of {len}: bulk gives {g:e} ({:#010x}), IEEE division {e:e} ({:#010x})",
                    x[i],
                    b[i],
                    g.to_bits(),
                    e.to_bits()
                );
            }
        }
    }
}
