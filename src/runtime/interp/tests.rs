//! Unit tests of the INTERP device: hand-built linear programs run end to end.

use super::{InterpDevice, InterpProgram, InterpRenderer};
use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::renderer::Renderer;
use crate::runtime::backend::{Backend, DeviceMemory, Program};
use crate::runtime::memory::HostMemory;
use crate::uop::{Arg, AxisType, DType, FxHashMap, Ops, UOp};
use std::sync::Arc;

// ------------------------------------------------------------ builders

fn global(i: i64, dt: DType) -> UOp {
    UOp::new(Ops::DEFINE_GLOBAL, dt.ptr(), vec![], Arg::Int(i))
}
fn index(buf: &UOp, i: &UOp) -> UOp {
    UOp::new(Ops::INDEX, buf.dtype(), vec![buf.clone(), i.clone()], Arg::None)
}
fn gated_index(buf: &UOp, i: &UOp, gate: &UOp) -> UOp {
    UOp::new(Ops::INDEX, buf.dtype(), vec![buf.clone(), i.clone(), gate.clone()], Arg::None)
}
fn load(idx: &UOp, dt: DType) -> UOp {
    UOp::new(Ops::LOAD, dt, vec![idx.clone()], Arg::None)
}
fn store(target: &UOp, v: &UOp) -> UOp {
    UOp::new(Ops::STORE, DType::VOID, vec![target.clone(), v.clone()], Arg::None)
}
fn range(end: &UOp, id: u32) -> UOp {
    UOp::range(end.clone(), id, AxisType::Global)
}
fn end(r: &UOp) -> UOp {
    UOp::new(Ops::END, DType::VOID, vec![r.clone()], Arg::None)
}
fn i32c(v: i64) -> UOp {
    UOp::int(DType::I32, v)
}
fn alu(op: Ops, src: &[&UOp]) -> UOp {
    UOp::alu(op, src.iter().map(|s| (*s).clone()).collect())
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}
fn i32_bytes(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
fn i32s(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// Compiles `uops` through the device, runs them on buffers holding `data`, and returns
/// the buffers' contents afterwards.
fn run(uops: &[UOp], data: &[Vec<u8>], vals: &[i64]) -> Result<Vec<Vec<u8>>> {
    let dev = InterpDevice::new();
    let mems: Vec<DeviceMemory> = data.iter().map(|d| dev.alloc(d.len())).collect::<Result<_>>()?;
    for (m, d) in mems.iter().zip(data) {
        dev.copy_in(m, d)?;
    }
    let spec = ProgramSpec {
        name: "test".to_string(),
        uops: uops.to_vec(),
        src: String::new(),
        global_size: [1, 1, 1],
        threads: 1,
        local_size: None,
        buf_count: data.len(),
        vars: vec![],
        flops: 0,
        bytes: 0,
        opts: String::new(),
    };
    let progs = dev.compile(&[Arc::new(spec)])?;
    let refs: Vec<&DeviceMemory> = mems.iter().collect();
    progs[0].launch(&refs, vals, true)?;
    mems.iter()
        .map(|m| {
            let mut out = vec![0u8; m.bytes];
            dev.copy_out(m, &mut out)?;
            Ok(out)
        })
        .collect()
}

/// `out[0] = op(a[0], b[0])` on one-element buffers of `dt`, returning the raw result bytes.
fn binary_on(op: Ops, dt: DType, a: Vec<u8>, b: Vec<u8>) -> Vec<u8> {
    let out_dt = if op.is_comparison() { DType::BOOL } else { dt };
    let (o, ga, gb) = (global(0, out_dt), global(1, dt), global(2, dt));
    let zero = i32c(0);
    let (la, lb) = (load(&index(&ga, &zero), dt), load(&index(&gb, &zero), dt));
    let r = alu(op, &[&la, &lb]);
    let st = store(&index(&o, &zero), &r);
    let prog = [o, ga, gb, zero, la, lb, r, st];
    let out = vec![0u8; out_dt.itemsize()];
    run(&prog, &[out, a, b], &[]).unwrap().swap_remove(0)
}

// ------------------------------------------------------------ tests

#[test]
fn elementwise_add_f32() {
    let (o, a, b) = (global(0, DType::F32), global(1, DType::F32), global(2, DType::F32));
    let n = i32c(16);
    let r = range(&n, 0);
    let la = load(&index(&a, &r), DType::F32);
    let lb = load(&index(&b, &r), DType::F32);
    let sum = &la + &lb;
    let st = store(&index(&o, &r), &sum);
    let prog = [o, a, b, n, r.clone(), la, lb, sum, st, end(&r)];
    let xa: Vec<f32> = (0..16).map(|i| i as f32 * 0.1).collect();
    let xb: Vec<f32> = (0..16).map(|i| 1.0 / (i as f32 + 1.0)).collect();
    let res = run(&prog, &[vec![0; 64], f32_bytes(&xa), f32_bytes(&xb)], &[]).unwrap();
    let want: Vec<f32> = xa.iter().zip(&xb).map(|(x, y)| x + y).collect();
    assert_eq!(f32s(&res[0]), want);
}

#[test]
fn sum_reduction_with_register() {
    let (o, a) = (global(0, DType::F32), global(1, DType::F32));
    let (zero, n, fzero) = (i32c(0), i32c(10), UOp::float(DType::F32, 0.0));
    let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
    let init = store(&acc, &fzero);
    let r = UOp::range(n.clone(), 0, AxisType::Reduce);
    let la = load(&index(&a, &r), DType::F32);
    let cur = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), r.clone()], Arg::None);
    let next = &cur + &la;
    let upd = store(&acc, &next);
    let e = end(&r);
    let fin = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), e.clone()], Arg::None);
    let st = store(&index(&o, &zero), &fin);
    let prog = [o, a, zero, n, fzero, acc, init, r, la, cur, next, upd, e, fin, st];
    let xs: Vec<f32> = (0..10).map(|i| (i as f32).sin()).collect();
    let res = run(&prog, &[vec![0; 4], f32_bytes(&xs)], &[]).unwrap();
    let want = xs.iter().fold(0.0f32, |s, x| s + x);
    assert_eq!(f32s(&res[0]), vec![want]);
}

#[test]
fn gated_load_outside_bounds_yields_zero() {
    let (o, a) = (global(0, DType::F32), global(1, DType::F32));
    let (n, four) = (i32c(8), i32c(4));
    let r = range(&n, 0);
    let gate = r.lt(&four);
    let la = load(&gated_index(&a, &r, &gate), DType::F32);
    let st = store(&index(&o, &r), &la);
    let prog = [o, a, n, four, r.clone(), gate, la, st, end(&r)];
    let res = run(&prog, &[vec![0xff; 32], f32_bytes(&[1.0, 2.0, 3.0, 4.0])], &[]).unwrap();
    assert_eq!(f32s(&res[0]), vec![1.0, 2.0, 3.0, 4.0, 0.0, 0.0, 0.0, 0.0]);
}

#[test]
fn gated_store_is_skipped() {
    let o = global(0, DType::I32);
    let (n, one, seven) = (i32c(4), i32c(1), i32c(7));
    let r = range(&n, 0);
    let gate = r.lt(&one);
    let st = store(&gated_index(&o, &(&r * 100), &gate), &seven);
    let prog = [o, n, one, seven, r.clone(), r.c(100), &r * 100, gate, st, end(&r)];
    // Indices 100, 200 and 300 would be out of bounds: the gate keeps them from memory.
    let res = run(&prog, &[vec![0; 4]], &[]).unwrap();
    assert_eq!(i32s(&res[0]), vec![7]);
}

#[test]
fn u8_addition_wraps() {
    let out = binary_on(Ops::ADD, DType::U8, vec![200], vec![100]);
    assert_eq!(out, vec![200u8.wrapping_add(100)]);
    assert_eq!(out, vec![44]);
    let out = binary_on(Ops::MUL, DType::I8, vec![100], vec![3]);
    assert_eq!(out, vec![100i8.wrapping_mul(3) as u8]);
}

#[test]
fn integer_division_truncates_toward_zero() {
    let i = |v: i32| v.to_le_bytes().to_vec();
    let div = |a, b| i32::from_le_bytes(binary_on(Ops::IDIV, DType::I32, i(a), i(b)).try_into().unwrap());
    let rem = |a, b| i32::from_le_bytes(binary_on(Ops::MOD, DType::I32, i(a), i(b)).try_into().unwrap());
    assert_eq!(div(-7, 2), -3);
    assert_eq!(rem(-7, 2), -1);
    assert_eq!(div(7, -2), -3);
    assert_eq!(rem(7, -2), 1);
    assert_eq!(div(5, 0), 0);
    assert_eq!(rem(5, 0), 0);
    assert_eq!(div(i32::MIN, -1), i32::MIN);
}

#[test]
fn u64_is_unsigned() {
    let u = |v: u64| v.to_le_bytes().to_vec();
    let big = u64::MAX - 5;
    let q = binary_on(Ops::IDIV, DType::U64, u(big), u(3));
    assert_eq!(u64::from_le_bytes(q.try_into().unwrap()), big / 3);
    assert_eq!(binary_on(Ops::CMPLT, DType::U64, u(1), u(big)), vec![1]);
    let m = binary_on(Ops::MUL, DType::U64, u(big), u(7));
    assert_eq!(u64::from_le_bytes(m.try_into().unwrap()), big.wrapping_mul(7));
    let s = binary_on(Ops::SHR, DType::U64, u(big), u(60));
    assert_eq!(u64::from_le_bytes(s.try_into().unwrap()), big >> 60);
}

#[test]
fn shifts_are_arithmetic_for_signed() {
    let i = |v: i32| v.to_le_bytes().to_vec();
    let shr = binary_on(Ops::SHR, DType::I32, i(-16), i(2));
    assert_eq!(i32::from_le_bytes(shr.try_into().unwrap()), -4);
    let shl = binary_on(Ops::SHL, DType::I32, i(3), i(33));
    assert_eq!(i32::from_le_bytes(shl.try_into().unwrap()), 3i32.wrapping_shl(33));
}

/// Casts each element of `xs` (f32) to `to` and returns the raw output bytes.
fn cast_f32(xs: &[f32], to: DType) -> Vec<u8> {
    let (o, a) = (global(0, to), global(1, DType::F32));
    let n = i32c(xs.len() as i64);
    let r = range(&n, 0);
    let la = load(&index(&a, &r), DType::F32);
    let c = la.cast(to);
    let st = store(&index(&o, &r), &c);
    let prog = [o, a, n, r.clone(), la, c, st, end(&r)];
    run(&prog, &[vec![0; xs.len() * to.itemsize()], f32_bytes(xs)], &[]).unwrap().swap_remove(0)
}

#[test]
fn cast_f32_to_int_truncates_and_saturates() {
    let xs = [-2.7f32, 2.7, f32::NAN, 1e10, -1e10, -0.5];
    let got = i32s(&cast_f32(&xs, DType::I32));
    let want: Vec<i32> = xs.iter().map(|&x| x as i32).collect();
    assert_eq!(got, want);
    assert_eq!(got[0], -2);
    assert_eq!(got[2], 0);
}

#[test]
fn cast_to_bool_and_half() {
    let xs = [0.0f32, -0.0, 3.5, f32::NAN, 65520.0, 1.0 / 3.0];
    assert_eq!(cast_f32(&xs, DType::BOOL), vec![0, 0, 1, 1, 1, 1]);
    let h = cast_f32(&xs, DType::F16);
    let got: Vec<u16> = h.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    let want: Vec<u16> = xs.iter().map(|&x| half::f16::from_f32(x).to_bits()).collect();
    // NaN payloads may differ; compare NaN-ness there.
    for (g, w) in got.iter().zip(&want) {
        let (g, w) = (half::f16::from_bits(*g), half::f16::from_bits(*w));
        assert!(g == w || (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits(), "{g} vs {w}");
    }
}

#[test]
fn f16_arithmetic_rounds_through_f32() {
    let h = |v: f32| half::f16::from_f32(v).to_bits().to_le_bytes().to_vec();
    let got = binary_on(Ops::ADD, DType::F16, h(1.0), h(0.0004));
    let want = half::f16::from_f32(half::f16::from_f32(1.0).to_f32() + half::f16::from_f32(0.0004).to_f32());
    assert_eq!(got, want.to_bits().to_le_bytes().to_vec());
}

#[test]
fn max_with_nan_is_a_less_than_b_then_b_else_a() {
    let f = |v: f32| v.to_le_bytes().to_vec();
    let max = |a, b| f32::from_le_bytes(binary_on(Ops::MAX, DType::F32, f(a), f(b)).try_into().unwrap());
    assert!(max(f32::NAN, 1.0).is_nan());
    assert_eq!(max(1.0, f32::NAN), 1.0);
    assert_eq!(max(-3.0, 2.0), 2.0);
    assert_eq!(max(2.0, -3.0), 2.0);
}

#[test]
fn nested_loops_transpose_4x3() {
    // out[j*4 + i] = a[i*3 + j] for a 4x3 matrix a.
    let (o, a) = (global(0, DType::F32), global(1, DType::F32));
    let (four, three) = (i32c(4), i32c(3));
    let i = range(&four, 0);
    let j = range(&three, 1);
    let src = &(&i * 3) + &j;
    let dst = &(&j * 4) + &i;
    let la = load(&index(&a, &src), DType::F32);
    let st = store(&index(&o, &dst), &la);
    let prog =
        [o, a, four.clone(), three.clone(), i.clone(), j.clone(), &i * 3, src, &j * 4, dst, la, st, end(&j), end(&i)];
    let xs: Vec<f32> = (0..12).map(|v| v as f32).collect();
    let res = run(&prog, &[vec![0; 48], f32_bytes(&xs)], &[]).unwrap();
    let mut want = vec![0.0f32; 12];
    for r in 0..4 {
        for c in 0..3 {
            want[c * 4 + r] = xs[r * 3 + c];
        }
    }
    assert_eq!(f32s(&res[0]), want);
}

#[test]
fn out_of_bounds_store_is_an_error() {
    let o = global(0, DType::F32);
    let (n, one) = (i32c(5), UOp::float(DType::F32, 1.0));
    let r = range(&n, 0);
    let st = store(&index(&o, &r), &one);
    let prog = [o, n, one, r.clone(), st, end(&r)];
    let err = run(&prog, &[vec![0; 16]], &[]).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::Launch { .. }), "{msg}");
    assert!(msg.contains("index 4 out of bounds for buffer 0 of 4 elements"), "{msg}");
}

#[test]
fn out_of_bounds_load_is_an_error() {
    let (o, a) = (global(0, DType::F32), global(1, DType::F32));
    let m = i32c(-1);
    let la = load(&index(&a, &m), DType::F32);
    let st = store(&index(&o, &m), &la);
    let err = run(&[o, a, m, la, st], &[vec![0; 4], vec![0; 4]], &[]).unwrap_err();
    assert!(err.to_string().contains("index -1 out of bounds for buffer 1"), "{err}");
}

#[test]
fn empty_range_skips_the_body() {
    let o = global(0, DType::I32);
    let (n, zero, seven) = (i32c(0), i32c(0), i32c(7));
    let r = range(&n, 0);
    // The body would store out of bounds if it ran.
    let st = store(&index(&o, &(&r + 100)), &seven);
    let prog = [o, n, zero, seven, r.clone(), r.c(100), &r + 100, st, end(&r)];
    let res = run(&prog, &[vec![0; 4]], &[]).unwrap();
    assert_eq!(i32s(&res[0]), vec![0]);
}

#[test]
fn symbolic_loop_bound_and_if_block() {
    // for i in 0..n { if i != 2 { out[i] = i * 10 } }
    let o = global(0, DType::I32);
    let n = UOp::new(Ops::DEFINE_VAR, DType::I32, vec![], Arg::Var("n".into(), 1, 8));
    let (two, ten) = (i32c(2), i32c(10));
    let r = range(&n, 0);
    let cond = r.ne(&two);
    let iff = UOp::new(Ops::IF, DType::VOID, vec![cond.clone()], Arg::None);
    let v = &r * &ten;
    let st = store(&index(&o, &r), &v);
    let endif = UOp::new(Ops::ENDIF, DType::VOID, vec![iff.clone()], Arg::None);
    let prog = [o, n, two, ten, r.clone(), cond, iff, v, st, endif, end(&r)];
    let res = run(&prog, &[i32_bytes(&[-1; 6])], &[5]).unwrap();
    assert_eq!(i32s(&res[0]), vec![0, 10, -1, 30, 40, -1]);
}

#[test]
fn aliased_input_and_output() {
    // a[i] = a[i] * 2 with the same memory passed as buffers 0 and 1.
    let (o, a) = (global(0, DType::I32), global(1, DType::I32));
    let (n, two) = (i32c(3), i32c(2));
    let r = range(&n, 0);
    let la = load(&index(&a, &r), DType::I32);
    let v = &la * &two;
    let st = store(&index(&o, &r), &v);
    let prog = [o, a, n, two, r.clone(), la, v, st, end(&r)];
    let dev = InterpDevice::new();
    let mem = dev.alloc(12).unwrap();
    dev.copy_in(&mem, &i32_bytes(&[1, 2, 3])).unwrap();
    let p = InterpProgram::new("alias", &prog).unwrap();
    p.launch(&[&mem, &mem], &[], false).unwrap();
    let mut out = vec![0u8; 12];
    dev.copy_out(&mem, &mut out).unwrap();
    assert_eq!(i32s(&out), vec![2, 4, 6]);
}

#[test]
fn vector_load_alu_store_and_gep() {
    // out[4i..4i+4] = a[4i..4i+4] * 2 as float4; out2[i] = lane 3 + lane 0, for i in 0..2.
    let f4 = DType::F32.vec(4);
    let (o, a, o2) = (global(0, DType::F32), global(1, DType::F32), global(2, DType::F32));
    let (two_i, four) = (i32c(2), i32c(4));
    let two = UOp::float(DType::F32, 2.0);
    let two4 = UOp::new(Ops::VECTORIZE, f4, vec![two.clone(); 4], Arg::None);
    let r = range(&two_i, 0);
    let base = &r * &four;
    let la = load(&index(&a, &base), f4);
    let m = &la * &two4;
    let st = store(&index(&o, &base), &m);
    let g3 = UOp::new(Ops::GEP, DType::F32, vec![la.clone()], Arg::Int(3));
    let g0 = UOp::new(Ops::GEP, DType::F32, vec![la.clone()], Arg::Int(0));
    let s = &g3 + &g0;
    let st2 = store(&index(&o2, &r), &s);
    let prog = [o, a, o2, two_i, four, two, two4, r.clone(), base, la, m, st, g3, g0, s, st2, end(&r)];
    let xs: Vec<f32> = (0..8).map(|v| v as f32 + 0.5).collect();
    let res = run(&prog, &[vec![0; 32], f32_bytes(&xs), vec![0; 8]], &[]).unwrap();
    assert_eq!(f32s(&res[0]), xs.iter().map(|x| x * 2.0).collect::<Vec<_>>());
    assert_eq!(f32s(&res[2]), vec![xs[3] + xs[0], xs[7] + xs[4]]);
}

#[test]
fn float_mulacc_is_fused() {
    let (o, a) = (global(0, DType::F32), global(1, DType::F32));
    let zero = i32c(0);
    let (i1, i2) = (i32c(1), i32c(2));
    let x = load(&index(&a, &zero), DType::F32);
    let y = load(&index(&a, &i1), DType::F32);
    let z = load(&index(&a, &i2), DType::F32);
    let mac = UOp::alu(Ops::MULACC, vec![x.clone(), y.clone(), z.clone()]);
    let st = store(&index(&o, &zero), &mac);
    let prog = [o, a, zero, i1, i2, x, y, z, mac, st];
    let (xv, yv, zv) = (1.0f32 + f32::EPSILON, 1.0f32 - f32::EPSILON, -1.0f32);
    let res = run(&prog, &[vec![0; 4], f32_bytes(&[xv, yv, zv])], &[]).unwrap();
    assert_eq!(f32s(&res[0]), vec![xv.mul_add(yv, zv)]);
    assert_ne!(xv.mul_add(yv, zv), xv * yv + zv, "test inputs must tell fused from unfused");
}

#[test]
fn matmul_16x16() {
    // c[i, j] = sum_k a[i, k] * b[k, j], accumulated in k order like the Rust reference.
    let nn = 16usize;
    let (c, a, b) = (global(0, DType::F32), global(1, DType::F32), global(2, DType::F32));
    let n = i32c(nn as i64);
    let fzero = UOp::float(DType::F32, 0.0);
    let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
    let (i, j) = (range(&n, 0), range(&n, 1));
    let k = UOp::range(n.clone(), 2, AxisType::Reduce);
    let init = store(&acc, &fzero);
    let (ik, kj, ij) = (&(&i * &n) + &k, &(&k * &n) + &j, &(&i * &n) + &j);
    let la = load(&index(&a, &ik), DType::F32);
    let lb = load(&index(&b, &kj), DType::F32);
    let prod = &la * &lb;
    let cur = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), k.clone()], Arg::None);
    let next = &cur + &prod;
    let upd = store(&acc, &next);
    let ek = end(&k);
    let fin = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), ek.clone()], Arg::None);
    let st = store(&index(&c, &ij), &fin);
    let prog = [
        c,
        a,
        b,
        n.clone(),
        fzero,
        acc,
        i.clone(),
        j.clone(),
        init,
        k.clone(),
        &i * &n,
        ik,
        &k * &n,
        kj,
        la,
        lb,
        prod,
        cur,
        next,
        upd,
        ek,
        &i * &n,
        ij,
        fin,
        st,
        end(&j),
        end(&i),
    ];
    // `&i * &n` appears twice above (hash-consed: same node); drop the second copy.
    let mut seen = FxHashMap::default();
    let prog: Vec<UOp> = prog.into_iter().filter(|u| seen.insert(u.id(), ()).is_none()).collect();
    let xa: Vec<f32> = (0..nn * nn).map(|v| ((v * 7) % 13) as f32 * 0.25 - 1.0).collect();
    let xb: Vec<f32> = (0..nn * nn).map(|v| ((v * 5) % 11) as f32 * 0.5 - 2.0).collect();
    let res = run(&prog, &[vec![0; nn * nn * 4], f32_bytes(&xa), f32_bytes(&xb)], &[]).unwrap();
    let mut want = vec![0.0f32; nn * nn];
    for r in 0..nn {
        for col in 0..nn {
            want[r * nn + col] = (0..nn).fold(0.0f32, |s, kk| s + xa[r * nn + kk] * xb[kk * nn + col]);
        }
    }
    assert_eq!(f32s(&res[0]), want);
}

#[test]
fn malformed_programs_are_compile_errors() {
    let n = i32c(4);
    let r = range(&n, 0);
    // A RANGE without END.
    let err = InterpProgram::new("bad", &[n.clone(), r.clone()]).unwrap_err();
    assert!(matches!(err, Error::Compile { .. }), "{err}");
    // A source used before it is computed.
    let v = &r + 1;
    let err = InterpProgram::new("bad", &[n.clone(), v, r.clone(), end(&r)]).unwrap_err();
    assert!(err.to_string().contains("not earlier"), "{err}");
    // SQRT of an integer.
    let s = alu(Ops::SQRT, &[&n]);
    let err = InterpProgram::new("bad", &[n.clone(), s]).unwrap_err();
    assert!(err.to_string().contains("SQRT is not defined for int32"), "{err}");
}

#[test]
fn special_is_unsupported_at_launch() {
    let n = i32c(4);
    let sp = UOp::new(Ops::SPECIAL, DType::I32, vec![n.clone()], Arg::Special(crate::uop::SpecialKind::Global, 0));
    let p = InterpProgram::new("gpu", &[n, sp]).unwrap();
    let err = p.launch(&[], &[], true).unwrap_err();
    assert!(matches!(err, Error::Launch { .. }) && err.to_string().contains("SPECIAL"), "{err}");
}

#[test]
fn copy_size_mismatch_is_an_error() {
    let dev = InterpDevice::new();
    let m = dev.alloc(8).unwrap();
    assert!(dev.copy_in(&m, &[0; 4]).is_err());
    assert!(dev.copy_out(&m, &mut [0; 12]).is_err());
    assert_eq!(dev.name(), "INTERP");
    assert!(!dev.renderer().target().has_threads);
}

#[test]
fn listing_is_numbered_and_indented() {
    let o = global(0, DType::I32);
    let n = i32c(2);
    let r = range(&n, 0);
    let st = store(&index(&o, &r), &r);
    let prog = [o, n, r.clone(), st, end(&r)];
    let text = InterpRenderer::new().render("k", &prog);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6, "{text}");
    assert!(lines[3].starts_with("%2    RANGE "), "{text}");
    assert!(lines[4].starts_with("%3      STORE "), "{text}");
    assert_eq!(lines[3].find("int32"), lines[4].find("void"), "aligned columns: {text}");
    assert!(lines[4].contains("(%?, %2)"), "INDEX is not in the list: {text}");
    assert!(lines[5].starts_with("%4    END"), "{text}");
}

#[test]
fn million_iteration_loop_sums_like_rust() {
    // 2^20 iterations of a few instructions (the rate is printed with --nocapture).
    let o = global(0, DType::F32);
    let (zero, n) = (i32c(0), i32c(1 << 20));
    let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
    let r = range(&n, 0);
    let x = r.cast(DType::F32);
    let cur = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), r.clone()], Arg::None);
    let next = &cur + &x;
    let upd = store(&acc, &next);
    let e = end(&r);
    let fin = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), e.clone()], Arg::None);
    let st = store(&index(&o, &zero), &fin);
    let prog = [o, zero, n, acc, r, x, cur, next, upd, e, fin, st];
    let dev = InterpDevice::new();
    let mem = dev.alloc(4).unwrap();
    let p = InterpProgram::new("loop", &prog).unwrap();
    let secs = p.launch(&[&mem], &[], true).unwrap();
    eprintln!("1M iterations x 5 instructions in {secs:.4}s ({:.1} M inst/s)", 5.0 * 1.048576 / secs);
    let want = (0..1 << 20).fold(0.0f32, |s, i| s + i as f32);
    let mut out = vec![0u8; mem.downcast::<HostMemory>().len()];
    mem.downcast::<HostMemory>().copy_to(&mut out);
    assert_eq!(f32s(&out), vec![want]);
}
