//! Reductions and the ops built on one axis: Reduce*, ArgMax/ArgMin, CumSum, Softmax,
//! LogSoftmax, Hardmax, TopK.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::Tensor;
use crate::uop::{ConstValue, DType};

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "ReduceSum" => reduce(node, 13, 0.0, |x, a, k| x.sum_with(a, k)),
        "ReduceMean" => reduce(node, 18, f64::NAN, |x, a, k| x.mean_with(a, k)),
        "ReduceMax" => reduce(node, 18, f64::NEG_INFINITY, |x, a, k| x.max_with(a, k)),
        "ReduceMin" => reduce(node, 18, f64::INFINITY, |x, a, k| x.min_with(a, k)),
        "ReduceProd" => reduce(node, 18, 1.0, |x, a, k| x.prod_with(a, k)),
        "ReduceL1" => reduce(node, 18, 0.0, |x, a, k| x.abs().sum_with(a, k)),
        "ReduceL2" => reduce(node, 18, 0.0, |x, a, k| x.square().sum_with(a, k).sqrt()),
        "ReduceSumSquare" => reduce(node, 18, 0.0, |x, a, k| x.square().sum_with(a, k)),
        "ReduceLogSum" => reduce(node, 18, f64::NEG_INFINITY, |x, a, k| x.sum_with(a, k).log()),
        "ReduceLogSumExp" => reduce(node, 18, f64::NEG_INFINITY, |x, a, k| {
            let y = x.cast(DType::F64).logsumexp_keepdim(a.clone());
            if k {
                y
            } else {
                y.squeeze(a)
            }
        }),
        "ArgMax" => arg(node, true),
        "ArgMin" => arg(node, false),
        "CumSum" => cumulative(node, 0.0, |x, a, dt| x.cumsum_as(a, dt)),
        "CumProd" => cumulative(node, 1.0, |x, a, _| x.cumprod(a)),
        "Softmax" => softmax_like(node, |x, a| x.softmax(a)),
        "LogSoftmax" => softmax_like(node, |x, a| x.log_softmax(a)),
        "Hardmax" => softmax_like(node, |x, a| {
            let (shape, i) = (x.shape(), x.argmax_keepdim(a));
            let mut along = vec![1; shape.len()];
            along[a as usize] = shape[a as usize];
            let positions = Tensor::arange_dtype(0.0, shape[a as usize] as f64, 1.0, i.dtype()).reshape(along);
            positions.eq(&i).cast(x.dtype())
        }),
        "TopK" => topk(node),
        _ => return None,
    };
    Some(r)
}

/// A reduction whose axes are an input from opset `axes_input_from` (an attribute before);
/// reducing an empty axis gives `empty` (the reduction's identity; integers take their extreme).
fn reduce(
    node: &Node,
    axes_input_from: i64,
    empty: f64,
    f: impl Fn(&Tensor, Vec<usize>, bool) -> Tensor,
) -> Result<Outs> {
    let x = node.input(0)?;
    let rank = x.ndim();
    let axes = if node.opset >= axes_input_from { node.input_ints(1)? } else { node.ints("axes")? };
    let keep = node.int("keepdims", 1)? != 0;
    let axes: Vec<usize> = match axes.filter(|a| !a.is_empty()) {
        Some(a) => a.iter().map(|&a| node.axis(a, rank)).collect::<Result<_>>()?,
        None if node.int("noop_with_empty_axes", 0)? != 0 => return one(Ok(x.clone())),
        None => (0..rank).collect(),
    };
    if axes.iter().any(|&a| x.shape()[a] == 0) {
        let shape: Vec<usize> = (0..rank)
            .filter_map(|i| match (axes.contains(&i), keep) {
                (false, _) => Some(x.shape()[i]),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect();
        let dt = x.dtype();
        let (lo, hi) = dt.int_range();
        let value = match (dt.is_float(), empty) {
            (false, v) if v == f64::INFINITY => ConstValue::Int(hi as i64),
            (false, v) if v == f64::NEG_INFINITY => ConstValue::Int(lo as i64),
            (_, v) => ConstValue::Float(v),
        };
        return one(Ok(Tensor::full_dtype(shape, value, dt)));
    }
    one(Ok(f(x, axes, keep).cast(x.dtype())))
}

fn arg(node: &Node, max: bool) -> Result<Outs> {
    let x = node.input(0)?;
    let axis = node.axis(node.int("axis", 0)?, x.ndim())?;
    let keep = node.int("keepdims", 1)? != 0;
    let last = node.int("select_last_index", 0)? != 0;
    // The last extreme index is the first one of the flipped axis, counted from the end.
    let src = if last { x.flip(axis) } else { x.clone() };
    let mut i =
        if max { src.argmax_keepdim(axis as isize) } else { src.argmin_keepdim(axis as isize) }.cast(DType::I64);
    if last {
        i = i.neg().add(x.shape()[axis] as i64 - 1);
    }
    one(Ok(if keep { i } else { i.squeeze(axis) }))
}

/// CumSum and CumProd: `reverse` runs from the end, `exclusive` leaves each element out
/// (the sequence shifted by one, starting from `identity`).
fn cumulative(node: &Node, identity: f64, f: impl Fn(&Tensor, isize, DType) -> Tensor) -> Result<Outs> {
    let x = node.input(0)?;
    let a = node.input_ints(1)?.and_then(|v| v.first().copied()).ok_or_else(|| node.error("no axis"))?;
    let axis = node.axis(a, x.ndim())?;
    let reverse = node.int("reverse", 0)? != 0;
    let mut y = if reverse { x.flip(axis) } else { x.clone() };
    if node.int("exclusive", 0)? != 0 && x.shape()[axis] > 0 {
        let mut pads = vec![(0isize, 0isize); x.ndim()];
        pads[axis] = (1, -1);
        y = y.pad_constant(&pads, identity);
    }
    let y = f(&y, axis as isize, x.dtype()).cast(x.dtype());
    one(Ok(if reverse { y.flip(axis) } else { y }))
}

/// Softmax, LogSoftmax and Hardmax: before opset 13 the input is seen as 2-D, split at `axis`
/// (default 1); from 13 the op works along `axis` (default -1).
fn softmax_like(node: &Node, f: impl Fn(&Tensor, isize) -> Tensor) -> Result<Outs> {
    let x = node.input(0)?;
    let shape = x.shape();
    if node.opset < 13 {
        let axis = node.axis(node.int("axis", 1)?, shape.len())?;
        let outer: usize = shape[..axis].iter().product();
        return one(Ok(f(&x.reshape([outer, shape[axis..].iter().product()]), 1).reshape(shape)));
    }
    let axis = node.axis(node.int("axis", -1)?, shape.len())?;
    one(Ok(f(x, axis as isize)))
}

fn topk(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let axis = node.axis(node.int("axis", -1)?, x.ndim())?;
    let k = match node.opset {
        ..10 => node.int("k", 0)?,
        _ => node.input_ints(1)?.and_then(|v| v.first().copied()).ok_or_else(|| node.error("no k"))?,
    };
    let k = usize::try_from(k).map_err(|_| node.error(format!("k {k} is negative")))?;
    let largest = node.int("largest", 1)? != 0;
    let (v, i) = x.topk(k, axis as isize, largest);
    Ok(vec![Some(v), Some(i.cast(DType::I64))])
}
