//! Running a decoded kernel: the launch, the instruction loop and bounds-checked access to
//! the launch's buffers.

use super::alu::UnFn;
use super::program::{Access, Inst, InterpProgram};
use super::DEVICE;
use crate::error::{Error, Result};
use crate::runtime::backend::{DeviceMemory, Program};
use crate::runtime::memory::HostMemory;
use std::time::Instant;

impl InterpProgram {
    fn launch_error(&self, message: String) -> Error {
        Error::Launch { device: DEVICE.to_string(), kernel: self.name.clone(), message }
    }

    /// The buffer views for one launch, in `globals` order.
    fn views<'a>(&self, bufs: &[&'a DeviceMemory]) -> Result<Vec<View<'a>>> {
        self.globals
            .iter()
            .map(|g| {
                let mem = bufs.get(g.arg).ok_or_else(|| {
                    self.launch_error(format!("buffer {} missing: launched with {} buffers", g.arg, bufs.len()))
                })?;
                let host = mem
                    .inner
                    .downcast_ref::<HostMemory>()
                    .ok_or_else(|| self.launch_error(format!("buffer {} is memory of another device", g.arg)))?;
                Ok(View { mem: host, arg: g.arg, elems: host.len() / g.itemsize, itemsize: g.itemsize })
            })
            .collect()
    }

    /// Runs the instructions on the register file `v`.
    fn run(&self, v: &mut [u64], views: &[View]) -> Result<()> {
        let code = &self.code[..];
        let mut pc = 0usize;
        while let Some(inst) = code.get(pc) {
            pc += 1;
            match *inst {
                Inst::Unary { f, dst, a } => v[dst as usize] = f(v[a as usize]),
                Inst::Binary { f, dst, a, b } => v[dst as usize] = f(v[a as usize], v[b as usize]),
                Inst::Ternary { f, dst, a, b, c } => v[dst as usize] = f(v[a as usize], v[b as usize], v[c as usize]),
                Inst::Where { dst, cond, a, b } => {
                    v[dst as usize] = if v[cond as usize] != 0 { v[a as usize] } else { v[b as usize] }
                }
                Inst::Copy { dst, src } => v[dst as usize] = v[src as usize],
                Inst::Zero { dst } => v[dst as usize] = 0,
                Inst::Load { dst, at, canon } => v[dst as usize] = self.load(at, canon, v, views)?,
                Inst::Store { val, at } => self.store(at, v[val as usize], v, views)?,
                Inst::Range { idx, end, exit } => {
                    v[idx as usize] = 0;
                    if v[end as usize] as i64 <= 0 {
                        pc = exit as usize;
                    }
                }
                Inst::End { idx, end, body } => {
                    // The index stays below `end`, an i64, so adding 1 cannot overflow.
                    let next = v[idx as usize] as i64 + 1;
                    v[idx as usize] = next as u64;
                    if next < v[end as usize] as i64 {
                        pc = body as usize;
                    }
                }
                Inst::If { cond, exit } => {
                    if v[cond as usize] == 0 {
                        pc = exit as usize;
                    }
                }
            }
        }
        Ok(())
    }

    /// The element an access touches, or `None` when its gate is off.
    #[inline]
    fn element(at: Access, v: &[u64]) -> Option<i64> {
        match at.gate {
            Some(g) if v[g as usize] == 0 => None,
            _ => Some((v[at.idx as usize] as i64).wrapping_add(at.add as i64)),
        }
    }

    /// A gated-off load yields 0 of any dtype without touching memory.
    #[inline]
    fn load(&self, at: Access, canon: UnFn, v: &[u64], views: &[View]) -> Result<u64> {
        let Some(i) = Self::element(at, v) else {
            return Ok(0);
        };
        let view = &views[at.buf as usize];
        view.read(i).map(canon).ok_or_else(|| self.oob(view, i))
    }

    #[inline]
    fn store(&self, at: Access, bits: u64, v: &[u64], views: &[View]) -> Result<()> {
        let Some(i) = Self::element(at, v) else {
            return Ok(());
        };
        let view = &views[at.buf as usize];
        if view.write(i, bits) {
            Ok(())
        } else {
            Err(self.oob(view, i))
        }
    }

    #[cold]
    fn oob(&self, view: &View, i: i64) -> Error {
        self.launch_error(format!("index {i} out of bounds for buffer {} of {} elements", view.arg, view.elems))
    }
}

impl Program for InterpProgram {
    fn launch(&self, bufs: &[&DeviceMemory], vals: &[i64], wait: bool) -> Result<f64> {
        let start = Instant::now();
        if let Some(msg) = &self.unsupported {
            return Err(self.launch_error(msg.clone()));
        }
        let views = self.views(bufs)?;
        if vals.len() < self.vars.len() {
            return Err(self.launch_error(format!(
                "{} variable values given, the kernel has {} variables",
                vals.len(),
                self.vars.len()
            )));
        }
        let mut v = self.init.clone();
        for (&(slot, conv), &x) in self.vars.iter().zip(vals) {
            v[slot as usize] = conv(x as u64);
        }
        // No other kernel or copy touches host memory meanwhile (see `HostMemory`).
        let _lock = crate::runtime::memory::host_execution_lock();
        self.run(&mut v, &views)?;
        Ok(if wait { start.elapsed().as_secs_f64() } else { 0.0 })
    }
}

/// One buffer during a launch. Accesses go through the raw pointer so that two arguments
/// naming the same memory (an input that is also the output) never create overlapping Rust
/// references.
struct View<'a> {
    mem: &'a HostMemory,
    arg: usize,
    elems: usize,
    itemsize: usize,
}

impl View<'_> {
    /// Byte offset of element `i`, or `None` when it is out of bounds.
    #[inline]
    fn offset(&self, i: i64) -> Option<usize> {
        let i = usize::try_from(i).ok()?;
        (i < self.elems).then_some(i * self.itemsize)
    }

    /// Raw little-endian bits of element `i`, zero-extended.
    #[inline]
    fn read(&self, i: i64) -> Option<u64> {
        let off = self.offset(i)?;
        // SAFETY: `itemsize` is 1, 2, 4 or 8 (checked when `compile` decodes DEFINE_GLOBAL) and
        // the match reads exactly that many bytes; `off + itemsize <= elems * itemsize <=
        // mem.len()` (`offset` checks `i < elems`, `views` sets `elems = mem.len() / itemsize`),
        // so they lie in the live allocation, which `self.mem` borrows for the whole launch (a
        // non-empty one, since `elems > 0`). `read_unaligned` needs no alignment. `launch` holds
        // `host_execution_lock`, so no other kernel or copy accesses host memory meanwhile, and
        // the interpreter creates no references to it.
        unsafe {
            let p = self.mem.as_ptr().add(off);
            Some(match self.itemsize {
                1 => p.read() as u64,
                2 => u16::from_le(p.cast::<u16>().read_unaligned()) as u64,
                4 => u32::from_le(p.cast::<u32>().read_unaligned()) as u64,
                _ => u64::from_le(p.cast::<u64>().read_unaligned()),
            })
        }
    }

    /// Writes the low `itemsize` bytes of `bits` to element `i`; false when out of bounds.
    #[inline]
    fn write(&self, i: i64, bits: u64) -> bool {
        let Some(off) = self.offset(i) else {
            return false;
        };
        // SAFETY: as in `read`: the bytes lie in the live allocation, no alignment is needed,
        // and no Rust reference to this memory exists during the launch.
        unsafe {
            let p = self.mem.as_ptr().add(off);
            match self.itemsize {
                1 => p.write(bits as u8),
                2 => p.cast::<u16>().write_unaligned((bits as u16).to_le()),
                4 => p.cast::<u32>().write_unaligned((bits as u32).to_le()),
                _ => p.cast::<u64>().write_unaligned(bits.to_le()),
            }
        }
        true
    }
}
