//! BEAM search: compile and time candidate optimization lists on the real device, keep the
//! best `BEAM` of them, extend them by one more opt, and stop when that stops helping. The
//! winner is cached on disk keyed by the device and the unoptimized kernel, so a second run
//! does no search.

use crate::codegen::opts::{apply_opts, kernel_ranges, Opt, OptKind};
use crate::codegen::{get_program, ProgramSpec};
use crate::error::Result;
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::renderer::Target;
use crate::runtime::{Buffer, Device, DeviceMemory};
use crate::uop::{AxisType, Ops, UOp};
use std::sync::Arc;
use std::time::Instant;

/// Candidates compiled per round at most (the cheapest-looking ones first).
const MAX_CANDIDATES: usize = 32;
const MAX_ROUNDS: usize = 3;

fn opt_text(o: &Opt) -> String {
    format!("{:?} {} {}", o.kind, o.axis, o.amount)
}

fn parse_opt(line: &str) -> Option<Opt> {
    let mut it = line.split_whitespace();
    let kind = match it.next()? {
        "Upcast" => OptKind::Upcast,
        "Unroll" => OptKind::Unroll,
        "Thread" => OptKind::Thread,
        "Local" => OptKind::Local,
        "Group" => OptKind::Group,
        "GroupTop" => OptKind::GroupTop,
        "Split" => OptKind::Split,
        "PadTo" => OptKind::PadTo,
        _ => return None,
    };
    Some(Opt { kind, axis: it.next()?.parse().ok()?, amount: it.next()?.parse().ok()? })
}

/// Every opt that can be added to `opts` for this kernel.
fn actions(ast: &UOp, opts: &[Opt], target: &Target) -> Vec<Opt> {
    let applied = apply_opts(ast, opts);
    let ranges = kernel_ranges(&applied);
    let product = |kinds: &[AxisType]| -> i64 {
        ranges.iter().filter(|r| kinds.contains(&r.range_arg().1)).map(|r| r.range_size()).product()
    };
    let upcast = product(&[AxisType::Upcast]);
    let has_thread = ranges.iter().any(|r| r.range_arg().1 == AxisType::Thread);
    let has_group = ranges.iter().any(|r| r.range_arg().1 == AxisType::Group);
    let threads = if target.has_threads { target.threads } else { 1 };
    // Work-group items so far, and the most a work group may have.
    let in_group = product(&[AxisType::Local, AxisType::Group]);
    let max_group = if target.has_local { target.local_max_total.min(256) as i64 } else { 1 };
    let mut out = Vec::new();
    for (axis, r) in ranges.iter().enumerate() {
        let (size, kind) = (r.range_size(), r.range_arg().1);
        for amount in [2i64, 3, 4, 5, 8, 16] {
            if size % amount != 0 || size == 1 {
                continue;
            }
            match kind {
                AxisType::Global if upcast * amount <= 128 => out.push(Opt { kind: OptKind::Upcast, axis, amount }),
                AxisType::Reduce if amount <= 8 => out.push(Opt { kind: OptKind::Unroll, axis, amount }),
                _ => {}
            }
        }
        // PADTO an axis no vector width divides (a convolution's 26 outputs), for an UPCAST after.
        if matches!(kind, AxisType::Global | AxisType::Reduce) {
            for amount in [8i64, 16, 32] {
                if size > amount && size % amount != 0 {
                    out.push(Opt { kind: OptKind::PadTo, axis, amount });
                }
            }
        }
        if kind == AxisType::Global && !has_thread && threads > 1 && size % threads as i64 == 0 {
            out.push(Opt { kind: OptKind::Thread, axis, amount: threads as i64 });
        }
        for amount in [2i64, 4, 8, 16, 32, 64, 128, 256] {
            if size % amount != 0 || in_group * amount > max_group {
                continue;
            }
            match kind {
                AxisType::Global => out.push(Opt { kind: OptKind::Local, axis, amount }),
                // Partials of a register tile all go to local memory: keep it small.
                AxisType::Reduce if !has_group && amount >= 8 && upcast * amount <= 1024 => {
                    out.push(Opt { kind: OptKind::Group, axis, amount });
                    out.push(Opt { kind: OptKind::GroupTop, axis, amount });
                }
                _ => {}
            }
        }
    }
    out
}

/// Best of up to three launches; a candidate already twice as slow as `cutoff` after its
/// first launch is not run again.
fn time_launches(prog: &dyn crate::runtime::Program, mems: &[&DeviceMemory], cutoff: f64) -> Result<f64> {
    let mut best = prog.launch(mems, &[], true)?;
    for _ in 0..2 {
        if best > 2.0 * cutoff {
            break;
        }
        best = best.min(prog.launch(mems, &[], true)?);
    }
    Ok(best)
}

/// Whether running the kernel repeatedly is harmless (it does not read its own output).
fn safe_to_rerun(ast: &UOp) -> bool {
    !ast.toposort()
        .iter()
        .any(|n| n.op() == Ops::LOAD && n.src()[0].op() == Ops::INDEX && n.src()[0].src()[0].arg_int() == 0)
}

/// The opts to use for `ast` on `device`: cached, or found by a search of width `width`.
pub fn beam_search(ast: &UOp, bufs: &[Arc<Buffer>], device: &dyn Device, width: usize) -> Result<Option<Vec<Opt>>> {
    if !safe_to_rerun(ast) {
        return Ok(None);
    }
    let base = get_program(ast, device.renderer(), Some(&[]));
    let key = stable_hash_hex(&[device.name().as_bytes(), base.src.as_bytes(), b"beam-v1"]);
    let path = cache_dir().join("beam").join(&key);
    if let Ok(text) = std::fs::read_to_string(&path) {
        return Ok(Some(text.lines().filter_map(parse_opt).collect()));
    }
    let mems: Vec<&DeviceMemory> = bufs.iter().map(|b| b.memory()).collect::<Result<_>>()?;
    let start = Instant::now();
    // Start from nothing and from the hand-coded choice.
    let heuristic = crate::codegen::heuristic::hand_coded_optimizations(ast, device.renderer().target());
    let seeds = [Vec::new(), heuristic];
    let specs: Vec<Arc<ProgramSpec>> =
        seeds.iter().map(|o| Arc::new(get_program(ast, device.renderer(), Some(o)))).collect();
    let progs = device.compile(&specs)?;
    let mut beam: Vec<(f64, Vec<Opt>)> = Vec::new();
    for (p, o) in progs.iter().zip(seeds) {
        beam.push((time_launches(p.as_ref(), &mems, f64::MAX)?, o));
    }
    beam.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    let base_time = beam.iter().find(|(_, o)| o.is_empty()).map(|(t, _)| *t).unwrap_or(beam[0].0);
    let mut tried = 2;
    for _ in 0..MAX_ROUNDS {
        let mut candidates: Vec<Vec<Opt>> = Vec::new();
        for (_, opts) in &beam {
            for a in actions(ast, opts, device.renderer().target()) {
                let mut c = opts.clone();
                c.push(a);
                if !candidates.contains(&c) {
                    candidates.push(c);
                }
            }
        }
        candidates.truncate(MAX_CANDIDATES);
        if candidates.is_empty() {
            break;
        }
        // Compile the round together (one batch), then time each.
        let specs: Vec<Arc<ProgramSpec>> =
            candidates.iter().map(|c| Arc::new(get_program(ast, device.renderer(), Some(c)))).collect();
        let progs = device.compile(&specs)?;
        let mut timed: Vec<(f64, Vec<Opt>)> = Vec::new();
        for (prog, c) in progs.iter().zip(candidates) {
            timed.push((time_launches(prog.as_ref(), &mems, beam[0].0)?, c));
        }
        tried += timed.len();
        timed.extend(beam.iter().cloned());
        timed.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
        timed.truncate(width);
        let improved = timed[0].0 < beam[0].0 * 0.99;
        beam = timed;
        if !improved {
            break;
        }
    }
    let (best_time, best) = beam.swap_remove(0);
    if debug_level() >= 1 || crate::helpers::getenv_int("BEAM_VERBOSE", 1) != 0 {
        eprintln!(
            "BEAM {width}: {} searched {tried} candidates in {:.2} s: {:.1} us -> {:.1} us with {:?}",
            base_time_name(ast, device),
            start.elapsed().as_secs_f64(),
            base_time * 1e6,
            best_time * 1e6,
            best.iter().map(opt_text).collect::<Vec<_>>()
        );
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
        let text: String = best.iter().map(|o| opt_text(o) + "\n").collect();
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(tmp, &path);
        }
    }
    Ok(Some(best))
}

fn base_time_name(ast: &UOp, device: &dyn Device) -> String {
    crate::codegen::kernel::kernel_name(&crate::uop::symbolic::simplify(ast)) + " on " + device.name()
}
