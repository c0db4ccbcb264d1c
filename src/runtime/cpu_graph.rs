//! The CPU's device graph: each launch resolved once to its entry point, worker pool, argument
//! pointers and variable values; a replay patches the pointers of its own inputs and outputs
//! and runs the list under one `host_execution_lock`.

use super::buffer::Buffer;
use super::cpu::{CpuProgram, KernelFn, SendPtr};
use super::graph::{check_replacement, DeviceGraph, GraphLaunch};
use super::memory::{host_execution_lock, HostMemory};
use super::threadpool::ThreadPool;
use super::Program;
use crate::error::{Error, Result};
use crate::uop::BufferObj;
use std::sync::Arc;

struct Launch {
    func: KernelFn,
    pool: &'static ThreadPool,
    threads: usize,
    /// `ptrs[k]` is the memory of `held[k]`, which keeps it alive.
    ptrs: Vec<*mut u8>,
    held: Vec<Arc<Buffer>>,
    vals: Vec<i64>,
    name: String,
    /// Keeps the shared object holding `func` loaded.
    _program: Arc<dyn Program>,
}

struct CpuGraph {
    device: Arc<str>,
    launches: Vec<Launch>,
}

/// The host pointer of `buf`'s memory (allocated now if it was not yet).
fn host_ptr(buf: &Arc<Buffer>, device: &str, kernel: &str) -> Result<*mut u8> {
    let m = buf.memory()?;
    m.inner.downcast_ref::<HostMemory>().map(HostMemory::as_ptr).ok_or_else(|| Error::Launch {
        device: device.to_string(),
        kernel: kernel.to_string(),
        message: format!("a graph launch got a buffer on {}, which is not host memory", BufferObj::device(&**buf)),
    })
}

/// `launches` as one graph, or `None` when one of them is not a CPU program.
pub(super) fn build(device: &str, launches: &[GraphLaunch]) -> Option<Result<Box<dyn DeviceGraph>>> {
    let programs: Vec<&CpuProgram> = launches
        .iter()
        .map(|l| {
            let any: &dyn std::any::Any = &**l.program;
            any.downcast_ref::<CpuProgram>()
        })
        .collect::<Option<_>>()?;
    let resolve = || -> Result<Box<dyn DeviceGraph>> {
        let mut out = Vec::with_capacity(launches.len());
        for (l, p) in launches.iter().zip(programs) {
            if l.bufs.len() < p.bufs_needed || l.vals.len() != p.var_count {
                return Err(Error::Launch {
                    device: device.to_string(),
                    kernel: p.name.clone(),
                    message: format!(
                        "a graph launch with {} buffers and {} variable values; the kernel takes {} and {}",
                        l.bufs.len(),
                        l.vals.len(),
                        p.bufs_needed,
                        p.var_count
                    ),
                });
            }
            let ptrs = l.bufs.iter().map(|b| host_ptr(b, device, &p.name)).collect::<Result<_>>()?;
            out.push(Launch {
                func: p.func,
                pool: p.pool,
                threads: p.threads,
                ptrs,
                held: l.bufs.to_vec(),
                vals: l.vals.clone(),
                name: p.name.clone(),
                _program: l.program.clone(),
            });
        }
        Ok(Box::new(CpuGraph { device: Arc::from(device), launches: out }))
    };
    Some(resolve())
}

impl DeviceGraph for CpuGraph {
    fn set_buffer(&mut self, i: usize, arg: usize, buf: &Arc<Buffer>) -> Result<()> {
        let l = &mut self.launches[i];
        check_replacement(&self.device, &l.name, arg, &l.held[arg], buf)?;
        l.ptrs[arg] = host_ptr(buf, &self.device, &l.name)?;
        l.held[arg] = buf.clone();
        Ok(())
    }

    fn set_value(&mut self, i: usize, k: usize, v: i64) {
        self.launches[i].vals[k] = v;
    }

    fn run(&mut self) -> Result<()> {
        // No other kernel or copy touches host memory while the list runs (see `HostMemory`).
        let _lock = host_execution_lock();
        for l in &self.launches {
            let (ptrs, vals) = (SendPtr(l.ptrs.as_ptr()), SendPtr(l.vals.as_ptr()));
            let func = l.func;
            let run_core = move |core: usize| {
                let (p, v) = (&ptrs, &vals);
                // SAFETY: as in `CpuProgram::launch`: `build` checked that the launch has the
                // kernel's number of buffers and values; `ptrs[k]` is the memory of `held[k]`
                // (set together in `build` and `set_buffer`), which this graph keeps alive, and
                // the arrays outlive the call (the pool returns when every core is done). The
                // scheduler gave the kernel these buffers, so it stays inside them; cores write
                // disjoint parts of the output; `host_execution_lock` is held; `_program` keeps
                // the code mapped.
                unsafe { func(p.0, v.0, core as i32) };
            };
            l.pool.run(l.threads, &run_core);
        }
        Ok(())
    }
}
