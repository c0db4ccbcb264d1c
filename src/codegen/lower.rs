//! Lowering rules: rewrite a kernel AST into the small op set a renderer prints.
//! Today: f16/bf16 arithmetic computes in f32 on targets without native half math
//! (each op rounds back to 16 bits, as PyTorch does), and f64 `EXP2`/`LOG2`/`SIN` become f64
//! arithmetic on targets whose transcendentals are 32-bit only (`transcendental.rs`).

use crate::renderer::Target;
use crate::uop::pattern::{graph_rewrite, rule, PatternMatcher, RewriteMode, UPat};
use crate::uop::{DType, Ops, UOp};
use std::sync::OnceLock;

fn is_half(dt: DType) -> bool {
    dt.base() == DType::F16 || dt.base() == DType::BF16
}

/// Recompute a 16-bit float op in f32: cast sources up, compute, cast the result back.
fn half_in_float(n: &UOp) -> Option<UOp> {
    let op = n.op();
    let srcs_half = n.src().iter().any(|s| is_half(s.dtype()));
    let out_half = is_half(n.dtype());
    if !(op.is_alu() || op == Ops::REDUCE) || !(srcs_half || out_half) {
        return None;
    }
    let up = |s: &UOp| if is_half(s.dtype()) { s.cast(DType::F32.vec(s.dtype().count)) } else { s.clone() };
    let src: Vec<UOp> = match op {
        Ops::REDUCE => std::iter::once(up(&n.src()[0])).chain(n.src()[1..].iter().cloned()).collect(),
        Ops::WHERE => vec![n.src()[0].clone(), up(&n.src()[1]), up(&n.src()[2])],
        _ => n.src().iter().map(up).collect(),
    };
    let dtype = if out_half { DType::F32.vec(n.dtype().count) } else { n.dtype() };
    let new = UOp::new(op, dtype, src, n.arg().clone());
    Some(if out_half { new.cast(n.dtype()) } else { new })
}

fn half_rules() -> &'static PatternMatcher<()> {
    static PM: OnceLock<PatternMatcher<()>> = OnceLock::new();
    PM.get_or_init(|| {
        let ops: Vec<Ops> = [Ops::REDUCE].into_iter().chain(Ops::ALU.iter().copied()).collect();
        PatternMatcher::new(vec![rule(UPat::ops(&ops).named("x"), |b| half_in_float(&b["x"]))])
    })
}

/// A scalar f64 transcendental as f64 arithmetic.
fn f64_transcendental(n: &UOp) -> Option<UOp> {
    if n.dtype() != DType::F64 {
        return None;
    }
    let x = &n.src()[0];
    Some(match n.op() {
        Ops::EXP2 => super::transcendental::exp2(x),
        Ops::LOG2 => super::transcendental::log2(x),
        Ops::SIN => super::transcendental::sin(x),
        _ => return None,
    })
}

fn f64_transcendental_rules() -> &'static PatternMatcher<()> {
    static PM: OnceLock<PatternMatcher<()>> = OnceLock::new();
    PM.get_or_init(|| {
        PatternMatcher::new(vec![rule(UPat::ops(&[Ops::EXP2, Ops::LOG2, Ops::SIN]).named("x"), |b| {
            f64_transcendental(&b["x"])
        })])
    })
}

/// Applies the lowering rules the target needs.
pub fn lower(ast: &UOp, target: &Target) -> UOp {
    let mut ast = ast.clone();
    if !target.f64_transcendentals {
        ast = graph_rewrite(&ast, f64_transcendental_rules(), RewriteMode::BottomUp);
    }
    if !target.native_half {
        ast = graph_rewrite(&ast, half_rules(), RewriteMode::BottomUp);
    }
    ast
}
