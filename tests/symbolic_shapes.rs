//! Symbolic offsets: movement ops at a position that is a bound `Variable`. One compiled kernel
//! serves every value (the count of kernels built stays put while the value changes), results
//! match a plain Rust computation, gradients flow through, assigns write through, and TinyJit
//! replays take new values (tinygrad's bug #5360 was a replay that kept the captured value).

use ferrograd::engine::kernels_built_on_this_thread;
use ferrograd::{Dim, Error, Tensor, TinyJit, Variable};

fn data(n: usize, k: usize) -> Vec<f32> {
    (0..n * k).map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.25).collect()
}

/// Sum of rows `pos..pos+len` of a row-major `[n, k]` matrix, per column.
fn window_sum(x: &[f32], k: usize, pos: usize, len: usize) -> Vec<f32> {
    (0..k).map(|j| (pos..pos + len).map(|r| x[r * k + j]).sum()).collect()
}

#[test]
fn one_kernel_serves_every_position() {
    let (n, k, len) = (12, 5, 3);
    let x = Tensor::from_vec(data(n, k), [n, k]).realize().unwrap();
    let pos = Variable::new("pos", 0, (n - len) as i64);
    let mut built_after_first = None;
    for p in [0usize, 4, 9, 1, 7] {
        let out = x.narrow(0, pos.bind(p as i64), len).sum_axis(0);
        assert_eq!(out.to_vec::<f32>().unwrap(), window_sum(&data(n, k), k, p, len), "pos {p}");
        let built = kernels_built_on_this_thread();
        assert_eq!(*built_after_first.get_or_insert(built), built, "pos {p} compiled a new kernel");
    }
}

#[test]
fn symbolic_offsets_on_several_axes_and_padding() {
    // A [2, 3] block placed into an [8, 6] zero canvas at (r, c), then read back at (r, c).
    let block = Tensor::from_vec((1..=6).map(|v| v as f32).collect(), [2, 3]);
    let (rv, cv) = (Variable::new("r", 0, 6), Variable::new("c", 0, 3));
    for (r, c) in [(0usize, 0usize), (6, 3), (3, 1)] {
        let (rd, cd) = (rv.bind(r as i64), cv.bind(c as i64));
        let canvas = block.pad_dims(&[(rd.clone(), Dim::Const(6) - &rd), (cd.clone(), Dim::Const(3) - &cd)]);
        assert_eq!(canvas.shape(), vec![8, 6]);
        let got = canvas.to_vec::<f32>().unwrap();
        let mut want = vec![0.0f32; 48];
        for i in 0..2 {
            for j in 0..3 {
                want[(r + i) * 6 + c + j] = (i * 3 + j + 1) as f32;
            }
        }
        assert_eq!(got, want, "block at ({r}, {c})");
        let back = canvas.shrink_dims(&[(rd.clone(), &rd + 2usize), (cd.clone(), &cd + 3usize)]);
        assert_eq!(back.to_vec::<f32>().unwrap(), (1..=6).map(|v| v as f32).collect::<Vec<_>>());
    }
}

#[test]
fn assign_through_a_symbolic_window_writes_one_row() {
    // A KV-cache write: row `pos` of a realized cache gets a new value; one kernel for all rows.
    let (rows, k) = (6, 4);
    let cache = Tensor::zeros([rows, k]).realize().unwrap();
    let pos = Variable::new("pos", 0, rows as i64 - 1);
    let mut built_after_first = None;
    for p in 0..rows {
        let row = Tensor::from_vec((0..k).map(|j| (p * 10 + j) as f32).collect(), [1, k]);
        cache.narrow(0, pos.bind(p as i64), 1).assign(&row);
        cache.realize().unwrap();
        let built = kernels_built_on_this_thread();
        assert_eq!(*built_after_first.get_or_insert(built), built, "row {p} compiled a new kernel");
    }
    let want: Vec<f32> = (0..rows).flat_map(|p| (0..k).map(move |j| (p * 10 + j) as f32)).collect();
    assert_eq!(cache.to_vec::<f32>().unwrap(), want);
}

#[test]
fn gradients_flow_through_symbolic_windows() {
    let pos = Variable::new("pos", 0, 5);
    for p in [0usize, 2, 5] {
        let x = Tensor::from_vec(data(8, 1), [8]).requires_grad();
        let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], [3]);
        (x.narrow(0, pos.bind(p as i64), 3) * &w).sum().backward();
        let mut want = vec![0.0f32; 8];
        want[p..p + 3].copy_from_slice(&[1.0, 2.0, 3.0]);
        assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), want, "pos {p}");
    }
}

#[test]
fn tinyjit_replays_take_the_new_value() {
    let (n, k, len) = (10, 3, 2);
    let x = Tensor::from_vec(data(n, k), [n, k]).realize().unwrap();
    let pos = Variable::new("pos", 0, (n - len) as i64);
    let mut step = TinyJit::with_vars(move |xs: &[Tensor], vars: &[Dim]| {
        vec![(xs[0].narrow(0, vars[0].clone(), len) * 2.0).sum_axis(0)]
    });
    let mut built_at_replay = None;
    for (call, p) in [3usize, 0, 5, 8, 1, 6, 2].into_iter().enumerate() {
        let out = step.call_vars(&[&x], &[pos.bind(p as i64)]).unwrap();
        let want: Vec<f32> = window_sum(&data(n, k), k, p, len).iter().map(|v| v * 2.0).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "call {call} at pos {p}");
        if call >= 3 {
            assert!(step.captured_len().is_some(), "replaying");
            let built = kernels_built_on_this_thread();
            assert_eq!(*built_at_replay.get_or_insert(built), built, "a replay compiled");
        }
    }
}

#[test]
fn tinyjit_refuses_a_variable_it_was_not_given() {
    // The position is bound inside the function from a Rust value that changes: replays would
    // repeat call 2's value, so call 3 is an error that says to pass the variable.
    let x = Tensor::from_vec(data(10, 1), [10]).realize().unwrap();
    let pos = Variable::new("p_hidden", 0, 8);
    let counter = std::rc::Rc::new(std::cell::Cell::new(0i64));
    let c = counter.clone();
    let mut step = TinyJit::new(move |xs: &[Tensor]| {
        c.set(c.get() + 1);
        vec![xs[0].narrow(0, pos.bind(c.get()), 2).sum()]
    });
    step.call(&[&x]).unwrap();
    step.call(&[&x]).unwrap();
    match step.call(&[&x]) {
        Err(Error::Jit(m)) => assert!(m.contains("call_vars"), "{m}"),
        other => panic!("expected a TinyJit error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn tinyjit_needs_the_same_variables() {
    let x = Tensor::from_vec(data(10, 1), [10]).realize().unwrap();
    let (a, b) = (Variable::new("a", 0, 8), Variable::new("b", 0, 8));
    let mut step = TinyJit::with_vars(|xs: &[Tensor], vars: &[Dim]| vec![xs[0].narrow(0, vars[0].clone(), 2).sum()]);
    for p in 0..3 {
        step.call_vars(&[&x], &[a.bind(p)]).unwrap();
    }
    assert!(matches!(step.call_vars(&[&x], &[b.bind(1)]), Err(Error::Jit(_))));
    assert!(matches!(step.call_vars(&[&x], &[Dim::Const(1)]), Err(Error::Jit(_))), "a number is not a variable");
}

#[test]
#[should_panic(expected = "outside its range")]
fn binding_outside_the_range_panics() {
    Variable::new("pos", 0, 4).bind(5);
}

#[test]
#[should_panic(expected = "is not inside shape")]
fn a_window_that_can_leave_the_axis_panics() {
    // pos may be 8, and 8 + 3 > 10.
    Tensor::zeros([10]).narrow(0, Variable::new("pos", 0, 8).bind(0), 3);
}

#[test]
fn the_interpreter_runs_symbolic_kernels() {
    ferrograd::tensor::with_default_device("INTERP", || {
        let x = Tensor::from_vec(data(9, 2), [9, 2]);
        let pos = Variable::new("pos", 0, 6);
        for p in [0usize, 6, 2] {
            let out = x.narrow(0, pos.bind(p as i64), 3).sum_axis(0);
            assert_eq!(out.device(), "INTERP");
            assert_eq!(out.to_vec::<f32>().unwrap(), window_sum(&data(9, 2), 2, p, 3), "pos {p}");
            // A symbolic length: rows 0..=pos, summed and kept as a materialized buffer.
            let rows = x.shrink_dims(&[(Dim::Const(0), pos.bind(p as i64) + 1usize), (Dim::Const(0), Dim::Const(2))]);
            let sums = rows.contiguous().sum_axis(0);
            assert_eq!(sums.to_vec::<f32>().unwrap(), window_sum(&data(9, 2), 2, 0, p + 1), "rows 0..={p}");
        }
    });
}

// ---------------------------------------------------------------- symbolic lengths

/// Attention of one query row over keys `0..n` of `[n_max, d]` keys and values (f64 reference).
fn attend(q: &[f32], k: &[f32], v: &[f32], d: usize, n: usize) -> Vec<f32> {
    let scale = 1.0 / (d as f64).sqrt();
    let scores: Vec<f64> =
        (0..n).map(|j| (0..d).map(|c| q[c] as f64 * k[j * d + c] as f64).sum::<f64>() * scale).collect();
    let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let w: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
    let z: f64 = w.iter().sum();
    (0..d).map(|c| ((0..n).map(|j| w[j] * v[j * d + c] as f64).sum::<f64>() / z) as f32).collect()
}

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

#[test]
fn a_symbolic_length_sums_and_keeps_one_kernel() {
    let (n, k) = (16, 3);
    let x = Tensor::from_vec(data(n, k), [n, k]).realize().unwrap();
    let len = Variable::new("len", 1, n as i64);
    let mut built_after_first = None;
    for l in [1usize, 16, 5, 9] {
        let rows = x.shrink_dims(&[(Dim::Const(0), len.bind(l as i64)), (Dim::Const(0), Dim::Const(k))]);
        assert_eq!(rows.sym_shape()[1], Dim::Const(k));
        assert!(rows.is_symbolic());
        let out = (rows * 2.0).sum_axis(0);
        let want: Vec<f32> = window_sum(&data(n, k), k, 0, l).iter().map(|v| v * 2.0).collect();
        assert_eq!(out.to_vec::<f32>().unwrap(), want, "length {l}");
        let built = kernels_built_on_this_thread();
        assert_eq!(*built_after_first.get_or_insert(built), built, "length {l} compiled a new kernel");
    }
}

#[test]
fn symbolic_shapes_refuse_numeric_shape_queries() {
    let len = Variable::new("len", 1, 8);
    let x = Tensor::zeros([8, 2]).shrink_dims(&[(Dim::Const(0), len.bind(3)), (Dim::Const(0), Dim::Const(2))]);
    let err = std::panic::catch_unwind(|| x.shape()).expect_err("shape() of a symbolic tensor");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("sym_shape"), "{msg}");
}

#[test]
fn attention_over_a_variable_number_of_keys() {
    // One decode step: a query attends over the first `pos + 1` rows of a realized KV cache,
    // with GQA (4 query heads over 2 key heads). One set of kernels for every position.
    let (max, d, hq, hk) = (12usize, 8usize, 4usize, 2usize);
    let kc = Tensor::from_vec(data(hk * max, d), [1, hk, max, d]).realize().unwrap();
    let vc =
        Tensor::from_vec(data(hk * max, d).iter().map(|x| x * 0.5 + 0.1).collect(), [1, hk, max, d]).realize().unwrap();
    let qv: Vec<f32> = (0..hq * d).map(|i| ((i * 5 % 7) as f32 - 3.0) * 0.3).collect();
    let q = Tensor::from_vec(qv.clone(), [1, hq, 1, d]).realize().unwrap();
    let pos = Variable::new("pos", 0, max as i64 - 1);
    let mut built_after_first = None;
    for p in [0usize, 11, 4, 7] {
        let n = pos.bind(p as i64) + 1usize;
        let window = [
            (Dim::Const(0), Dim::Const(1)),
            (Dim::Const(0), Dim::Const(hk)),
            (Dim::Const(0), n),
            (Dim::Const(0), Dim::Const(d)),
        ];
        let (k, v) = (kc.shrink_dims(&window), vc.shrink_dims(&window));
        let out = q.scaled_dot_product_attention(&k, &v, &ferrograd::tensor::AttentionOpts::default().gqa());
        assert_eq!(out.shape(), vec![1, hq, 1, d]);
        let got = out.to_vec::<f32>().unwrap();
        let (kd, vd) = (kc.to_vec::<f32>().unwrap(), vc.to_vec::<f32>().unwrap());
        for h in 0..hq {
            let g = h / (hq / hk);
            let want = attend(&qv[h * d..(h + 1) * d], &kd[g * max * d..], &vd[g * max * d..], d, p + 1);
            assert!(
                close(&got[h * d..(h + 1) * d], &want, 1e-5),
                "pos {p} head {h}: {:?} vs {want:?}",
                &got[h * d..(h + 1) * d]
            );
        }
        let built = kernels_built_on_this_thread();
        assert_eq!(*built_after_first.get_or_insert(built), built, "pos {p} compiled new kernels");
    }
}

#[test]
fn a_mask_over_symbolic_keys_from_arange_dim() {
    // Keys at or before position `pos` are allowed: the mask is built from arange of a symbolic
    // length, broadcast against the scores.
    let (max, d) = (10usize, 4usize);
    let kc = Tensor::from_vec(data(max, d), [max, d]).realize().unwrap();
    let pos = Variable::new("pos", 0, max as i64 - 1);
    for p in [3usize, 9] {
        let n = pos.bind(p as i64) + 1usize;
        let k = kc.shrink_dims(&[(Dim::Const(0), n.clone()), (Dim::Const(0), Dim::Const(d))]);
        let keep = Tensor::arange_dim(n).lt(2); // only the first two keys
        let scores = k.sum_axis(1); // [n]
        let masked = keep.where_(&scores, 0.0).sum();
        let kd = data(max, d);
        let want: f32 = (0..2.min(p + 1)).map(|j| (0..d).map(|c| kd[j * d + c]).sum::<f32>()).sum();
        assert!((masked.item::<f32>().unwrap() - want).abs() < 1e-5, "pos {p}");
    }
}

#[test]
fn tinyjit_replays_attention_over_variable_keys() {
    let (max, d) = (9usize, 4usize);
    let kc = Tensor::from_vec(data(max, d), [1, 1, max, d]).realize().unwrap();
    let vc = Tensor::from_vec(data(max, d).iter().map(|x| x + 1.0).collect(), [1, 1, max, d]).realize().unwrap();
    let (k2, v2) = (kc.clone(), vc.clone());
    let pos = Variable::new("pos", 0, max as i64 - 1);
    let mut step = TinyJit::with_vars(move |xs: &[Tensor], vars: &[Dim]| {
        let n = &vars[0] + 1usize;
        let w = [
            (Dim::Const(0), Dim::Const(1)),
            (Dim::Const(0), Dim::Const(1)),
            (Dim::Const(0), n),
            (Dim::Const(0), Dim::Const(d)),
        ];
        vec![xs[0].scaled_dot_product_attention(&k2.shrink_dims(&w), &v2.shrink_dims(&w), &Default::default())]
    });
    let (kd, vd) = (kc.to_vec::<f32>().unwrap(), vc.to_vec::<f32>().unwrap());
    for (call, p) in [2usize, 5, 0, 8, 3, 6].into_iter().enumerate() {
        let qv: Vec<f32> = (0..d).map(|c| (c as f32 - 1.5) * (call as f32 + 1.0) * 0.2).collect();
        let q = Tensor::from_vec(qv.clone(), [1, 1, 1, d]).realize().unwrap();
        let out = step.call_vars(&[&q], &[pos.bind(p as i64)]).unwrap();
        let want = attend(&qv, &kd, &vd, d, p + 1);
        assert!(close(&out[0].to_vec::<f32>().unwrap(), &want, 1e-5), "call {call} pos {p}");
    }
}

#[test]
fn reading_a_symbolic_tensor_gives_its_bound_elements() {
    // Stored in the layout of the largest length; read back, only the bound rows.
    let x = Tensor::from_vec(data(6, 3), [6, 3]);
    let len = Variable::new("len", 1, 6);
    for l in [2usize, 6] {
        let rows =
            (x.shrink_dims(&[(Dim::Const(0), len.bind(l as i64)), (Dim::Const(0), Dim::Const(3))]) * 1.0).contiguous();
        assert_eq!(rows.to_vec::<f32>().unwrap(), data(6, 3)[..l * 3].to_vec(), "len {l}");
        let cols = x.shrink_dims(&[(Dim::Const(0), Dim::Const(6)), (Dim::Const(0), Variable::new("w", 1, 3).bind(2))]);
        let want: Vec<f32> = (0..6).flat_map(|r| data(6, 3)[r * 3..r * 3 + 2].to_vec()).collect();
        assert_eq!(cols.to_vec::<f32>().unwrap(), want);
    }
}

#[test]
fn tinyjit_returns_symbolic_outputs_with_the_new_lengths() {
    let x = Tensor::from_vec(data(8, 2), [8, 2]).realize().unwrap();
    let len = Variable::new("len", 1, 8);
    let mut step = TinyJit::with_vars(|xs: &[Tensor], vars: &[Dim]| {
        vec![(xs[0].shrink_dims(&[(Dim::Const(0), vars[0].clone()), (Dim::Const(0), Dim::Const(2))]) * 2.0).contiguous()]
    });
    for (call, l) in [3usize, 5, 1, 8, 2, 6].into_iter().enumerate() {
        let out = step.call_vars(&[&x], &[len.bind(l as i64)]).unwrap();
        assert_eq!(out[0].sym_shape()[0].value(), Some(l), "call {call}");
        let want: Vec<f32> = data(8, 2)[..l * 2].iter().map(|v| v * 2.0).collect();
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want, "call {call}, length {l}");
    }
}

#[test]
fn gradients_flow_through_symbolic_lengths() {
    // loss = sum over rows 0..len of (x * w).max(axis 1): only the first `len` rows get
    // gradients, each at its row's maximum.
    let len = Variable::new("len", 1, 6);
    let xd: Vec<f32> = (0..12).map(|i| ((i * 5 % 7) as f32) - 3.0).collect();
    for l in [2usize, 6] {
        let x = Tensor::from_vec(xd.clone(), [6, 2]).requires_grad();
        let rows = x.shrink_dims(&[(Dim::Const(0), len.bind(l as i64)), (Dim::Const(0), Dim::Const(2))]);
        (rows * 2.0).max_axis(1).sum().backward();
        let mut want = vec![0.0f32; 12];
        for r in 0..l {
            let (a, b) = (xd[r * 2], xd[r * 2 + 1]);
            if a == b {
                want[r * 2] = 1.0;
                want[r * 2 + 1] = 1.0;
            } else {
                want[r * 2 + usize::from(b > a)] = 2.0;
            }
        }
        assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), want, "len {l}");
    }
}

#[test]
fn symbolic_tensors_print_their_bound_elements() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2]);
    let rows = x.shrink_dims(&[(Dim::Const(0), Variable::new("n", 1, 3).bind(2)), (Dim::Const(0), Dim::Const(2))]);
    assert_eq!(format!("{rows:?}"), format!("<Tensor shape=[n=2, 2] dtype=float32 device={}>", rows.device()));
    assert_eq!(rows.values_string().unwrap(), "[[1.0, 2.0], [3.0, 4.0]]");
    assert!(rows.to_string().starts_with("Tensor([[1.0, 2.0], [3.0, 4.0]], shape=[n=2, 2]"), "{rows}");
}
