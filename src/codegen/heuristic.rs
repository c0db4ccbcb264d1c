//! Hand-written optimization choices (used when no BEAM search result is cached):
//! - THREAD: split the first output axis across the CPU's cores when there is enough work;
//! - UPCAST: for reduce kernels, a register tile of as many outputs as half the vector
//!   registers hold (8x32 on AVX-512, 64 on AVX2; 16 with gated loads) over the innermost output
//!   axis and one other, chosen for the fewest loads per output — none for a matrix-vector
//!   product, whose reduce is vectorized instead; where no output axis gives a vector but the
//!   reduce does (a Linear into 10 classes), a tile of one output per 5/8 of a vector register
//!   beside the reduce's lanes (20 on AVX-512);
//! - UNROLL: the innermost reduce axis, fully when short, else by 4;
//! - GROUP (devices with work groups): a long reduce into few outputs is split across a work
//!   group, so a full `sum()` does not run on one work item.

use super::kernel_ops::{pow2_divisor, unit_stride};
use super::opts::{apply_opts, kernel_ranges, shift_to, Opt, OptKind};
use super::vector_rules::{is_half, lane_sum_reduce};
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
    // A symbolic loop (which opts do not split) counts at its largest bound: the heuristic
    // decides on maximum extents.
    let symbolic: i64 = ast
        .toposort()
        .iter()
        .filter(|n| n.op() == Ops::RANGE && n.is_symbolic_range())
        .map(|r| r.range_max().max(1))
        .product();
    let work: i64 = ranges.iter().map(|r| r.range_size()).product::<i64>().saturating_mul(symbolic);
    let mut opts = Vec::new();

    // THREAD on the first output axis that splits evenly, preferring one that is not the
    // (full-size) SIMD axis of a reduce kernel's register tile.
    if target.has_threads && target.threads > 1 && work >= MIN_THREAD_WORK {
        let t = target.threads as i64;
        let simd = if target.simd_bytes > 0 && !reduces.is_empty() {
            simd_axis(ast, &outputs, &|r: &UOp| r.range_size(), target)
        } else {
            None
        };
        let splits = |r: &&UOp| r.range_size() % t == 0 && r.range_size() >= t;
        let choice = outputs.iter().filter(splits).find(|r| Some(*r) != simd.as_ref()).or(outputs.iter().find(splits));
        if let Some(r) = choice {
            opts.push(Opt { kind: OptKind::Thread, axis: pos(r), amount: t });
        }
    }

    if target.has_local && !reduces.is_empty() {
        if let Some(o) = group_opt(&ranges, &outputs, &reduces, target) {
            return vec![o];
        }
    }

    if reduces.is_empty() && target.simd_bytes > 0 {
        // Elementwise: the contiguous output axis becomes vector lanes (the C compiler's own
        // loop vectorizer is off; see `runtime::cc`).
        if let Some(o) = elementwise_vector(ast, &ranges, &outputs, &opts, target) {
            opts.push(o);
        }
        return opts;
    }

    if !reduces.is_empty() {
        // UPCAST: a register tile over up to two output axes (`register_tile_max`). It always
        // includes the innermost output axis when it can (stores and usually loads are
        // contiguous along it, so the C compiler turns the tile into SIMD vectors), and picks
        // the other axis and the amounts that need the fewest loads per output: a load that
        // does not depend on an upcast axis is reused across it.
        let loads = load_ranges(ast);
        let size_of = |r: &UOp| {
            let threaded = opts.iter().any(|o| o.kind == OptKind::Thread && o.axis == pos(r));
            r.range_size() / if threaded { target.threads as i64 } else { 1 }
        };
        // With explicit vectors, the SIMD axis is the output axis most loads and stores walk
        // with unit stride (a convolution's output channels when its weights are stored
        // channels-last, a matmul's columns).
        let simd = if target.simd_bytes > 0 { simd_axis(ast, &outputs, &size_of, target) } else { None };
        // Gated loads (padding, transposed convolutions) along the SIMD axis defeat wide
        // tiles: keep those kernels on small 4-wide tiles.
        // So does arithmetic on 16-bit floats, which has no vector form (each element converts
        // through f32; only their loads, stores and casts to and from f32 are vector ops): a
        // wide tile of it is a long scalar program that takes the C compiler seconds.
        let gated = ast.toposort().iter().any(|n| {
            (n.op() == Ops::INDEX
                && n.src().len() > 2
                && simd.as_ref().is_none_or(|r| n.src()[2].toposort().contains(r)))
                || (is_half(n.dtype()) && (n.op().is_alu() || n.op() == Ops::REDUCE || simd.is_none()))
        });
        // The SIMD axis as wide as two 16-lane vectors; the other axis up to 8 (8x32 keeps 16
        // AVX-512 accumulators in registers: enough independent FMA chains to fill two FMA
        // units, with room left for the operands; `register_tile_max` caps it elsewhere).
        // At most two vectors wide (a 4x16 tile on AVX2 needs fewer loads per output than 2x32).
        let two_vectors = if target.simd_bytes == 0 { 32 } else { (target.simd_bytes / 2) as i64 };
        let simd_widths: Vec<i64> =
            if gated { vec![4] } else { [32, 16, 8, 4].into_iter().filter(|w| *w <= two_vectors.max(4)).collect() };
        let other_widths: &[i64] = if gated { &[4] } else { &[8, 4, 2] };
        // A short axis (a convolution's kernel width of 5) can be taken whole.
        let fits = |r: &UOp, ws: &[i64]| -> Vec<i64> {
            let n = size_of(r);
            let mut out: Vec<i64> = ws.iter().copied().filter(|a| n % a == 0).collect();
            if !gated && n > 2 && n <= ws[0] && !out.contains(&n) {
                out.insert(0, n);
            }
            out
        };
        // A short innermost axis (a convolution's output row of 26) is upcast whole.
        let amounts = |r: &UOp| {
            let n = size_of(r);
            if !gated && (2..=32).contains(&n) {
                vec![n]
            } else {
                fits(r, &simd_widths)
            }
        };
        let cost = |tile: &[(&UOp, i64)]| -> f64 {
            let loads_needed: i64 =
                loads.iter().map(|l| tile.iter().filter(|(r, _)| l.contains(r)).map(|(_, a)| a).product::<i64>()).sum();
            loads_needed as f64 / tile.iter().map(|(_, a)| a).product::<i64>() as f64
        };
        // Larger tiles pay off when the reduce loop stays a loop; with a short, fully unrolled
        // reduce (a convolution's kernel row) the body is already long.
        let last_reduce = reduces.last().expect("a reduce axis");
        let lanes = (target.simd_bytes / 4) as i64;
        // No output axis gives a vector (a Linear into 10 classes: its input rows lie 576 floats
        // apart and 10 columns fill no register), but the reduce is a float sum that every load
        // walks contiguously: the reduce's lanes are the vector (per-lane partial sums), and the
        // tile is as many outputs as vector accumulators fit in registers beside the operands.
        let reduce_vector = simd.is_none() && !gated && reduce_lanes_qualify(ast, last_reduce, lanes, target);
        let max_tile = if reduce_vector {
            reduce_vector_tile(target)
        } else if gated {
            16
        } else {
            register_tile_max(target)
        };
        let mut best: (f64, Vec<(UOp, i64)>) = (loads.len() as f64, Vec::new());
        let inner = simd.as_ref().or(outputs.last()).filter(|r| !amounts(r).is_empty());
        let firsts: Vec<&UOp> = match inner {
            Some(r) => vec![r],
            None => outputs.iter().collect(),
        };
        for a in firsts {
            // The widest amount on the first axis: that is the SIMD direction.
            for &na in amounts(a).iter().take(1) {
                let mut options: Vec<Vec<(&UOp, i64)>> = vec![vec![(a, na)]];
                for b in outputs.iter().filter(|b| *b != a) {
                    options.extend(
                        fits(b, other_widths)
                            .into_iter()
                            .filter(|nb| na * nb <= max_tile)
                            .map(|nb| vec![(a, na), (b, nb)]),
                    );
                }
                for tile in options {
                    let c = cost(&tile);
                    let size: i64 = tile.iter().map(|(_, n)| n).product();
                    let best_size: i64 = best.1.iter().map(|(_, n)| n).product();
                    if c < best.0 - 1e-9 || (c <= best.0 + 1e-9 && size > best_size) {
                        best = (c, tile.into_iter().map(|(r, n)| (r.clone(), n)).collect());
                    }
                }
            }
        }
        // A matrix-vector product (a decode step's `x @ w.T`): one load reads a distinct element
        // for every output and runs contiguously along the reduce. No tile can reuse it; a
        // tile over outputs only turns its contiguous rows into strided gathers. Leave the
        // outputs alone and vectorize the reduce instead (below): 8.7 -> 2.3 ms for a
        // 8192x2048 f32 weight, as BEAM found.
        let matrix_vector = ast.toposort().iter().any(|n| {
            n.op() == Ops::LOAD
                && n.src()[0].op() == Ops::INDEX
                && unit_stride(&n.src()[0].src()[1], last_reduce)
                && outputs.iter().filter(|o| size_of(o) > 1).all(|o| n.src()[0].src()[1].toposort().contains(o))
        });
        if matrix_vector && simd.is_none() {
            best.1.clear();
        }
        let upcast: i64 = best.1.iter().map(|(_, n)| n).product();
        // The SIMD axis goes last: the last upcast varies fastest in the expanded code, which is
        // what lets the compiler pack neighbouring outputs into one vector.
        for (r, n) in best.1.iter().rev() {
            opts.push(Opt { kind: OptKind::Upcast, axis: pos(r), amount: *n });
        }
        // UNROLL the innermost reduce axis: completely when short (a convolution's kernel
        // width), by 4 when long.
        let last = reduces.last().expect("a reduce axis");
        let n = last.range_size();
        // A long reduce with no register tile unrolls by a vector's width: the vectorizer then
        // keeps one partial sum per lane (see `vectorize::reduce_lanes`).
        if reduce_vector && upcast > 1 {
            opts.push(Opt { kind: OptKind::Unroll, axis: pos(last), amount: lanes });
            // The tile's UPCASTs come first in the default vector rule: name the lanes.
            let unroll = apply_opts(ast, &opts, target).ok().and_then(|tiled| {
                kernel_ranges(&tiled)
                    .iter()
                    .position(|r| r.range_arg().1 == AxisType::Unroll && r.range_size() == lanes)
            });
            if let Some(axis) = unroll {
                opts.push(Opt { kind: OptKind::Vector, axis, amount: lanes });
            }
            return opts;
        }
        let amount = if n <= 8 {
            n
        } else if upcast == 1 && lanes >= 4 && n >= 16 * lanes && n % lanes == 0 {
            lanes
        } else if n % 4 == 0 {
            4
        } else {
            1
        };
        if amount > 1 && amount * upcast <= 1024 {
            opts.push(Opt { kind: OptKind::Unroll, axis: pos(last), amount });
        }
    }
    opts
}

/// Most outputs in a register tile: half the vector registers hold accumulators of a vector's
/// lanes each, the other half the operands. That is 8x32 on AVX-512 (32 registers of 16 f32);
/// on AVX2 (16 registers of 8) 8x32 needs 32 accumulators and spills, and 4x16 does not: a
/// 64x32x28x28 * 64x32x3x3 conv 39.5 -> 23 ms, a packed 2048^3 matmul 300-338 -> 224-266 ms,
/// beautiful_mnist's training step at batch 512 1.20 -> 0.90-0.98 s. 256 where registers are
/// not modelled (GPUs).
fn register_tile_max(target: &Target) -> i64 {
    if target.vector_registers == 0 || target.simd_bytes == 0 {
        return 256;
    }
    (target.vector_registers / 2 * target.simd_bytes / 4) as i64
}

/// Outputs in a register tile whose reduce is the vector axis: one vector accumulator each,
/// leaving room for the operands: 20 of AVX-512's 32 registers (a Linear into 10 classes gets
/// a 2x10 tile: 0.94 ms for 10,000 rows against 1.17 ms at 4x10 and 2.0 ms at 8x10), 10 of
/// AVX2's 16 (1x10: 2.7 -> 1.2-1.6 ms for the same Linear).
fn reduce_vector_tile(target: &Target) -> i64 {
    let registers = if target.vector_registers == 0 { 32 } else { target.vector_registers };
    (registers * 5 / 8) as i64
}

/// Whether the reduce axis `last`, unrolled by `lanes`, can keep per-lane partial sums (a float
/// sum whose loads along it are contiguous or the same in every lane): at least four vectors
/// long, so the partial sums pay for adding the lanes up at the end.
fn reduce_lanes_qualify(ast: &UOp, last: &UOp, lanes: i64, target: &Target) -> bool {
    let n = last.range_size();
    if lanes < 4 || n % lanes != 0 || n < 4 * lanes {
        return false;
    }
    let unrolled = shift_to(ast, last, lanes, AxisType::Unroll, false);
    let Some(unroll) = kernel_ranges(&unrolled).into_iter().find(|r| r.range_arg().1 == AxisType::Unroll) else {
        return false;
    };
    lane_sum_reduce(&unrolled, &unroll, target).is_ok()
}

/// UPCAST for an elementwise kernel: the output axis that loads (or, without loads, the
/// store) walk with unit stride, by as many lanes as a register holds and the axis divides.
fn elementwise_vector(ast: &UOp, ranges: &[UOp], outputs: &[UOp], opts: &[Opt], target: &Target) -> Option<Opt> {
    let pos = |r: &UOp| ranges.iter().position(|x| x == r).expect("range of this kernel");
    let size_of = |r: &UOp| {
        let threaded = opts.iter().any(|o| o.kind == OptKind::Thread && o.axis == pos(r));
        r.range_size() / if threaded { target.threads as i64 } else { 1 }
    };
    let widest = ast
        .toposort()
        .iter()
        .filter(|n| matches!(n.op(), Ops::LOAD | Ops::STORE))
        .map(|n| if n.op() == Ops::STORE { n.src()[1].dtype().itemsize() } else { n.dtype().itemsize() })
        .max()
        .unwrap_or(4)
        .max(1);
    let max_lanes = (target.simd_bytes / widest) as i64;
    let stored_along = |r: &UOp| {
        ast.toposort()
            .iter()
            .any(|n| n.op() == Ops::STORE && n.src()[0].op() == Ops::INDEX && unit_stride(&n.src()[0].src()[1], r))
    };
    let axis = simd_axis(ast, outputs, &size_of, target)
        .or_else(|| outputs.iter().rev().find(|r| stored_along(r)).cloned())?;
    let lanes = pow2_divisor(size_of(&axis), max_lanes);
    (lanes >= 4).then(|| Opt { kind: OptKind::Upcast, axis: pos(&axis), amount: lanes })
}

/// Reduces of fewer steps per output than this (a convolution of one input channel: 25) count
/// their store as much as a load when the SIMD axis is chosen.
const SHORT_REDUCE: i64 = 64;

/// The output axis for SIMD vectors: the one along which more loads are contiguous than
/// strided (gathers), weighted by the vector lanes its size allows (at least 4). Stores count
/// only after a short reduce: they happen once per output, the loads once per reduce step. After
/// a short one a store strided along the SIMD axis costs a scalar store per lane, and a register
/// tile of them writes as many cache lines at once, which can map to a few cache sets (MNIST's
/// first convolution with its output channels as lanes: 232 ms; with its output columns, 60 ms).
fn simd_axis(ast: &UOp, outputs: &[UOp], size_of: &dyn Fn(&UOp) -> i64, target: &Target) -> Option<UOp> {
    let max_lanes = (target.simd_bytes / 4) as i64;
    let reduce_steps: i64 =
        kernel_ranges(ast).iter().filter(|r| r.range_arg().1.is_reduce()).map(|r| r.range_size()).product();
    let count_stores = reduce_steps > 1 && reduce_steps < SHORT_REDUCE;
    let accesses: Vec<UOp> = ast
        .toposort()
        .into_iter()
        .filter(|n| (n.op() == Ops::LOAD || (count_stores && n.op() == Ops::STORE)) && n.src()[0].op() == Ops::INDEX)
        .map(|n| n.src()[0].src()[1].clone())
        .collect();
    let mut best: Option<(i64, UOp)> = None;
    for r in outputs {
        let lanes = pow2_divisor(size_of(r), max_lanes);
        let moving: Vec<&UOp> = accesses.iter().filter(|i| i.toposort().contains(r)).collect();
        let contiguous = moving.iter().filter(|i| unit_stride(i, r)).count() as i64;
        // Accesses that move by more than one element along the axis become gathers.
        let gathers = moving.len() as i64 - contiguous;
        let score = (contiguous - gathers) * lanes;
        if lanes >= 4 && score > 0 && best.as_ref().is_none_or(|(b, _)| score >= *b) {
            best = Some((score, r.clone()));
        }
    }
    best.map(|(_, r)| r)
}

/// Few outputs (at most this many) leave a GPU idle unless the reduce is split: GROUP.
const GROUP_MAX_OUTPUTS: i64 = 2048;

/// GROUP for a reduce into few outputs: the reduce axis with the largest power-of-two
/// divisor (between 8 and 256 items, within the device's work-group limit) is split across the
/// work group; on ties the innermost axis, which is usually contiguous in memory.
fn group_opt(ranges: &[UOp], outputs: &[UOp], reduces: &[UOp], target: &Target) -> Option<Opt> {
    let n_out: i64 = outputs.iter().map(|r| r.range_size()).product();
    if n_out > GROUP_MAX_OUTPUTS || reduces.iter().map(|r| r.range_size()).product::<i64>() < 256 {
        return None;
    }
    let max = target.local_max_total.min(256) as i64;
    let mut best: Option<(i64, usize)> = None;
    for r in reduces {
        let g = pow2_divisor(r.range_size(), max);
        if g >= 8 && best.is_none_or(|(b, _)| g >= b) {
            best = Some((g, ranges.iter().position(|x| x == r).expect("range of this kernel")));
        }
    }
    best.map(|(amount, axis)| Opt { kind: OptKind::Group, axis, amount })
}
