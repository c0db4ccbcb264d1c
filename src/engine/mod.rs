//! Engine: realize a set of tensor nodes — schedule, compile (cached, batched), run, free.

pub mod beam;
pub(crate) mod capture;
pub(crate) mod step;

pub(crate) use step::{count_launches, launches_observed};
pub use step::{kernels_run, launch_values, record_kernels, run_kernel, CompiledKernel, KernelRun, Step};

use crate::codegen::{get_program, ProgramSpec};
use crate::error::Result;
use crate::helpers::debug_level;
use crate::runtime::{get_device, Buffer};
use crate::schedule::{create_schedule, ItemKind, Schedule, ScheduleItem};
use crate::uop::{FxHashMap, UOp};
use std::sync::{Arc, Mutex, OnceLock};

/// Compiled kernels by (kernel AST, device), least recently used dropped past the capacity:
/// a process that sees many shapes keeps a bounded number of kernels (and of loaded shared
/// objects, which the CPU device unloads when no program of theirs is left).
struct ProgramCache {
    map: FxHashMap<(UOp, String), (CompiledKernel, u64)>,
    clock: u64,
    capacity: usize,
}

impl ProgramCache {
    fn get(&mut self, key: &(UOp, String)) -> Option<CompiledKernel> {
        self.clock += 1;
        let now = self.clock;
        self.map.get_mut(key).map(|(k, used)| {
            *used = now;
            k.clone()
        })
    }
    fn insert(&mut self, key: (UOp, String), k: CompiledKernel) {
        self.clock += 1;
        self.map.insert(key, (k, self.clock));
        if self.map.len() > self.capacity {
            // Drop the oldest eighth at once, so eviction costs O(1) per insert on average.
            let mut ages: Vec<u64> = self.map.values().map(|(_, t)| *t).collect();
            let cut = (ages.len() - self.capacity + self.capacity / 8).min(ages.len() - 1);
            let (_, nth, _) = ages.select_nth_unstable(cut);
            let limit = *nth;
            self.map.retain(|_, (_, t)| *t > limit);
        }
    }
}

/// Kernels kept compiled by default.
const PROGRAM_CACHE_CAPACITY: usize = 1024;

fn program_cache() -> &'static Mutex<ProgramCache> {
    static CACHE: OnceLock<Mutex<ProgramCache>> = OnceLock::new();
    CACHE.get_or_init(|| {
        Mutex::new(ProgramCache { map: FxHashMap::default(), clock: 0, capacity: PROGRAM_CACHE_CAPACITY })
    })
}

thread_local! {
    static KERNELS_BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Kernels this thread's realizes have made ready (compiled, or loaded from the disk cache)
/// because no program was in memory for them: a count that stays put while a loop runs means
/// the loop reuses its kernels (tests of symbolic values and the JIT use it).
pub fn kernels_built_on_this_thread() -> usize {
    KERNELS_BUILT.with(|c| c.get())
}

/// Sets how many compiled kernels the engine keeps (least recently used dropped first).
pub fn set_program_cache_capacity(n: usize) {
    let mut c = program_cache().lock().unwrap_or_else(|e| e.into_inner());
    c.capacity = n.max(1);
}

/// Compiled kernels for the kernel items of a schedule: cache hits, then the misses of each
/// device compiled together in one call.
fn compile_items(items: &[ScheduleItem]) -> Result<Vec<Option<CompiledKernel>>> {
    let mut out: Vec<Option<CompiledKernel>> = vec![None; items.len()];
    let mut misses: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    {
        let mut cache = program_cache().lock().unwrap_or_else(|e| e.into_inner());
        for (i, it) in items.iter().enumerate() {
            if it.kind != ItemKind::Kernel {
                continue;
            }
            match cache.get(&(it.ast.clone(), it.device.clone())) {
                Some(k) => out[i] = Some(k),
                None => misses.entry(it.device.clone()).or_default().push(i),
            }
        }
    }
    for (dev_name, idxs) in misses {
        let device = get_device(&dev_name)?;
        let mut specs: Vec<Arc<ProgramSpec>> = Vec::new();
        let mut spec_of: FxHashMap<UOp, usize> = FxHashMap::default();
        for &i in &idxs {
            let ast = &items[i].ast;
            if spec_of.contains_key(ast) {
                continue;
            }
            if debug_level() >= 5 {
                eprintln!("{}", crate::uop::print::format_graph(ast));
            }
            let beam = crate::flags::int("BEAM");
            let opts = if beam > 0 {
                beam::beam_search(ast, &items[i].bufs, &items[i].var_vals, device.as_ref(), beam as usize)?
            } else {
                None
            };
            let spec = get_program(ast, device.renderer(), opts.as_deref());
            if crate::compiler_log::enabled() {
                crate::compiler_log::kernel_compiled(crate::compiler_log::KernelLog {
                    name: spec.name.clone(),
                    device: dev_name.clone(),
                    ast: crate::uop::print::format_graph(ast),
                    passes: Vec::new(),
                    opts: spec.opts.clone(),
                    linear: crate::uop::print::format_graphs(&spec.uops),
                    source: spec.src.clone(),
                    flops: spec.flops,
                });
            }
            if debug_level() >= 3 {
                eprintln!("{}: opts {}", spec.name, spec.opts);
            }
            if debug_level() >= 4 {
                eprintln!("{}", spec.src);
            }
            spec_of.insert(ast.clone(), specs.len());
            specs.push(Arc::new(spec));
        }
        let started = std::time::Instant::now();
        let programs = device.compile(&specs)?;
        KERNELS_BUILT.with(|c| c.set(c.get() + specs.len()));
        if debug_level() >= 1 {
            let secs = started.elapsed().as_secs_f64();
            eprintln!(
                "{dev_name}: {} new kernels ready in {secs:.3} s (compiled, or loaded from the disk cache)",
                specs.len()
            );
        }
        let mut cache = program_cache().lock().unwrap_or_else(|e| e.into_inner());
        for &i in &idxs {
            let k = spec_of[&items[i].ast];
            let ck = CompiledKernel { spec: specs[k].clone(), program: programs[k].clone() };
            cache.insert((items[i].ast.clone(), dev_name.clone()), ck.clone());
            out[i] = Some(ck);
        }
    }
    Ok(out)
}

/// Held for a whole realize (schedule, compile, run) and a TinyJit replay: realizes from
/// several threads run one after another, so an assign is scheduled once (the first realize
/// records it as done before the next looks) and no two schedules interleave their kernels.
pub(crate) fn realize_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Realizes `outs`, returning the buffer of each.
pub fn realize(outs: &[UOp]) -> Result<Vec<Arc<Buffer>>> {
    realize_with(outs, None)
}

/// `realize`, calling `ready(j, buffer, steps_left)` as soon as output `j` holds its value:
/// before the first step for an output that needs none, else right after the last step
/// writing it, while `steps_left` later steps have still to run (data-parallel training sends
/// a finished gradient bucket to the other ranks while backward goes on). `ready` runs under
/// the realize lock: it may read the buffer, never realize.
pub fn realize_notifying(outs: &[UOp], ready: &mut dyn FnMut(usize, &Arc<Buffer>, usize)) -> Result<Vec<Arc<Buffer>>> {
    realize_with(outs, Some(ready))
}

type Ready<'a> = &'a mut dyn FnMut(usize, &Arc<Buffer>, usize);

/// The realize itself; without a listener it skips working out which step finishes which output.
fn realize_with(outs: &[UOp], mut ready: Option<Ready>) -> Result<Vec<Arc<Buffer>>> {
    let _lock = realize_lock();
    if crate::compiler_log::enabled() {
        crate::compiler_log::realize_started();
        crate::viz::serve_at_exit();
    }
    let mut sched = create_schedule(outs);
    let nkernels = sched.items.iter().filter(|i| i.kind == ItemKind::Kernel).count();
    if debug_level() >= 1 && !sched.items.is_empty() {
        eprintln!("scheduled {nkernels} kernels");
    }
    let compiled = compile_items(&sched.items)?;
    if let Some(mut graph) = sched.graph_log.take() {
        graph.kernels =
            compiled.iter().map(|k| k.as_ref().map_or_else(|| "copy".to_string(), |k| k.spec.name.clone())).collect();
        crate::compiler_log::graph_scheduled(graph);
    }
    // The outputs each step finishes (an output is final after the last step writing it).
    let finishes = match ready.as_mut() {
        Some(ready) => outputs_finished_by_step(&sched, ready),
        None => Vec::new(),
    };
    // Memory planning: each item holds its buffers; dropping it after it runs releases the
    // intermediates whose last use it was, before later kernels allocate theirs.
    let steps = sched.items.len();
    for (k, (item, kernel)) in sched.items.into_iter().zip(compiled).enumerate() {
        let step = match item.kind {
            ItemKind::Kernel => Step::Kernel(kernel.expect("kernel not compiled")),
            ItemKind::Copy => Step::Copy,
        };
        step.run(&item.bufs, &item.device, &item.var_vals)?;
        if let (Some(ready), Some(done)) = (ready.as_mut(), finishes.get(k)) {
            for &j in done {
                ready(j, &sched.outputs[j], steps - k - 1);
            }
        }
        let (bufs, device, assign, var_vals) = (item.bufs, item.device, item.assign, item.var_vals);
        capture::record(capture::Recorded { step, bufs, device, assign, var_vals });
    }
    crate::runtime::memory::realize_finished();
    crate::compiler_log::realize_finished()?;
    Ok(sched.outputs)
}

/// For each step, the outputs whose last write it is; outputs no step writes are reported
/// ready at once.
fn outputs_finished_by_step(sched: &Schedule, ready: Ready) -> Vec<Vec<usize>> {
    let mut outputs_in: FxHashMap<*const Buffer, Vec<usize>> = FxHashMap::default();
    for (j, out) in sched.outputs.iter().enumerate() {
        outputs_in.entry(Arc::as_ptr(out)).or_default().push(j);
    }
    let mut last_write: Vec<Option<usize>> = vec![None; sched.outputs.len()];
    for (k, item) in sched.items.iter().enumerate() {
        for &j in outputs_in.get(&Arc::as_ptr(&item.bufs[0])).into_iter().flatten() {
            last_write[j] = Some(k);
        }
    }
    let mut finishes: Vec<Vec<usize>> = vec![Vec::new(); sched.items.len()];
    for (j, out) in sched.outputs.iter().enumerate() {
        match last_write[j] {
            Some(k) => finishes[k].push(j),
            None => ready(j, out, sched.items.len()),
        }
    }
    finishes
}
