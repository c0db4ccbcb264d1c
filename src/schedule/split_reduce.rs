//! A graph rule (see `graph_rules`): a long reduce
//! (at least `SPLIT_REDUCE` elements per output, 2^15 by default) runs as two kernels, as
//! tinygrad's split_reduceop. The reduced elements are split into `g` slices; the first kernel
//! reduces each slice (`g` times as many outputs, so every compute unit or thread gets work),
//! the second the `g` partial results.

use crate::uop::{Arg, Ops, UOp};

/// Reduced elements per output from which a reduce is split (`SPLIT_REDUCE`; 0 never splits).
/// Read once: the rule runs on every REDUCE_AXIS of every schedule.
fn threshold() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| match crate::flags::int("SPLIT_REDUCE") {
        n if n <= 0 => usize::MAX,
        n => n as usize,
    })
}

/// How many slices a reduce of `r` elements into `outputs` outputs is split into on `device`:
/// on devices with work groups (GPUs) the largest divisor of `r` in 8..=256; on a CPU with a
/// thread pool, one per thread when there are fewer outputs than threads (each thread then
/// streams one slice; more slices would only give the C compiler outputs to vectorize across).
fn slices(device: &str, r: usize, outputs: usize) -> Option<usize> {
    let device = crate::runtime::get_device(device).ok()?;
    let target = device.renderer().target();
    if target.has_local {
        return (8..=256).rev().find(|g| r.is_multiple_of(*g));
    }
    let t = target.threads;
    (target.has_threads && t > 1 && outputs < t && r.is_multiple_of(t)).then_some(t)
}

fn reduced_elements(n: &UOp) -> usize {
    let Arg::Reduce(_, axes) = n.arg() else { return 0 };
    let shape = n.src()[0].shape();
    axes.iter().map(|&a| shape[a]).product()
}

/// The two-kernel form of a REDUCE_AXIS node, or `None` where no split applies.
pub(crate) fn split_reduce(n: &UOp) -> Option<UOp> {
    if n.op() != Ops::REDUCE_AXIS {
        return None;
    }
    let Arg::Reduce(op, axes) = n.arg() else { return None };
    let r = reduced_elements(n);
    if r < threshold() {
        return None;
    }
    let x = &n.src()[0];
    let shape = x.shape();
    let outputs = shape.iter().product::<usize>() / r.max(1);
    let g = slices(n.device()?, r, outputs)?;
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let mut split_shape: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
    let k = split_shape.len();
    split_shape.extend([g, r / g]);
    let dt = x.dtype();
    let moved = UOp::new(Ops::PERMUTE, dt, vec![x.clone()], Arg::Axes(order));
    let sliced = UOp::new(Ops::RESHAPE, dt, vec![moved], Arg::Shape(split_shape));
    let partial = UOp::new(Ops::REDUCE_AXIS, n.dtype(), vec![sliced], Arg::Reduce(*op, vec![k + 1]));
    let partial = UOp::new(Ops::CONTIGUOUS, n.dtype(), vec![partial], Arg::None);
    let total = UOp::new(Ops::REDUCE_AXIS, n.dtype(), vec![partial], Arg::Reduce(*op, vec![k]));
    Some(UOp::new(Ops::RESHAPE, n.dtype(), vec![total], Arg::Shape(n.shape().to_vec())))
}
