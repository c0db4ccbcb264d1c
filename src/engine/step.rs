//! One executable step of a schedule — a kernel launch or a copy — and running it.

use crate::error::{Error, Result};
use crate::helpers::{debug_level, fmt_time};
use crate::renderer::ProgramSpec;
use crate::runtime::{Buffer, DeviceMemory, Program};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A compiled kernel: its spec (name, source, estimates) and the device program.
#[derive(Clone)]
pub struct CompiledKernel {
    pub spec: Arc<ProgramSpec>,
    pub program: Arc<dyn Program>,
}

static KERNELS_RUN: AtomicUsize = AtomicUsize::new(0);

/// Total kernels launched by this process (for tests and DEBUG output).
pub fn kernels_run() -> usize {
    KERNELS_RUN.load(Ordering::Relaxed)
}

/// Counts `n` kernels launched outside `run_kernel` (a device graph's).
pub(crate) fn count_launches(n: usize) {
    KERNELS_RUN.fetch_add(n, Ordering::Relaxed);
}

/// Whether launches are being watched one by one (DEBUG=2 timings, `record_kernels`, VIZ's
/// log): then they must go through `run_kernel`, not a device graph.
pub(crate) fn launches_observed() -> bool {
    debug_level() >= 2 || RECORDING.load(Ordering::Relaxed) || crate::compiler_log::enabled()
}

/// One executable step: a kernel launch or a buffer copy.
#[derive(Clone)]
pub enum Step {
    Kernel(CompiledKernel),
    /// Copies `bufs[1]` into `bufs[0]`.
    Copy,
}

impl Step {
    /// Runs the step; `var_vals` gives the values of the variables a kernel takes, by name.
    pub fn run(&self, bufs: &[Arc<Buffer>], device: &str, var_vals: &[(Arc<str>, i64)]) -> Result<()> {
        match self {
            Step::Kernel(k) => run_kernel(k, bufs, device, var_vals),
            Step::Copy => {
                let data = bufs[1].to_bytes()?;
                bufs[0].copy_in(&data)
            }
        }
    }
}

/// One kernel launch as [`record_kernels`] saw it.
#[derive(Clone, Debug)]
pub struct KernelRun {
    pub device: String,
    pub name: String,
    /// The opts in `OPTS=` syntax (what DEBUG=3 prints).
    pub opts: String,
    pub seconds: f64,
    /// The kernel's FLOP count (what DEBUG=2's GFLOPS come from).
    pub flops: u64,
    /// Bytes of the buffers it reads and writes (each counted once).
    pub bytes: usize,
}

/// The launches [`record_kernels`] collects, and whether it is collecting (checked on every
/// launch without taking the lock).
static RECORDED: Mutex<Vec<KernelRun>> = Mutex::new(Vec::new());
static RECORDING: AtomicBool = AtomicBool::new(false);

/// Runs `f`, timing every kernel it launches (each launch waits for its kernel); returns what
/// `f` returned and the launches in order. For profilers such as `examples/survey.rs`.
pub fn record_kernels<R>(f: impl FnOnce() -> R) -> (R, Vec<KernelRun>) {
    RECORDED.lock().unwrap_or_else(|e| e.into_inner()).clear();
    RECORDING.store(true, Ordering::SeqCst);
    let out = f();
    RECORDING.store(false, Ordering::SeqCst);
    let runs = std::mem::take(&mut *RECORDED.lock().unwrap_or_else(|e| e.into_inner()));
    (out, runs)
}

/// The kernel's variable values in its argument order.
pub fn launch_values(spec: &ProgramSpec, device: &str, var_vals: &[(Arc<str>, i64)]) -> Result<Vec<i64>> {
    spec.vars
        .iter()
        .map(|name| {
            var_vals.iter().find(|(n, _)| **n == **name).map(|&(_, v)| v).ok_or_else(|| Error::Launch {
                device: device.to_string(),
                kernel: spec.name.clone(),
                message: format!("variable {name:?} is not bound (use Variable::bind)"),
            })
        })
        .collect()
}

/// Runs one compiled kernel on its buffers.
pub fn run_kernel(k: &CompiledKernel, bufs: &[Arc<Buffer>], device: &str, var_vals: &[(Arc<str>, i64)]) -> Result<()> {
    let mems: Vec<&DeviceMemory> = bufs.iter().map(|b| b.memory()).collect::<Result<_>>()?;
    let vals = launch_values(&k.spec, device, var_vals)?;
    let debug = debug_level() >= 2;
    let recording = RECORDING.load(Ordering::Relaxed);
    let viz = crate::compiler_log::enabled();
    let t = k.program.launch(&mems, &vals, debug || recording || viz)?;
    let n = KERNELS_RUN.fetch_add(1, Ordering::Relaxed) + 1;
    if !debug && !recording && !viz {
        return Ok(());
    }
    let bytes: usize = bufs.iter().map(|b| b.nbytes()).sum();
    if viz {
        crate::compiler_log::launched(crate::compiler_log::LaunchLog {
            realize: 0,
            kernel: k.spec.name.clone(),
            device: device.to_string(),
            seconds: t,
            flops: k.spec.flops,
            bytes,
        });
    }
    if recording {
        let run = KernelRun {
            device: device.to_string(),
            name: k.spec.name.clone(),
            opts: k.spec.opts.clone(),
            seconds: t,
            flops: k.spec.flops,
            bytes,
        };
        RECORDED.lock().unwrap_or_else(|e| e.into_inner()).push(run);
    }
    if debug {
        let gflops = k.spec.flops as f64 / t.max(1e-9) / 1e9;
        let gbs = bytes as f64 / t.max(1e-9) / 1e9;
        eprintln!(
            "*** {device:<7} {n:>5} {:<36} arg {:>2} mem {:>7.3} GB tm {} ({gflops:>9.2} GFLOPS {gbs:>8.2} GB/s)",
            k.spec.name,
            bufs.len(),
            bytes as f64 / 1e9,
            fmt_time(t),
        );
    }
    Ok(())
}
