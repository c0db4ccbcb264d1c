//! Running a graph on a device: build it with ferrograd's tensor API, schedule it, pick each
//! kernel's opts by the mode, compile every kernel of a batch of graphs in one call, launch,
//! read the outputs back.

use super::graph::{Bin, Decomp, Dt, Fun, Fun2, Graph, Node, NormKind, Op, Red, Rng, Un};
use super::reference::{input_data, E};
use ferrograd::codegen::opts::{apply_opts, candidate_opts, check_opt, format_opts, kernel_ranges, Opt, OptKind};
use ferrograd::codegen::{heuristic_opts, prepare, try_program, ProgramSpec};
use ferrograd::runtime::{get_device, Backend, Buffer, DeviceMemory};
use ferrograd::schedule::{create_schedule, ItemKind, ScheduleItem};
use ferrograd::tensor::{AttentionOpts, ConvOpts, PoolOpts};
use ferrograd::{Dim, Tensor, Variable};
use std::sync::Arc;

/// How a kernel's opts are chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// The hand-coded heuristic (what users get).
    Default,
    /// No opts (`NOOPT=1`).
    NoOpt,
    /// A random list of legal opts, from this seed.
    Random(u64),
    /// The heuristic's opts extended by one or two of BEAM's candidates, from this seed.
    Beam(u64),
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mode::Default => write!(f, "default opts"),
            Mode::NoOpt => write!(f, "NOOPT"),
            Mode::Random(s) => write!(f, "random opts (seed {s:#x})"),
            Mode::Beam(s) => write!(f, "BEAM-style opts (seed {s:#x})"),
        }
    }
}

/// An element read back from a device: the float value, or the integer.
#[derive(Clone, Copy, Debug)]
pub struct Got {
    pub v: f64,
    pub i: i128,
}

/// What went wrong before values came back.
#[derive(Clone, Debug)]
pub enum Failure {
    /// Codegen panicked or the device compiler rejected a kernel.
    Compile(String),
    /// Building the graph, scheduling or running panicked or failed.
    Run(String),
}

/// One graph prepared for one device and mode: its schedule and a kernel spec per kernel item.
pub struct Job {
    pub device: Arc<dyn Backend>,
    pub items: Vec<ScheduleItem>,
    pub specs: Vec<Option<Arc<ProgramSpec>>>,
    pub outputs: Vec<(Arc<Buffer>, Dt)>,
    /// Per kernel, its opts in the `OPTS=` syntax.
    pub opts: Vec<String>,
}

/// The ferrograd tensor with the input's data on `device`.
pub fn input_tensor(data: &[E], shape: &[usize], dt: Dt, device: &str) -> Tensor {
    match dt {
        Dt::F32 => Tensor::from_slice_on(&data.iter().map(|e| e.v as f32).collect::<Vec<_>>(), shape.to_vec(), device),
        Dt::F16 => Tensor::from_slice_on(
            &data.iter().map(|e| half::f16::from_f64(e.v)).collect::<Vec<_>>(),
            shape.to_vec(),
            device,
        ),
        Dt::BF16 => Tensor::from_slice_on(
            &data.iter().map(|e| half::bf16::from_f64(e.v)).collect::<Vec<_>>(),
            shape.to_vec(),
            device,
        ),
        Dt::I32 => Tensor::from_slice_on(&data.iter().map(|e| e.i as i32).collect::<Vec<_>>(), shape.to_vec(), device),
        Dt::I64 => Tensor::from_slice_on(&data.iter().map(|e| e.i as i64).collect::<Vec<_>>(), shape.to_vec(), device),
        Dt::U8 => Tensor::from_slice_on(&data.iter().map(|e| e.i as u8).collect::<Vec<_>>(), shape.to_vec(), device),
        Dt::U32 => Tensor::from_slice_on(&data.iter().map(|e| e.i as u32).collect::<Vec<_>>(), shape.to_vec(), device),
        Dt::Bool => Tensor::from_slice_on(&data.iter().map(|e| e.i != 0).collect::<Vec<_>>(), shape.to_vec(), device),
    }
}

fn bin_op(b: Bin, x: &Tensor, y: &Tensor) -> Tensor {
    match b {
        Bin::Add => x.add(y),
        Bin::Sub => x.sub(y),
        Bin::Mul => x.mul(y),
        Bin::Div => x.div(y),
        Bin::Max => x.maximum(y),
        Bin::Min => x.minimum(y),
        Bin::Lt => x.lt(y),
        Bin::Eq => x.eq(y),
        Bin::Ne => x.ne(y),
        Bin::And => x.bitand(y),
        Bin::Or => x.bitor(y),
        Bin::Xor => x.bitxor(y),
    }
}

/// `x op c` with a Rust scalar, as a user writes it (the scalar takes the tensor's dtype).
fn scalar_op<C: ferrograd::tensor::Operand + Copy>(b: Bin, x: &Tensor, c: C) -> Tensor {
    match b {
        Bin::Add => x.add(c),
        Bin::Sub => x.sub(c),
        Bin::Mul => x.mul(c),
        Bin::Div => x.div(c),
        Bin::Max => x.maximum(c),
        Bin::Min => x.minimum(c),
        Bin::Lt => x.lt(c),
        Bin::Eq => x.eq(c),
        Bin::Ne => x.ne(c),
        Bin::And => x.bitand(c),
        Bin::Or => x.bitor(c),
        Bin::Xor => x.bitxor(c),
    }
}

/// The graph's outputs as ferrograd tensors on `device`. Graphs with an even number of nodes
/// are built inside `no_grad`, as a model's forward pass often is: every tensor is then wrapped
/// in a DETACH, which the scheduler must see through.
pub fn build(g: &Graph, device: &str) -> Vec<Tensor> {
    let build = || ferrograd::tensor::with_default_device(device, || build_here(g, device));
    if g.nodes.len().is_multiple_of(2) {
        ferrograd::tensor::no_grad(build)
    } else {
        build()
    }
}

fn build_here(g: &Graph, device: &str) -> Vec<Tensor> {
    build_with(g, &mut |node| input_tensor(&input_data(node), &node.shape, node.dt, device), false)
}

/// The graph's outputs built on the current default device, each input node's tensor given by
/// `input` (in node order); with `f64`, float32 nodes are computed in float64 (the inputs given
/// are float64).
pub fn build_with(g: &Graph, input: &mut dyn FnMut(&Node) -> Tensor, f64: bool) -> Vec<Tensor> {
    let mut ts: Vec<Tensor> = Vec::with_capacity(g.nodes.len());
    for node in &g.nodes {
        let s = |k: usize| &ts[node.src[k]];
        let t = match &node.op {
            Op::Input { .. } => input(node),
            Op::Unary(u) => {
                let x = s(0);
                match u {
                    Un::Neg => x.neg(),
                    Un::Exp => x.exp(),
                    Un::Log => x.log(),
                    Un::Sqrt => x.sqrt(),
                    Un::Sin => x.sin(),
                    Un::Recip => x.reciprocal(),
                    Un::Relu => x.relu(),
                    Un::Abs => x.abs(),
                    Un::Floor => x.floor(),
                    Un::Trunc => x.trunc(),
                    Un::Square => x.square(),
                    Un::Sigmoid => x.sigmoid(),
                    Un::Not => x.logical_not(),
                }
            }
            Op::Binary(b) => bin_op(*b, s(0), s(1)),
            Op::Scalar(b, c) => {
                let x = s(0);
                if x.dtype().is_float() {
                    scalar_op(*b, x, *c)
                } else {
                    scalar_op(*b, x, *c as i64)
                }
            }
            Op::Where => s(0).where_(s(1), s(2)),
            Op::Cast(d) => s(0).cast(d.dtype()),
            Op::IntDiv { divisor, remainder } => {
                if *remainder {
                    s(0).remainder(*divisor)
                } else {
                    s(0).div_floor(*divisor)
                }
            }
            Op::Reshape(v) => s(0).reshape(v.clone()),
            Op::Permute(v) => s(0).permute(v.iter().map(|&a| a as isize).collect::<Vec<_>>()),
            Op::Pad(p) => s(0).pad(p),
            Op::Shrink(r) => s(0).shrink(r),
            Op::SymPad(p) => sym_pad(s(0), p),
            Op::SymShrink(r) => sym_shrink(s(0), r),
            Op::Flip(axes) => {
                if axes.is_empty() {
                    s(0).clone()
                } else {
                    s(0).flip(axes.iter().map(|&a| a as isize).collect::<Vec<_>>())
                }
            }
            Op::Expand(v) => s(0).expand(v.clone()),
            Op::Reduce(r, axes, keep) => {
                // Some reduces run over symbolic lengths bound to the full lengths: the same
                // values, with the reduce loops to a variable's bound.
                let x = if every_third(&[axes.clone(), s(0).shape()].concat()) {
                    symbolic_prefix(s(0), axes)
                } else {
                    s(0).clone()
                };
                let axes: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
                match (r, keep) {
                    (Red::Sum, false) => x.sum_axis(axes),
                    (Red::Sum, true) => x.sum_keepdim(axes),
                    (Red::Max, false) => x.max_axis(axes),
                    (Red::Max, true) => x.max_keepdim(axes),
                    (Red::Min, false) => x.min_axis(axes),
                    (Red::Min, true) => x.min_keepdim(axes),
                }
            }
            Op::Cumsum(a) => s(0).cumsum(*a as isize),
            Op::Matmul => s(0).matmul(s(1)),
            Op::Conv2d { stride, padding } => {
                s(0).conv2d(s(1), None, &ConvOpts::default().stride(*stride).padding(*padding))
            }
            Op::Contiguous if every_third(&s(0).shape()) => symbolic_contiguous(s(0)),
            Op::Contiguous => s(0).contiguous(),
            Op::Func(f) => {
                let x = s(0);
                match f {
                    Fun::Atan => x.atan(),
                    Fun::Asin => x.asin(),
                    Fun::Acos => x.acos(),
                    Fun::Tan => x.tan(),
                    Fun::Sinh => x.sinh(),
                    Fun::Cosh => x.cosh(),
                    Fun::Tanh => x.tanh(),
                    Fun::Asinh => x.asinh(),
                    Fun::Acosh => x.acosh(),
                    Fun::Atanh => x.atanh(),
                    Fun::Expm1 => x.expm1(),
                    Fun::Log1p => x.log1p(),
                }
            }
            Op::Func2(f) => match f {
                Fun2::Atan2 => s(0).atan2(s(1)),
                Fun2::Logaddexp => s(0).logaddexp(s(1)),
                Fun2::Copysign => s(0).copysign(s(1)),
            },
            Op::Sort { axis, descending, k: None, indices: false } => s(0).sort(*axis as isize, *descending).0,
            Op::Sort { axis, descending, indices: true, .. } => s(0).argsort(*axis as isize, *descending),
            Op::Sort { axis, k: Some(k), .. } => s(0).topk(*k, *axis as isize, true).0,
            Op::Softmax { axis, log: false } => s(0).softmax(*axis as isize),
            Op::Softmax { axis, log: true } => s(0).log_softmax(*axis as isize),
            Op::Unfold { axis, size, step } => s(0).unfold(*axis as isize, *size, *step),
            Op::Diagonal(offset) => s(0).diagonal_offset(*offset, -2, -1),
            Op::Attention { causal } => {
                let opts = AttentionOpts { is_causal: *causal, ..Default::default() };
                s(0).scaled_dot_product_attention(s(1), s(2), &opts)
            }
            Op::MaxPool { kernel, stride, indices } => {
                let (values, index) = s(0).max_pool2d_with_indices(*kernel, &PoolOpts::default().stride(*stride));
                if *indices {
                    index
                } else {
                    values
                }
            }
            Op::Diag(offset) => s(0).diag(*offset),
            Op::Decomp(what) => {
                let x = s(0);
                let gram = |f: &Tensor| f.transpose(-1, -2).matmul(f);
                match what {
                    Decomp::QrProduct => {
                        let (q, r) = x.qr();
                        q.matmul(&r)
                    }
                    Decomp::QrGram => gram(&x.qr().0),
                    Decomp::SvdValues => x.svd().1,
                    Decomp::SvdProduct => {
                        let (u, s, v) = x.svd();
                        u.mul(s.unsqueeze(-2)).matmul(&v.transpose(-1, -2))
                    }
                    Decomp::SvdGram => {
                        let (u, _, v) = x.svd();
                        let d = x.shape();
                        gram(if d[d.len() - 2] >= d[d.len() - 1] { &v } else { &u })
                    }
                }
            }
            Op::Norm(kind) => {
                let (x, last) = (s(0), node.shape.last().copied().unwrap_or(1));
                match kind {
                    NormKind::Layer => x.layer_norm(&[last], None, None, 1e-5),
                    NormKind::Rms => x.rms_norm(&[last], None, Some(1e-6)),
                    NormKind::Instance => x.instance_norm(None, None, 1e-5),
                    NormKind::Batch => x.batch_norm(None, None, None, None, true, 0.1, 1e-5),
                    NormKind::Group(g) => x.group_norm(*g, None, None, 1e-5),
                }
            }
        };
        assert_eq!(t.shape(), node.shape, "fuzz: {:?} gave shape {:?}", node.op, t.shape());
        let want = if f64 && node.dt == Dt::F32 { ferrograd::DType::F64 } else { node.dt.dtype() };
        assert_eq!(t.dtype(), want, "fuzz: {:?} gave dtype {:?}", node.op, t.dtype());
        ts.push(t);
    }
    g.outputs.iter().map(|&o| ts[o].clone()).collect()
}

/// A random list of legal opts: BEAM's candidates one after another.
fn random_opts(ast: &ferrograd::UOp, start: Vec<Opt>, extra: usize, rng: &mut Rng, device: &dyn Backend) -> Vec<Opt> {
    let target = device.renderer().target();
    let mut opts = start;
    for _ in 0..extra {
        let mut choices = candidate_opts(ast, &opts, target);
        // Also small PADTOs that do not divide (BEAM only pads to 8, 16, 32).
        if let Ok(applied) = apply_opts(ast, &opts, target) {
            let ranges = kernel_ranges(&applied);
            for (axis, r) in ranges.iter().enumerate() {
                let amount = 3 + rng.below(6) as i64;
                let o = Opt { kind: OptKind::PadTo, axis, amount };
                if r.range_size() % amount != 0 && check_opt(&ranges, &o, target).is_ok() {
                    choices.push(o);
                }
            }
        }
        if choices.is_empty() {
            break;
        }
        let o = rng.pick(&choices);
        PICKED.lock().unwrap_or_else(|e| e.into_inner()).entry(o.kind.letter()).and_modify(|n| *n += 1).or_insert(1);
        opts.push(o);
    }
    opts
}

/// How many random opts of each kind were drawn (printed with `FUZZ_STATS`).
pub static PICKED: std::sync::Mutex<std::collections::BTreeMap<&'static str, usize>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// The message of a caught panic.
pub fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

/// Builds and schedules `g` on `device` and makes each kernel's spec for `mode`.
pub fn prepare_job(g: &Graph, device: &str, mode: Mode) -> Result<Job, Failure> {
    let dev = get_device(device).map_err(|e| Failure::Run(e.to_string()))?;
    let built = std::panic::catch_unwind(|| {
        let outs = build(g, device);
        let uops: Vec<ferrograd::UOp> = outs.iter().map(|t| t.uop()).collect();
        create_schedule(&uops)
    })
    .map_err(|p| Failure::Run(format!("building or scheduling panicked: {}", panic_text(p))))?;
    let dts: Vec<Dt> = g.outputs.iter().map(|&o| g.nodes[o].dt).collect();
    let mut specs = Vec::new();
    let mut all_opts = Vec::new();
    // Random opts are drawn per distinct kernel: the steps of a loop (a decomposition's) share
    // one kernel, and compile it once.
    let mut first_of: std::collections::HashMap<ferrograd::UOp, usize> = std::collections::HashMap::new();
    for (k, item) in built.items.iter().enumerate() {
        if item.kind != ItemKind::Kernel {
            specs.push(None);
            all_opts.push(String::new());
            continue;
        }
        let dev2 = dev.clone();
        let spec = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let r = dev2.renderer();
            match mode {
                Mode::Default => try_program(&item.ast, r, &heuristic_opts(&item.ast, r)),
                Mode::NoOpt => try_program(&item.ast, r, &[]),
                Mode::Random(seed) | Mode::Beam(seed) => {
                    let first = *first_of.entry(item.ast.clone()).or_insert(k);
                    let mut rng = Rng::new(seed ^ (first as u64).wrapping_mul(0x9E37));
                    let ast = prepare(&item.ast);
                    let (start, extra) = match mode {
                        Mode::Beam(_) => (heuristic_opts(&item.ast, r), 1 + rng.below(2)),
                        _ => (Vec::new(), 1 + rng.below(4)),
                    };
                    let mut opts = random_opts(&ast, start, extra, &mut rng, dev2.as_ref());
                    // Too large a program is refused (that is the size budget working): drop opts.
                    loop {
                        let tried =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| try_program(&item.ast, r, &opts)))
                                .unwrap_or_else(|p| panic!("opts `{}`: {}", format_opts(&opts), panic_text(p)));
                        match tried {
                            Ok(s) => return Ok(s),
                            Err(_) if !opts.is_empty() => {
                                opts.pop();
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
        }))
        .map_err(|p| Failure::Compile(format!("codegen panicked on kernel {k}: {}", panic_text(p))))?
        .map_err(|e| Failure::Compile(format!("kernel {k}: {e}")))?;
        all_opts.push(spec.opts.clone());
        specs.push(Some(Arc::new(spec)));
    }
    let outputs = built.outputs.iter().cloned().zip(dts).collect();
    Ok(Job { device: dev, items: built.items, specs, outputs, opts: all_opts })
}

/// A job's programs: one per schedule item (`None` for copies).
pub type Programs = Vec<Option<Arc<dyn ferrograd::runtime::Program>>>;

/// Compiles the kernels of several jobs on one device at once; returns per job its programs or
/// the compile error.
pub fn compile_jobs(jobs: &[&Job]) -> Vec<Result<Programs, Failure>> {
    let Some(first) = jobs.first() else { return Vec::new() };
    let all: Vec<Arc<ProgramSpec>> = jobs.iter().flat_map(|j| j.specs.iter().flatten().cloned()).collect();
    if std::env::var_os("FUZZ_STATS").is_some() {
        let mut sizes: Vec<usize> = all.iter().map(|s| s.src.len()).collect();
        sizes.sort_unstable();
        let uniq: std::collections::HashSet<&str> = all.iter().map(|s| s.src.as_str()).collect();
        eprintln!(
            "compile batch: {} kernels ({} distinct), source median {} max {} total {} KB",
            all.len(),
            uniq.len(),
            sizes.get(sizes.len() / 2).unwrap_or(&0),
            sizes.last().unwrap_or(&0),
            sizes.iter().sum::<usize>() / 1024
        );
        if let Ok(dir) = std::env::var("FUZZ_DUMP") {
            static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
            let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let prelude = ferrograd::renderer::cstyle::c_dialect().prelude;
            let mut text = String::from(prelude);
            for s in &all {
                if s.src.starts_with(prelude) && !text.contains(&format!("void {}_body", s.name)) {
                    text.push_str(&s.src[prelude.len()..]);
                }
            }
            let _ = std::fs::write(format!("{dir}/batch{n}.c"), text);
        }
    }
    // One call for everything; if it fails, job by job to find the guilty one.
    if let Ok(progs) = first.device.compile(&all) {
        let mut it = progs.into_iter();
        return jobs
            .iter()
            .map(|j| Ok(j.specs.iter().map(|s| s.as_ref().map(|_| it.next().expect("a program per spec"))).collect()))
            .collect();
    }
    jobs.iter()
        .map(|j| {
            let specs: Vec<Arc<ProgramSpec>> = j.specs.iter().flatten().cloned().collect();
            let progs = j.device.compile(&specs).map_err(|e| Failure::Compile(e.to_string()))?;
            let mut it = progs.into_iter();
            Ok(j.specs.iter().map(|s| s.as_ref().map(|_| it.next().expect("a program per spec"))).collect())
        })
        .collect()
}

/// Launches a compiled job and reads its outputs.
pub fn run_job(job: &Job, progs: &[Option<Arc<dyn ferrograd::runtime::Program>>]) -> Result<Vec<Vec<Got>>, Failure> {
    for ((item, prog), spec) in job.items.iter().zip(progs).zip(&job.specs) {
        match (item.kind, prog, spec) {
            (ItemKind::Kernel, Some(p), Some(spec)) => {
                let mems: Vec<&DeviceMemory> = item
                    .bufs
                    .iter()
                    .map(|b| b.memory())
                    .collect::<ferrograd::Result<_>>()
                    .map_err(|e| Failure::Run(e.to_string()))?;
                let vals = ferrograd::engine::launch_values(spec, job.device.name(), &item.var_vals)
                    .map_err(|e| Failure::Run(e.to_string()))?;
                p.launch(&mems, &vals, false).map_err(|e| Failure::Run(e.to_string()))?;
            }
            (ItemKind::Copy, _, _) => {
                let data = item.bufs[1].to_bytes().map_err(|e| Failure::Run(e.to_string()))?;
                item.bufs[0].copy_in(&data).map_err(|e| Failure::Run(e.to_string()))?;
            }
            _ => return Err(Failure::Run("a kernel without a program".into())),
        }
    }
    job.device.synchronize().map_err(|e| Failure::Run(e.to_string()))?;
    job.outputs
        .iter()
        .map(|(b, dt)| {
            let bytes = b.to_bytes().map_err(|e| Failure::Run(e.to_string()))?;
            Ok(decode(&bytes, *dt))
        })
        .collect()
}

/// Little-endian elements of `dt` (decoded here, not by ferrograd).
fn decode(bytes: &[u8], dt: Dt) -> Vec<Got> {
    let n = dt.dtype().itemsize();
    bytes
        .chunks_exact(n)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(c);
            let raw = u64::from_le_bytes(w);
            let (v, i) = match dt {
                Dt::F32 => (f32::from_bits(raw as u32) as f64, 0),
                Dt::F16 => (half::f16::from_bits(raw as u16).to_f64(), 0),
                Dt::BF16 => (half::bf16::from_bits(raw as u16).to_f64(), 0),
                Dt::I32 => (0.0, raw as u32 as i32 as i128),
                Dt::I64 => (0.0, raw as i64 as i128),
                Dt::U8 => (0.0, raw as u8 as i128),
                Dt::U32 => (0.0, raw as u32 as i128),
                Dt::Bool => (0.0, (raw != 0) as i128),
            };
            Got { v, i }
        })
        .collect()
}

/// Runs `g` on `device` in `mode` (prepare, compile, run).
pub fn run_one(g: &Graph, device: &str, mode: Mode) -> Result<Vec<Vec<Got>>, Failure> {
    let job = prepare_job(g, device, mode)?;
    let progs = compile_jobs(&[&job]).remove(0)?;
    run_job(&job, &progs)
}

/// `x.pad(pads)` with each nonzero `before` a bound variable over `0..=before + after`.
pub fn sym_pad(x: &Tensor, pads: &[(usize, usize)]) -> Tensor {
    let dims: Vec<(Dim, Dim)> = pads
        .iter()
        .enumerate()
        .map(|(axis, &(b, a))| {
            if b + a == 0 {
                return (Dim::Const(0), Dim::Const(0));
            }
            let before = Variable::new(&unique_name("pad", axis), 0, (b + a) as i64).bind(b as i64);
            (before.clone(), Dim::Const(b + a) - &before)
        })
        .collect();
    x.pad_dims(&dims)
}

/// `x.shrink(ranges)` with each nonzero start a bound variable over every start that fits.
pub fn sym_shrink(x: &Tensor, ranges: &[(usize, usize)]) -> Tensor {
    let shape = x.shape();
    let dims: Vec<(Dim, Dim)> = ranges
        .iter()
        .zip(&shape)
        .enumerate()
        .map(|(axis, (&(s, e), &d))| {
            if s == 0 {
                return (Dim::Const(0), Dim::Const(e));
            }
            let start = Variable::new(&unique_name("start", axis), 0, (d - (e - s)) as i64).bind(s as i64);
            (start.clone(), &start + (e - s))
        })
        .collect();
    x.shrink_dims(&dims)
}

/// A variable name no other node of the run uses (one realize binds each name once).
fn unique_name(what: &str, axis: usize) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!("{what}{axis}_{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// About a third of the time, decided from `key` (so no random draw changes the graphs).
fn every_third(key: &[usize]) -> bool {
    key.iter().fold(key.len(), |h, &k| h.wrapping_mul(31).wrapping_add(k)) % 3 == 0
}

/// `x` with each of `axes` (of length 2 or more) shrunk to `0..len`, `len` a variable over
/// `1..=length` bound to the full length: equal values, a symbolic shape.
pub fn symbolic_prefix(x: &Tensor, axes: &[usize]) -> Tensor {
    let dims: Vec<(Dim, Dim)> = x
        .shape()
        .iter()
        .enumerate()
        .map(|(a, &d)| {
            if !axes.contains(&a) || d < 2 {
                return (Dim::Const(0), Dim::Const(d));
            }
            (Dim::Const(0), Variable::new(&unique_name("len", a), 1, d as i64).bind(d as i64))
        })
        .collect();
    x.shrink_dims(&dims)
}

/// `x.contiguous()` computed as a symbolic-shape buffer (the first axis a variable length bound
/// to its full length) padded back by a symbolic amount: the same values.
pub fn symbolic_contiguous(x: &Tensor) -> Tensor {
    let shape = x.shape();
    if shape.first().is_none_or(|&d| d < 2) {
        return x.contiguous();
    }
    let c = symbolic_prefix(x, &[0]).contiguous();
    let first = c.sym_shape()[0].clone();
    let mut pads = vec![(Dim::Const(0), Dim::Const(0)); shape.len()];
    pads[0].1 = Dim::Const(shape[0]) - &first;
    c.pad_dims(&pads)
}
