//! The codegen pipeline for one kernel: the `PREPARE` passes → opts → the `LOWERING` passes
//! (see `passes.rs`) → linearize → render.

use super::gpu::Launch;
use super::heuristic::hand_coded_optimizations;
use super::linearize::linearize;
use super::opts::{
    apply_opts_with_choices, format_opts, kernel_ranges, LoweringChoices, Opt, OptError, OptKind, VectorChoice,
};
use super::passes::{run_ast_passes, run_passes, KernelState, LOWERING, PREPARE};
use crate::renderer::ProgramSpec;
use crate::renderer::Renderer;
use crate::uop::{AxisType, FxHashMap, Ops, UOp};

/// Kernel name from its ranges, tinygrad-style: `E_` for elementwise kernels, `r_` for kernels
/// with a reduce, then the range sizes (output axes first, then reduce axes).
pub fn kernel_name(ast: &UOp) -> String {
    let mut ranges: Vec<UOp> = ast.toposort().into_iter().filter(|n| n.op() == Ops::RANGE).collect();
    ranges.sort_by_key(|r| {
        let (id, t) = r.range_arg();
        (t.is_reduce(), id)
    });
    let has_reduce = ranges.iter().any(|r| r.range_arg().1.is_reduce());
    let mut name = String::from(if has_reduce { "r" } else { "E" });
    for r in &ranges {
        name.push('_');
        if r.is_symbolic_range() {
            // A symbolic bound is named by its variables (`r_4_pos`).
            let vars: Vec<String> = r.src()[0]
                .toposort()
                .iter()
                .filter_map(|n| match n.arg() {
                    crate::uop::Arg::Var(v, _, _) => Some(v.to_string()),
                    _ => None,
                })
                .collect();
            name.push_str(&vars.join("_"));
        } else {
            name.push_str(&r.range_size().to_string());
        }
    }
    if ranges.is_empty() {
        name.push_str("_1");
    }
    name
}

/// ALU operations per launch: each float ALU op (and WHERE) times the iterations of the loops
/// it sits in, and each float REDUCE once per iteration. A node sits in the ranges its sources
/// sit in, less those a REDUCE below it closed: an elementwise tail after a reduce (a bias,
/// BatchNorm, an activation, a pooling max) runs once per output, not once per reduce step.
fn count_flops(ast: &UOp) -> u64 {
    let mut live: FxHashMap<UOp, Vec<UOp>> = FxHashMap::default();
    // A symbolic loop counts at its largest bound.
    let iterations = |ranges: &[UOp]| ranges.iter().map(|r| r.range_max().max(0) as u64).product::<u64>();
    let mut flops = 0u64;
    for n in ast.toposort() {
        let mut ranges: Vec<UOp> = Vec::new();
        if n.op() == Ops::RANGE {
            ranges.push(n.clone());
        }
        for s in n.src() {
            for r in &live[s] {
                if !ranges.contains(r) {
                    ranges.push(r.clone());
                }
            }
        }
        // Index arithmetic (integers feeding INDEX) is not counted, like tinygrad.
        if n.op().is_alu() && (n.dtype().is_float() || n.op() == Ops::WHERE) {
            flops += iterations(&ranges);
        }
        if n.op() == Ops::REDUCE {
            // One step per iteration of its own ranges and the ones around it; then they close.
            if n.dtype().is_float() {
                flops += iterations(&ranges);
            }
            ranges.retain(|r| !n.src()[1..].contains(r));
        }
        live.insert(n, ranges);
    }
    flops
}

/// The kernel as opts see it: simplified, with masked sums collapsed into loads. Opt axes
/// number the ranges of this form (see `opts::kernel_ranges`).
pub fn prepare(ast: &UOp) -> UOp {
    run_ast_passes(PREPARE, ast)
}

/// Linearized ops a program may have before the heuristic and BEAM consider its opts too large
/// (it is also allowed twice the size of the unoptimized program, whatever that is). Unrolled
/// and upcast code grows with the product of the amounts; past this, C compile time grows
/// faster than the kernel gets faster. Counted by `program_size`.
pub const MAX_PROGRAM_OPS: usize = 3000;

/// The ops of a linear program that the size budget counts: all but literals (`CONST`) and
/// the lane bookkeeping of vectors (`GEP` names a lane, `VECTORIZE` lists lanes), which the
/// renderer writes as no work of their own. So a tile's size is the same whatever the vector
/// width: an 8x32 matmul tile with an erf-GELU tail is 32 vectors of it on AVX2 and 16 on
/// AVX-512, and its count of real work no longer doubles on the narrower machine.
fn program_size(uops: &[UOp]) -> usize {
    uops.iter().filter(|u| !matches!(u.op(), Ops::CONST | Ops::GEP | Ops::VECTORIZE)).count()
}

/// Runs the whole pipeline for one kernel AST on a renderer: `opts` as given (`Some`), or none
/// with `NOOPT=1`, or the hand-coded choice. Panics when given opts do not apply.
pub fn get_program(ast: &UOp, renderer: &dyn Renderer, opts: Option<&[Opt]>) -> ProgramSpec {
    let ast = prepare(ast);
    match opts {
        Some(o) => build(&ast, renderer, o).unwrap_or_else(|e| panic!("{}: {e}", kernel_name(&ast))),
        None if crate::flags::int("NOOPT") != 0 => {
            build(&ast, renderer, &[]).unwrap_or_else(|e| panic!("{}: {e}", kernel_name(&ast)))
        }
        None => heuristic_program(&ast, renderer),
    }
}

/// The program for explicit opts, or why they do not apply (an illegal opt, or a program
/// larger than the size budget).
pub fn try_program(ast: &UOp, renderer: &dyn Renderer, opts: &[Opt]) -> Result<ProgramSpec, OptError> {
    let ast = prepare(ast);
    let spec = build(&ast, renderer, opts)?;
    if !opts.is_empty() {
        check_size(&ast, renderer, opts, &spec)?;
    }
    Ok(spec)
}

/// Whether `spec` (built with `opts`) is within the size budget.
fn check_size(ast: &UOp, renderer: &dyn Renderer, opts: &[Opt], spec: &ProgramSpec) -> Result<(), OptError> {
    let size = program_size(&spec.uops);
    if size <= MAX_PROGRAM_OPS {
        return Ok(());
    }
    let plain = program_size(&build(ast, renderer, &[])?.uops);
    if size <= 2 * plain {
        return Ok(());
    }
    Err(OptError {
        opt: *opts.last().expect("opts"),
        reason: format!("the program would have {size} ops (budget {MAX_PROGRAM_OPS}, unoptimized {plain})"),
    })
}

/// The hand-coded opts for `ast` (as `prepare` leaves it), made smaller while the program is
/// over the size budget (see [`smaller`]); and that program.
fn heuristic_program_and_opts(ast: &UOp, renderer: &dyn Renderer) -> (ProgramSpec, Vec<Opt>) {
    let mut chosen = hand_coded_optimizations(ast, renderer.target());
    loop {
        let spec = build(ast, renderer, &chosen)
            .unwrap_or_else(|e| panic!("{}: the heuristic chose an opt that does not apply: {e}", kernel_name(ast)));
        if chosen.is_empty() || check_size(ast, renderer, &chosen, &spec).is_ok() {
            return (spec, chosen);
        }
        chosen = smaller(ast, renderer, &chosen);
    }
}

/// Reduce steps per output from which a register tile is worth keeping at a smaller size: each
/// output of a shorter reduce (a pooling window's backward) loads little, so a tile saves little.
const TILE_WORTH_KEEPING: i64 = 64;

/// The next smaller opt list for a program over the size budget: in a long reduce, the
/// register tile's widest non-SIMD UPCAST halved (the last UPCAST is the SIMD axis: its
/// vectors, the UNROLL and the layout stay, so a kernel with a long fused tail — a pooling max
/// after a convolution, an erf-GELU after a matmul — keeps the shape of the plain reduce's
/// kernel at a smaller tile); else the last opt dropped.
fn smaller(ast: &UOp, renderer: &dyn Renderer, opts: &[Opt]) -> Vec<Opt> {
    let reduce_steps: i64 =
        kernel_ranges(ast).iter().filter(|r| r.range_arg().1 == AxisType::Reduce).map(|r| r.range_size()).product();
    if reduce_steps < TILE_WORTH_KEEPING {
        return opts[..opts.len() - 1].to_vec();
    }
    let upcasts: Vec<usize> = (0..opts.len()).filter(|&i| opts[i].kind == OptKind::Upcast).collect();
    let widest = upcasts[..upcasts.len().saturating_sub(1)]
        .iter()
        .copied()
        .filter(|&i| opts[i].amount >= 4 && opts[i].amount % 2 == 0)
        .max_by_key(|&i| opts[i].amount);
    if let Some(i) = widest {
        let mut halved = opts.to_vec();
        halved[i].amount /= 2;
        if build(ast, renderer, &halved).is_ok() {
            return halved;
        }
    }
    opts[..opts.len() - 1].to_vec()
}

fn heuristic_program(ast: &UOp, renderer: &dyn Renderer) -> ProgramSpec {
    heuristic_program_and_opts(ast, renderer).0
}

/// The opts the heuristic chooses for a kernel (what `get_program(ast, r, None)` applies).
pub fn heuristic_opts(ast: &UOp, renderer: &dyn Renderer) -> Vec<Opt> {
    heuristic_program_and_opts(&prepare(ast), renderer).1
}

/// The pipeline after `prepare`: apply opts → vectors → expand → launch model → lower →
/// linearize → render.
fn build(ast: &UOp, renderer: &dyn Renderer, chosen: &[Opt]) -> Result<ProgramSpec, OptError> {
    let target = renderer.target();
    let (ast, choices) = apply_opts_with_choices(ast, chosen, target)?;
    let name = kernel_name(&ast);
    let flops = count_flops(&ast);
    let threads = ast
        .toposort()
        .iter()
        .filter(|n| n.op() == Ops::RANGE && n.range_arg().1 == AxisType::Thread)
        .map(|r| r.range_size() as usize)
        .product();
    let mut state = KernelState { ast: ast.clone(), target, choices, vector: None, launch: Launch::single() };
    // Only the VECTOR opt's choice can fail in the passes.
    let vector_opt = Opt { kind: OptKind::Vector, axis: 0, amount: 1 };
    run_passes(LOWERING, &mut state)
        .map_err(|reason| OptError { opt: choices.vector_opt.unwrap_or(vector_opt), reason })?;
    let opts_text = format_opts(&[chosen, &resolved_vector(&ast, state.vector.as_ref(), &choices)].concat());
    let (ast, launch) = (state.ast, state.launch);
    let uops = linearize(&ast, choices.fma_chain_from);
    let src = renderer.render(&name, &uops);
    let buf_count = uops.iter().filter(|u| u.op() == Ops::DEFINE_GLOBAL).count();
    let vars = uops
        .iter()
        .filter_map(|u| match u.arg() {
            crate::uop::Arg::Var(n, _, _) if u.op() == Ops::DEFINE_VAR => Some(n.to_string()),
            _ => None,
        })
        .collect();
    Ok(ProgramSpec {
        name,
        uops,
        src,
        global_size: launch.global,
        threads,
        local_size: target.has_local.then_some(launch.local),
        buf_count,
        vars,
        flops,
        bytes: 0,
        opts: opts_text,
    })
}

/// The opts that name what the default vector rule chose for `opted` (the kernel after the
/// opts; none when an opt chose): the opts plus these, given as `OPTS=`, build the same kernel,
/// so `DEBUG=3` shows every decision.
fn resolved_vector(opted: &UOp, vector: Option<&UOp>, choices: &LoweringChoices) -> Vec<Opt> {
    let (VectorChoice::Auto, Some(axis)) = (choices.vector, vector) else { return Vec::new() };
    let ranges = kernel_ranges(opted);
    let lanes = axis.range_size();
    match ranges.iter().position(|r| r.range_arg().0 == axis.range_arg().0) {
        // The innermost UPCAST, or an UNROLL turned into per-lane sums.
        Some(i) => vec![Opt { kind: OptKind::Vector, axis: i, amount: lanes }],
        // A wider UPCAST split to one vector: the new range comes last in id order.
        None => match ranges.iter().rposition(|r| r.range_arg().1 == AxisType::Upcast) {
            Some(i) => vec![
                Opt { kind: OptKind::Upcast, axis: i, amount: lanes },
                Opt { kind: OptKind::Vector, axis: ranges.len(), amount: lanes },
            ],
            None => Vec::new(),
        },
    }
}
