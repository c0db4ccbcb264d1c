//! The VECTOR (`V`) and FMACHAIN (`F`) opts: the lowering decisions as opts. What `DEBUG=3`
//! prints (`ProgramSpec::opts`) names every decision, so feeding it back as `OPTS=` builds the
//! same kernel; an explicit choice that does not qualify is an `OptError` saying why; each
//! choice computes the same values as the default. Runs on the CPU (a target with SIMD).

use ferrograd::codegen::opts::{candidate_opts, parse_opts, OptKind};
use ferrograd::codegen::{get_program, prepare, try_program};
use ferrograd::runtime::{get_device, DeviceMemory};
use ferrograd::schedule::{create_schedule, ScheduleItem};
use ferrograd::Tensor;
use std::sync::Arc;

fn kernels(t: &Tensor) -> Vec<ScheduleItem> {
    create_schedule(&[t.uop()]).items.into_iter().filter(|i| i.kind == ferrograd::schedule::ItemKind::Kernel).collect()
}

fn run(item: &ScheduleItem, opts: &str) -> Vec<f32> {
    let dev = get_device("CPU").unwrap();
    let spec = try_program(&item.ast, dev.renderer(), &parse_opts(opts).unwrap()).unwrap();
    let prog = dev.compile(&[Arc::new(spec)]).unwrap().remove(0);
    let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    prog.launch(&mems, &[], false).unwrap();
    dev.synchronize().unwrap();
    item.bufs[0].to_bytes().unwrap().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn graphs() -> Vec<Tensor> {
    Tensor::manual_seed(11);
    let a = Tensor::randn([64, 48]).realize().unwrap();
    let b = Tensor::randn([48, 96]).realize().unwrap();
    let v = Tensor::randn([8, 1024]).realize().unwrap();
    vec![a.matmul(&b), v.sum_axis([1]), (&v * 2.0).exp(), v.softmax(1), a.relu().sum_axis([0])]
}

#[test]
fn printed_opts_rebuild_the_same_kernel() {
    let dev = get_device("CPU").unwrap();
    let mut vectors = 0;
    for t in graphs() {
        for item in kernels(&t) {
            let auto = get_program(&item.ast, dev.renderer(), None);
            vectors += auto.opts.contains('V') as usize;
            let again = try_program(&item.ast, dev.renderer(), &parse_opts(&auto.opts).unwrap())
                .unwrap_or_else(|e| panic!("{}: `{}` does not rebuild: {e}", auto.name, auto.opts));
            // (The name lists the ranges after the opts: a vector split spelled out as an UPCAST
            // shows in it.)
            let same = again.src.replace(&again.name, &auto.name) == auto.src;
            assert!(same, "{}: `{}` built another kernel", auto.name, auto.opts);
            assert_eq!(again.opts, auto.opts, "{}: the printed opts changed", auto.name);
        }
    }
    if dev.renderer().target().simd_bytes >= 16 {
        assert!(vectors >= 3, "the default rule chose a vector axis in only {vectors} kernels");
    }
}

#[test]
fn each_vector_and_fma_choice_computes_the_same_values() {
    let dev = get_device("CPU").unwrap();
    let target = dev.renderer().target().clone();
    for t in graphs() {
        for item in kernels(&t) {
            let auto = get_program(&item.ast, dev.renderer(), None);
            let want = run(&item, &auto.opts);
            let base: Vec<_> =
                parse_opts(&auto.opts).unwrap().into_iter().filter(|o| o.kind != OptKind::Vector).collect();
            let ast = prepare(&item.ast);
            let mut tried = 0;
            for c in candidate_opts(&ast, &base, &target) {
                if !matches!(c.kind, OptKind::Vector | OptKind::FmaChain) {
                    continue;
                }
                let mut opts = base.clone();
                opts.push(c);
                let text = ferrograd::codegen::opts::format_opts(&opts);
                let Ok(spec) = try_program(&item.ast, dev.renderer(), &opts) else { continue };
                if c == (ferrograd::codegen::opts::Opt { kind: OptKind::Vector, axis: 0, amount: 1 }) {
                    assert!(!spec.src.contains("vfloat"), "{text}: still vectors");
                }
                let got = run(&item, &text);
                for (g, w) in got.iter().zip(&want) {
                    assert!((g - w).abs() <= 1e-4 * w.abs().max(1.0), "{} with `{text}`: {g} vs {w}", auto.name);
                }
                tried += 1;
            }
            assert!(tried >= 1, "{}: no VECTOR or FMACHAIN candidate applies", auto.name);
        }
    }
}

#[test]
fn a_vector_axis_that_does_not_qualify_is_an_error() {
    let dev = get_device("CPU").unwrap();
    if dev.renderer().target().simd_bytes < 16 {
        return;
    }
    let x = Tensor::randn([16, 64]).realize().unwrap();
    let item = &kernels(&x.sum_axis([1]))[0];
    let err = |opts: &str| try_program(&item.ast, dev.renderer(), &parse_opts(opts).unwrap()).unwrap_err().to_string();
    // Axis 0 is the output loop: not a vector axis.
    assert!(err("V0:16").contains("UPCAST or UNROLL"), "{}", err("V0:16"));
    // The lanes must be the range's size, and a later opt must not split it.
    assert!(err("R1:8 V2:4").contains("8 lanes"), "{}", err("R1:8 V2:4"));
    assert!(err("U0:4 V2:4 U2:2").contains("later opt"), "{}", err("U0:4 V2:4 U2:2"));
    assert!(err("V0:1 V0:1").contains("one VECTOR"), "{}", err("V0:1 V0:1"));
    assert!(err("F1:4").contains("F0:n"), "{}", err("F1:4"));
    // Summing down the columns reads with a stride of 64 along the reduce: no per-lane sums.
    let t = kernels(&x.sum_axis([0])).remove(0);
    let e = try_program(&t.ast, dev.renderer(), &parse_opts("R1:4 V2:4").unwrap());
    assert!(e.as_ref().is_err_and(|e| e.to_string().contains("contiguous")), "{:?}", e.map(|s| s.opts));
}

#[test]
fn a_linear_into_few_classes_takes_its_reduce_as_the_vector_axis() {
    // The MNIST model's last layer: 10 classes fill no vector and the rows lie 576 floats apart,
    // so no output axis is a SIMD axis; the reduce is, with per-lane partial sums beside a small
    // tile of outputs (it was a scalar 8x10 tile, 4x slower).
    let dev = get_device("CPU").unwrap();
    let lanes = dev.renderer().target().simd_bytes / 4;
    Tensor::manual_seed(5);
    let x = Tensor::randn([64, 576]).realize().unwrap();
    let w = Tensor::randn([10, 576]).realize().unwrap();
    let b = Tensor::randn([10]).realize().unwrap();
    let y = x.matmul(&w.t()) + &b;
    if lanes >= 4 {
        let items = kernels(&y);
        let spec = get_program(&items.last().unwrap().ast, dev.renderer(), None);
        let vector = parse_opts(&spec.opts).unwrap().into_iter().find(|o| o.kind == OptKind::Vector);
        let unroll = parse_opts(&spec.opts).unwrap().into_iter().find(|o| o.kind == OptKind::Unroll);
        assert_eq!(vector.map(|o| o.amount), Some(lanes as i64), "{}: {}", spec.name, spec.opts);
        assert_eq!(unroll.map(|o| o.amount), Some(lanes as i64), "{}: {}", spec.name, spec.opts);
    }
    let (xs, ws, bs) = (x.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    let got = y.to_vec::<f32>().unwrap();
    for r in 0..64 {
        for c in 0..10 {
            let want: f64 =
                bs[c] as f64 + (0..576).map(|k| xs[r * 576 + k] as f64 * ws[c * 576 + k] as f64).sum::<f64>();
            let err = (got[r * 10 + c] as f64 - want).abs();
            assert!(err < 1e-3 * (1.0 + want.abs()), "row {r} class {c}: {} against {want}", got[r * 10 + c]);
        }
    }
}

#[test]
fn small_integers_load_and_convert_to_f32_as_vectors() {
    // An image's u8 pixels (and i8, i16, u16 values) are loaded a vector at a time and converted
    // with one vector cast, exactly.
    let dev = get_device("CPU").unwrap();
    for (dt, lo, hi) in [
        (ferrograd::DType::U8, 0, 256),
        (ferrograd::DType::I8, -128, 128),
        (ferrograd::DType::I16, -30000, 30000),
        (ferrograd::DType::U16, 0, 65536),
    ] {
        let x = Tensor::randint([8, 64], lo, hi).cast(dt).realize().unwrap();
        let y = x.cast(ferrograd::DType::F32) * 3.0 + 0.5;
        if dev.renderer().target().simd_bytes >= 16 {
            let spec = get_program(&kernels(&y)[0].ast, dev.renderer(), None);
            assert!(spec.src.contains("__builtin_convertvector"), "{dt:?}: {} has no vector cast", spec.opts);
        }
        let ints = x.cast(ferrograd::DType::I32).to_vec::<i32>().unwrap();
        let got = y.to_vec::<f32>().unwrap();
        for (g, i) in got.iter().zip(&ints) {
            assert_eq!(*g, *i as f32 * 3.0 + 0.5, "{dt:?}: {i}");
        }
        assert!(ints.iter().any(|&i| i != ints[0]), "{dt:?}: the values vary");
    }
}
