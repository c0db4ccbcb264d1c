//! `vmap`: a mapped function equals stacking the function's results element by element
//! (exactly for integers, within rounding for floats), for every op group; in/out axes,
//! unbatched arguments, nesting, chunking, randomness, errors, TinyJit.

mod common;
use common::{for_each_device, Rng};
use ferrograd::func::{vmap, vmap_with, Randomness, VmapOpts};
use ferrograd::tensor::{ConvOpts, PoolOpts};
use ferrograd::{DType, Tensor, TinyJit};

fn rand_tensor(rng: &mut Rng, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = rng.vec(n, -2.0, 2.0).into_iter().map(|x| x as f32).collect();
    Tensor::from_vec(v, shape.to_vec())
}

fn close(a: &Tensor, b: &Tensor, what: &str) {
    assert_eq!(a.shape(), b.shape(), "{what}: shapes");
    let (x, y) = (a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    for (i, (p, q)) in x.iter().zip(&y).enumerate() {
        let tol = 1e-5 + 1e-4 * q.abs();
        assert!((p - q).abs() <= tol || (p.is_nan() && q.is_nan()), "{what}: element {i}: vmap {p}, loop {q}");
    }
}

/// `f` mapped over axis 0 of every argument, against a loop over the batch that stacks `f`'s
/// results.
fn check_against_loop(what: &str, f: impl Fn(&[Tensor]) -> Vec<Tensor> + Clone + 'static, args: &[Tensor]) {
    let b = args[0].shape()[0];
    let mapped = vmap(f.clone(), &[], &[])(args);
    for (k, m) in mapped.iter().enumerate() {
        let rows: Vec<Tensor> = (0..b)
            .map(|i| {
                let one: Vec<Tensor> = args.iter().map(|a| a.narrow(0, i, 1).squeeze(0)).collect();
                f(&one)[k].clone()
            })
            .collect();
        let want = Tensor::stack(&rows.iter().collect::<Vec<_>>(), 0);
        if m.dtype().is_float() {
            close(m, &want, what);
        } else {
            assert_eq!(m.shape(), want.shape(), "{what}");
            assert_eq!(
                m.cast(DType::I64).to_vec::<i64>().unwrap(),
                want.cast(DType::I64).to_vec::<i64>().unwrap(),
                "{what}"
            );
        }
    }
}

#[test]
fn every_op_group_matches_a_loop() {
    for_each_device(|dev| {
        let mut rng = Rng::new(7);
        let x = rand_tensor(&mut rng, &[3, 4, 5]);
        let y = rand_tensor(&mut rng, &[3, 4, 5]);
        let w = rand_tensor(&mut rng, &[3, 5, 6]);
        let e = |f: fn(&Tensor) -> Tensor| move |a: &[Tensor]| vec![f(&a[0])];
        check_against_loop(&format!("{dev} unary"), e(|t| t.exp().sin() + t.abs().sqrt()), std::slice::from_ref(&x));
        check_against_loop(
            &format!("{dev} binary"),
            |a: &[Tensor]| vec![&a[0] * &a[1] - a[1].maximum(&a[0])],
            &[x.clone(), y.clone()],
        );
        check_against_loop(
            &format!("{dev} where"),
            |a: &[Tensor]| vec![a[0].gt(&a[1]).where_(&a[0], 0.5)],
            &[x.clone(), y.clone()],
        );
        check_against_loop(
            &format!("{dev} cast"),
            e(|t| (t * 10.0).cast(DType::I32).bitand(6)),
            std::slice::from_ref(&x),
        );
        check_against_loop(
            &format!("{dev} reshape"),
            e(|t| t.reshape([5, 4]).transpose(0, 1) * 2.0),
            std::slice::from_ref(&x),
        );
        check_against_loop(
            &format!("{dev} pad/shrink/flip"),
            e(|t| t.pad(&[(1, 0), (0, 2)]).shrink(&[(0, 3), (1, 6)]).flip([1])),
            std::slice::from_ref(&x),
        );
        check_against_loop(
            &format!("{dev} expand"),
            e(|t| t.unsqueeze(1).expand([4, 3, 5]) + 1.0),
            std::slice::from_ref(&x),
        );
        check_against_loop(
            &format!("{dev} reduce"),
            e(|t| t.sum_axis(1) + t.max_axis(0).sum_keepdim(0)),
            std::slice::from_ref(&x),
        );
        check_against_loop(
            &format!("{dev} matmul"),
            |a: &[Tensor]| vec![a[0].matmul(&a[1]).relu()],
            &[x.clone(), w.clone()],
        );
        check_against_loop(&format!("{dev} softmax"), e(|t| t.softmax(-1).log_softmax(0)), std::slice::from_ref(&x));
        check_against_loop(&format!("{dev} cumsum"), e(|t| t.cumsum(1)), std::slice::from_ref(&x));
        check_against_loop(&format!("{dev} sort"), e(|t| t.argsort(1, true)), std::slice::from_ref(&x));
        check_against_loop(
            &format!("{dev} contiguous"),
            e(|t| t.transpose(0, 1).contiguous() * 3.0),
            std::slice::from_ref(&x),
        );
        let img = rand_tensor(&mut rng, &[2, 3, 6, 6]);
        check_against_loop(
            &format!("{dev} conv2d"),
            |a: &[Tensor]| {
                let k = Tensor::arange(54).cast(DType::F32).reshape([2, 3, 3, 3]) / 50.0;
                vec![a[0]
                    .unsqueeze(0)
                    .conv2d(&k, None, &ConvOpts::default().padding(1))
                    .max_pool2d(2, &PoolOpts::default())
                    .squeeze(0)]
            },
            &[img],
        );
        // One result of every element may be the same tensor: it is broadcast along the batch.
        let outs = vmap(|a: &[Tensor]| vec![a[0].sum(), Tensor::from_slice(&[1.0f32, 2.0])], &[], &[])(
            std::slice::from_ref(&x),
        );
        assert_eq!(outs[1].to_vec::<f32>().unwrap(), [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
        assert_eq!(outs[1].shape(), [3, 2]);
    });
}

#[test]
fn axes_shared_arguments_and_nesting() {
    let mut rng = Rng::new(11);
    let x = rand_tensor(&mut rng, &[4, 3]); // mapped over axis 1: 3 elements of 4
    let w = rand_tensor(&mut rng, &[4, 2]); // shared
    let f = |a: &[Tensor]| vec![a[0].unsqueeze(0).matmul(&a[1]).squeeze(0)];
    let out = vmap(f, &[Some(1), None], &[1])(&[x.clone(), w.clone()]);
    // Element i is x[:, i] @ w, placed along axis 1: the whole is w^T x.
    close(&out[0], &w.transpose(0, 1).matmul(&x), "in_axes 1, out_axes 1");

    // Nested: pairwise squared distances between the rows of a and of b.
    let a = rand_tensor(&mut rng, &[5, 3]);
    let b = rand_tensor(&mut rng, &[4, 3]);
    let dist = |t: &[Tensor]| vec![(&t[0] - &t[1]).square().sum()];
    let inner = vmap(dist, &[None, Some(0)], &[]);
    let pairwise = vmap(inner, &[Some(0), None], &[])(&[a.clone(), b.clone()]);
    let want = (a.unsqueeze(1) - b.unsqueeze(0)).square().sum_axis(-1);
    close(&pairwise[0], &want, "nested vmap");
    assert_eq!(pairwise[0].shape(), [5, 4]);
}

#[test]
fn chunks_give_the_same_result() {
    let mut rng = Rng::new(3);
    let x = rand_tensor(&mut rng, &[10, 8]);
    let f = |a: &[Tensor]| vec![a[0].softmax(0) * a[0].sum()];
    let whole = vmap(f, &[], &[])(std::slice::from_ref(&x));
    let chunked = vmap_with(f, VmapOpts::default().chunk_size(3))(std::slice::from_ref(&x));
    close(&chunked[0], &whole[0], "chunk_size 3");
}

#[test]
fn randomness_is_chosen() {
    let x = Tensor::zeros([4, 16]);
    let f = |a: &[Tensor]| vec![&a[0] + Tensor::rand([16])];
    let same = vmap_with(f, VmapOpts::default().randomness(Randomness::Same))(std::slice::from_ref(&x))[0]
        .to_vec::<f32>()
        .unwrap();
    assert!(same.chunks(16).all(|r| r == &same[..16]), "Randomness::Same: every row draws the same numbers");
    let diff = vmap_with(f, VmapOpts::default().randomness(Randomness::Different))(std::slice::from_ref(&x))[0]
        .to_vec::<f32>()
        .unwrap();
    let rows: Vec<&[f32]> = diff.chunks(16).collect();
    for i in 0..4 {
        assert!(rows[i].iter().all(|v| (0.0..1.0).contains(v)));
        for j in 0..i {
            assert_ne!(rows[i], rows[j], "Randomness::Different: rows {i} and {j} drew the same numbers");
        }
    }
    // Nested maps under Different draw differently along both batch axes.
    let nested = vmap_with(
        vmap_with(
            |a: &[Tensor]| vec![&a[0] + Tensor::rand([2])],
            VmapOpts::default().randomness(Randomness::Different),
        ),
        VmapOpts::default().randomness(Randomness::Different),
    )(&[Tensor::zeros([3, 4, 2])])[0]
        .to_vec::<f32>()
        .unwrap();
    let mut pairs: Vec<&[f32]> = nested.chunks(2).collect();
    pairs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    pairs.dedup();
    assert_eq!(pairs.len(), 12, "nested Different: every (i, j) draws its own numbers");
    let err =
        std::panic::catch_unwind(|| vmap(f, &[], &[])(&[Tensor::zeros([4, 16])])).expect_err("the default refuses");
    assert!(panic_text(err).contains("randomness"));
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[test]
fn misuse_is_a_clear_error() {
    let x = Tensor::ones([3, 2]);
    // An in-place write of a batched value into an unbatched tensor.
    let target = Tensor::zeros([2]).contiguous();
    target.realize().unwrap();
    let t2 = target.clone();
    let err = std::panic::catch_unwind(move || vmap(move |a: &[Tensor]| vec![t2.assign(&a[0] * 2.0)], &[], &[])(&[x]))
        .expect_err("an assign of a batched value panics");
    assert!(panic_text(err).contains("assigns a batched value"));
    let _ = Tensor::realize_all(&[]); // the refused assign stays pending; drop it with the target
    drop(target);
    // Reading values inside the function.
    let seen = std::sync::Mutex::new(None);
    let _ = vmap(
        |a: &[Tensor]| {
            *seen.lock().unwrap() = Some(a[0].to_vec::<f32>().map(|_| ()));
            vec![a[0].clone()]
        },
        &[],
        &[],
    )(&[Tensor::ones([3, 2])]);
    let msg = seen.lock().unwrap().take().unwrap().expect_err("reading a traced value is an Err").to_string();
    assert!(msg.contains("vmap/grad/jvp read the values"), "{msg}");
    // Batch sizes that disagree.
    let err = std::panic::catch_unwind(|| {
        vmap(|a: &[Tensor]| vec![&a[0] + &a[1]], &[], &[])(&[Tensor::ones([3, 2]), Tensor::ones([4, 2])])
    })
    .err()
    .unwrap();
    assert!(panic_text(err).contains("different batch sizes"));
}

#[test]
fn works_under_tinyjit() {
    let f = |a: &[Tensor]| vec![(a[0].matmul(&a[1].transpose(0, 1)) + 1.0).relu().sum_axis(-1)];
    let mut jit = TinyJit::new(move |ins: &[Tensor]| vmap(f, &[Some(0), None], &[])(ins));
    let mut rng = Rng::new(5);
    let w = rand_tensor(&mut rng, &[6, 5]);
    for step in 0..4 {
        let x = rand_tensor(&mut rng, &[8, 3, 5]);
        let got = jit.call(&[&x, &w]).unwrap();
        let want = (x.matmul(&w.transpose(0, 1)) + 1.0).relu().sum_axis(-1);
        close(&got[0], &want, &format!("TinyJit step {step}"));
    }
    assert!(jit.captured_len().is_some(), "the jit captured the mapped function");
}

#[test]
fn every_tensor_graph_primitive_has_a_batching_rule() {
    use ferrograd::func::has_batching_rule;
    use ferrograd::Ops;
    // (The rule table is an exhaustive match: a new op does not compile without a rule.)
    let mut ops: Vec<Ops> = Ops::ALU.to_vec();
    ops.extend([Ops::RESHAPE, Ops::PERMUTE, Ops::EXPAND, Ops::PAD, Ops::SHRINK, Ops::FLIP, Ops::REDUCE_AXIS]);
    ops.extend([Ops::CAST, Ops::BITCAST, Ops::CONTIGUOUS, Ops::COPY, Ops::DETACH]);
    ops.extend([Ops::BUFFER, Ops::CONST, Ops::IOTA, Ops::DEVICE, Ops::DEFINE_VAR, Ops::BIND]);
    for op in ops {
        assert!(has_batching_rule(op), "{op:?} has no batching rule");
    }
    assert!(!has_batching_rule(Ops::ASSIGN), "an assign of a batched value is refused");
}

#[test]
fn index_checks_see_every_element() {
    // A gather whose indices are in range for some elements and not for one: the batched
    // check still catches it, naming the op.
    let table = Tensor::arange(5).cast(DType::F32);
    let idx = Tensor::from_vec(vec![0i64, 1, 2, 3, 4, 9], [3, 2]);
    let t = table.clone();
    let out = vmap(move |a: &[Tensor]| vec![t.gather(0, &a[0])], &[], &[])(std::slice::from_ref(&idx));
    let err = std::panic::catch_unwind(|| out[0].to_vec::<f32>()).expect_err("index 9 of 5 is out of range");
    assert!(panic_text(err).contains("out of range"));
    let ok = Tensor::from_vec(vec![4i64, 0, 2, 1], [2, 2]);
    let t = table.clone();
    let got = vmap(move |a: &[Tensor]| vec![t.gather(0, &a[0])], &[], &[])(&[ok])[0].to_vec::<f32>().unwrap();
    assert_eq!(got, [4.0, 0.0, 2.0, 1.0]);
}
