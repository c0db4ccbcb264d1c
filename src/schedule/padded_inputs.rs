//! A graph rule (see `graph_rules`): a padded operand that a reduce reads many times per element
//! — a convolution's input with `padding`, or the output gradient that a convolution's input
//! gradient pads by the kernel size less one — is first copied into a padded buffer, on a device
//! whose kernels are loops (a CPU). Fused, every read of it in the reduce's inner loop is a
//! gated load (a bounds test and a select per load, a scalar where a vector would do): conv2's
//! input gradient in the beautiful_mnist step ran at 41% of the FMA peak against its forward's
//! 68%. The copy is one pass over the padded tensor.

use super::fused_reduces::launches_work_groups;
use super::realized::existing_buffer;
use crate::uop::{Arg, FxHashMap, FxHashSet, Ops, UOp};

/// Reads per element of the padded tensor from which it is copied.
const MIN_REUSE: usize = 32;
/// Padded tensors smaller than this stay fused (the copy's kernel would cost more).
const MIN_ELEMENTS: usize = 1 << 16;

/// `n`, a reduce, with each padded operand worth copying (module comment) made `CONTIGUOUS`,
/// or `None` where there is none.
pub(crate) fn copy_padded_inputs(n: &UOp) -> Option<UOp> {
    if n.op() != Ops::REDUCE_AXIS {
        return None;
    }
    let work = n.src()[0].numel();
    let mut copies: FxHashMap<UOp, UOp> = FxHashMap::default();
    let mut seen: FxHashSet<UOp> = FxHashSet::default();
    let mut stack = vec![n.src()[0].clone()];
    while let Some(x) = stack.pop() {
        if !seen.insert(x.clone()) || existing_buffer(&x).is_some() {
            continue;
        }
        let padding = x.op() == Ops::PAD && x.src()[0].shape() != x.shape();
        if padding && worth_copying(&x, work) {
            copies.insert(x.clone(), UOp::new(Ops::CONTIGUOUS, x.dtype(), vec![x.clone()], Arg::None));
        } else if x.op().is_movement() || x.op().is_alu() || x.op() == Ops::CAST {
            stack.extend(x.src().iter().cloned());
        }
    }
    (!copies.is_empty()).then(|| n.substitute(&copies))
}

/// Whether the reduce's `work` reads `pad` often enough per element, `pad` is large, its
/// source is not a broadcast (the copy would write every repeat), and its device runs loops.
fn worth_copying(pad: &UOp, work: usize) -> bool {
    if pad.has_symbolic_shape() {
        return false;
    }
    let elements = pad.numel();
    if elements < MIN_ELEMENTS || work < MIN_REUSE * elements || launches_work_groups(pad) != Some(false) {
        return false;
    }
    let mut x = pad.src()[0].clone();
    while x.op().is_movement() {
        if x.op() == Ops::EXPAND && x.src()[0].shape() != x.shape() {
            return false;
        }
        x = x.src()[0].clone();
    }
    true
}
