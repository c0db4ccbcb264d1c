//! CUDA graphs for TinyJit's replays: one kernel node per launch, each depending on the one
//! before (the launches' order), instantiated once. A replay rewrites the parameters of the
//! nodes whose buffers or variable values changed (`cuGraphExecKernelNodeSetParams`) and
//! launches the whole graph on the legacy default stream, where single launches and copies
//! run too, so the order with them is kept.

use super::memory::CudaMemory;
use super::program::CudaProgram;
use crate::error::{Error, Result};
use crate::runtime::buffer::Buffer;
use crate::runtime::gpu_launch::value_slots;
use crate::runtime::graph::{check_replacement, DeviceGraph, GraphLaunch};
use crate::runtime::Program;
use cudarc::driver::{result as drv, sys, CudaContext};
use std::ffi::c_void;
use std::sync::Arc;

struct Node {
    /// `None` for a launch with an empty grid (it runs nothing).
    node: Option<sys::CUgraphNode>,
    func: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    /// The launch's buffers (schedule order), kept alive while the graph may use them.
    held: Vec<Arc<Buffer>>,
    buffer_params: Vec<usize>,
    vals: Vec<i64>,
    var_bytes: Vec<usize>,
    changed: bool,
    name: String,
    /// Keeps the module holding `func` loaded.
    _program: Arc<dyn Program>,
}

struct CudaGraph {
    device: String,
    ctx: Arc<CudaContext>,
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    nodes: Vec<Node>,
}

fn device_ptr(buf: &Arc<Buffer>) -> Result<sys::CUdeviceptr> {
    let m = buf.memory()?;
    m.inner.downcast_ref::<CudaMemory>().map(|c| c.ptr).ok_or_else(|| {
        Error::Other(format!(
            "a CUDA graph launch got a buffer on {}, not CUDA memory",
            crate::uop::BufferObj::device(&**buf)
        ))
    })
}

impl Node {
    /// Calls `f` with the node's kernel parameters (device pointers, then the values in 8-byte
    /// slots), valid during the call (CUDA copies them).
    fn with_params<R>(&self, ctx: sys::CUcontext, f: impl FnOnce(&sys::CUDA_KERNEL_NODE_PARAMS) -> R) -> Result<R> {
        let ptrs: Vec<sys::CUdeviceptr> =
            self.buffer_params.iter().map(|&k| device_ptr(&self.held[k])).collect::<Result<_>>()?;
        let slots = value_slots(&self.vals, &self.var_bytes);
        let mut params: Vec<*mut c_void> = ptrs
            .iter()
            .map(|p| p as *const sys::CUdeviceptr as *mut c_void)
            .chain(slots.iter().map(|s| s.as_ptr() as *mut c_void))
            .collect();
        let (g, b) = (self.grid, self.block);
        let p = sys::CUDA_KERNEL_NODE_PARAMS {
            func: self.func,
            gridDimX: g[0],
            gridDimY: g[1],
            gridDimZ: g[2],
            blockDimX: b[0],
            blockDimY: b[1],
            blockDimZ: b[2],
            sharedMemBytes: 0,
            kernelParams: params.as_mut_ptr(),
            extra: std::ptr::null_mut(),
            kern: std::ptr::null_mut(),
            ctx,
        };
        Ok(f(&p))
    }
}

/// `launches` as one CUDA graph, or `None` when one of them is not a CUDA program.
pub(crate) fn build(device: &str, launches: &[GraphLaunch]) -> Option<Result<Box<dyn DeviceGraph>>> {
    let programs: Vec<&CudaProgram> = launches
        .iter()
        .map(|l| {
            let any: &dyn std::any::Any = &**l.program;
            any.downcast_ref::<CudaProgram>()
        })
        .collect::<Option<_>>()?;
    let ctx = programs.first()?.ctx.clone();
    Some(build_graph(device, &ctx, launches, &programs))
}

fn build_graph(
    device: &str,
    ctx: &Arc<CudaContext>,
    launches: &[GraphLaunch],
    programs: &[&CudaProgram],
) -> Result<Box<dyn DeviceGraph>> {
    let fail = |what: &str, e: drv::DriverError| Error::Launch {
        device: device.to_string(),
        kernel: "CUDA graph".into(),
        message: format!("{what}: {e}"),
    };
    ctx.bind_to_thread().map_err(|e| fail("binding the context", e))?;
    let mut graph: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: cuGraphCreate writes a new graph handle into `graph` (flags must be 0).
    unsafe { sys::cuGraphCreate(&mut graph, 0) }.result().map_err(|e| fail("cuGraphCreate", e))?;
    let mut g = CudaGraph {
        device: device.to_string(),
        ctx: ctx.clone(),
        graph,
        exec: std::ptr::null_mut(),
        nodes: Vec::new(),
    };
    let mut last: Option<sys::CUgraphNode> = None;
    for (l, p) in launches.iter().zip(programs) {
        let needed = p.buffer_params.last().map_or(0, |&k| k + 1);
        if l.bufs.len() < needed || l.vals.len() != p.var_bytes.len() {
            return Err(Error::Launch {
                device: device.to_string(),
                kernel: p.name.clone(),
                message: format!(
                    "a graph launch with {} buffers and {} values; the kernel takes {needed} and {}",
                    l.bufs.len(),
                    l.vals.len(),
                    p.var_bytes.len()
                ),
            });
        }
        let mut node = Node {
            node: None,
            func: p.func.cu_function(),
            grid: p.grid,
            block: p.block,
            held: l.bufs.to_vec(),
            buffer_params: p.buffer_params.clone(),
            vals: l.vals.clone(),
            var_bytes: p.var_bytes.clone(),
            changed: false,
            name: p.name.clone(),
            _program: l.program.clone(),
        };
        if !p.grid.contains(&0) {
            let mut handle: sys::CUgraphNode = std::ptr::null_mut();
            let deps: Vec<sys::CUgraphNode> = last.into_iter().collect();
            let added = node.with_params(ctx.cu_ctx(), |params| {
                // SAFETY: `graph` is live; `deps` holds nodes of it; `params` names a kernel of a
                // loaded module (kept by `_program`) with one pointer per parameter in signature
                // order, valid during this call, which copies them; the kernel stays inside the
                // buffers (held by the node) and its geometry was checked against the device's
                // limits when the program was made.
                unsafe { sys::cuGraphAddKernelNode_v2(&mut handle, graph, deps.as_ptr(), deps.len(), params) }.result()
            })?;
            added.map_err(|e| fail("cuGraphAddKernelNode", e))?;
            node.node = Some(handle);
            last = Some(handle);
        }
        g.nodes.push(node);
    }
    let mut exec: sys::CUgraphExec = std::ptr::null_mut();
    // SAFETY: `graph` is a complete, live graph; the call writes a new executable handle.
    unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }
        .result()
        .map_err(|e| fail("cuGraphInstantiate", e))?;
    g.exec = exec;
    Ok(Box::new(g))
}

impl DeviceGraph for CudaGraph {
    fn set_buffer(&mut self, i: usize, arg: usize, buf: &Arc<Buffer>) -> Result<()> {
        let n = &mut self.nodes[i];
        check_replacement(&self.device, &n.name, arg, &n.held[arg], buf)?;
        device_ptr(buf)?;
        n.held[arg] = buf.clone();
        n.changed = true;
        Ok(())
    }

    fn set_value(&mut self, i: usize, k: usize, v: i64) {
        let n = &mut self.nodes[i];
        n.changed |= n.vals[k] != v;
        n.vals[k] = v;
    }

    fn run(&mut self) -> Result<()> {
        let fail = |what: &str, e: drv::DriverError| Error::Launch {
            device: self.device.clone(),
            kernel: "CUDA graph".into(),
            message: format!("{what}: {e}"),
        };
        self.ctx.bind_to_thread().map_err(|e| fail("binding the context", e))?;
        let (exec, ctx) = (self.exec, self.ctx.cu_ctx());
        for n in self.nodes.iter_mut().filter(|n| n.changed) {
            n.changed = false;
            let Some(handle) = n.node else { continue };
            let set = n.with_params(ctx, |params| {
                // SAFETY: `exec` was instantiated from the graph holding `handle`; `params` has
                // the node's kernel and parameter layout (only pointers and values change), valid
                // during the call, which copies them.
                unsafe { sys::cuGraphExecKernelNodeSetParams_v2(exec, handle, params) }.result()
            })?;
            set.map_err(|e| fail("cuGraphExecKernelNodeSetParams", e))?;
        }
        // SAFETY: a live executable graph of this context, launched on the legacy default stream
        // (null), after the work already submitted there; its buffers are held by the nodes.
        unsafe { sys::cuGraphLaunch(exec, std::ptr::null_mut()) }.result().map_err(|e| fail("cuGraphLaunch", e))
    }
}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_err() {
            return;
        }
        // SAFETY: both handles were created in `build_graph` and are destroyed only here; the
        // legacy default stream is synchronized first, so no launch of the graph is running.
        unsafe {
            let _ = sys::cuCtxSynchronize();
            if !self.exec.is_null() {
                let _ = sys::cuGraphExecDestroy(self.exec);
            }
            let _ = sys::cuGraphDestroy(self.graph);
        }
    }
}
