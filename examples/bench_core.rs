//! Core benchmarks, each printed with a ratio to a reference measured in the same run:
//! - framework overhead per new kernel (schedule + codegen + render, no C compiler), against
//!   one C compiler run;
//! - a cached realize of a tiny op (add two 16-element tensors, read back), against a direct
//!   launch of the same compiled kernel;
//! - `((a*b+c).relu()*2).sum()` on 16M f32 in GB/s, against a single-thread copy of the same
//!   bytes;
//! - a TinyJit replay of 64 small kernels, per kernel, against a direct launch of one of them.
//!
//! `DEV=` picks the device.

use ferrograd::codegen::get_program;
use ferrograd::runtime::get_device;
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// 60 distinct small graphs (different ops and shapes).
fn distinct_graphs() -> Vec<Tensor> {
    let mut out = Vec::new();
    for i in 0..60usize {
        let n = 8 + i;
        let a = Tensor::ones([n, 4]);
        let b = Tensor::full([4], i as f64);
        let t = match i % 6 {
            0 => (&a + &b).exp(),
            1 => (&a * &b).sum_axis(1),
            2 => (&a - &b).relu().max_axis(0),
            3 => a.t().reshape([4 * n]) * 2.0,
            4 => (a.reshape([n, 1, 4]) * a.reshape([1, n, 4])).sum_axis(2),
            _ => a.pad(&[(1, 1), (0, 0)]).sqrt().mean_axis(1),
        };
        out.push(t);
    }
    out
}

fn main() -> ferrograd::Result<()> {
    let dev = ferrograd::Device::try_default()?;
    let device = get_device(dev.name())?;
    println!("device: {dev}");

    // 1. Framework overhead per new kernel.
    let graphs = distinct_graphs();
    let mut per_kernel = Vec::new();
    let mut last_src = String::new();
    for g in &graphs {
        let t0 = Instant::now();
        let sched = create_schedule(&[g.uop()]);
        let mut n = 0;
        for item in &sched.items {
            let spec = get_program(&item.ast, device.renderer(), None);
            last_src = spec.src;
            n += 1;
        }
        per_kernel.push(t0.elapsed().as_secs_f64() / n.max(1) as f64);
    }
    let overhead = median(per_kernel);
    // The reference: compiling one kernel with the device's own compiler.
    let t0 = Instant::now();
    let compile = if dev.name() == "CPU" {
        let cc = ferrograd::runtime::cpu::CCompiler::from_env();
        let out = std::env::temp_dir().join(format!("ferrograd-bench-{}.so", std::process::id()));
        cc.compile_to(&last_src, &out, "bench")?;
        let _ = std::fs::remove_file(out);
        t0.elapsed().as_secs_f64()
    } else {
        // Other devices compile through their driver (a program not compiled before).
        let ast = &create_schedule(&[graphs[0].uop()]).items[0].ast;
        let spec = std::sync::Arc::new(get_program(ast, device.renderer(), None));
        let t0 = Instant::now();
        device.compile(&[spec])?;
        t0.elapsed().as_secs_f64()
    };
    println!(
        "framework overhead per new kernel   {:>10.1} us   ({:.4}x of one {} compile, {:.1} ms; goal <= 1000 us)",
        overhead * 1e6,
        overhead / compile,
        dev.name(),
        compile * 1e3
    );

    // 2. Cached realize of a tiny op.
    let x = Tensor::from_slice(&[1.0f32; 16]);
    let y = Tensor::from_slice(&[2.0f32; 16]);
    let mut times = Vec::new();
    for _ in 0..2000 {
        let t0 = Instant::now();
        let z = (&x + &y).to_vec::<f32>()?;
        times.push(t0.elapsed().as_secs_f64());
        assert_eq!(z[0], 3.0);
    }
    let tiny = median(times);
    // Reference: launching the same compiled kernel directly and copying 64 bytes out.
    let sched = create_schedule(&[(&x + &y).uop()]);
    let spec = std::sync::Arc::new(get_program(&sched.items[0].ast, device.renderer(), None));
    let prog = device.compile(&[spec])?.remove(0);
    let bufs = &sched.items[0].bufs;
    let mems: Vec<_> = bufs.iter().map(|b| b.memory()).collect::<ferrograd::Result<_>>()?;
    let mut times = Vec::new();
    for _ in 0..2000 {
        let t0 = Instant::now();
        prog.launch(&mems, &[], false)?;
        let _ = bufs[0].to_bytes()?;
        times.push(t0.elapsed().as_secs_f64());
    }
    let direct = median(times);
    println!(
        "cached realize, 16-element add       {:>10.2} us   ({:.1}x a direct launch + read, {:.2} us; goal <= 20 us)",
        tiny * 1e6,
        tiny / direct,
        direct * 1e6
    );

    // 3. Fused elementwise + reduce on 16M f32.
    let n = 16 << 20;
    Tensor::manual_seed(1);
    let a = Tensor::rand([n]).realize()?;
    let b = Tensor::rand([n]).realize()?;
    let c = Tensor::rand([n]).realize()?;
    let mut times = Vec::new();
    for _ in 0..7 {
        let t0 = Instant::now();
        let r = ((&a * &b + &c).relu() * 2.0).sum().realize()?;
        device.synchronize()?; // launches may be asynchronous (OpenCL, CUDA)
        times.push(t0.elapsed().as_secs_f64());
        let _ = r;
    }
    let fused = median(times);
    let bytes = 3.0 * n as f64 * 4.0;
    let src = vec![1.0f32; 3 * n];
    let mut dst = vec![0.0f32; 3 * n];
    let mut times = Vec::new();
    for _ in 0..7 {
        let t0 = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
        times.push(t0.elapsed().as_secs_f64());
    }
    let copy = median(times);
    println!(
        "((a*b+c).relu()*2).sum() 16M f32     {:>10.2} GB/s ({:.2}x a 1-thread copy of the same bytes, {:.2} GB/s; goal >= 0.5)",
        bytes / fused / 1e9,
        copy / fused,
        bytes / copy / 1e9
    );

    // 4. TinyJit replay: the per-kernel cost of launching a captured step.
    const KERNELS: usize = 64;
    let mut jit = ferrograd::TinyJit::new(|inputs| {
        let mut t = inputs[0].clone();
        for i in 0..KERNELS {
            t = (&t + i as f64).contiguous();
        }
        vec![t]
    });
    let input = Tensor::from_slice(&[0.0f32; 16]).realize()?;
    let mut times = Vec::new();
    for call in 0..400 {
        let t0 = Instant::now();
        let out = jit.call(&[&input])?;
        if call >= 3 {
            times.push(t0.elapsed().as_secs_f64());
        }
        if call == 3 {
            let want = (0..KERNELS).sum::<usize>() as f32;
            assert_eq!(out[0].to_vec::<f32>()?[0], want, "replayed result");
        }
    }
    assert_eq!(jit.captured_len(), Some(KERNELS), "one kernel per step");
    let replay = median(times) / KERNELS as f64;
    let mut times = Vec::new();
    for _ in 0..2000 {
        let t0 = Instant::now();
        prog.launch(&mems, &[], false)?;
        times.push(t0.elapsed().as_secs_f64());
    }
    let launch = median(times);
    println!(
        "TinyJit replay, per kernel ({KERNELS} kernels) {:>8.2} us   ({:.1}x a direct launch, {:.2} us; goal <= 2 us)",
        replay * 1e6,
        replay / launch,
        launch * 1e6
    );
    Ok(())
}
