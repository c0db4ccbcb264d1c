//! The INTERP device (host memory, programs compiled by `InterpProgram::new`), its renderer
//! and the listing it shows as a kernel's source.

use super::{InterpProgram, DEVICE};
use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::renderer::{Renderer, Target};
use crate::runtime::backend::{Backend, DeviceMemory, Program};
use crate::runtime::memory::HostMemory;
use crate::uop::{Arg, ConstValue, FxHashMap, Ops, UOp};
use std::fmt::Write as _;
use std::sync::Arc;

/// The interpreter device: host memory, programs that run the linear UOps directly.
pub struct InterpDevice {
    renderer: InterpRenderer,
}

/// Opens the INTERP device (the registry's opener).
pub fn open(_name: &str) -> Result<Arc<dyn Backend>> {
    Ok(Arc::new(InterpDevice::new()))
}

impl InterpDevice {
    pub fn new() -> InterpDevice {
        InterpDevice { renderer: InterpRenderer::new() }
    }
}

impl Default for InterpDevice {
    fn default() -> Self {
        InterpDevice::new()
    }
}

/// The host allocation behind a `DeviceMemory` of this device.
fn host(mem: &DeviceMemory) -> Result<&HostMemory> {
    mem.inner
        .downcast_ref::<HostMemory>()
        .ok_or_else(|| Error::Other(format!("{DEVICE}: memory of another device passed to {DEVICE}")))
}

impl Backend for InterpDevice {
    fn name(&self) -> &str {
        DEVICE
    }
    fn alloc(&self, bytes: usize) -> Result<DeviceMemory> {
        let mem = HostMemory::new(bytes).ok_or(Error::OutOfMemory { device: DEVICE.to_string(), bytes })?;
        Ok(DeviceMemory { bytes, inner: Box::new(mem) })
    }
    fn copy_in(&self, dst: &DeviceMemory, src: &[u8]) -> Result<()> {
        let mem = host(dst)?;
        if src.len() != mem.len() {
            return Err(Error::Other(format!(
                "{DEVICE}: copy_in of {} bytes into a buffer of {} bytes",
                src.len(),
                mem.len()
            )));
        }
        mem.copy_from(src);
        Ok(())
    }
    fn copy_out(&self, src: &DeviceMemory, dst: &mut [u8]) -> Result<()> {
        let mem = host(src)?;
        if dst.len() != mem.len() {
            return Err(Error::Other(format!(
                "{DEVICE}: copy_out of a buffer of {} bytes into {} bytes",
                mem.len(),
                dst.len()
            )));
        }
        mem.copy_to(dst);
        Ok(())
    }
    fn renderer(&self) -> &dyn Renderer {
        &self.renderer
    }
    fn compile(&self, specs: &[Arc<ProgramSpec>]) -> Result<Vec<Arc<dyn Program>>> {
        specs.iter().map(|s| InterpProgram::new(&s.name, &s.uops).map(|p| Arc::new(p) as Arc<dyn Program>)).collect()
    }
}

/// The code generator's view of INTERP: a CPU without threads. Its "source" is a readable
/// listing of the linear program (what DEBUG=4 shows).
pub struct InterpRenderer {
    target: Target,
}

impl InterpRenderer {
    pub fn new() -> InterpRenderer {
        // The interpreter runs one loop nest on one thread: THREAD axes would only add loops.
        InterpRenderer { target: Target { has_threads: false, ..Target::cpu(DEVICE) } }
    }
}

impl Default for InterpRenderer {
    fn default() -> Self {
        InterpRenderer::new()
    }
}

impl Renderer for InterpRenderer {
    fn target(&self) -> &Target {
        &self.target
    }
    fn render(&self, name: &str, uops: &[UOp]) -> String {
        render_listing(name, uops)
    }
}

/// One numbered line per UOp, indented by loop/IF depth, sources by line number.
pub fn render_listing(name: &str, uops: &[UOp]) -> String {
    let mut line_of: FxHashMap<usize, usize> = FxHashMap::default();
    let mut out = format!("// {DEVICE} program {name}\n");
    let mut depth = 0usize;
    for (i, u) in uops.iter().enumerate() {
        line_of.insert(u.id(), i);
        if matches!(u.op(), Ops::END | Ops::ENDIF) {
            depth = depth.saturating_sub(1);
        }
        let srcs: Vec<String> = u
            .src()
            .iter()
            .map(|s| line_of.get(&s.id()).map_or_else(|| "%?".to_string(), |l| format!("%{l}")))
            .collect();
        let op = format!("{:?}", u.op());
        let dtype = format!("{:?}", u.dtype());
        // The op is indented by depth; the columns after it stay aligned up to depth 5.
        let op = format!("{:indent$}{op}", "", indent = 2 * depth);
        let _ = write!(out, "%{i:<4} {op:<24} {dtype:<10}");
        if !srcs.is_empty() {
            let _ = write!(out, " ({})", srcs.join(", "));
        }
        if let Some(a) = listing_arg(u.arg()) {
            let _ = write!(out, " {a}");
        }
        out.truncate(out.trim_end().len());
        out.push('\n');
        if matches!(u.op(), Ops::RANGE | Ops::IF) {
            depth += 1;
        }
    }
    out
}

fn listing_arg(a: &Arg) -> Option<String> {
    Some(match a {
        Arg::None => return None,
        Arg::Const(ConstValue::Bool(b)) => b.to_string(),
        Arg::Const(ConstValue::Int(i)) => i.to_string(),
        Arg::Const(ConstValue::Float(f)) => format!("{f:?}"),
        Arg::Int(i) => i.to_string(),
        Arg::Range(id, t) => format!("r{id} {t:?}"),
        Arg::Var(name, lo, hi) => format!("{name} [{lo}, {hi}]"),
        Arg::Special(kind, dim) => format!("{kind:?} {dim}"),
        other => format!("{other:?}"),
    })
}
