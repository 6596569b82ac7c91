use ragtime_jit::{Jit, UnaryMath};

#[test]
fn smoke() {
    let mut jit = Jit::new().unwrap();
    for op in UnaryMath::ALL {
        for v in [true, false] {
            let k = jit.compile_unary::<f32>(op, v).unwrap();
            let x: Vec<f32> = (0..9).map(|i| i as f32 * 0.37 - 1.0).collect();
            let mut y = vec![0.0f32; 9];
            k.run(&[&x], &mut y).unwrap();
            println!("{op:?} {v} {y:?}");
            let k = jit.compile_unary::<f64>(op, v).unwrap();
            let x: Vec<f64> = (0..9).map(|i| i as f64 * 0.37 - 1.0).collect();
            let mut y = vec![0.0f64; 9];
            k.run(&[&x], &mut y).unwrap();
            println!("{op:?} {v} {y:?}");
        }
    }
    let k = jit.compile_pow::<f32>(true).unwrap();
    let x = [2.0f32, -2.0, 0.5, 3.0, 10.0];
    let y = [3.0f32, 3.0, 2.0, 0.5, -2.0];
    let mut o = [0.0f32; 5];
    k.run(&[&x, &y], &mut o).unwrap();
    println!("{o:?}");
    let k = jit.compile_pow::<f64>(true).unwrap();
    let x = [2.0f64, -2.0, 0.5, 3.0, 10.0];
    let y = [3.0f64, 3.0, 2.0, 0.5, -2.0];
    let mut o = [0.0f64; 5];
    k.run(&[&x, &y], &mut o).unwrap();
    println!("{o:?}");
}
