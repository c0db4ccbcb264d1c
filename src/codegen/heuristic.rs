//! Hand-written optimization choices (used when no BEAM search result is cached):
//! - THREAD: split the first output axis across the CPU's cores when there is enough work;
//! - UPCAST: for reduce kernels, a register tile of up to 4x4 outputs over axes that some input
//!   does not depend on (each loaded value is reused across the tile);
//! - UNROLL: the innermost reduce axis, fully when short, else by 4.

use super::opts::{kernel_ranges, Opt, OptKind};
use crate::renderer::Target;
use crate::uop::{AxisType, Ops, UOp};

/// Work (loop iterations) below which threading costs more than it saves.
const MIN_THREAD_WORK: i64 = 1 << 16;

/// Loads of the kernel, with the ranges each one's index depends on.
fn load_ranges(ast: &UOp) -> Vec<Vec<UOp>> {
    ast.toposort().into_iter().filter(|n| n.op() == Ops::LOAD).map(|l| l.src()[0].ranges()).collect()
}

pub fn hand_coded_optimizations(ast: &UOp, target: &Target) -> Vec<Opt> {
    let ranges = kernel_ranges(ast);
    let pos = |r: &UOp| ranges.iter().position(|x| x == r).expect("range of this kernel");
    let outputs: Vec<UOp> = ranges.iter().filter(|r| r.range_arg().1 == AxisType::Global).cloned().collect();
    let reduces: Vec<UOp> = ranges.iter().filter(|r| r.range_arg().1 == AxisType::Reduce).cloned().collect();
    let work: i64 = ranges.iter().map(|r| r.range_size()).product();
    let mut opts = Vec::new();

    // THREAD on the first output axis that splits evenly.
    if target.has_threads && target.threads > 1 && work >= MIN_THREAD_WORK {
        let t = target.threads as i64;
        if let Some(r) = outputs.iter().find(|r| r.range_size() % t == 0 && r.range_size() >= t) {
            opts.push(Opt { kind: OptKind::Thread, axis: pos(r), amount: t });
        }
    }

    if !reduces.is_empty() {
        // UPCAST output axes that some load does not depend on: that load's value is reused
        // across the tile. Skip the thread-split axis if its remainder is too small.
        let loads = load_ranges(ast);
        let mut upcast = 1;
        for r in outputs.iter().rev() {
            let size = r.range_size() / if opts.iter().any(|o| o.axis == pos(r)) { target.threads as i64 } else { 1 };
            let reused = loads.iter().any(|l| !l.contains(r));
            if upcast * 4 <= 16 && size % 4 == 0 && size >= 8 && reused {
                opts.push(Opt { kind: OptKind::Upcast, axis: pos(r), amount: 4 });
                upcast *= 4;
            }
        }
        // UNROLL the innermost reduce axis.
        let last = reduces.last().expect("a reduce axis");
        let n = last.range_size();
        let amount = if n <= 8 { n } else if n % 4 == 0 { 4 } else { 1 };
        if amount > 1 && amount * upcast <= 128 {
            opts.push(Opt { kind: OptKind::Unroll, axis: pos(last), amount });
        }
    }
    opts
}
