//! States and updates: values applied after a call, all or none, in place for an SGD step on a
//! large embedding table, shared between functions, serialized under concurrent calls.

use ragtime::ops::embedding_lookup;
use ragtime::prelude::*;

fn f32_state(name: &str, values: Vec<f32>, shape: Vec<usize>) -> State {
    State::new(name, RaggedTensor::from(DenseTensor::from_vec(shape, values).unwrap())).unwrap()
}

fn ids(rows: Vec<Vec<i64>>) -> RaggedTensor {
    RaggedTensor::try_from(rows).unwrap()
}

const MODES: [Mode; 3] = [Mode::FastRun, Mode::FastCompile, Mode::Debug];

#[test]
fn updates_are_applied_after_each_call() {
    for mode in MODES {
        let count = f32_state("count", vec![0.0], vec![]);
        let total = f32_state("total", vec![0.0, 0.0], vec![2]);
        let g = Graph::new();
        let x = g.input("x", TensorType::dense(DType::F32, &[Some(2)]));
        let (c, t) = (g.state(&count), g.state(&total));
        // The output sees the values before the call's updates.
        let out = &t + &x;
        let f =
            g.compile_with_updates(&[&x], &[&out], &[(&count, &(&c + 1.0f32)), (&total, &(&t + &x))], mode).unwrap();
        assert_eq!(f.num_outputs(), 1);
        assert_eq!(f.input_names(), ["x"]);
        assert_eq!(f.describe_updates(), ["count <- replace", "total <- replace"]);
        let x1 = RaggedTensor::from(DenseTensor::from_vec(vec![2], vec![1.0f32, 2.0]).unwrap());
        for call in 1..=3 {
            let before = total.get().to_vec::<f32>().unwrap();
            let got = f.call(std::slice::from_ref(&x1)).unwrap();
            assert_eq!(got[0].to_vec::<f32>().unwrap(), [before[0] + 1.0, before[1] + 2.0], "{mode:?}");
            assert_eq!(count.get().to_vec::<f32>().unwrap(), [call as f32], "{mode:?}");
        }
        assert_eq!(total.get().to_vec::<f32>().unwrap(), [3.0, 6.0], "{mode:?}");
    }
}

#[test]
fn a_failing_call_changes_no_state() {
    for mode in MODES {
        let table = f32_state("table", vec![1.0, 2.0, 3.0, 4.0], vec![2, 2]);
        let steps = f32_state("steps", vec![0.0], vec![]);
        let g = Graph::new();
        let i = g.input("ids", TensorType::ragged(DType::I64, 1));
        let (e, s) = (g.state(&table), g.state(&steps));
        let cost = embedding_lookup(&e, &i).reduce_sum(None);
        let de = ragtime::grad(&cost, &[&e]).unwrap().remove(0);
        let step = &e - &(&de * 0.5f32);
        let f = g.compile_with_updates(&[&i], &[&cost], &[(&steps, &(&s + 1.0f32)), (&table, &step)], mode).unwrap();
        assert_eq!(f.describe_updates(), ["steps <- replace", "table <- row scatter-subtract in place"]);
        // Index 7 is out of range: the call fails before any update.
        let e1 = f.call(&[ids(vec![vec![0], vec![7]])]).unwrap_err();
        assert_eq!(e1.kind(), ErrorKind::IndexOutOfRange, "{mode:?}: {e1}");
        assert_eq!(table.get().to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0], "{mode:?}");
        assert_eq!(steps.get().to_vec::<f32>().unwrap(), [0.0], "{mode:?}");
        f.call(&[ids(vec![vec![0, 1], vec![1]])]).unwrap();
        assert_eq!(table.get().to_vec::<f32>().unwrap(), [0.5, 1.5, 2.0, 3.0], "{mode:?}");
        assert_eq!(steps.get().to_vec::<f32>().unwrap(), [1.0], "{mode:?}");
    }
}

#[test]
fn a_new_value_of_the_wrong_shape_changes_no_state() {
    // `total`'s type is `float32[2]`; the new value has as many values as `x`, checked per call.
    let total = f32_state("total", vec![0.0, 0.0], vec![2]);
    let seen = f32_state("seen", vec![0.0], vec![]);
    let g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::F32, &[None]));
    let (t, s) = (g.state(&total), g.state(&seen));
    let f =
        g.compile_with_updates(&[&x], &[], &[(&seen, &(&s + 1.0f32)), (&total, &(&t + &x))], Mode::FastRun).unwrap();
    let three = RaggedTensor::from(DenseTensor::from_vec(vec![3], vec![1.0f32, 1.0, 1.0]).unwrap());
    // Broadcasting `[2] + [3]` fails in the graph.
    assert!(f.call(&[three]).is_err());
    assert_eq!(seen.get().to_vec::<f32>().unwrap(), [0.0]);

    // A new value computed fine but of another shape than the state's is refused at update time.
    let g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::F32, &[None]));
    let s = g.state(&seen);
    let f = g.compile_with_updates(&[&x], &[], &[(&seen, &(&s + 1.0f32)), (&total, &x)], Mode::FastRun).unwrap();
    let one = RaggedTensor::from(DenseTensor::from_vec(vec![1], vec![5.0f32]).unwrap());
    let e = f.call(&[one]).unwrap_err();
    assert!(e.to_string().contains("state `total`"), "{e}");
    assert_eq!(seen.get().to_vec::<f32>().unwrap(), [0.0]);
    assert_eq!(total.get().to_vec::<f32>().unwrap(), [0.0, 0.0]);
}

/// An SGD step on a 2^18 x 32 table writes into the table's own buffer, only in the rows the
/// ids name; the result equals the plain loop's.
#[test]
fn an_sgd_step_on_a_large_table_does_not_copy_it() {
    const ROWS: usize = 1 << 18;
    const DIM: usize = 32;
    let init: Vec<f32> = (0..ROWS * DIM).map(|k| ((k * 53) % 1000) as f32 / 1000.0 - 0.5).collect();
    let table = f32_state("E", init.clone(), vec![ROWS, DIM]);
    let g = Graph::new();
    let i = g.input("ids", TensorType::ragged(DType::I64, 1));
    let e = g.state(&table);
    let bag = embedding_lookup(&e, &i).reduce_mean(1);
    let cost = bag.square().reduce_sum(None);
    let de = ragtime::grad(&cost, &[&e]).unwrap().remove(0);
    let lr = g.constant(RaggedTensor::from(DenseTensor::scalar(0.25f32)));
    let step = &e - &(&lr * &de);
    let f = g.compile_with_updates(&[&i], &[&cost], &[(&table, &step)], Mode::FastRun).unwrap();
    assert_eq!(f.describe_updates(), ["E <- embedding-bag (mean) scatter-subtract in place"]);

    let rows = vec![vec![3i64, 77, 3], vec![], vec![ROWS as i64 - 1], vec![77, 100_000]];
    let address = table.get().flat_slice::<f32>().unwrap().as_ptr();
    f.call(&[ids(rows.clone())]).unwrap();
    let after = table.get();
    let values = after.flat_slice::<f32>().unwrap();
    assert_eq!(values.as_ptr(), address, "the table was copied");

    // The plain loop: d cost / d bag = 2 bag; each id of a row gets 2 bag / n.
    let mut want = init.clone();
    for row in &rows {
        let n = row.len() as f32;
        let mut bag = [0f32; DIM];
        for &id in row {
            for (b, &v) in bag.iter_mut().zip(&init[id as usize * DIM..][..DIM]) {
                *b += v;
            }
        }
        for &id in row {
            for (j, b) in bag.iter().enumerate() {
                want[id as usize * DIM + j] -= 0.25 * (2.0 * b / n / n);
            }
        }
    }
    let touched = [3usize, 77, ROWS - 1, 100_000];
    for (k, (&got, &w)) in values.iter().zip(&want).enumerate() {
        assert!((got - w).abs() <= 1e-6, "value {k}: {got} vs {w}");
        if got != init[k] {
            assert!(touched.contains(&(k / DIM)), "row {} changed", k / DIM);
        }
    }
}

#[test]
fn a_value_still_held_is_copied_not_changed() {
    let table = f32_state("table", vec![1.0, 2.0, 3.0, 4.0], vec![2, 2]);
    let g = Graph::new();
    let i = g.input("ids", TensorType::ragged(DType::I64, 1));
    let e = g.state(&table);
    let cost = embedding_lookup(&e, &i).reduce_sum(None);
    let de = ragtime::grad(&cost, &[&e]).unwrap().remove(0);
    let f = g.compile_with_updates(&[&i], &[], &[(&table, &(&e - &de))], Mode::FastRun).unwrap();
    let held = table.get();
    f.call(&[ids(vec![vec![1]])]).unwrap();
    assert_eq!(held.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(table.get().to_vec::<f32>().unwrap(), [1.0, 2.0, 2.0, 3.0]);
}

#[test]
fn two_functions_share_a_state() {
    let w = f32_state("w", vec![1.0, 2.0], vec![2]);
    let g = Graph::new();
    let x = g.input("x", TensorType::dense(DType::F32, &[Some(2)]));
    let wv = g.state(&w);
    let train = g.compile_with_updates(&[&x], &[], &[(&w, &(&wv * &x))], Mode::FastRun).unwrap();
    // Another graph, another function: it reads the same state.
    let h = Graph::new();
    let y = h.input("y", TensorType::dense(DType::F32, &[Some(2)]));
    let predict = compile(&[&y], &[&(&h.state(&w) + &y)]).unwrap();
    assert_eq!(predict.states().len(), 1);
    let two = RaggedTensor::from(DenseTensor::from_vec(vec![2], vec![2.0f32, 3.0]).unwrap());
    train.call(std::slice::from_ref(&two)).unwrap();
    let got = predict.call(std::slice::from_ref(&two)).unwrap();
    assert_eq!(got[0].to_vec::<f32>().unwrap(), [4.0, 9.0]);
    // Setting it from Rust is seen by both; a value of another type is refused.
    w.set(RaggedTensor::from(DenseTensor::from_vec(vec![2], vec![0.5f32, 0.5]).unwrap())).unwrap();
    assert_eq!(predict.call(std::slice::from_ref(&two)).unwrap()[0].to_vec::<f32>().unwrap(), [2.5, 3.5]);
    let wrong = RaggedTensor::from(DenseTensor::from_vec(vec![3], vec![0.0f32; 3]).unwrap());
    assert!(w.set(wrong).is_err());
    assert_eq!(w.get().to_vec::<f32>().unwrap(), [0.5, 0.5]);
}

#[test]
fn concurrent_calls_are_serialized() {
    let n = f32_state("n", vec![0.0], vec![]);
    let g = Graph::new();
    let one = g.input("one", TensorType::scalar(DType::F32));
    let nv = g.state(&n);
    let f = g.compile_with_updates(&[&one], &[&nv], &[(&n, &(&nv + &one))], Mode::FastRun).unwrap();
    let input = RaggedTensor::from(DenseTensor::scalar(1.0f32));
    let seen = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..250 {
                    let before = f.call(std::slice::from_ref(&input)).unwrap()[0].to_vec::<f32>().unwrap()[0];
                    seen.lock().unwrap().push(before);
                }
            });
        }
    });
    // No call was lost and every call saw a different value: each ran after the previous one's update.
    assert_eq!(n.get().to_vec::<f32>().unwrap(), [1000.0]);
    let mut seen = seen.into_inner().unwrap();
    seen.sort_by(f32::total_cmp);
    assert_eq!(seen, (0..1000).map(|k| k as f32).collect::<Vec<_>>());
}

#[test]
fn misuse_is_refused_at_compile_time() {
    let w = f32_state("w", vec![1.0, 2.0], vec![2]);
    let g = Graph::new();
    let wv = g.state(&w);
    assert_eq!(g.state(&w).id().unwrap(), wv.id().unwrap());
    // A state is bound by the function, not passed by the caller.
    let e = g.compile(&[&wv], &[&(&wv * 2.0f32)]).unwrap_err();
    assert!(e.to_string().contains("state `w`"), "{e}");
    // Two updates of one state.
    let e = g.compile_with_updates(&[], &[], &[(&w, &wv), (&w, &(&wv * 2.0f32))], Mode::FastRun).unwrap_err();
    assert!(e.to_string().contains("two updates"), "{e}");
    // A new value that can never have the state's type.
    let e = g.compile_with_updates(&[], &[], &[(&w, &wv.cast(DType::F64))], Mode::FastRun).unwrap_err();
    assert!(e.to_string().contains("state `w`"), "{e}");
    // A state's name is an input name of the graph.
    let clash = f32_state("x", vec![0.0], vec![]);
    let _x = g.input("x", TensorType::scalar(DType::F32));
    assert!(g.state(&clash).check().is_err());
}

/// Every in-place form gives what the graph computes for the new value (run as an output on the
/// interpreter), within rounding: sum and mean bags, a gather of single rows, a ragged state.
#[test]
fn in_place_forms_agree_with_the_new_value_computed_by_the_graph() {
    type Cost = fn(&Var, &Var) -> Var;
    let forms: [(&str, Cost, &str); 4] = [
        ("sum bag", |e, i| embedding_lookup(e, i).reduce_sum(1).square().reduce_sum(None), "embedding-bag (sum)"),
        ("mean bag", |e, i| embedding_lookup(e, i).reduce_mean(1).sin().reduce_sum(None), "embedding-bag (mean)"),
        ("rows", |e, i| embedding_lookup(e, i).square().reduce_sum(None), "row"),
        ("rows, scaled", |e, i| (embedding_lookup(e, i).reduce_max(1) * 3.0f32).reduce_sum(None), "row"),
    ];
    let init: Vec<f32> = (0..40).map(|k| ((k * 37) % 17) as f32 / 10.0 - 0.8).collect();
    let batch = ids(vec![vec![1, 4, 4, 9], vec![], vec![0], vec![9, 2]]);
    for (name, cost_of, form) in forms {
        for mode in MODES {
            let table = f32_state("E", init.clone(), vec![10, 4]);
            let g = Graph::new();
            let i = g.input("ids", TensorType::ragged(DType::I64, 1));
            let e = g.state(&table);
            let cost = cost_of(&e, &i);
            let de = ragtime::grad(&cost, &[&e]).unwrap().remove(0);
            let step = &e - &(&de * 0.3f32);
            let f = g.compile_with_updates(&[&i], &[&cost], &[(&table, &step)], mode).unwrap();
            assert_eq!(f.describe_updates(), [format!("E <- {form} scatter-subtract in place")], "{name}");
            let reference = g.compile_with(&[&i], &[&step], Mode::FastCompile).unwrap();
            let want = reference.call(std::slice::from_ref(&batch)).unwrap()[0].to_vec::<f32>().unwrap();
            f.call(std::slice::from_ref(&batch)).unwrap();
            let got = table.get().to_vec::<f32>().unwrap();
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!((g - w).abs() <= 1e-6 + 1e-6 * w.abs(), "{name} {mode:?}: value {k}: {g} vs {w}");
            }
        }
    }
}

/// An in-place update on several threads (each owning a range of the table's rows) leaves the
/// table exactly as on one thread, for every in-place form, with ids repeated within and across
/// bags and across the threads' ranges; both agree with the graph's new value.
#[test]
fn in_place_updates_on_several_threads_equal_one_thread_bit_for_bit() {
    type Cost = fn(&Var, &Var) -> Var;
    let forms: [(&str, Cost, Vec<usize>); 4] = [
        ("sum bag", |e, i| embedding_lookup(e, i).reduce_sum(1).square().reduce_sum(None), vec![1000, 4]),
        ("mean bag", |e, i| embedding_lookup(e, i).reduce_mean(1).sin().reduce_sum(None), vec![1000, 4]),
        ("rows", |e, i| embedding_lookup(e, i).square().reduce_sum(None), vec![1000, 3]),
        ("rows of a vector", |e, i| embedding_lookup(e, i).exp().reduce_sum(None), vec![1000]),
    ];
    // 20,000 bags of 0 to 6 ids (about 60,000 ids, enough for 3 threads), skewed to low rows.
    let mut seed = 12345u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let rows: Vec<Vec<i64>> =
        (0..20_000).map(|_| (0..next(7)).map(|_| (next(1000) * next(1000) / 1000) as i64).collect()).collect();
    let batch = ids(rows);
    for (name, cost_of, shape) in forms {
        let size: usize = shape.iter().product();
        let init: Vec<f32> = (0..size).map(|k| ((k * 37) % 17) as f32 / 10.0 - 0.8).collect();
        let mut results: Vec<Vec<f32>> = Vec::new();
        for threads in [1, 2, 3] {
            let table = f32_state("E", init.clone(), shape.clone());
            let g = Graph::new();
            let i = g.input("ids", TensorType::ragged(DType::I64, 1));
            let e = g.state(&table);
            let cost = cost_of(&e, &i);
            let de = ragtime::grad(&cost, &[&e]).unwrap().remove(0);
            let step = &e - &(&de * 0.01f32);
            let options = CompileOptions::from(Mode::FastRun).threads(threads);
            let f = g.compile_with_updates(&[&i], &[&cost], &[(&table, &step)], options).unwrap();
            assert!(f.describe_updates()[0].ends_with("scatter-subtract in place"), "{name}");
            if threads == 1 {
                let reference = g.compile_with(&[&i], &[&step], Mode::FastCompile).unwrap();
                let want = reference.call(std::slice::from_ref(&batch)).unwrap()[0].to_vec::<f32>().unwrap();
                f.call(std::slice::from_ref(&batch)).unwrap();
                let got = table.get().to_vec::<f32>().unwrap();
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    assert!((g - w).abs() <= 1e-4 + 1e-5 * w.abs(), "{name}: value {k}: {g} vs {w}");
                }
            } else {
                f.call(std::slice::from_ref(&batch)).unwrap();
            }
            results.push(table.get().to_vec::<f32>().unwrap());
        }
        for (threads, got) in [2, 3].iter().zip(&results[1..]) {
            let same = got.iter().zip(&results[0]).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(same, "{name}: {threads} threads differ from one");
        }
        assert_ne!(results[0], init, "{name}: nothing was updated");
    }
}

/// The bag form over ids concatenated along the bags' axis (read part by part, never
/// concatenated) with the bags' gradient a product `a @ wᵀ` (computed per bag inside the update):
/// the same table as the graph's new value in every mode, and on 1, 2 and 3 threads bit for bit.
#[test]
fn a_bag_of_concatenated_ids_through_a_matmul_is_updated_in_place() {
    let mut seed = 777u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let mut bags = |count: usize| -> RaggedTensor {
        ids((0..count).map(|_| (0..next(5)).map(|_| (next(500) * next(500) / 500) as i64).collect()).collect())
    };
    let (words, bigrams) = (bags(20_000), bags(20_000));
    let weights: Vec<f32> = (0..12).map(|k| ((k * 29) % 100) as f32 / 100.0 - 0.5).collect();
    let w_value = RaggedTensor::from(DenseTensor::from_vec(vec![4, 3], weights).unwrap());
    let init: Vec<f32> = (0..2000).map(|k| ((k * 37) % 17) as f32 / 10.0 - 0.8).collect();
    let inputs = [words, bigrams, w_value];
    let mut threaded: Vec<Vec<f32>> = Vec::new();
    for (mode, threads) in
        [(Mode::FastRun, 1), (Mode::FastCompile, 1), (Mode::Debug, 1), (Mode::FastRun, 2), (Mode::FastRun, 3)]
    {
        let table = f32_state("E", init.clone(), vec![500, 4]);
        let g = Graph::new();
        let a = g.input("words", TensorType::ragged(DType::I64, 1));
        let b = g.input("bigrams", TensorType::ragged(DType::I64, 1));
        let w = g.input("w", TensorType::dense(DType::F32, &[Some(4), Some(3)]));
        let e = g.state(&table);
        let features = ragtime::ops::concat(&[&a, &b], 1);
        let cost = embedding_lookup(&e, &features).reduce_mean(1).matmul(&w).sin().reduce_sum(None);
        let de = ragtime::grad(&cost, &[&e]).unwrap().remove(0);
        let step = &e - &(&de * 0.01f32);
        let options = CompileOptions::from(mode).threads(threads);
        let f = g.compile_with_updates(&[&a, &b, &w], &[&cost], &[(&table, &step)], options).unwrap();
        assert_eq!(
            f.describe_updates(),
            ["E <- embedding-bag (mean) scatter-subtract in place, ids in 2 parts, gradient a @ wᵀ per bag"],
            "{mode:?}"
        );
        let reference = g.compile_with(&[&a, &b, &w], &[&step], Mode::FastCompile).unwrap();
        let want = reference.call(&inputs).unwrap()[0].to_vec::<f32>().unwrap();
        f.call(&inputs).unwrap();
        let got = table.get().to_vec::<f32>().unwrap();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-5 + 1e-5 * w.abs(), "{mode:?}, {threads} threads: value {k}: {g} vs {w}");
        }
        assert_ne!(got, init, "nothing was updated");
        if mode == Mode::FastRun {
            threaded.push(got);
        }
    }
    for (threads, got) in [2, 3].iter().zip(&threaded[1..]) {
        let same = got.iter().zip(&threaded[0]).all(|(a, b)| a.to_bits() == b.to_bits());
        assert!(same, "{threads} threads differ from one");
    }
}
