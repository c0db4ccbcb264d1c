//! Codegen as a list of named passes. `prepare` passes run before opts (opt axes number the
//! ranges of their result); `lowering` passes run after the opts are applied and turn the
//! kernel into what the linearizer takes. `DEBUG=6` prints the kernel after every pass, and
//! `VIZ` logs it (`compiler_log`).

use super::collapse::collapse_reduces;
use super::expand::expand;
use super::gpu::{map_to_global, Launch};
use super::lower::lower;
use super::opts::LoweringChoices;
use super::shared_loops::share_reduce_loops;
use super::symbolic_ranges::split_symbolic_ranges;
use super::vectorize::{vector_axis, vectorize};
use crate::compiler_log::{self, Phase};
use crate::renderer::Target;
use crate::uop::symbolic::simplify;
use crate::uop::UOp;

/// A kernel between passes: its AST and what earlier passes decided.
pub struct KernelState<'a> {
    pub ast: UOp,
    pub target: &'a Target,
    /// What the VECTOR and FMACHAIN opts chose (or the defaults).
    pub choices: LoweringChoices,
    /// The range that became vector lanes (chosen by `vector_axis`).
    pub vector: Option<UOp>,
    /// Launch geometry (chosen by `map_to_global` on devices with work groups).
    pub launch: Launch,
}

/// A named step of the pipeline; an error says why the opts' choices do not apply.
pub type Pass = (&'static str, fn(&mut KernelState) -> Result<(), String>);

/// A named rewrite of the AST alone (no target, no decisions).
pub type AstPass = (&'static str, fn(&UOp) -> UOp);

/// Before opts: the kernel as opts see it.
pub const PREPARE: &[AstPass] = &[
    ("simplify", simplify),
    ("collapse_reduces", collapse_reduces),
    ("share_reduce_loops", share_reduce_loops),
    ("split_symbolic_ranges", split_symbolic_ranges),
    ("simplify", simplify),
];

/// After opts: vector lanes, unrolled copies, launch geometry, then lowering to what the
/// linearizer and renderers take.
pub const LOWERING: &[Pass] = &[
    ("vector_axis", |k| {
        // The vector axis the VECTOR opt names, or by default the innermost UPCAST axis (or
        // per-lane sums of an UNROLL axis), becomes vector lanes where the target has SIMD.
        if let Some((ast, axis)) = vector_axis(&k.ast, k.target, k.choices.vector)? {
            k.ast = ast;
            k.vector = Some(axis);
        }
        Ok(())
    }),
    ("expand", |k| {
        k.ast = expand(&k.ast, k.vector.as_ref());
        Ok(())
    }),
    ("vectorize", |k| {
        if let Some(axis) = &k.vector {
            k.ast = vectorize(&k.ast, axis);
        }
        Ok(())
    }),
    ("map_to_global", |k| {
        if k.target.has_local {
            let (ast, launch) = map_to_global(&k.ast, k.target);
            k.ast = ast;
            k.launch = launch;
        }
        Ok(())
    }),
    ("lower", |k| {
        k.ast = lower(&k.ast, k.target);
        Ok(())
    }),
    ("simplify", |k| {
        k.ast = simplify(&k.ast);
        Ok(())
    }),
];

/// Runs AST `passes` in order; at `DEBUG=6` prints the kernel after each.
pub fn run_ast_passes(passes: &[AstPass], ast: &UOp) -> UOp {
    let show = crate::helpers::debug_level() >= 6;
    compiler_log::passes_started(Phase::Prepare);
    let mut ast = ast.clone();
    for (name, pass) in passes {
        ast = pass(&ast);
        if show {
            eprintln!("--- after {name}:\n{ast:?}");
        }
        compiler_log::pass(Phase::Prepare, name, || format!("{ast:?}"));
    }
    ast
}

/// Runs `passes` in order on `state`, stopping at the first error; at `DEBUG=6` prints the
/// kernel after each.
pub fn run_passes(passes: &[Pass], state: &mut KernelState) -> Result<(), String> {
    let show = crate::helpers::debug_level() >= 6;
    compiler_log::passes_started(Phase::Lowering);
    for (name, pass) in passes {
        pass(state).map_err(|e| format!("{name}: {e}"))?;
        if show {
            eprintln!("--- after {name}:\n{:?}", state.ast);
        }
        compiler_log::pass(Phase::Lowering, name, || format!("{:?}", state.ast));
    }
    Ok(())
}
