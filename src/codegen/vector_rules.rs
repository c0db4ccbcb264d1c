//! When a range can be a kernel's vector axis: the one legality check of the VECTOR opt, used
//! when the opt is applied (`opts::apply_opt`), when BEAM proposes it (`opts::candidate_opts`)
//! and when the `vector_axis` pass runs (`vectorize.rs`).

use super::kernel_ops::{same_at_every_step, unit_stride};
use crate::renderer::Target;
use crate::uop::{Arg, AxisType, DType, Ops, Scalar, UOp};

/// Element types vector arithmetic works on (no bools, no 16-bit floats).
pub fn vector_element(dt: DType) -> bool {
    matches!(dt.scalar, Scalar::F32 | Scalar::F64 | Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64)
}

/// 16-bit floats: stored as 16-bit integers and computed in f32.
pub fn is_half(dt: DType) -> bool {
    matches!(dt.scalar, Scalar::F16 | Scalar::BF16)
}

/// Integers of one or two bytes: f32 holds every value exactly.
fn is_small_int(dt: DType) -> bool {
    matches!(dt.scalar, Scalar::U8 | Scalar::I8 | Scalar::U16 | Scalar::I16)
}

/// Element types vector loads and stores move: the arithmetic ones, 16-bit floats and small
/// integers (a vector of those converts to an f32 vector with one vector CAST).
pub fn vector_memory_element(dt: DType) -> bool {
    vector_element(dt) || is_half(dt) || is_small_int(dt)
}

/// A CAST with a vector form: between 16-bit floats and f32 (the weights of a model kept in
/// bf16 convert as they are loaded), and from small integers to f32 (an image's u8 pixels,
/// exactly).
pub fn vector_cast(from: DType, to: DType) -> bool {
    (is_half(from) && to.scalar == Scalar::F32)
        || (from.scalar == Scalar::F32 && is_half(to))
        || (is_small_int(from) && to.scalar == Scalar::F32)
}

/// The lanes one vector of the kernel's widest float holds (16-bit floats count as the f32
/// they compute in).
pub fn max_lanes(ast: &UOp, target: &Target) -> i64 {
    let topo = ast.toposort();
    let widest = topo.iter().filter(|n| n.dtype().is_float()).map(|n| n.dtype().itemsize()).max().unwrap_or(4).max(4);
    (target.simd_bytes / widest) as i64
}

/// The float sum whose UNROLL axis `unroll` can keep one partial sum per vector lane: the one
/// REDUCE over it, a float ADD of vector elements, whose every load along the axis is
/// contiguous or reads one address for all lanes, and ungated; or why not.
pub fn lane_sum_reduce(ast: &UOp, unroll: &UOp, target: &Target) -> Result<UOp, String> {
    let lanes = unroll.range_size();
    let topo = ast.toposort();
    let owners: Vec<&UOp> = topo.iter().filter(|n| n.op() == Ops::REDUCE && n.src()[1..].contains(unroll)).collect();
    let [red] = owners.as_slice() else { return Err("per-lane sums need an UNROLL axis of one reduce".into()) };
    if red.arg() != &Arg::Op(Ops::ADD) || !red.dtype().is_float() || !vector_element(red.dtype()) {
        return Err("per-lane sums are for float sums".into());
    }
    if lanes as usize * red.dtype().itemsize() > target.simd_bytes {
        return Err(format!("{lanes} lanes of {:?} are more than a vector holds", red.dtype()));
    }
    for l in topo.iter().filter(|n| n.op() == Ops::LOAD && n.src()[0].op() == Ops::INDEX) {
        let index = &l.src()[0];
        if !index.toposort().contains(unroll) {
            continue;
        }
        let gate_moves = index.src().get(2).is_some_and(|g| g.toposort().contains(unroll));
        if !gate_moves && same_at_every_step(&index.src()[1], unroll) {
            continue; // one value broadcast to every lane
        }
        if gate_moves || !unit_stride(&index.src()[1], unroll) || !vector_memory_element(l.dtype()) {
            return Err(
                "per-lane sums need every load along the axis to be contiguous or the same in every lane, and ungated"
                    .into(),
            );
        }
    }
    Ok((*red).clone())
}

/// Whether range `axis` of kernel `ast` (all its lanes) can be the vector axis: an UPCAST
/// range, or the UNROLL range of a float sum (`lane_sum_reduce`), of at most one vector of
/// the kernel's widest float.
pub fn check_vector_axis(ast: &UOp, axis: &UOp, target: &Target) -> Result<(), String> {
    let lanes = axis.range_size();
    let max = max_lanes(ast, target);
    if lanes > max {
        return Err(format!("{lanes} lanes of this kernel's widest float are more than a vector holds ({max})"));
    }
    match axis.range_arg().1 {
        AxisType::Upcast => Ok(()),
        AxisType::Unroll => lane_sum_reduce(ast, axis, target).map(|_| ()),
        t => Err(format!("the vector axis is an UPCAST or UNROLL range, not a {t:?} axis")),
    }
}
