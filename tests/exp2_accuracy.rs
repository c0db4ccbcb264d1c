//! The CPU's f32 `exp2` — the C prelude's polynomial, in its scalar form (`__fg_exp2f`) and its
//! vector form (`__exp2_vfloatN`) — against the exact value (f64 `exp2` rounded to f32): within
//! 2 ulp over the whole range, exact at the edges (0, inf, NaN, overflow and underflow), and
//! rounded once in the subnormal range.

use ferrograd::codegen::opts::parse_opts;
use ferrograd::codegen::try_program;
use ferrograd::runtime::{get_device, DeviceMemory};
use ferrograd::schedule::{create_schedule, ItemKind};
use ferrograd::Tensor;
use std::sync::Arc;

/// A dense sweep of [-165, 135] and the edges, padded to a multiple of 64 lanes.
fn inputs() -> Vec<f32> {
    let mut x: Vec<f32> = (0..300_000).map(|i| -165.0 + 300.0 * i as f32 / 300_000.0).collect();
    x.extend((0..2_000).map(|i| (i as f32 - 1000.0) * 1e-9));
    x.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        1e-30,
        -1e-30,
        0.5,
        -0.5,
        1.5,
        -1.5,
        127.0,
        127.99999,
        128.0,
        129.0,
        130.0,
        1e10,
        -126.0,
        -126.5,
        -149.0,
        -149.4,
        -149.5,
        -149.6,
        -150.0,
        -151.0,
        -1e10,
        f32::MAX,
        f32::MIN,
    ]);
    while !x.len().is_multiple_of(64) {
        x.push(0.25);
    }
    x
}

/// `exp2` of `x` in one kernel with `opts`, and the kernel's source.
fn run(x: &[f32], opts: &str) -> (Vec<f32>, String) {
    let dev = get_device("CPU").unwrap();
    let t = Tensor::from_slice_on(x, [x.len()], "CPU").realize().unwrap().exp2();
    let sched = create_schedule(&[t.uop()]);
    let items: Vec<_> = sched.items.iter().filter(|i| i.kind == ItemKind::Kernel).collect();
    assert_eq!(items.len(), 1, "exp2 of a buffer is one kernel");
    let spec = try_program(&items[0].ast, dev.renderer(), &parse_opts(opts).unwrap()).unwrap();
    let src = spec.src.clone();
    let prog = dev.compile(&[Arc::new(spec)]).unwrap().remove(0);
    let mems: Vec<&DeviceMemory> = items[0].bufs.iter().map(|b| b.memory().unwrap()).collect();
    prog.launch(&mems, &[], false).unwrap();
    dev.synchronize().unwrap();
    let bytes = items[0].bufs[0].to_bytes().unwrap();
    (bytes.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect(), src)
}

/// How many f32 values lie between `a` and `b` (same sign or zero; inf counts as the value
/// after `f32::MAX`).
fn ulps(a: f32, b: f32) -> u32 {
    if a.is_sign_negative() != b.is_sign_negative() && (a != 0.0 || b != 0.0) {
        return u32::MAX;
    }
    a.abs().to_bits().abs_diff(b.abs().to_bits())
}

fn check(x: &[f32], got: &[f32], form: &str) {
    let mut worst = (0u32, 0.0f32);
    for (&xi, &g) in x.iter().zip(got) {
        let want = (xi as f64).exp2() as f32;
        if xi.is_nan() {
            assert!(g.is_nan(), "{form} exp2(NaN) = {g}");
            continue;
        }
        // At 0, at the infinities and past the range (0 or inf) the result is exact.
        if xi.is_infinite() || xi == 0.0 || xi.abs() >= 151.0 {
            assert_eq!(g.to_bits(), want.to_bits(), "{form} exp2({xi:e}) = {g:e}, want {want:e}");
            continue;
        }
        let d = ulps(g, want);
        assert!(d <= 2, "{form} exp2({xi:e}) = {g:e}, want {want:e}: {d} ulp apart");
        if d > worst.0 {
            worst = (d, xi);
        }
    }
    eprintln!("{form}: worst {} ulp (at {:e}) over {} inputs", worst.0, worst.1, x.len());
}

#[test]
fn scalar_exp2_is_within_2_ulp() {
    let x = inputs();
    // No opts: no vector axis, the scalar helper.
    let (got, src) = run(&x, "");
    assert!(src.contains("__fg_exp2f("), "the scalar kernel calls the prelude's exp2:\n{src}");
    check(&x, &got, "scalar");
}

#[test]
fn vector_exp2_is_within_2_ulp() {
    let x = inputs();
    let dev = get_device("CPU").unwrap();
    if dev.renderer().target().simd_bytes == 0 {
        eprintln!("this CPU's target has no SIMD vectors: nothing to check");
        return;
    }
    let (got, src) = run(&x, "U0:16");
    assert!(src.contains("__exp2_vfloat"), "the vectorized kernel calls the vector exp2:\n{src}");
    check(&x, &got, "vector");
}
