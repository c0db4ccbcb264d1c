//! `ProgramSpec`: everything a device needs to compile and launch one kernel — the contract
//! between code generation (which makes it) and the runtime (which compiles and runs it).

use crate::uop::{Ops, UOp};

#[derive(Clone, Debug)]
pub struct ProgramSpec {
    /// Kernel name, tinygrad-style (`E_4_16`, `r_64_64_64`).
    pub name: String,
    /// The linearized program (see `codegen::linearize` for its contract).
    pub uops: Vec<UOp>,
    /// Rendered source (empty for devices that run the UOps directly).
    pub src: String,
    /// Global launch size (GPU) — `[1, 1, 1]` for CPU loops.
    pub global_size: [usize; 3],
    /// Local (work-group) size, when the device has work groups.
    pub local_size: Option<[usize; 3]>,
    /// CPU threads a launch uses (the size of the THREAD axis; 1 without one).
    pub threads: usize,
    /// Number of buffer arguments (DEFINE_GLOBALs).
    pub buf_count: usize,
    /// Names of the symbolic variables, in argument order.
    pub vars: Vec<String>,
    /// Estimated floating/integer ALU operations per launch (for DEBUG=2 GFLOPS).
    pub flops: u64,
    /// Estimated bytes moved per launch (for DEBUG=2 GB/s).
    pub bytes: u64,
    /// The optimizations applied, in the `OPTS=` syntax (`T0:2 U1:16 R2:4`; DEBUG=3 prints them).
    pub opts: String,
}

impl ProgramSpec {
    /// The schedule's buffer numbers the kernel takes as parameters, in parameter order
    /// (ascending: renderers order buffer parameters by number). A launch gets every buffer of
    /// its schedule item, some of which a kernel may not read (a value that folded to a
    /// constant). A spec given only as source takes buffers `0..buf_count`.
    pub fn buffer_params(&self) -> Vec<usize> {
        if self.uops.is_empty() {
            return (0..self.buf_count).collect();
        }
        let mut bufs: Vec<usize> =
            self.uops.iter().filter(|u| u.op() == Ops::DEFINE_GLOBAL).map(|u| u.arg_int() as usize).collect();
        bufs.sort_unstable();
        bufs.dedup();
        bufs
    }
}
