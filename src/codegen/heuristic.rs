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
        // UPCAST: a register tile over up to two output axes (4 each), chosen to need the fewest
        // loads per tile: a load that does not depend on an upcast axis is reused across it.
        let loads = load_ranges(ast);
        let threaded = |r: &UOp| opts.iter().any(|o| o.kind == OptKind::Thread && o.axis == pos(r));
        let candidates: Vec<UOp> = outputs
            .iter()
            .filter(|r| {
                let size = r.range_size() / if threaded(r) { target.threads as i64 } else { 1 };
                size % 4 == 0 && size >= 8
            })
            .cloned()
            .collect();
        let loads_for = |tile: &[&UOp]| -> usize {
            loads.iter().map(|l| tile.iter().filter(|r| l.contains(r)).fold(1, |acc, _| acc * 4)).sum()
        };
        let mut best: (f64, Vec<UOp>) = (loads.len() as f64, Vec::new());
        for (i, a) in candidates.iter().enumerate() {
            for tile in std::iter::once(vec![a]).chain(candidates[i + 1..].iter().map(|b| vec![a, b])) {
                let outputs_in_tile = 4f64.powi(tile.len() as i32);
                let per_output = loads_for(&tile) as f64 / outputs_in_tile;
                if per_output < best.0 - 1e-9 || (per_output <= best.0 + 1e-9 && tile.len() > best.1.len()) {
                    best = (per_output, tile.into_iter().cloned().collect());
                }
            }
        }
        let upcast = 4i64.pow(best.1.len() as u32);
        for r in &best.1 {
            opts.push(Opt { kind: OptKind::Upcast, axis: pos(r), amount: 4 });
        }
        // UNROLL the innermost reduce axis.
        let last = reduces.last().expect("a reduce axis");
        let n = last.range_size();
        let amount = if n <= 8 {
            n
        } else if n % 4 == 0 {
            4
        } else {
            1
        };
        if amount > 1 && amount * upcast <= 128 {
            opts.push(Opt { kind: OptKind::Unroll, axis: pos(last), amount });
        }
    }
    opts
}
