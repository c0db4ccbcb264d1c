//! Movement ops (reshape, permute, expand, pad, shrink, flip and the helpers built on them),
//! alone, chained, and followed by elementwise ops and reductions, against index loops on a
//! reference array. Also the panics for programmer errors.

mod common;

use common::*;
use ferrograd::{DType, Tensor};

/// Distinct values so that any misplaced element shows.
fn iota(shape: &[usize]) -> (Tensor, Nd) {
    let x = Nd::iota(shape).map(|v| v * 0.5 - 3.0);
    (x.f32(), x)
}

fn ctx(what: &str, dev: &str) -> String {
    format!("{what} on {dev}")
}

// ---------------------------------------------------------------- single ops

#[test]
fn reshape_keeps_row_major_order() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3, 4]);
        let shapes: [(&[isize], &[usize]); 7] = [
            (&[6, 4], &[6, 4]),
            (&[4, -1], &[4, 6]),
            (&[-1], &[24]),
            (&[2, 1, 12], &[2, 1, 12]),
            (&[1, 2, -1, 1, 3], &[1, 2, 4, 1, 3]),
            (&[24, 1], &[24, 1]),
            (&[2, 3, 4], &[2, 3, 4]),
        ];
        for (arg, want) in shapes {
            let r = t.reshape(arg.to_vec());
            check_f32(&r, &x.reshape(want), &ctx(&format!("reshape to {arg:?}"), dev));
        }
        // 0-d to and from.
        let s = Nd::scalar(4.5);
        check_f32(&s.f32().reshape([1, 1, 1]), &s.reshape(&[1, 1, 1]), &ctx("reshape [] -> [1,1,1]", dev));
        let one = Nd::new(&[1, 1], vec![-2.0]);
        check_f32(&one.f32().reshape(Vec::<usize>::new()), &one.reshape(&[]), &ctx("reshape [1,1] -> []", dev));
        // Empty.
        let (e, er) = iota(&[0, 6]);
        check_f32(&e.reshape([3, 0, 2]), &er.reshape(&[3, 0, 2]), &ctx("reshape [0,6] -> [3,0,2]", dev));
        // A non-contiguous view reshaped reads in the view's order.
        let (m, mr) = iota(&[3, 4]);
        check_f32(&m.t().reshape([-1]), &mr.transpose(0, 1).reshape(&[12]), &ctx("reshape of transposed", dev));
        check_f32(&m.t().reshape([2, 6]), &mr.transpose(0, 1).reshape(&[2, 6]), &ctx("reshape of t to [2,6]", dev));
    });
}

#[test]
fn permute_all_orders_of_3d() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3, 4]);
        let orders: [[usize; 3]; 6] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
        for o in orders {
            check_f32(&t.permute(o), &x.permute(&o), &ctx(&format!("permute {o:?}"), dev));
        }
        // Negative axes, reversal with `()`, size-1 axes in 4-d.
        check_f32(&t.permute([-1, 0, -2]), &x.permute(&[2, 0, 1]), &ctx("permute [-1,0,-2]", dev));
        check_f32(&t.permute(()), &x.permute(&[2, 1, 0]), &ctx("permute ()", dev));
        let (u, y) = iota(&[1, 3, 1, 2]);
        check_f32(&u.permute([3, 2, 0, 1]), &y.permute(&[3, 2, 0, 1]), &ctx("permute 4-d", dev));
        // Permute of a permute.
        check_f32(&t.permute([1, 2, 0]).permute([2, 0, 1]), &x, &ctx("permute inverse", dev));
    });
}

#[test]
fn expand_broadcasts_size_one_axes() {
    for_each_device(|dev| {
        let (t, x) = iota(&[3, 1]);
        check_f32(&t.expand([3, 4]), &x.expand(&[3, 4]), &ctx("expand [3,1]->[3,4]", dev));
        check_f32(&t.expand([2, 3, 5]), &x.expand(&[2, 3, 5]), &ctx("expand with new axis", dev));
        check_f32(&t.expand([2, -1, 4]), &x.expand(&[2, 3, 4]), &ctx("expand with -1", dev));
        let (s, sr) = iota(&[]);
        check_f32(&s.expand([2, 2]), &sr.expand(&[2, 2]), &ctx("expand 0-d", dev));
        let (o, or) = iota(&[1, 3]);
        check_f32(&o.expand([0, 3]), &or.expand(&[0, 3]), &ctx("expand to empty", dev));
        check_f32(&t.broadcast_to(&[2, 3, 3]), &x.expand(&[2, 3, 3]), &ctx("broadcast_to", dev));
        // Expand of a transposed view.
        let (m, mr) = iota(&[1, 4]);
        check_f32(&m.t().expand([4, 3]), &mr.transpose(0, 1).expand(&[4, 3]), &ctx("expand of t", dev));
    });
}

#[test]
fn pad_adds_zeros() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3]);
        let cases: [&[(usize, usize)]; 4] =
            [&[(1, 0), (0, 1)], &[(0, 0), (2, 2)], &[(3, 1), (0, 0)], &[(1, 1), (1, 1)]];
        for p in cases {
            check_f32(&t.pad(p), &x.pad(p), &ctx(&format!("pad {p:?}"), dev));
        }
        let (u, y) = iota(&[2, 1, 3]);
        let p = [(0, 1), (2, 0), (1, 1)];
        check_f32(&u.pad(&p), &y.pad(&p), &ctx("pad 3-d", dev));
        let (e, er) = iota(&[0, 2]);
        check_f32(&e.pad(&[(1, 1), (0, 0)]), &er.pad(&[(1, 1), (0, 0)]), &ctx("pad empty", dev));
        let (s, sr) = iota(&[]);
        check_f32(&s.pad(&[]), &sr, &ctx("pad 0-d with nothing", dev));
        // Padding a flipped view, and padding twice.
        check_f32(&t.flip(1).pad(&[(0, 2), (1, 0)]), &x.flip(&[1]).pad(&[(0, 2), (1, 0)]), &ctx("pad flipped", dev));
        let twice = x.pad(&[(1, 0), (0, 1)]).pad(&[(0, 1), (2, 0)]);
        check_f32(&t.pad(&[(1, 0), (0, 1)]).pad(&[(0, 1), (2, 0)]), &twice, &ctx("pad twice", dev));
    });
}

#[test]
fn shrink_keeps_ranges() {
    for_each_device(|dev| {
        let (t, x) = iota(&[4, 5]);
        let cases: [[(usize, usize); 2]; 5] =
            [[(1, 3), (0, 5)], [(0, 4), (2, 3)], [(3, 4), (4, 5)], [(0, 0), (1, 4)], [(1, 4), (1, 4)]];
        for r in cases {
            check_f32(&t.shrink(&r), &x.shrink(&r), &ctx(&format!("shrink {r:?}"), dev));
        }
        // Shrink of a permuted view and of a padded tensor (back to the original).
        check_f32(
            &t.t().shrink(&[(1, 4), (0, 2)]),
            &x.transpose(0, 1).shrink(&[(1, 4), (0, 2)]),
            &ctx("shrink t", dev),
        );
        check_f32(&t.pad(&[(2, 1), (1, 3)]).shrink(&[(2, 6), (1, 6)]), &x, &ctx("pad then shrink back", dev));
        let partly = x.pad(&[(2, 1), (1, 3)]).shrink(&[(1, 4), (0, 7)]);
        check_f32(&t.pad(&[(2, 1), (1, 3)]).shrink(&[(1, 4), (0, 7)]), &partly, &ctx("shrink into padding", dev));
    });
}

#[test]
fn flip_reverses_axes() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3, 4]);
        check_f32(&t.flip(0), &x.flip(&[0]), &ctx("flip 0", dev));
        check_f32(&t.flip(-1), &x.flip(&[2]), &ctx("flip -1", dev));
        check_f32(&t.flip([0, 2]), &x.flip(&[0, 2]), &ctx("flip [0,2]", dev));
        check_f32(&t.flip(()), &x.flip(&[0, 1, 2]), &ctx("flip all", dev));
        check_f32(&t.flip(1).flip(1), &x, &ctx("flip twice", dev));
        let (o, or) = iota(&[1, 3, 1]);
        check_f32(&o.flip([0, 1, 2]), &or.flip(&[1]), &ctx("flip with size-1 axes", dev));
        check_f32(&t.permute([2, 0, 1]).flip(0), &x.permute(&[2, 0, 1]).flip(&[0]), &ctx("flip permuted", dev));
    });
}

#[test]
fn transpose_and_t() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3, 4]);
        check_f32(&t.transpose(0, 2), &x.transpose(0, 2), &ctx("transpose(0,2)", dev));
        check_f32(&t.transpose(-1, 0), &x.transpose(0, 2), &ctx("transpose(-1,0)", dev));
        check_f32(&t.transpose(1, 1), &x, &ctx("transpose(1,1)", dev));
        check_f32(&t.t(), &x.transpose(1, 2), &ctx("t() of 3-d", dev));
        let (m, mr) = iota(&[1, 5]);
        check_f32(&m.t(), &mr.transpose(0, 1), &ctx("t() of [1,5]", dev));
        check_f32(&m.t().t(), &mr, &ctx("t().t()", dev));
    });
}

#[test]
fn squeeze_and_unsqueeze() {
    for_each_device(|dev| {
        let (t, x) = iota(&[1, 3, 1, 2]);
        check_f32(&t.squeeze(()), &x.reshape(&[3, 2]), &ctx("squeeze all", dev));
        check_f32(&t.squeeze(0), &x.reshape(&[3, 1, 2]), &ctx("squeeze 0", dev));
        check_f32(&t.squeeze(-2), &x.reshape(&[1, 3, 2]), &ctx("squeeze -2", dev));
        check_f32(&t.squeeze(1), &x, &ctx("squeeze of a non-1 axis is a no-op", dev));
        check_f32(&t.squeeze([0, 2]), &x.reshape(&[3, 2]), &ctx("squeeze [0,2]", dev));
        let (o, or) = iota(&[1, 1]);
        check_f32(&o.squeeze(()), &or.reshape(&[]), &ctx("squeeze to 0-d", dev));
        let (v, vr) = iota(&[3, 2]);
        check_f32(&v.unsqueeze(0), &vr.reshape(&[1, 3, 2]), &ctx("unsqueeze 0", dev));
        check_f32(&v.unsqueeze(1), &vr.reshape(&[3, 1, 2]), &ctx("unsqueeze 1", dev));
        check_f32(&v.unsqueeze(-1), &vr.reshape(&[3, 2, 1]), &ctx("unsqueeze -1", dev));
        check_f32(&v.unsqueeze(-3), &vr.reshape(&[1, 3, 2]), &ctx("unsqueeze -3", dev));
        let (s, sr) = iota(&[]);
        check_f32(&s.unsqueeze(0), &sr.reshape(&[1]), &ctx("unsqueeze 0-d", dev));
        // Unsqueeze of a transposed view.
        check_f32(&v.t().unsqueeze(1), &vr.transpose(0, 1).reshape(&[2, 1, 3]), &ctx("unsqueeze of t", dev));
    });
}

#[test]
fn flatten_and_flatten_range() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3, 4]);
        check_f32(&t.flatten(), &x.reshape(&[24]), &ctx("flatten", dev));
        check_f32(&t.flatten_range(0, 1), &x.reshape(&[6, 4]), &ctx("flatten_range(0,1)", dev));
        check_f32(&t.flatten_range(1, -1), &x.reshape(&[2, 12]), &ctx("flatten_range(1,-1)", dev));
        check_f32(&t.flatten_range(-2, -1), &x.reshape(&[2, 12]), &ctx("flatten_range(-2,-1)", dev));
        check_f32(&t.flatten_range(1, 1), &x, &ctx("flatten_range(1,1)", dev));
        let (s, sr) = iota(&[]);
        check_f32(&s.flatten_range(0, -1), &sr.reshape(&[1]), &ctx("flatten_range of 0-d", dev));
        check_f32(&s.flatten(), &sr.reshape(&[1]), &ctx("flatten of 0-d", dev));
        let p = x.permute(&[2, 0, 1]).reshape(&[4, 6]);
        check_f32(&t.permute([2, 0, 1]).flatten_range(1, 2), &p, &ctx("flatten_range of permuted", dev));
    });
}

#[test]
fn contiguous_copies_views() {
    for_each_device(|dev| {
        let (t, x) = iota(&[3, 4]);
        let c = t.t().flip(0).contiguous();
        let cr = x.transpose(0, 1).flip(&[0]);
        check_f32(&c, &cr, &ctx("contiguous of a view", dev));
        // Realized first, then more views and math on top.
        c.realize().unwrap_or_else(|e| panic!("realize on {dev}: {e}"));
        check_f32(&c.t().mul(2.0), &cr.transpose(0, 1).map(|v| v * 2.0), &ctx("view of a contiguous copy", dev));
        check_f32(&c.contiguous().reshape([12]), &cr.reshape(&[12]), &ctx("contiguous twice", dev));
    });
}

#[test]
fn movement_ops_on_other_dtypes() {
    for_each_device(|dev| {
        let x = Nd::iota(&[2, 3]).map(|v| v * 7.0 - 10.0);
        let want = x.transpose(0, 1).pad(&[(1, 0), (0, 1)]).flip(&[0]);
        let mv = |t: Tensor| t.t().pad(&[(1, 0), (0, 1)]).flip(0);
        check_exact(&mv(x.to(|v| v as i32)), &want, DType::I32, &ctx("i32 chain", dev));
        check_exact(&mv(x.to(|v| v as i64)), &want, DType::I64, &ctx("i64 chain", dev));
        let xb = x.map(|v| b2f(v > 0.0));
        let want_b = xb.transpose(0, 1).pad(&[(1, 0), (0, 1)]).flip(&[0]);
        check_exact(&mv(xb.to(|v| v != 0.0)), &want_b, DType::BOOL, &ctx("bool chain", dev));
        let xu = x.map(|v| v.abs());
        let want_u = xu.transpose(0, 1).pad(&[(1, 0), (0, 1)]).flip(&[0]);
        check_exact(&mv(xu.to(|v| v as u8)), &want_u, DType::U8, &ctx("u8 chain", dev));
    });
}

#[test]
fn movement_of_tensors_with_an_empty_axis() {
    for_each_device(|dev| {
        let (e, er) = iota(&[2, 0, 3]);
        check_f32(&e.permute([2, 0, 1]), &er.permute(&[2, 0, 1]), &ctx("permute [2,0,3]", dev));
        check_f32(&e.reshape([0, 5]), &er.reshape(&[0, 5]), &ctx("reshape [2,0,3] -> [0,5]", dev));
        check_f32(&e.flip(0), &er.flip(&[0]), &ctx("flip [2,0,3]", dev));
        let (f, fr) = iota(&[0, 2]);
        check_f32(&f.pad(&[(1, 2), (0, 1)]), &fr.pad(&[(1, 2), (0, 1)]), &ctx("pad [0,2]", dev));
        let (o, or) = iota(&[2, 1]);
        check_f32(&o.expand([2, 0]), &or.expand(&[2, 0]), &ctx("expand [2,1] -> [2,0]", dev));
        let (m, mr) = iota(&[2, 3]);
        check_f32(
            &m.shrink(&[(0, 2), (1, 1)]).pad(&[(0, 0), (1, 1)]),
            &mr.shrink(&[(0, 2), (1, 1)]).pad(&[(0, 0), (1, 1)]),
            &ctx("shrink to [2,0] then pad", dev),
        );
    });
}

#[test]
fn pad_of_empty_inner_axis_of_a_buffer() {
    for_each_device(|dev| {
        let (e, er) = iota(&[2, 0]);
        check_f32(&e.pad(&[(0, 0), (1, 1)]), &er.pad(&[(0, 0), (1, 1)]), &ctx("pad [2,0] on axis 1", dev));
    });
}

// ---------------------------------------------------------------- chains

#[test]
fn chain_permute_reshape_pad_flip_shrink() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 3, 4]);
        let got = t.permute([2, 0, 1]).reshape([4, 6]).pad(&[(1, 2), (0, 3)]).flip([0, 1]).shrink(&[(1, 6), (2, 8)]);
        let want =
            x.permute(&[2, 0, 1]).reshape(&[4, 6]).pad(&[(1, 2), (0, 3)]).flip(&[0, 1]).shrink(&[(1, 6), (2, 8)]);
        check_f32(&got, &want, &ctx("chain", dev));
        // Expand, then reshape across the expanded axis (needs real index math, not strides).
        let (s, sr) = iota(&[3, 1]);
        let got = s.expand([3, 4]).reshape([2, 6]).t().flip(1);
        let want = sr.expand(&[3, 4]).reshape(&[2, 6]).transpose(0, 1).flip(&[1]);
        check_f32(&got, &want, &ctx("expand then reshape", dev));
        // Shrink then reshape (an offset, non-contiguous slice reshaped).
        let (m, mr) = iota(&[4, 6]);
        let got = m.shrink(&[(1, 3), (2, 6)]).reshape([8]).reshape([4, 2]).t();
        let want = mr.shrink(&[(1, 3), (2, 6)]).reshape(&[4, 2]).transpose(0, 1);
        check_f32(&got, &want, &ctx("shrink then reshape", dev));
    });
}

/// One random movement op applied to both the tensor and the reference.
fn random_movement(rng: &mut Rng, t: Tensor, x: Nd) -> (Tensor, Nd, String) {
    let n = x.shape.len();
    let big = x.numel() > 300;
    match rng.int(0, 7) {
        0 if n >= 2 => {
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.int(0, i as i64) as usize);
            }
            (t.permute(order.clone()), x.permute(&order), format!("permute {order:?}"))
        }
        1 if n >= 2 => {
            // Merge two adjacent axes.
            let i = rng.int(0, n as i64 - 2) as usize;
            let mut s = x.shape.clone();
            let merged = s[i] * s[i + 1];
            s.splice(i..i + 2, [merged]);
            (t.reshape(s.clone()), x.reshape(&s), format!("reshape {s:?}"))
        }
        2 if n < 4 => {
            // Split an axis (or add a size-1 axis).
            let i = if n == 0 { 0 } else { rng.int(0, n as i64 - 1) as usize };
            let mut s = x.shape.clone();
            let d = if n == 0 { 1 } else { s[i] };
            let f = (2..=d).find(|f| d % f == 0 && d > *f).unwrap_or(1);
            if n == 0 {
                s = vec![1];
            } else {
                s.splice(i..i + 1, [f, d / f]);
            }
            (t.reshape(s.clone()), x.reshape(&s), format!("reshape {s:?}"))
        }
        4 => {
            let axes: Vec<usize> = (0..n).filter(|_| rng.int(0, 1) == 1).collect();
            (t.flip(axes.clone()), x.flip(&axes), format!("flip {axes:?}"))
        }
        5 if !big && x.shape.contains(&1) => {
            let s: Vec<usize> = x.shape.iter().map(|&d| if d == 1 { rng.int(1, 3) as usize } else { d }).collect();
            (t.expand(s.clone()), x.expand(&s), format!("expand {s:?}"))
        }
        6 | 7 => {
            // Keep at least about a third of each axis so that chains do not shrink to nothing.
            let r: Vec<(usize, usize)> = x
                .shape
                .iter()
                .map(|&d| {
                    let s = rng.int(0, d as i64 / 3) as usize;
                    (s, rng.int((s as i64 + 1).max(d as i64 - d as i64 / 3), d as i64) as usize)
                })
                .collect();
            (t.shrink(&r), x.shrink(&r), format!("shrink {r:?}"))
        }
        _ if big => {
            let r: Vec<(usize, usize)> = x.shape.iter().map(|&d| (d / 4, d - d / 4)).collect();
            (t.shrink(&r), x.shrink(&r), format!("shrink {r:?}"))
        }
        _ => {
            let p: Vec<(usize, usize)> = (0..n).map(|_| (rng.int(0, 2) as usize, rng.int(0, 2) as usize)).collect();
            (t.pad(&p), x.pad(&p), format!("pad {p:?}"))
        }
    }
}

#[test]
fn random_movement_chains_then_math() {
    for_each_device(|dev| {
        let mut rng = Rng::new(2024);
        for case in 0..24 {
            let shape: Vec<usize> = (0..rng.int(1, 3)).map(|_| rng.int(1, 5) as usize).collect();
            let x = Nd::rand(&mut rng, &shape, -2.0, 2.0);
            let (mut t, mut xr, mut log) = (x.f32(), x, Vec::new());
            for _ in 0..6 {
                let (t2, x2, what) = random_movement(&mut rng, t, xr);
                (t, xr) = (t2, x2);
                log.push(what);
            }
            let c = format!("case {case} on {dev}: {}", log.join(" -> "));
            check_f32(&t, &xr, &c);
            check_f32(&t.mul(2.0).add(1.0), &xr.map(|v| v * 2.0 + 1.0), &format!("{c}, then *2+1"));
            if !xr.shape.is_empty() {
                check_f32(&t.sum_axis(0), &xr.sum(&[0], false), &format!("{c}, then sum(0)"));
            }
        }
    });
}

// ---------------------------------------------------------------- movement + math

#[test]
fn elementwise_on_views_of_different_layouts() {
    for_each_device(|dev| {
        let (a, ar) = iota(&[4, 3]);
        let (b, br) = iota(&[3, 4]);
        let want = ar.transpose(0, 1).zip(&br.flip(&[0]), |p, q| p * q + 1.0);
        check_f32(&a.t().mul(b.flip(0)).add(1.0), &want, &ctx("t * flip", dev));
        // The same buffer read through two views in one kernel.
        let (s, sr) = iota(&[3, 3]);
        let want = sr.zip(&sr.transpose(0, 1), |p, q| p - q);
        check_f32(&s.sub(s.t()), &want, &ctx("x - x.t()", dev));
    });
}

#[test]
fn pad_is_applied_where_it_stands_in_the_graph() {
    for_each_device(|dev| {
        let (t, x) = iota(&[2, 2]);
        let p = [(1, 0), (0, 1)];
        // exp(pad(x)) has exp(0) = 1 in the padding; pad(exp(x)) has 0 there.
        check_f32(&t.pad(&p).exp(), &x.pad(&p).map(f64::exp), &ctx("exp(pad(x))", dev));
        check_f32(&t.exp().pad(&p), &x.map(f64::exp).pad(&p), &ctx("pad(exp(x))", dev));
        check_f32(&t.add(5.0).pad(&p).sum(), &x.map(|v| v + 5.0).pad(&p).sum(&[0, 1], false), &ctx("sum(pad)", dev));
        check_f32(&t.pad(&p).add(5.0).sum(), &x.pad(&p).map(|v| v + 5.0).sum(&[0, 1], false), &ctx("sum(pad+5)", dev));
    });
}

#[test]
fn reductions_after_movement() {
    for_each_device(|dev| {
        let (t, x) = iota(&[3, 4]);
        check_f32(&t.expand([2, 3, 4]).sum_axis(0), &x.expand(&[2, 3, 4]).sum(&[0], false), &ctx("sum expanded", dev));
        let (c, cr) = iota(&[3, 1]);
        check_f32(&c.expand([3, 5]).sum_axis(1), &cr.expand(&[3, 5]).sum(&[1], false), &ctx("sum over expand", dev));
        let f = x.transpose(0, 1).flip(&[1]).shrink(&[(1, 4), (0, 2)]);
        let tf = t.t().flip(1).shrink(&[(1, 4), (0, 2)]);
        check_f32(&tf.max_axis(1), &f.max(&[1], false), &ctx("max of shrunk view", dev));
        check_f32(&tf.sum(), &f.sum(&[0, 1], false), &ctx("sum of shrunk view", dev));
        // Negative values padded with zeros: the max includes the padding.
        let n = x.map(|v| -v - 10.0);
        check_f32(
            &n.f32().pad(&[(0, 1), (0, 0)]).max_axis(0),
            &n.pad(&[(0, 1), (0, 0)]).max(&[0], false),
            &ctx("max pad", dev),
        );
    });
}

// ---------------------------------------------------------------- panics

#[test]
#[should_panic(expected = "add: cannot broadcast shapes [2, 3] and [4]")]
fn add_incompatible_shapes_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).add(Tensor::zeros([4]));
    });
}

#[test]
#[should_panic(expected = "mul: cannot broadcast shapes [3, 1, 2] and [4, 3]")]
fn mul_incompatible_shapes_panics() {
    for_each_device(|_| {
        let _ = &Tensor::zeros([3, 1, 2]) * &Tensor::zeros([4, 3]);
    });
}

#[test]
#[should_panic(expected = "where: cannot broadcast shapes")]
fn where_incompatible_shapes_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2]).lt(1.0).where_(Tensor::zeros([3]), 0.0);
    });
}

#[test]
#[should_panic(expected = "reshape: cannot reshape [2, 3] (6 elements) to [4] (4 elements)")]
fn reshape_to_other_size_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).reshape([4]);
    });
}

#[test]
#[should_panic(expected = "reshape: cannot reshape [2, 3] (6 elements) to [-1, 4]")]
fn reshape_with_uninferable_minus_one_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).reshape([-1, 4]);
    });
}

#[test]
#[should_panic(expected = "reshape: invalid shape [-1, -1]")]
fn reshape_with_two_minus_ones_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).reshape([-1, -1]);
    });
}

#[test]
#[should_panic(expected = "sum: axis 5 out of range for shape [2, 3] (2 dims)")]
fn sum_axis_out_of_range_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).sum_axis(5);
    });
}

#[test]
#[should_panic(expected = "flip: axis -3 out of range for shape [2, 3] (2 dims)")]
fn flip_negative_axis_out_of_range_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).flip(-3);
    });
}

#[test]
#[should_panic(expected = "transpose: axis 2 out of range")]
fn transpose_axis_out_of_range_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).transpose(0, 2);
    });
}

#[test]
#[should_panic(expected = "permute: [0, 0] is not a permutation of the axes of shape [2, 3]")]
fn permute_repeated_axis_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).permute([0, 0]);
    });
}

#[test]
#[should_panic(expected = "expand: cannot expand [2, 3] to [4, 3]")]
fn expand_non_one_axis_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).expand([4, 3]);
    });
}

#[test]
#[should_panic(expected = "shrink: [(0, 4), (0, 3)] is not inside shape [2, 3]")]
fn shrink_outside_shape_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).shrink(&[(0, 4), (0, 3)]);
    });
}

#[test]
#[should_panic(expected = "pad: 1 (before, after) pairs for shape [2, 3]")]
fn pad_with_wrong_number_of_pairs_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).pad(&[(1, 1)]);
    });
}

#[test]
#[should_panic(expected = "t: needs at least 2 dims, shape is [3]")]
fn t_of_1d_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([3]).t();
    });
}

#[test]
#[should_panic(expected = "unsqueeze: axis 3 out of range for shape [2]")]
fn unsqueeze_out_of_range_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2]).unsqueeze(3);
    });
}

#[test]
#[should_panic(expected = "flatten: start axis 1 is after end axis 0")]
fn flatten_range_reversed_panics() {
    for_each_device(|_| {
        let _ = Tensor::zeros([2, 3]).flatten_range(1, 0);
    });
}

#[test]
fn pad_to_shrink_to_sequential_and_nbytes() {
    for_each_device(|dev| {
        let x = Tensor::from_vec((1..=6).map(|i| i as f32).collect(), [2, 3]);
        let p = x.pad_to(&[Some(3), None]);
        assert_eq!(p.shape(), vec![3, 3]);
        assert_eq!(p.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4., 5., 6., 0., 0., 0.], "pad_to on {dev}");
        let s = x.shrink_to(&[None, Some(2)]);
        assert_eq!(s.to_vec::<f32>().unwrap(), vec![1., 2., 4., 5.], "shrink_to on {dev}");
        let double = |t: &Tensor| t * 2.0;
        let inc = |t: &Tensor| t + 1.0;
        let y = x.sequential(&[&double, &inc]);
        assert_eq!(y.to_vec::<f32>().unwrap(), vec![3., 5., 7., 9., 11., 13.], "sequential on {dev}");
        assert_eq!(x.cast(DType::F16).nbytes(), 12);
    });
}
