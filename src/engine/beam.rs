//! BEAM search: compile and time candidate optimization lists on the real device, keep the
//! best `BEAM` of them, extend them by one more opt, and stop when that stops helping. The
//! winner is cached on disk keyed by the device and the unoptimized kernel, so a second run
//! does no search.

use crate::codegen::opts::{candidate_opts, format_opts, parse_opts, Opt};
use crate::codegen::{get_program, prepare, try_program, ProgramSpec};
use crate::error::Result;
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::runtime::{Backend, Buffer, DeviceMemory};
use crate::uop::{Ops, UOp};
use std::sync::Arc;
use std::time::Instant;

/// Candidates compiled per round at most (the cheapest-looking ones first).
const MAX_CANDIDATES: usize = 32;
const MAX_ROUNDS: usize = 3;

/// Kernels of more FLOPs than this do not start a search from no opts as well as from the
/// heuristic's: unoptimized, a large convolution runs for minutes per launch (beautiful_mnist's
/// evaluation conv over 10,000 images: ~1e11 FLOP), and so would every candidate grown from it.
const UNOPTIMIZED_SEED_MAX_FLOPS: u64 = 100_000_000;

/// A beam entry more than this many times slower than the best is dropped before the next round
/// (its one-opt extensions are timed launch by launch, and a slow start only grows slow ones).
const KEEP_WITHIN: f64 = 3.0;

/// Best of up to three launches; a candidate already twice as slow as `cutoff` after its
/// first launch is not run again.
fn time_launches(prog: &dyn crate::runtime::Program, mems: &[&DeviceMemory], vals: &[i64], cutoff: f64) -> Result<f64> {
    let mut best = prog.launch(mems, vals, true)?;
    for _ in 0..2 {
        if best > 2.0 * cutoff {
            break;
        }
        best = best.min(prog.launch(mems, vals, true)?);
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
/// `var_vals`: the values of the kernel's variables for the timed launches.
pub fn beam_search(
    ast: &UOp,
    bufs: &[Arc<Buffer>],
    var_vals: &[(Arc<str>, i64)],
    device: &dyn Backend,
    width: usize,
) -> Result<Option<Vec<Opt>>> {
    if !safe_to_rerun(ast) {
        return Ok(None);
    }
    let base = get_program(ast, device.renderer(), Some(&[]));
    let key = stable_hash_hex(&[device.name().as_bytes(), base.src.as_bytes(), b"beam-v2"]);
    let path = cache_dir().join("beam").join(&key);
    if let Some(opts) = std::fs::read_to_string(&path).ok().and_then(|t| parse_opts(&t).ok()) {
        if try_program(ast, device.renderer(), &opts).is_ok() {
            return Ok(Some(opts));
        }
    }
    let prepared = prepare(ast);
    let mems: Vec<&DeviceMemory> = bufs.iter().map(|b| b.memory()).collect::<Result<_>>()?;
    let start = Instant::now();
    // Start from the hand-coded choice, and from nothing where the kernel is small enough to
    // run unoptimized.
    let heuristic = crate::codegen::heuristic_opts(ast, device.renderer());
    let mut seeds = vec![heuristic];
    if base.flops <= UNOPTIMIZED_SEED_MAX_FLOPS && !seeds[0].is_empty() {
        seeds.insert(0, Vec::new());
    }
    let specs: Vec<Arc<ProgramSpec>> =
        seeds.iter().map(|o| Arc::new(get_program(ast, device.renderer(), Some(o)))).collect();
    let progs = device.compile(&specs)?;
    let mut beam: Vec<(f64, Vec<Opt>)> = Vec::new();
    let vals = |spec: &ProgramSpec| super::step::launch_values(spec, device.name(), var_vals);
    for ((p, o), spec) in progs.iter().zip(seeds).zip(&specs) {
        beam.push((time_launches(p.as_ref(), &mems, &vals(spec)?, f64::MAX)?, o));
    }
    beam.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap_or(std::cmp::Ordering::Equal));
    // What the search is measured against: no opts where they were timed, else the heuristic.
    let (base_label, base_time) = match beam.iter().find(|(_, o)| o.is_empty()) {
        Some((t, _)) => ("no opts", *t),
        None => ("the heuristic's opts", beam[0].0),
    };
    let mut tried = beam.len();
    for _ in 0..MAX_ROUNDS {
        let fastest = beam[0].0;
        beam.retain(|(t, _)| *t <= KEEP_WITHIN * fastest);
        let mut candidates: Vec<Vec<Opt>> = Vec::new();
        for (_, opts) in &beam {
            for a in candidate_opts(&prepared, opts, device.renderer().target()) {
                let mut c = opts.clone();
                c.push(a);
                if !candidates.contains(&c) {
                    candidates.push(c);
                }
            }
        }
        // Candidates over the size budget are dropped before compiling.
        let mut specs: Vec<Arc<ProgramSpec>> = Vec::new();
        candidates.retain(|c| match try_program(ast, device.renderer(), c) {
            Ok(spec) if specs.len() < MAX_CANDIDATES => {
                specs.push(Arc::new(spec));
                true
            }
            _ => false,
        });
        if candidates.is_empty() {
            break;
        }
        // Compile the round together (one batch), then time each.
        let progs = device.compile(&specs)?;
        let mut timed: Vec<(f64, Vec<Opt>)> = Vec::new();
        for ((prog, c), spec) in progs.iter().zip(candidates).zip(&specs) {
            timed.push((time_launches(prog.as_ref(), &mems, &vals(spec)?, beam[0].0)?, c));
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
    if debug_level() >= 1 || crate::flags::int("BEAM_VERBOSE") != 0 {
        eprintln!(
            "BEAM {width}: {} searched {tried} candidates in {:.2} s: {:.1} us ({base_label}) -> {:.1} us with {:?}",
            base_time_name(ast, device),
            start.elapsed().as_secs_f64(),
            base_time * 1e6,
            best_time * 1e6,
            format_opts(&best)
        );
    }
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
        let text = format_opts(&best);
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(tmp, &path);
        }
    }
    Ok(Some(best))
}

fn base_time_name(ast: &UOp, device: &dyn Backend) -> String {
    crate::codegen::kernel::kernel_name(&crate::uop::symbolic::simplify(ast)) + " on " + device.name()
}
