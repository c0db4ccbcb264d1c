//! The OpenCL device (`--features opencl`): hand-built GPU-style programs (one work item per
//! SPECIAL global index) rendered as OpenCL C, built by the driver and run, checked against
//! plain Rust; build errors; and tensor programs end to end against f64 loops. CI runs these on
//! PoCL; without an OpenCL driver every test prints why and passes.
#![cfg(feature = "opencl")]

use ferrograd::codegen::ProgramSpec;
use ferrograd::renderer::cstyle::{opencl_dialect, CStyleRenderer};
use ferrograd::renderer::{Renderer, Target};
use ferrograd::runtime::{get_device, Backend, DeviceMemory};
use ferrograd::tensor::with_default_device;
use ferrograd::uop::{Arg, AxisType, SpecialKind};
use ferrograd::{DType, Element, Error, Ops, Tensor, UOp};
use half::{bf16, f16};
use std::sync::Arc;

/// The first OpenCL device, or `None` (with the reason printed) where there is none.
fn cl() -> Option<Arc<dyn Backend>> {
    match get_device("CL") {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipping: no OpenCL device ({e})");
            None
        }
    }
}

// ------------------------------------------------------------ program builders

fn global(i: i64, dt: DType) -> UOp {
    UOp::new(Ops::DEFINE_GLOBAL, dt.ptr(), vec![], Arg::Int(i))
}
/// `get_global_id(0)` over `n` work items.
fn gid(n: i64) -> UOp {
    UOp::new(Ops::SPECIAL, DType::I32, vec![UOp::int(DType::I32, n)], Arg::Special(SpecialKind::Global, 0))
}
fn index(buf: &UOp, i: &UOp) -> UOp {
    UOp::new(Ops::INDEX, buf.dtype(), vec![buf.clone(), i.clone()], Arg::None)
}
fn gated_index(buf: &UOp, i: &UOp, gate: &UOp) -> UOp {
    UOp::new(Ops::INDEX, buf.dtype(), vec![buf.clone(), i.clone(), gate.clone()], Arg::None)
}
fn load(idx: &UOp) -> UOp {
    UOp::new(Ops::LOAD, idx.dtype().base(), vec![idx.clone()], Arg::None)
}
fn store(target: &UOp, v: &UOp) -> UOp {
    UOp::new(Ops::STORE, DType::VOID, vec![target.clone(), v.clone()], Arg::None)
}
fn alu(op: Ops, src: &[&UOp]) -> UOp {
    UOp::alu(op, src.iter().map(|s| (*s).clone()).collect())
}

/// A loop-free program in dependency order: every node reachable from `stores`, sources first.
fn program(stores: &[UOp]) -> Vec<UOp> {
    let sink = UOp::new(Ops::SINK, DType::VOID, stores.to_vec(), Arg::None);
    sink.toposort().into_iter().filter(|u| u.op() != Ops::SINK).collect()
}

fn spec(dev: &dyn Backend, name: &str, uops: Vec<UOp>, global: usize, local: Option<usize>) -> Arc<ProgramSpec> {
    let src = dev.renderer().render(name, &uops);
    let buf_count = uops.iter().filter(|u| u.op() == Ops::DEFINE_GLOBAL).count();
    let vars = uops
        .iter()
        .filter_map(|u| match u.arg() {
            Arg::Var(n, _, _) if u.op() == Ops::DEFINE_VAR => Some(n.to_string()),
            _ => None,
        })
        .collect();
    Arc::new(ProgramSpec {
        name: name.to_string(),
        uops,
        src,
        global_size: [global, 1, 1],
        local_size: local.map(|l| [l, 1, 1]),
        threads: 1,
        buf_count,
        vars,
        flops: 0,
        bytes: 0,
        opts: String::new(),
    })
}

/// Compiles and runs `spec` on buffers holding `data`; returns their contents afterwards.
fn run(dev: &dyn Backend, spec: Arc<ProgramSpec>, data: &[Vec<u8>], vals: &[i64]) -> Vec<Vec<u8>> {
    let mems: Vec<DeviceMemory> = data.iter().map(|d| dev.alloc(d.len()).unwrap()).collect();
    for (m, d) in mems.iter().zip(data) {
        dev.copy_in(m, d).unwrap();
    }
    let progs = dev.compile(std::slice::from_ref(&spec)).unwrap_or_else(|e| panic!("{e}\n{}", spec.src));
    let refs: Vec<&DeviceMemory> = mems.iter().collect();
    let secs = progs[0].launch(&refs, vals, true).unwrap();
    assert!(secs >= 0.0);
    mems.iter()
        .map(|m| {
            let mut out = vec![0u8; m.bytes];
            dev.copy_out(m, &mut out).unwrap();
            out
        })
        .collect()
}

fn bytes<T: Element>(v: &[T]) -> Vec<u8> {
    T::to_bytes(v)
}
fn values<T: Element>(b: &[u8]) -> Vec<T> {
    T::from_bytes(b)
}

// ------------------------------------------------------------ rendering (no device needed)

#[test]
fn dialect_renders_opencl_c() {
    let r = CStyleRenderer::new(opencl_dialect(), Target { has_local: true, has_threads: false, ..Target::cpu("CL") });
    let (o, a, m) = (global(0, DType::BOOL), global(1, DType::I64), global(2, DType::F32));
    let i = gid(8);
    let x = load(&index(&a, &i));
    let big = &x * &UOp::int(DType::I64, 5_000_000_000);
    let lo = &big + &UOp::int(DType::I64, i64::MIN);
    let f = load(&index(&m, &i));
    let root = alu(Ops::SQRT, &[&alu(Ops::EXP2, &[&f])]);
    let cmp = alu(Ops::CMPLT, &[&lo, &root.cast(DType::I64)]);
    // Index arithmetic that cannot overflow stays plain.
    let j = &(&i * 4) + 3;
    let f2 = load(&index(&m, &j));
    let cmp = alu(Ops::AND, &[&cmp, &alu(Ops::CMPLT, &[&f2, &f])]);
    let src = r.render("k", &program(&[store(&index(&o, &i), &cmp)]));
    for want in [
        "__kernel void k(",
        "__global uchar* restrict data0",
        "__global const long* restrict data1",
        "__global const float* restrict data2",
        "(int)get_global_id(0)",
        "5000000000l",
        "(-9223372036854775807l-1)",
        "sqrt(exp2(",
        "cl_khr_fp64",
        // Signed arithmetic that may overflow wraps through the unsigned type.
        "((long)((ulong)",
        "data2[((iidx0*4)+3)]",
    ] {
        assert!(src.contains(want), "missing {want:?} in:\n{src}");
    }
    for bad in ["long long", "sqrtf", "exp2f", "#include", "memcpy", "bool*"] {
        assert!(!src.contains(bad), "unexpected {bad:?} in:\n{src}");
    }
    let body = &src[src.find("__kernel").unwrap_or(0)..];
    assert!(!body.contains("(uint)"), "index arithmetic is wrapped:\n{body}");
    // No C99 `ll`/`ull` literal suffixes (not OpenCL C).
    assert!(!(0..10).any(|d| src.contains(&format!("{d}ll")) || src.contains(&format!("{d}ull"))), "{src}");
}

#[test]
fn unknown_device_index_is_an_error_listing_devices() {
    // With a driver: the list of devices; without: what to install. Never a panic.
    match get_device("CL:99") {
        Err(Error::DeviceUnavailable { device, reason }) => {
            assert_eq!(device, "CL:99");
            assert!(!reason.is_empty());
            eprintln!("CL:99: {reason}");
        }
        Err(e) => panic!("expected DeviceUnavailable, got {e}"),
        Ok(_) => panic!("CL:99 opened"),
    }
}

// ------------------------------------------------------------ hand-built programs

#[test]
fn elementwise_add_with_and_without_work_groups() {
    let Some(dev) = cl() else { return };
    for (n, local) in [(1000usize, None), (256, Some(64)), (96, Some(32))] {
        let (o, a, b) = (global(0, DType::F32), global(1, DType::F32), global(2, DType::F32));
        let i = gid(n as i64);
        let sum = &load(&index(&a, &i)) + &load(&index(&b, &i));
        let uops = program(&[store(&index(&o, &i), &sum)]);
        let xa: Vec<f32> = (0..n).map(|v| v as f32 * 0.37 - 11.0).collect();
        let xb: Vec<f32> = (0..n).map(|v| 1.0 / (v as f32 + 1.0)).collect();
        let sp = spec(dev.as_ref(), &format!("add_{n}"), uops, n, local);
        let res = run(dev.as_ref(), sp, &[vec![0; n * 4], bytes(&xa), bytes(&xb)], &[]);
        let want: Vec<f32> = xa.iter().zip(&xb).map(|(x, y)| x + y).collect();
        assert_eq!(values::<f32>(&res[0]), want, "n={n} local={local:?}");
    }
}

#[test]
fn per_row_reduce_loop() {
    let Some(dev) = cl() else { return };
    let (rows, cols) = (37usize, 53usize);
    let (o, a) = (global(0, DType::F32), global(1, DType::F32));
    let row = gid(rows as i64);
    let ncols = UOp::int(DType::I32, cols as i64);
    let fzero = UOp::float(DType::F32, 0.0);
    let acc = UOp::new(Ops::DEFINE_REG, DType::F32, vec![], Arg::Int(0));
    let init = store(&acc, &fzero);
    let r = UOp::range(ncols.clone(), 1, AxisType::Reduce);
    let base = &row * &ncols;
    let addr = &base + &r;
    let la = load(&index(&a, &addr));
    let cur = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), r.clone()], Arg::None);
    let next = &cur + &la;
    let upd = store(&acc, &next);
    let end = UOp::new(Ops::END, DType::VOID, vec![r.clone()], Arg::None);
    let fin = UOp::new(Ops::LOAD, DType::F32, vec![acc.clone(), end.clone()], Arg::None);
    let out_idx = index(&o, &row);
    let st = store(&out_idx, &fin);
    let ia = index(&a, &addr);
    let uops = vec![
        o,
        a.clone(),
        UOp::int(DType::I32, rows as i64),
        row,
        ncols,
        fzero,
        acc,
        init,
        base,
        r,
        addr,
        ia,
        la,
        cur,
        next,
        upd,
        end,
        fin,
        out_idx,
        st,
    ];
    let xs: Vec<f32> = (0..rows * cols).map(|v| ((v * 7919) % 1013) as f32 * 0.01 - 5.0).collect();
    let sp = spec(dev.as_ref(), "row_sum", uops, rows, None);
    let res = run(dev.as_ref(), sp, &[vec![0; rows * 4], bytes(&xs)], &[]);
    // Same order of additions as the kernel: the results are bit-identical.
    let want: Vec<f32> = (0..rows).map(|i| xs[i * cols..(i + 1) * cols].iter().fold(0.0f32, |s, x| s + x)).collect();
    assert_eq!(values::<f32>(&res[0]), want);
}

#[test]
fn math_builtins_match_rust() {
    let Some(dev) = cl() else { return };
    let n = 64usize;
    let outs: Vec<UOp> = (0..5).map(|k| global(k, DType::F32)).collect();
    let a = global(5, DType::F32);
    let i = gid(n as i64);
    let x = load(&index(&a, &i));
    let ops = [Ops::SQRT, Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::TRUNC];
    let stores: Vec<UOp> = outs.iter().zip(ops).map(|(o, op)| store(&index(o, &i), &alu(op, &[&x]))).collect();
    let xs: Vec<f32> = (0..n).map(|v| 0.05 + v as f32 * 0.73).collect();
    let mut data = vec![vec![0u8; n * 4]; 5];
    data.push(bytes(&xs));
    let res = run(dev.as_ref(), spec(dev.as_ref(), "math", program(&stores), n, Some(16)), &data, &[]);
    let refs: [fn(f64) -> f64; 5] = [f64::sqrt, f64::exp2, f64::log2, f64::sin, f64::trunc];
    for (k, f) in refs.iter().enumerate() {
        for (j, (&got, &x)) in values::<f32>(&res[k]).iter().zip(&xs).enumerate() {
            let want = f(x as f64);
            // OpenCL allows a few ulp for exp2/log2/sin; sqrt and trunc are exact here.
            assert!(
                (got as f64 - want).abs() <= 1e-6 + 6e-7 * want.abs(),
                "{:?}({x}) = {got}, want {want} [{j}]",
                ops[k]
            );
        }
    }
}

#[test]
fn f16_and_bf16_round_trip() {
    let Some(dev) = cl() else { return };
    let n = 128usize;
    let (oh, ob, ih, ib) =
        (global(0, DType::F16), global(1, DType::BF16), global(2, DType::F16), global(3, DType::BF16));
    let i = gid(n as i64);
    let two = UOp::float(DType::F32, 2.0);
    let h = &load(&index(&ih, &i)).cast(DType::F32) * &two;
    let b = &load(&index(&ib, &i)).cast(DType::F32) * &two;
    let stores = [store(&index(&oh, &i), &h.cast(DType::F16)), store(&index(&ob, &i), &b.cast(DType::BF16))];
    // Normal, subnormal, overflowing, negative, zero and infinite values.
    let xs: Vec<f32> = (0..n)
        .map(|v| match v % 8 {
            0 => v as f32 * 0.1,
            1 => -(v as f32) * 3.3e-6,
            2 => 40000.0 + v as f32,
            3 => 6.1e-5 / (v as f32 + 1.0),
            4 => 0.0,
            5 => f32::INFINITY,
            6 => 1.0e30 * v as f32,
            _ => -1.5 - v as f32,
        })
        .collect();
    let hs: Vec<f16> = xs.iter().map(|&x| f16::from_f32(x)).collect();
    let bs: Vec<bf16> = xs.iter().map(|&x| bf16::from_f32(x)).collect();
    let sp = spec(dev.as_ref(), "half_trip", program(&stores), n, Some(32));
    let res = run(dev.as_ref(), sp, &[vec![0; n * 2], vec![0; n * 2], bytes(&hs), bytes(&bs)], &[]);
    let want_h: Vec<u16> = hs.iter().map(|h| f16::from_f32(h.to_f32() * 2.0).to_bits()).collect();
    let want_b: Vec<u16> = bs.iter().map(|b| bf16::from_f32(b.to_f32() * 2.0).to_bits()).collect();
    assert_eq!(values::<u16>(&res[0]), want_h);
    assert_eq!(values::<u16>(&res[1]), want_b);
}

#[test]
fn i64_and_u64_math() {
    let Some(dev) = cl() else { return };
    let n = 100usize;
    let (o, ou, a, u) = (global(0, DType::I64), global(1, DType::U64), global(2, DType::I64), global(3, DType::U64));
    let i = gid(n as i64);
    let x = load(&index(&a, &i));
    let k = UOp::int(DType::I64, 3_000_000_019);
    let prod = &x * &k;
    let div = alu(Ops::IDIV, &[&prod, &UOp::int(DType::I64, -7)]);
    let shr = alu(Ops::SHR, &[&x, &UOp::int(DType::I64, 33)]);
    let y = &(&div + &shr) + &UOp::int(DType::I64, i64::MIN);
    let ux = load(&index(&u, &i));
    let uy = alu(Ops::IDIV, &[&ux, &UOp::int(DType::U64, 3)]);
    let uy = &uy + &UOp::int(DType::U64, u64::MAX as i64 - 1);
    let stores = [store(&index(&o, &i), &y), store(&index(&ou, &i), &uy)];
    let xs: Vec<i64> = (0..n as i64).map(|v| (v - 50) * 1_234_567_891_011 + v).collect();
    let us: Vec<u64> = (0..n as u64).map(|v| u64::MAX - v * 987_654_321_123).collect();
    let sp = spec(dev.as_ref(), "int64", program(&stores), n, None);
    let res = run(dev.as_ref(), sp, &[vec![0; n * 8], vec![0; n * 8], bytes(&xs), bytes(&us)], &[]);
    let want: Vec<i64> =
        xs.iter().map(|&x| (x.wrapping_mul(3_000_000_019) / -7 + (x >> 33)).wrapping_add(i64::MIN)).collect();
    let want_u: Vec<u64> = us.iter().map(|&x| (x / 3).wrapping_add(u64::MAX - 1)).collect();
    assert_eq!(values::<i64>(&res[0]), want);
    assert_eq!(values::<u64>(&res[1]), want_u);
}

#[test]
fn bool_buffers_store_and_load() {
    let Some(dev) = cl() else { return };
    let n = 50usize;
    let (o, o2, a, b, m) = (
        global(0, DType::BOOL),
        global(1, DType::F32),
        global(2, DType::F32),
        global(3, DType::F32),
        global(4, DType::BOOL),
    );
    let i = gid(n as i64);
    let (x, y) = (load(&index(&a, &i)), load(&index(&b, &i)));
    let lt = alu(Ops::CMPLT, &[&x, &y]);
    let mask = load(&index(&m, &i));
    let picked = mask.where_(&x, &y);
    let stores = [store(&index(&o, &i), &lt), store(&index(&o2, &i), &picked)];
    let xs: Vec<f32> = (0..n).map(|v| (v as f32 * 1.7).sin()).collect();
    let ys: Vec<f32> = (0..n).map(|v| (v as f32 * 0.9).cos()).collect();
    let ms: Vec<bool> = (0..n).map(|v| v % 3 == 0).collect();
    let sp = spec(dev.as_ref(), "bools", program(&stores), n, None);
    let res = run(dev.as_ref(), sp, &[vec![7; n], vec![0; n * 4], bytes(&xs), bytes(&ys), bytes(&ms)], &[]);
    let want: Vec<u8> = xs.iter().zip(&ys).map(|(x, y)| (x < y) as u8).collect();
    assert_eq!(res[0], want, "bools are stored as bytes 0/1");
    let want2: Vec<f32> = (0..n).map(|k| if ms[k] { xs[k] } else { ys[k] }).collect();
    assert_eq!(values::<f32>(&res[1]), want2);
}

#[test]
fn symbolic_variable_gates_the_store() {
    let Some(dev) = cl() else { return };
    let n = 64usize;
    let (o, a) = (global(0, DType::I32), global(1, DType::I32));
    let var = UOp::new(Ops::DEFINE_VAR, DType::I32, vec![], Arg::Var("limit".into(), 0, n as i64));
    let i = gid(n as i64);
    let gate = alu(Ops::CMPLT, &[&i, &var]);
    let v = &load(&index(&a, &i)) * &var;
    let uops = program(&[store(&gated_index(&o, &i, &gate), &v)]);
    let xs: Vec<i32> = (0..n as i32).collect();
    let sp = spec(dev.as_ref(), "gated", uops, n, Some(8));
    assert_eq!(sp.vars, vec!["limit".to_string()]);
    let res = run(dev.as_ref(), sp, &[bytes(&vec![-1i32; n]), bytes(&xs)], &[21]);
    let want: Vec<i32> = (0..n as i32).map(|k| if k < 21 { k * 21 } else { -1 }).collect();
    assert_eq!(values::<i32>(&res[0]), want);
}

#[test]
fn doubles_where_the_device_has_them() {
    let Some(dev) = cl() else { return };
    if !dev.renderer().target().supports_f64 {
        eprintln!("skipping: {} has no cl_khr_fp64", dev.name());
        return;
    }
    let n = 40usize;
    let (o, a) = (global(0, DType::F64), global(1, DType::F64));
    let i = gid(n as i64);
    let x = load(&index(&a, &i));
    let y = &(&x * &x) + &UOp::float(DType::F64, 1e-300);
    let y = alu(Ops::SQRT, &[&y]);
    let xs: Vec<f64> = (0..n).map(|v| v as f64 * std::f64::consts::PI - 30.0).collect();
    let sp = spec(dev.as_ref(), "f64k", program(&[store(&index(&o, &i), &y)]), n, None);
    let res = run(dev.as_ref(), sp, &[vec![0; n * 8], bytes(&xs)], &[]);
    let want: Vec<f64> = xs.iter().map(|x| (x * x + 1e-300).sqrt()).collect();
    assert_eq!(values::<f64>(&res[0]), want);
}

#[test]
fn launch_without_wait_then_synchronize() {
    let Some(dev) = cl() else { return };
    let n = 512usize;
    let o = global(0, DType::I32);
    let i = gid(n as i64);
    let sp = spec(dev.as_ref(), "iota", program(&[store(&index(&o, &i), &(&i * 3))]), n, Some(64));
    // The same source twice in one call: one build, two programs.
    let progs = dev.compile(&[sp.clone(), sp]).unwrap();
    assert_eq!(progs.len(), 2);
    let m = dev.alloc(n * 4).unwrap();
    assert_eq!(progs[1].launch(&[&m], &[], false).unwrap(), 0.0);
    dev.synchronize().unwrap();
    let mut out = vec![0u8; n * 4];
    dev.copy_out(&m, &mut out).unwrap();
    assert_eq!(values::<i32>(&out), (0..n as i32).map(|k| k * 3).collect::<Vec<_>>());
    // Zero-byte buffers exist and copy.
    let empty = dev.alloc(0).unwrap();
    dev.copy_in(&empty, &[]).unwrap();
    dev.copy_out(&empty, &mut []).unwrap();
}

#[test]
fn build_error_is_a_compile_error_with_the_log() {
    let Some(dev) = cl() else { return };
    let mut sp = (*spec(dev.as_ref(), "broken", program(&[]), 1, None)).clone();
    sp.src = "__kernel void broken(__global float* x) { x[0] = undefined_name + ; }".to_string();
    let err = match dev.compile(&[Arc::new(sp)]) {
        Err(e) => e,
        Ok(_) => panic!("a broken kernel compiled"),
    };
    match &err {
        Error::Compile { device, kernel, message } => {
            assert_eq!(device, "CL");
            assert_eq!(kernel, "broken");
            assert!(message.contains("undefined_name") || message.contains("error"), "no build log in: {message}");
        }
        e => panic!("expected a compile error, got {e}"),
    }
}

#[test]
fn a_broken_kernel_among_good_ones_is_named_alone() {
    // Kernels compiled together are one OpenCL program; its failure must still name the
    // kernel at fault, and the good kernels of the batch must still work afterwards.
    let Some(dev) = cl() else { return };
    let good = |name: &str| {
        let (x, y) = (global(0, DType::F32), global(1, DType::F32));
        let i = gid(4);
        let v = alu(Ops::ADD, &[&load(&index(&y, &i)), &load(&index(&y, &i))]);
        spec(dev.as_ref(), name, program(&[store(&index(&x, &i), &v)]), 4, None)
    };
    let mut broken = (*good("broken_one")).clone();
    broken.src = "__kernel void broken_one(__global float* x) { x[0] = undefined_name + ; }".to_string();
    let batch = vec![good("good_a"), Arc::new(broken), good("good_b"), good("good_c")];
    match dev.compile(&batch) {
        Err(Error::Compile { kernel, .. }) => assert_eq!(kernel, "broken_one"),
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(_) => panic!("a broken kernel compiled"),
    }
    let out = run(dev.as_ref(), good("good_a"), &[bytes(&[0f32; 4]), bytes(&[1f32, 2.0, 3.0, 4.0])], &[]);
    assert_eq!(values::<f32>(&out[0]), vec![2.0, 4.0, 6.0, 8.0]);
}

#[test]
fn huge_allocation_is_out_of_memory() {
    let Some(dev) = cl() else { return };
    match dev.alloc(1 << 62) {
        Err(Error::OutOfMemory { device, bytes }) => assert_eq!((device.as_str(), bytes), ("CL", 1 << 62)),
        Err(e) => panic!("expected OutOfMemory, got {e}"),
        Ok(_) => panic!("allocated 4 EiB"),
    }
}

// ------------------------------------------------------------ tensors end to end

fn close(got: &[f32], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!((g as f64 - w).abs() <= 1e-5 + 1e-4 * w.abs(), "{what}[{k}]: got {g}, want {w}");
    }
}

fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f64 / (1u64 << 24) as f64 * 4.0 - 2.0) as f32
        })
        .collect()
}

#[test]
fn tensor_elementwise_reduce_matmul_softmax_on_cl() {
    let Some(_) = cl() else { return };
    with_default_device("CL", || {
        let (m, k, n) = (17usize, 31usize, 23usize);
        let (xa, xb) = (data(m * k, 1), data(k * n, 2));
        let a = Tensor::from_vec(xa.clone(), [m, k]);
        let b = Tensor::from_vec(xb.clone(), [k, n]);
        assert_eq!(a.device(), "CL");

        // Elementwise with broadcasting and a unary op.
        let e = (&a * 2.0 + 1.0).relu().sqrt();
        let want: Vec<f64> = xa.iter().map(|&x| (x as f64 * 2.0 + 1.0).max(0.0).sqrt()).collect();
        close(&e.to_vec::<f32>().unwrap(), &want, "sqrt(relu(2a+1))");

        // Row sums (a reduce loop per work item).
        let s = a.sum_axis(1);
        let want: Vec<f64> = (0..m).map(|i| (0..k).map(|j| xa[i * k + j] as f64).sum()).collect();
        close(&s.to_vec::<f32>().unwrap(), &want, "sum(axis=1)");

        // Column sums (strided loads).
        let s = a.sum_axis(0);
        let want: Vec<f64> = (0..k).map(|j| (0..m).map(|i| xa[i * k + j] as f64).sum()).collect();
        close(&s.to_vec::<f32>().unwrap(), &want, "sum(axis=0)");

        // Matmul.
        let c = a.matmul(&b);
        let mut want = vec![0.0f64; m * n];
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = (0..k).map(|t| xa[i * k + t] as f64 * xb[t * n + j] as f64).sum();
            }
        }
        close(&c.to_vec::<f32>().unwrap(), &want, "matmul");

        // Softmax over rows (several kernels, exp2 and division).
        let sm = a.softmax(-1);
        let mut want = vec![0.0f64; m * k];
        for i in 0..m {
            let row = &xa[i * k..(i + 1) * k];
            let mx = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
            let z: f64 = row.iter().map(|&v| (v as f64 - mx).exp()).sum();
            for j in 0..k {
                want[i * k + j] = (row[j] as f64 - mx).exp() / z;
            }
        }
        close(&sm.to_vec::<f32>().unwrap(), &want, "softmax");
    });
}

/// Attention on a device with work groups is 3 kernels (the scores, each row's max, the weights
/// recomputed inside their product with the values beside their sum: never written out), for a
/// LLaMA-3.2-1B prompt and decode step; a small causal GQA call matches f64.
#[test]
fn attention_is_3_kernels_on_a_gpu_style_device() {
    use ferrograd::schedule::kernel_count;
    use ferrograd::tensor::AttentionOpts;
    let Some(_) = cl() else { return };
    with_default_device("CL", || {
        let opts = AttentionOpts::default().gqa();
        let rand = |shape: [usize; 4], seed: u64| Tensor::from_vec(data(shape.iter().product(), seed), shape);
        let (k, v) = (rand([1, 8, 512, 64], 2).realize().unwrap(), rand([1, 8, 512, 64], 3).realize().unwrap());
        let prompt = rand([1, 32, 512, 64], 1).realize().unwrap();
        let n = kernel_count(&[prompt.scaled_dot_product_attention(&k, &v, &opts.clone().causal()).uop()]);
        assert_eq!(n, 3, "a 512-token causal prompt's attention");
        let step = rand([1, 32, 1, 64], 4).realize().unwrap();
        let mask = Tensor::arange(512).lt(300).reshape([1, 512]);
        let n = kernel_count(&[step.scaled_dot_product_attention(&k, &v, &opts.clone().mask(&mask)).uop()]);
        assert_eq!(n, 3, "a decode step's attention over a 512-slot cache");

        // 4 query heads over 2 key heads, 24 queries, head size 8, causal: against f64.
        let (hq, hk, l, e) = (4usize, 2usize, 24usize, 8usize);
        let (xq, xk, xv) = (data(hq * l * e, 5), data(hk * l * e, 6), data(hk * l * e, 7));
        let q = Tensor::from_vec(xq.clone(), [1, hq, l, e]);
        let (kt, vt) = (Tensor::from_vec(xk.clone(), [1, hk, l, e]), Tensor::from_vec(xv.clone(), [1, hk, l, e]));
        let out = q.scaled_dot_product_attention(&kt, &vt, &opts.causal());
        assert_eq!(kernel_count(&[out.uop()]), 3, "the small causal call");
        let mut want = vec![0.0f64; hq * l * e];
        for h in 0..hq {
            let g = h / (hq / hk);
            for i in 0..l {
                let score = |j: usize| {
                    let dot: f64 =
                        (0..e).map(|t| xq[(h * l + i) * e + t] as f64 * xk[(g * l + j) * e + t] as f64).sum();
                    dot / (e as f64).sqrt()
                };
                let mx = (0..=i).map(score).fold(f64::NEG_INFINITY, f64::max);
                let w: Vec<f64> = (0..=i).map(|j| (score(j) - mx).exp()).collect();
                let z: f64 = w.iter().sum();
                for t in 0..e {
                    let pv: f64 = (0..=i).map(|j| w[j] * xv[(g * l + j) * e + t] as f64).sum();
                    want[(h * l + i) * e + t] = pv / z;
                }
            }
        }
        close(&out.to_vec::<f32>().unwrap(), &want, "causal attention");
    });
}

#[test]
fn tensor_dtypes_on_cl() {
    let Some(_) = cl() else { return };
    with_default_device("CL", || {
        // int64 arithmetic beyond 32 bits.
        let xs: Vec<i64> = (0..40).map(|v| (v - 20) * 3_000_000_007).collect();
        let t = Tensor::from_slice(&xs);
        let got = (&t * 3 + 5).to_vec::<i64>().unwrap();
        assert_eq!(got, xs.iter().map(|x| x * 3 + 5).collect::<Vec<_>>());

        // Signed overflow wraps, as on the other devices.
        let w = Tensor::from_slice(&[i32::MAX, i32::MIN, 65536]);
        assert_eq!((&w + 1).to_vec::<i32>().unwrap(), vec![i32::MIN, i32::MIN + 1, 65537]);
        assert_eq!((&w * &w).to_vec::<i32>().unwrap()[2], 0);
        let big = Tensor::from_slice(&[i64::MAX, -5, 1 << 62]);
        let got = (&big + i64::MIN).to_vec::<i64>().unwrap();
        assert_eq!(got, vec![-1, i64::MAX - 4, (1i64 << 62).wrapping_add(i64::MIN)]);

        // Comparisons to bool tensors, and where.
        let fs = data(33, 3);
        let f = Tensor::from_slice(&fs);
        let mask = f.lt(0.25);
        assert_eq!(mask.to_vec::<bool>().unwrap(), fs.iter().map(|&x| x < 0.25).collect::<Vec<_>>());
        let w = mask.where_(&f, -1.0);
        let want: Vec<f64> = fs.iter().map(|&x| if x < 0.25 { x as f64 } else { -1.0 }).collect();
        close(&w.to_vec::<f32>().unwrap(), &want, "where");

        // f16 storage: cast down, compute, cast back.
        let h = f.cast(DType::F16);
        let got = (&h * 3.0).cast(DType::F32).to_vec::<f32>().unwrap();
        let want: Vec<f32> = fs.iter().map(|&x| f16::from_f32(f16::from_f32(x).to_f32() * 3.0).to_f32()).collect();
        assert_eq!(got, want);

        // A sum of f16 values.
        let got = h.sum().cast(DType::F32).item::<f32>().unwrap() as f64;
        let want: f64 = fs.iter().map(|&x| f16::from_f32(x).to_f64()).sum();
        assert!((got - want).abs() < 0.05, "f16 sum {got} vs {want}");
    });
}

/// The kernels a tensor's realization would run, compiled for CL with the default heuristics.
fn cl_programs(t: &Tensor) -> Vec<ProgramSpec> {
    let dev = get_device("CL").unwrap();
    let sched = ferrograd::schedule::create_schedule(&[t.uop()]);
    sched.items.iter().map(|it| ferrograd::codegen::get_program(&it.ast, dev.renderer(), None)).collect()
}

#[test]
fn large_reduces_into_few_outputs_are_split_across_a_work_group() {
    let Some(_) = cl() else { return };
    with_default_device("CL", || {
        let n = 1 << 20;
        let xs = data(n, 7);
        let x = Tensor::from_vec(xs.clone(), [n]);

        // A full sum: split in two kernels (256 partial sums, then their sum), each reduce
        // split across a work group (local memory + barrier).
        let s = x.sum();
        let progs = cl_programs(&s);
        assert_eq!(progs.len(), 2, "{:?}", progs.iter().map(|p| &p.name).collect::<Vec<_>>());
        assert_eq!(progs[0].global_size[0] / progs[0].local_size.unwrap()[0], 256, "partial sums");
        for p in &progs {
            assert!(p.opts.split_whitespace().any(|o| o.starts_with('G')), "opts {:?}", p.opts);
            assert!(p.local_size.unwrap()[0] >= 64, "work group {:?}", p.local_size);
            assert!(p.src.contains("__local") && p.src.contains("barrier("), "{}", p.src);
        }
        let want: f64 = xs.iter().map(|&v| v as f64).sum();
        let got = s.to_vec::<f32>().unwrap()[0] as f64;
        assert!((got - want).abs() <= 1e-3 * (1.0 + want.abs()), "sum: got {got}, want {want}");

        // Max (NaN-free data) and few outputs from a long row each.
        let m = x.max();
        let want = xs.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
        assert_eq!(m.to_vec::<f32>().unwrap()[0], want);
        let rows = x.reshape([16, n / 16]).sum_axis(1);
        let want: Vec<f64> =
            (0..16).map(|i| xs[i * n / 16..(i + 1) * n / 16].iter().map(|&v| v as f64).sum()).collect();
        let got = rows.to_vec::<f32>().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((*g as f64 - w).abs() <= 1e-3 * (1.0 + w.abs()), "row sums: got {got:?}, want {want:?}");
        }

        // A column reduce (strided) into few outputs, with a mean on top.
        let cols = x.reshape([n / 8, 8]).mean_axis(0);
        let want: Vec<f64> =
            (0..8).map(|j| (0..n / 8).map(|i| xs[i * 8 + j] as f64).sum::<f64>() / (n / 8) as f64).collect();
        close(&cols.to_vec::<f32>().unwrap(), &want, "column means");
    });
}

#[test]
fn explicit_local_and_group_opts_give_the_same_results() {
    use ferrograd::codegen::opts::{kernel_ranges, Opt, OptKind};
    let Some(dev) = cl() else { return };
    with_default_device("CL", || {
        let (m, n, k) = (4usize, 8usize, 1024usize);
        let (xa, xb) = (data(m * k, 9), data(n * k, 10));
        let a = Tensor::from_vec(xa.clone(), [m, 1, k]).realize().unwrap();
        let b = Tensor::from_vec(xb.clone(), [1, n, k]).realize().unwrap();
        // The largest entry of each row of a @ b.T: a sum reduce nested in a max reduce, one
        // kernel. A GROUP on the inner reduce puts a barrier inside the outer loop.
        let t = (&a * &b).sum_axis(2).max_axis(1);
        let sched = ferrograd::schedule::create_schedule(&[t.uop()]);
        assert_eq!(sched.items.len(), 1, "one kernel");
        let want: Vec<f64> = (0..m)
            .map(|i| {
                (0..n)
                    .map(|j| (0..k).map(|t| xa[i * k + t] as f64 * xb[j * k + t] as f64).sum::<f64>())
                    .fold(f64::NEG_INFINITY, f64::max)
            })
            .collect();
        let item = &sched.items[0];
        let ranges = kernel_ranges(&ferrograd::codegen::prepare(&item.ast));
        let axis = |size: usize, kind: AxisType| {
            (0..ranges.len())
                .find(|&i| ranges[i].range_arg().1 == kind && ranges[i].range_size() == size as i64)
                .unwrap_or_else(|| panic!("no {kind:?} range of {size}"))
        };
        let (out, outer, inner) = (axis(m, AxisType::Global), axis(n, AxisType::Reduce), axis(k, AxisType::Reduce));
        let opt = |kind, axis, amount| Opt { kind, axis, amount };
        for (opts, what) in [
            (vec![opt(OptKind::Group, inner, 64)], "GROUP inner"),
            (vec![opt(OptKind::GroupTop, inner, 32)], "GROUPTOP inner"),
            (vec![opt(OptKind::Group, outer, 8)], "GROUP outer"),
            (vec![opt(OptKind::Local, out, 4), opt(OptKind::Group, inner, 16)], "LOCAL+GROUP"),
            (vec![opt(OptKind::Local, out, 2)], "LOCAL"),
            (vec![opt(OptKind::Upcast, out, 2), opt(OptKind::Group, inner, 32)], "UPCAST+GROUP"),
        ] {
            let spec = Arc::new(ferrograd::codegen::get_program(&item.ast, dev.renderer(), Some(&opts)));
            if what.contains("GROUP") {
                assert!(spec.src.contains("barrier("), "{what}: {}", spec.src);
            }
            let prog = dev.compile(&[spec]).unwrap().remove(0);
            let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
            prog.launch(&mems, &[], false).unwrap();
            dev.synchronize().unwrap();
            let got: Vec<f32> = item.bufs[0]
                .to_bytes()
                .unwrap()
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                .collect();
            close(&got, &want, what);
        }
    });
}

#[test]
fn more_than_2_pow_31_work_items_use_a_64_bit_index() {
    let Some(_) = cl() else { return };
    with_default_device("CL", || {
        let n: usize = (1 << 31) + 1000;
        // 2 GiB of bytes, one work item each: i % 251.
        let y = (Tensor::arange(n) % 251).cast(DType::U8);
        let progs = cl_programs(&y);
        assert!(progs[0].src.contains("long iidx0 = (long)get_global_id(0)"), "{}", progs[0].src);
        let y = match y.realize() {
            Ok(y) => y,
            Err(Error::OutOfMemory { .. }) => return eprintln!("skipping: the device cannot hold 2 GiB"),
            Err(e) => panic!("{e}"),
        };
        // The last 1000 bytes sit past index 2^31.
        let tail = y.shrink(&[(n - 1000, n)]).to_vec::<u8>().unwrap();
        for (k, v) in tail.iter().enumerate() {
            assert_eq!(*v as usize, (n - 1000 + k) % 251, "element {}", n - 1000 + k);
        }
        // And a reduce over all of them (GROUP, 64-bit accumulation).
        let total = y.cast(DType::I64).sum().to_vec::<i64>().unwrap()[0];
        let want: i64 = (n / 251) as i64 * (0..251).sum::<i64>() + (0..(n % 251) as i64).sum::<i64>();
        assert_eq!(total, want);
    });
}
