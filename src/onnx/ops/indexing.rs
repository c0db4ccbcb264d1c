//! Indexing operators: Gather, GatherElements, GatherND, Scatter(Elements), ScatterND,
//! Compress, OneHot, ReverseSequence. Negative indices count from the end of their axis.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::{Idx, Tensor};
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "Gather" => gather(node),
        "GatherElements" => gather_elements(node),
        "ScatterElements" | "Scatter" => scatter_elements(node),
        "OneHot" => one_hot(node),
        "Compress" => compress(node),
        "GatherND" => gather_nd(node),
        "ScatterND" => scatter_nd(node),
        "ReverseSequence" => reverse_sequence(node),
        _ => return None,
    };
    Some(r)
}

/// Negative indices count from the end of an axis of size `dim`.
fn wrap_indices(idx: &Tensor, dim: usize) -> Tensor {
    let i = idx.cast(DType::I64);
    i.lt(0i64).where_(i.add(dim as i64), &i)
}

fn gather(node: &Node) -> Result<Outs> {
    let (x, idx) = (node.input(0)?, node.input(1)?);
    let axis = node.axis(node.int("axis", 0)?, x.ndim())?;
    let idx = wrap_indices(idx, x.shape()[axis]);
    let mut ix = vec![Idx::slice(None, None, 1); axis];
    ix.push(Idx::T(idx));
    one(Ok(x.index(&ix)))
}

fn gather_elements(node: &Node) -> Result<Outs> {
    let (x, idx) = (node.input(0)?, node.input(1)?);
    let axis = node.axis(node.int("axis", 0)?, x.ndim())?;
    one(Ok(x.gather(axis as isize, &wrap_indices(idx, x.shape()[axis]))))
}

fn scatter_elements(node: &Node) -> Result<Outs> {
    let (x, idx, upd) = (node.input(0)?, node.input(1)?, node.input(2)?);
    let axis = node.axis(node.int("axis", 0)?, x.ndim())?;
    let idx = wrap_indices(idx, x.shape()[axis]);
    let y = match node.string("reduction", "none")?.as_str() {
        "none" => x.scatter(axis as isize, &idx, upd),
        "add" => x.scatter_reduce(axis as isize, &idx, upd, "sum", true),
        "mul" => x.scatter_reduce(axis as isize, &idx, upd, "prod", true),
        "max" => x.scatter_reduce(axis as isize, &idx, upd, "amax", true),
        "min" => x.scatter_reduce(axis as isize, &idx, upd, "amin", true),
        r => return Err(node.error(format!("reduction {r:?}"))),
    };
    one(Ok(y))
}

fn one_hot(node: &Node) -> Result<Outs> {
    let (idx, values) = (node.input(0)?, node.input(2)?);
    let depth = node.input_f64s(1)?.and_then(|v| v.first().copied()).ok_or_else(|| node.error("no depth"))? as i64;
    let rank = idx.ndim() + 1;
    let axis = node.axis(node.int("axis", -1)?, rank)?;
    // Negative indices count from the end; out-of-range ones give a row of `off`.
    let i = idx.cast(DType::I64);
    let i = i.lt(0i64).where_(i.add(depth), &i).unsqueeze(axis as isize);
    let mut along = vec![1; rank];
    along[axis] = depth.max(0) as usize;
    let positions = Tensor::arange_dtype(0.0, depth as f64, 1.0, DType::I64).reshape(along);
    let (off, on) = (values.narrow(0, 0, 1).reshape([0usize; 0]), values.narrow(0, 1, 1).reshape([0usize; 0]));
    one(Ok(positions.eq(&i).where_(&on, &off)))
}

fn compress(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let keep = node.input(1)?.cast(DType::BOOL).to_vec::<bool>()?;
    let (x, axis) = match node.attr("axis").and_then(|a| a.i) {
        Some(a) => (x.clone(), node.axis(a, x.ndim())?),
        None => (x.reshape([x.numel()]), 0),
    };
    let dim = x.shape()[axis];
    let picked: Vec<i64> = keep.iter().take(dim).enumerate().filter(|(_, &k)| k).map(|(i, _)| i as i64).collect();
    let positions = Tensor::from_slice_on(&picked, [picked.len()], node.device);
    let mut ix = vec![Idx::slice(None, None, 1); axis];
    ix.push(Idx::T(positions));
    one(Ok(x.index(&ix)))
}

/// One index tensor per indexed axis of `data`, from the last axis of `indices` (negative
/// positions wrapped).
fn nd_positions(node: &Node, data: &Tensor, indices: &Tensor) -> Result<Vec<Idx>> {
    if node.int("batch_dims", 0)? != 0 {
        return Err(node.unsupported("batch_dims other than 0"));
    }
    let k = *indices.shape().last().ok_or_else(|| node.error("indices must have a last axis"))?;
    if k > data.ndim() {
        return Err(node.error(format!("indices of depth {k} into a rank-{} tensor", data.ndim())));
    }
    let shape = data.shape();
    let last = indices.ndim() as isize - 1;
    Ok((0..k).map(|i| Idx::T(wrap_indices(&indices.narrow(last, i, 1).squeeze(last), shape[i]))).collect())
}

fn gather_nd(node: &Node) -> Result<Outs> {
    let (x, indices) = (node.input(0)?, node.input(1)?);
    one(Ok(x.index(&nd_positions(node, x, indices)?)))
}

fn scatter_nd(node: &Node) -> Result<Outs> {
    let (x, indices, updates) = (node.input(0)?, node.input(1)?, node.input(2)?);
    if node.string("reduction", "none")? != "none" {
        return Err(node.unsupported("ScatterND with a reduction"));
    }
    one(Ok(x.index_put(&nd_positions(node, x, indices)?, updates)))
}

/// Reverses the first `sequence_lens[b]` steps of each batch entry along the time axis.
fn reverse_sequence(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let lens = node.input(1)?.cast(DType::I64);
    let (t_axis, b_axis) = (node.int("time_axis", 0)? as usize, node.int("batch_axis", 1)? as usize);
    let shape = x.shape();
    if t_axis == b_axis || t_axis > 1 || b_axis > 1 {
        return Err(node.error(format!("time_axis {t_axis} and batch_axis {b_axis} must be 0 and 1")));
    }
    let steps = shape[t_axis];
    let mut t_shape = vec![1; shape.len()];
    t_shape[t_axis] = steps;
    let mut b_shape = vec![1; shape.len()];
    b_shape[b_axis] = shape[b_axis];
    let t = Tensor::arange_dtype(0.0, steps as f64, 1.0, DType::I64).reshape(t_shape);
    let len = lens.reshape(b_shape);
    let source = t.lt(&len).where_(len.sub(1i64).sub(&t), &t);
    one(Ok(x.gather(t_axis as isize, &source.expand(shape.clone()))))
}
