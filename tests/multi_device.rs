//! Several devices in one process: numbered CPU devices (`CPU:1`, each with worker threads of
//! its own) computing what `CPU` computes, and copies between them.

mod common;
use common::panic_message;
use ferrograd::{Device, Tensor};

#[test]
fn a_numbered_cpu_device_computes_what_cpu_computes() {
    let dev = Device::new("cpu:1").unwrap();
    assert_eq!(dev.name(), "CPU:1");
    // Large enough to be split over the worker threads.
    let n = 1 << 16;
    let host: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25 - 3.0).collect();
    let on_cpu = Tensor::from_slice(&host).reshape([256, 256]);
    let on_cpu1 = on_cpu.to("CPU:1");
    assert_eq!(on_cpu1.device(), "CPU:1");
    let f = |t: &Tensor| (t.matmul(&t.t()).relu() + 1.0).sum_axis(1);
    let want = f(&on_cpu).to_vec::<f32>().unwrap();
    let got = f(&on_cpu1);
    assert_eq!(got.device(), "CPU:1");
    assert_eq!(got.to_vec::<f32>().unwrap(), want, "CPU:1 runs the same kernels");
    // CPU:1 → CPU:2 → CPU, and an op that mixes a copy with a tensor already there.
    let back = (got.to("CPU:2").to("CPU") - Tensor::from_slice(&want)).abs().max().to_vec::<f32>().unwrap();
    assert_eq!(back, vec![0.0]);
}

#[test]
fn mixing_devices_without_a_copy_panics_naming_both() {
    let a = Tensor::from_slice(&[1.0f32, 2.0]);
    let b = Tensor::from_slice(&[1.0f32, 2.0]).to("CPU:1");
    let msg = panic_message(|| drop(&a + &b));
    assert!(msg.contains("CPU") && msg.contains("CPU:1") && msg.contains(".to(device)"), "{msg}");
}

const TWO: [&str; 2] = ["CPU", "CPU:1"];
const THREE: [&str; 3] = ["CPU", "CPU:1", "CPU:2"];

fn ints(shape: &[usize], seed: i32) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<i32> = (0..n as i32).map(|i| (i * 7 + seed) % 23 - 11).collect();
    Tensor::from_vec(v, shape.to_vec())
}

fn floats(shape: &[usize], seed: u32) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n as u32)
        .map(|i| ((i.wrapping_mul(2654435761).wrapping_add(seed) >> 8) % 1000) as f32 / 500.0 - 1.0)
        .collect();
    Tensor::from_vec(v, shape.to_vec())
}

fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}: element {i}: {g} vs {w}");
    }
}

#[test]
fn shards_gather_back_exactly_on_two_and_three_devices() {
    let x = ints(&[6, 4], 3);
    let want = x.to_vec::<i32>().unwrap();
    for devices in [&TWO[..], &THREE[..]] {
        for axis in [Some(0), Some(1), None] {
            if axis == Some(1) && devices.len() == 3 {
                continue; // 4 columns do not split over 3 devices
            }
            let s = x.shard(devices, axis);
            assert!(s.is_spread());
            assert_eq!(s.devices(), devices.iter().map(|d| d.to_string()).collect::<Vec<_>>());
            assert_eq!(s.shape(), vec![6, 4], "the logical shape");
            assert_eq!(s.shard_axis(), axis.map(|a| a as usize));
            assert_eq!(s.to("CPU").to_vec::<i32>().unwrap(), want, "{devices:?} axis {axis:?}");
            // Realized first, then read (the realized shards are kept and gathered).
            let r = s.realize().unwrap();
            assert_eq!(r.to_vec::<i32>().unwrap(), want, "{devices:?} axis {axis:?} realized");
        }
    }
}

#[test]
fn elementwise_movement_and_reduce_ops_equal_one_device_exactly_for_integers() {
    let x = ints(&[6, 4, 2], 1);
    let y = ints(&[6, 4, 2], 5);
    let f = |x: &Tensor, y: &Tensor| -> Vec<Tensor> {
        let z = (x * y + 3) * x.max_keepdim(2); // replicated-style broadcast of a reduce on an unsharded axis
        vec![
            z.clone(),
            z.permute([2, 0, 1]).contiguous(),
            z.reshape([6, 8]) + 1,
            z.sum_axis(0), // over the sharded axis: an allreduce
            z.max_axis(0), // allreduce with MAX
            z.sum_axis(1), // per device
            z.sum(),       // everything
            z.reshape([6, 1, 8]).expand([6, 3, 8]).sum_axis(2),
            z.pad(&[(0, 0), (1, 2), (0, 0)]).shrink(&[(0, 6), (0, 5), (1, 2)]),
        ]
    };
    let want: Vec<Vec<i32>> = f(&x, &y).iter().map(|t| t.to_vec::<i32>().unwrap()).collect();
    for devices in [&TWO[..], &THREE[..]] {
        // Both sharded, and one of them replicated (sliced per device to meet the other).
        for (xa, ya) in [(Some(0), Some(0)), (Some(0), None), (None, None)] {
            let got = f(&x.shard(devices, xa), &y.shard(devices, ya));
            for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(&g.to_vec::<i32>().unwrap(), w, "output {k} on {devices:?}, axes {xa:?}/{ya:?}");
            }
        }
    }
}

#[test]
fn allreduce_naive_and_ring_are_exact_for_integers_and_agree_on_every_device() {
    // 6 x 70_000 summed over the sharded rows: 70,000 elements per device, above
    // ALLREDUCE_RING's default (65,536), so the ring; 6 x 100 stays naive.
    for cols in [100usize, 70_000] {
        let x = ints(&[6, cols], 2);
        let want = x.sum_axis(0).to_vec::<i32>().unwrap();
        for devices in [&TWO[..], &THREE[..]] {
            let s = x.shard(devices, 0).sum_axis(0).realize().unwrap();
            assert_eq!(s.shard_axis(), None, "replicated after the allreduce");
            for d in devices {
                assert_eq!(s.to(d).to_vec::<i32>().unwrap(), want, "{cols} columns, on {d} of {devices:?}");
            }
        }
        let xf = floats(&[6, cols], 9);
        let want = xf.sum_axis(0).to_vec::<f32>().unwrap();
        let s = xf.shard(&THREE, 0).sum_axis(0).realize().unwrap();
        let first = s.to("CPU").to_vec::<f32>().unwrap();
        assert_close(&first, &want, 1e-5, "float allreduce");
        for d in &THREE[1..] {
            assert_eq!(s.to(d).to_vec::<f32>().unwrap(), first, "every device holds the same bits");
        }
    }
}

#[test]
fn matmul_sharded_on_rows_or_on_the_reduced_axis() {
    let a = floats(&[6, 12], 1);
    let w = floats(&[12, 5], 2);
    let want = a.matmul(&w).to_vec::<f32>().unwrap();
    for devices in [&TWO[..], &THREE[..]] {
        let rows = a.shard(devices, 0).matmul(&w.shard(devices, None));
        assert_eq!(rows.shard_axis(), Some(0));
        assert_close(&rows.to_vec::<f32>().unwrap(), &want, 1e-5, "rows");
        // Sharded along k: each device multiplies its slice, the sum is an allreduce.
        let inner = a.shard(devices, 1).matmul(&w.shard(devices, 0));
        assert_eq!(inner.shard_axis(), None);
        assert_close(&inner.to_vec::<f32>().unwrap(), &want, 1e-5, "k");
    }
}

#[test]
fn backward_through_sharded_data_and_replicated_weights_equals_one_device() {
    let x = floats(&[6, 8], 3);
    let w0 = floats(&[8, 4], 4);
    let loss_of = |x: &Tensor, w: &Tensor| (x.matmul(w).relu() * x.sum_keepdim(1)).mean();
    let w = w0.copy().requires_grad();
    loss_of(&x, &w).backward();
    let want_w = w.grad().unwrap().to_vec::<f32>().unwrap();
    let xg = x.copy().requires_grad();
    loss_of(&xg, &w0).backward();
    let want_x = xg.grad().unwrap().to_vec::<f32>().unwrap();
    for devices in [&TWO[..], &THREE[..]] {
        // A replicated parameter: its gradient is summed over the devices' batches.
        let w = w0.copy().realize().unwrap().requires_grad();
        w.shard_(devices, None).unwrap();
        assert!(w.is_spread() && w.is_requires_grad());
        let loss = loss_of(&x.shard(devices, 0), &w);
        assert!(loss.is_spread());
        loss.backward();
        let g = w.grad().unwrap();
        assert_eq!(g.devices().len(), devices.len());
        assert_close(&g.to_vec::<f32>().unwrap(), &want_w, 1e-5, "dL/dw");
        // Through `shard` back to the tensor that was spread.
        let xg = x.copy().requires_grad();
        loss_of(&xg.shard(devices, 0), &w0.shard(devices, None)).backward();
        assert_eq!(xg.grad().unwrap().devices(), vec!["CPU".to_string()]);
        assert_close(&xg.grad().unwrap().to_vec::<f32>().unwrap(), &want_x, 1e-5, "dL/dx");
    }
}

#[test]
fn an_assign_writes_every_devices_part() {
    let p0 = floats(&[6, 4], 5);
    let step = floats(&[6, 4], 6);
    let want = (&p0 - &step * 0.5).to_vec::<f32>().unwrap();
    for axis in [Some(0), None] {
        let p = p0.copy().realize().unwrap();
        p.shard_(&THREE, axis).unwrap();
        // A view taken before the assign reads the same memory: it sees the new values only if
        // the assign wrote them in place.
        let view = p.reshape([24]);
        p.assign(&(&p - &step.shard(&THREE, None) * 0.5));
        p.realize().unwrap();
        assert_eq!(p.to_vec::<f32>().unwrap(), want, "axis {axis:?}");
        assert_eq!(view.to_vec::<f32>().unwrap(), want, "axis {axis:?}: written in place");
        // Read again after the assign ran: once, not twice.
        assert_eq!(p.to_vec::<f32>().unwrap(), want);
        assert_eq!(p.shard_axis(), axis.map(|a| a as usize));
    }
}

#[test]
fn placements_that_do_not_meet_panic_naming_both() {
    let a = floats(&[4, 2], 1);
    let s = a.shard(&TWO, 0);
    let msg = panic_message(|| drop(&a + &s));
    assert!(msg.contains("CPU") && msg.contains("spread over (CPU, CPU:1)") && msg.contains(".shard("), "{msg}");
    let t = a.shard(&THREE[1..], 0);
    let msg = panic_message(|| drop(&s + &t));
    assert!(msg.contains("(CPU, CPU:1)") && msg.contains("(CPU:1, CPU:2)"), "{msg}");
    let msg = panic_message(|| drop(a.shard(&THREE, 0)));
    assert!(msg.contains("[4, 2]") && msg.contains("3 devices") && msg.contains("CPU:2"), "{msg}");
    let msg = panic_message(|| drop(a.shard(&["CPU", "cpu"], 0)));
    assert!(msg.contains("twice"), "{msg}");
}

#[test]
fn ops_that_need_other_devices_elements_gather_first() {
    // Sharded on different axes, a reshape that splits the shards, a flip, pad and shrink along
    // the sharded axis, an assign of a value sharded otherwise: each runs on the tensor gathered
    // whole on every device, and equals one device's result.
    let b = ints(&[4, 6], 2);
    let c = ints(&[4, 6], 9);
    let f = |b: &Tensor, c: &Tensor| -> Vec<Tensor> {
        vec![
            b + c,
            b.reshape([24]) * 2,
            b.t().reshape([2, 12]),
            b.flip([0]) - c,
            b.pad(&[(1, 0), (0, 0)]).sum_axis(1),
            b.shrink(&[(1, 3), (0, 6)]),
        ]
    };
    let want: Vec<Vec<i32>> = f(&b, &c).iter().map(|t| t.to_vec::<i32>().unwrap()).collect();
    for (ba, ca) in [(Some(0), Some(1)), (Some(1), Some(0)), (Some(0), None)] {
        let got = f(&b.shard(&TWO, ba), &c.shard(&TWO, ca));
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(&g.to_vec::<i32>().unwrap(), w, "output {k}, axes {ba:?}/{ca:?}");
        }
    }
    let p = ints(&[4, 6], 1).realize().unwrap();
    p.shard_(&TWO, 0).unwrap();
    p.assign(c.shard(&TWO, 1));
    assert_eq!(p.to_vec::<i32>().unwrap(), c.to_vec::<i32>().unwrap());
    assert_eq!(p.shard_axis(), Some(0));
}

/// A small convolutional net in f64 (conv, batch statistics, relu, max-pool, linear, cross
/// entropy): single-device and data-parallel gradients agree to f64 rounding, so any
/// difference in f32 training is rounding, not a wrong rule.
#[test]
fn data_parallel_gradients_of_a_conv_net_equal_one_device_in_f64() {
    use ferrograd::tensor::{ConvOpts, PoolOpts};
    use ferrograd::DType;
    let x = (floats(&[12, 1, 10, 10], 11) * 3.0).cast(DType::F64);
    let y = Tensor::from_vec((0..12).map(|i| (i * 7) % 5).collect::<Vec<i32>>(), [12]);
    let params = || {
        vec![
            floats(&[4, 1, 3, 3], 12).cast(DType::F64).realize().unwrap(),
            floats(&[4], 13).cast(DType::F64).realize().unwrap(),
            floats(&[5, 64], 14).cast(DType::F64).realize().unwrap(),
        ]
    };
    let loss_of = |x: &Tensor, y: &Tensor, p: &[Tensor]| {
        let h = x.conv2d(&p[0], Some(&p[1]), &ConvOpts::default());
        let mean = h.mean_keepdim([0, 2, 3]);
        let var = (&h - &mean).square().mean_keepdim([0, 2, 3]);
        let h = ((&h - &mean) / (var + 1e-5).sqrt()).relu().max_pool2d(2, &PoolOpts::default());
        h.flatten_range(1, -1).matmul(&p[2].t()).sparse_categorical_crossentropy(y, -1, 0.0, Default::default())
    };
    let single: Vec<Tensor> = params().into_iter().map(|p| p.requires_grad()).collect();
    let l1 = loss_of(&x, &y, &single);
    l1.backward();
    let want: Vec<Vec<f64>> = single.iter().map(|p| p.grad().unwrap().to_vec::<f64>().unwrap()).collect();
    for devices in [&TWO[..], &THREE[..]] {
        let spread: Vec<Tensor> = params().into_iter().map(|p| p.requires_grad()).collect();
        for p in &spread {
            p.shard_(devices, None).unwrap();
        }
        let l2 = loss_of(&x.shard(devices, 0), &y.shard(devices, 0), &spread);
        l2.backward();
        let (a, b) = (l1.to_vec::<f64>().unwrap()[0], l2.to_vec::<f64>().unwrap()[0]);
        assert!((a - b).abs() <= 1e-12 * a.abs(), "loss {a} vs {b}");
        // The conv bias's gradient is 0 up to rounding (the batch statistics remove it): compare
        // against the largest gradient of all.
        let scale = want.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
        for (k, (p, w)) in spread.iter().zip(&want).enumerate() {
            let g = p.grad().unwrap().to_vec::<f64>().unwrap();
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                assert!((g - w).abs() <= 1e-10 * scale, "param {k} element {i}: {g} vs {w} on {devices:?}");
            }
        }
    }
}

#[test]
fn tinyjit_replays_a_step_on_several_devices() {
    let p = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], [6]);
    p.shard_(&THREE, 0).unwrap();
    let state = p.clone();
    let mut jit = ferrograd::TinyJit::new(move |_| {
        state.assign(&(&state + 1.0));
        // A spread output, a gathered one and the updated state itself.
        vec![&state * 2.0, (&state * &state).sum().to("CPU"), state.clone()]
    });
    for call in 1..=6 {
        let out = jit.call(&[]).unwrap();
        let want: Vec<f32> = (1..=6).map(|v| (v + call) as f32).collect();
        assert!(out[0].is_spread() && out[2].is_spread(), "call {call}");
        assert_eq!(out[0].to_vec::<f32>().unwrap(), want.iter().map(|v| v * 2.0).collect::<Vec<_>>(), "call {call}");
        assert_eq!(out[1].to_vec::<f32>().unwrap(), vec![want.iter().map(|v| v * v).sum::<f32>()], "call {call}");
        assert_eq!(out[2].to_vec::<f32>().unwrap(), want, "call {call}");
    }
    assert!(jit.captured_len().is_some_and(|n| n > 0));
    assert_eq!(p.to_vec::<f32>().unwrap(), (7..=12).map(|v| v as f32).collect::<Vec<_>>());
}

#[test]
fn tinyjit_takes_spread_inputs() {
    let w = floats(&[4], 3).realize().unwrap();
    w.shard_(&TWO, None).unwrap();
    let w_host = floats(&[4], 3).to_vec::<f32>().unwrap();
    let wj = w.clone();
    let mut jit = ferrograd::TinyJit::new(move |xs| vec![(&xs[0] * &wj).sum_axis(1), xs[0].clone()]);
    for call in 0..6u32 {
        let host = floats(&[6, 4], 10 + call);
        let x = host.shard(&TWO, 0).realize().unwrap();
        let out = jit.call(&[&x]).unwrap();
        let hv = host.to_vec::<f32>().unwrap();
        let want: Vec<f32> = hv.chunks(4).map(|r| r.iter().zip(&w_host).fold(0.0f32, |a, (p, q)| a + p * q)).collect();
        let got = out[0].to_vec::<f32>().unwrap();
        assert_close(&got, &want, 1e-6, &format!("call {call}"));
        assert!(out[1].is_spread() && out[1].shard_axis() == Some(0), "the input itself, call {call}");
        assert_eq!(out[1].to_vec::<f32>().unwrap(), hv, "call {call}");
    }
    assert!(jit.captured_len().is_some());
}

/// Two OpenCL devices (CI gets two from PoCL with `POCL_DEVICES="pthread pthread"`), and a
/// tensor spread over an OpenCL device and the CPU: the same results as one device. Skips,
/// saying so, where there is no second OpenCL device.
#[test]
fn spread_over_two_opencl_devices_and_over_opencl_and_cpu() {
    if ferrograd::runtime::get_device("CL:1").is_err() {
        eprintln!("skipped: no second OpenCL device (POCL_DEVICES=\"pthread pthread\" gives one)");
        return;
    }
    let x = floats(&[6, 8], 21);
    let w0 = floats(&[8, 3], 22);
    let w = w0.copy().requires_grad();
    let loss = (x.matmul(&w).relu() * x.sum_keepdim(1)).mean();
    loss.backward();
    let (want_loss, want_g) = (loss.to_vec::<f32>().unwrap(), w.grad().unwrap().to_vec::<f32>().unwrap());
    for devices in [["CL", "CL:1"], ["CL:1", "CPU"]] {
        let w = w0.copy().realize().unwrap().requires_grad();
        w.shard_(&devices, None).unwrap();
        let loss = (x.shard(&devices, 0).matmul(&w).relu() * x.shard(&devices, 0).sum_keepdim(1)).mean();
        loss.backward();
        assert_close(&loss.to_vec::<f32>().unwrap(), &want_loss, 1e-5, &format!("loss on {devices:?}"));
        assert_close(&w.grad().unwrap().to_vec::<f32>().unwrap(), &want_g, 1e-5, &format!("dL/dw on {devices:?}"));
        let s = ints(&[6, 70_000], 4).shard(&devices, 0).sum_axis(0);
        assert_eq!(
            s.to_vec::<i32>().unwrap(),
            ints(&[6, 70_000], 4).sum_axis(0).to_vec::<i32>().unwrap(),
            "ring on {devices:?}"
        );
    }
}

#[test]
fn a_gather_read_again_after_an_assign_sees_the_new_values() {
    // Two handles on the same (hash-consed) gather: the first is read, then the tensor is
    // assigned, then the second is read. As for a tensor on one device, the lazy value reads the
    // memory as it is then (a remembered result of the first read would be stale).
    let p = Tensor::from_vec(vec![1i32, 2, 3, 4], [4]);
    p.shard_(&TWO, 0).unwrap();
    let (a, b) = (p.to("CPU"), p.to("CPU"));
    assert_eq!(a.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
    p.assign(&(&p + 10));
    p.realize().unwrap();
    assert_eq!(b.to_vec::<i32>().unwrap(), vec![11, 12, 13, 14]);
    // The same on one device.
    let q = Tensor::from_vec(vec![1i32, 2, 3, 4], [4]).realize().unwrap();
    let (c, d) = (&q * 1, &q * 1);
    assert_eq!(c.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
    q.assign(&(&q + 10));
    q.realize().unwrap();
    assert_eq!(d.to_vec::<i32>().unwrap(), vec![11, 12, 13, 14]);
}
