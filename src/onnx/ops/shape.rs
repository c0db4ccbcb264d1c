//! Shape and data-movement operators: Shape, Reshape, Transpose, Concat, Split, Slice,
//! Expand, Pad, Tile, constants and ranges, Trilu, depth/space rearrangements, CenterCropPad.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::{Idx, PadMode, Tensor};
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "Constant" => constant(node),
        "ConstantOfShape" => constant_of_shape(node),
        "Shape" => shape(node),
        "Size" => (|| one(Ok(Tensor::scalar(node.input(0)?.numel() as i64))))(),
        "Reshape" => reshape(node),
        "Flatten" => flatten(node),
        "Transpose" => transpose(node),
        "Squeeze" => squeeze(node),
        "Unsqueeze" => unsqueeze(node),
        "Concat" => concat(node),
        "Split" => split(node),
        "Slice" => slice(node),
        "Expand" => expand(node),
        "Tile" => tile(node),
        "Pad" => pad(node),
        "Range" => range(node),
        "EyeLike" => eye_like(node),
        "Trilu" => trilu(node),
        "DepthToSpace" => depth_to_space(node),
        "CenterCropPad" => center_crop_pad(node),
        "SpaceToDepth" => space_to_depth(node),
        _ => return None,
    };
    Some(r)
}

/// Integers as sizes: negative values are an error naming the node.
fn sizes(node: &Node, v: &[i64], what: &str) -> Result<Vec<usize>> {
    v.iter()
        .map(|&x| usize::try_from(x).map_err(|_| node.error(format!("{what} {v:?} has a negative value"))))
        .collect()
}

fn constant(node: &Node) -> Result<Outs> {
    if let Some(t) = node.tensor_attr("value")? {
        return one(Ok(t));
    }
    let dev = node.device;
    if let Some(a) = node.attr("value_float").and_then(|a| a.f) {
        return one(Ok(Tensor::from_slice_on(&[a], [0usize; 0], dev)));
    }
    if let Some(a) = node.attr("value_int").and_then(|a| a.i) {
        return one(Ok(Tensor::from_slice_on(&[a], [0usize; 0], dev)));
    }
    if let Some(v) = node.floats("value_floats")? {
        return one(Ok(Tensor::from_slice_on(&v, [v.len()], dev)));
    }
    if let Some(v) = node.ints("value_ints")? {
        return one(Ok(Tensor::from_slice_on(&v, [v.len()], dev)));
    }
    Err(node.unsupported("a Constant without value, value_float(s) or value_int(s)"))
}

fn constant_of_shape(node: &Node) -> Result<Outs> {
    let shape = sizes(node, &node.input_ints(0)?.unwrap_or_default(), "shape")?;
    let value = match node.tensor_attr("value")? {
        Some(v) => v,
        None => Tensor::from_slice_on(&[0f32], [1usize], node.device),
    };
    one(Ok(value.reshape([0usize; 0]).expand(shape).contiguous()))
}

fn shape(node: &Node) -> Result<Outs> {
    let shape: Vec<i64> = node.input(0)?.shape().iter().map(|&d| d as i64).collect();
    let r = shape.len() as i64;
    let clampi = |v: i64| if v < 0 { (v + r).max(0) } else { v.min(r) } as usize;
    let start = clampi(node.int("start", 0)?);
    let end = clampi(node.int("end", r)?);
    let part = if start < end { &shape[start..end] } else { &[] };
    one(Ok(Tensor::from_slice_on(part, [part.len()], node.device)))
}

fn reshape(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let want = node.ints_from(1, "shape")?.ok_or_else(|| node.error("no shape"))?;
    let allow_zero = node.int("allowzero", 0)? != 0;
    let shape = x.shape();
    let dims: Vec<isize> = want
        .iter()
        .enumerate()
        .map(|(i, &d)| match d {
            0 if !allow_zero => shape
                .get(i)
                .map(|&s| s as isize)
                .ok_or_else(|| node.error(format!("shape {want:?} copies axis {i} of {shape:?}"))),
            d => Ok(d as isize),
        })
        .collect::<Result<_>>()?;
    one(Ok(x.reshape(dims)))
}

fn flatten(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let shape = x.shape();
    let a = node.int("axis", 1)?;
    let axis = if a == shape.len() as i64 { shape.len() } else { node.axis(a, shape.len())? };
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis..].iter().product();
    one(Ok(x.reshape([outer, inner])))
}

fn transpose(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let rank = x.ndim();
    let perm = match node.ints("perm")? {
        Some(p) => p.iter().map(|&a| node.axis(a, rank)).collect::<Result<Vec<usize>>>()?,
        None => (0..rank).rev().collect(),
    };
    one(Ok(x.permute(perm)))
}

fn squeeze(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let shape = x.shape();
    let axes: Vec<usize> = match node.ints_from(1, "axes")? {
        Some(a) => a.iter().map(|&a| node.axis(a, shape.len())).collect::<Result<_>>()?,
        None => (0..shape.len()).filter(|&i| shape[i] == 1).collect(),
    };
    if let Some(&a) = axes.iter().find(|&&a| shape[a] != 1) {
        return Err(node.error(format!("axis {a} of shape {shape:?} is not 1")));
    }
    let new: Vec<usize> = (0..shape.len()).filter(|i| !axes.contains(i)).map(|i| shape[i]).collect();
    one(Ok(x.reshape(new)))
}

fn unsqueeze(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let axes = node.ints_from(1, "axes")?.ok_or_else(|| node.error("no axes"))?;
    let rank = x.ndim() + axes.len();
    let mut axes: Vec<usize> = axes.iter().map(|&a| node.axis(a, rank)).collect::<Result<_>>()?;
    axes.sort_unstable();
    let mut shape = x.shape();
    for a in axes {
        shape.insert(a, 1);
    }
    one(Ok(x.reshape(shape)))
}

fn concat(node: &Node) -> Result<Outs> {
    let xs = node.present();
    let first = xs.first().ok_or_else(|| node.error("needs inputs"))?;
    let axis = node.axis(node.int("axis", 0)?, first.ndim())?;
    one(Ok(Tensor::cat(&xs, axis as isize)))
}

fn split(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let axis = node.axis(node.int("axis", 0)?, x.ndim())?;
    let dim = x.shape()[axis];
    let n = node.proto.output.len();
    let parts = match node.ints_from(1, "split")? {
        Some(s) => sizes(node, &s, "split")?,
        None => {
            let n = node.int("num_outputs", n as i64)?.max(1) as usize;
            let size = dim.div_ceil(n);
            let mut v = vec![size; n];
            v[n - 1] = dim - size * (n - 1);
            v
        }
    };
    if parts.iter().sum::<usize>() != dim {
        return Err(node.error(format!("split sizes {parts:?} do not add up to axis {axis}'s {dim}")));
    }
    Ok(x.split_sizes(&parts, axis as isize).into_iter().map(Some).collect())
}

fn slice(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let rank = x.ndim();
    let (starts, ends, axes, steps) = if node.opset < 10 {
        (node.ints("starts")?, node.ints("ends")?, node.ints("axes")?, None)
    } else {
        (node.input_ints(1)?, node.input_ints(2)?, node.input_ints(3)?, node.input_ints(4)?)
    };
    let (starts, ends) = (starts.unwrap_or_default(), ends.unwrap_or_default());
    let axes = axes.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = steps.unwrap_or_else(|| vec![1; starts.len()]);
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(node.error("starts, ends, axes and steps differ in length"));
    }
    let mut idx = vec![Idx::slice(None, None, 1); rank];
    for i in 0..starts.len() {
        let a = node.axis(axes[i], rank)?;
        if steps[i] == 0 {
            return Err(node.error("a step is 0"));
        }
        // Python slice semantics clamp out-of-range starts and ends exactly as ONNX does.
        let clampi = |v: i64| v.clamp(isize::MIN as i64 / 2, isize::MAX as i64 / 2) as isize;
        idx[a] = Idx::slice(Some(clampi(starts[i])), Some(clampi(ends[i])), steps[i] as isize);
    }
    one(Ok(x.index(&idx)))
}

fn expand(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let want = sizes(node, &node.input_ints(1)?.unwrap_or_default(), "shape")?;
    // Bidirectional broadcast: the result has the larger of each pair of axes.
    let shape = x.shape();
    let n = shape.len().max(want.len());
    let pad = |s: &[usize]| [vec![1; n - s.len()], s.to_vec()].concat();
    let (a, b) = (pad(&shape), pad(&want));
    let mut out = Vec::with_capacity(n);
    for (i, (&p, &q)) in a.iter().zip(&b).enumerate() {
        if p != q && p != 1 && q != 1 {
            return Err(node.error(format!("shape {shape:?} does not broadcast to {want:?} (axis {i})")));
        }
        out.push(if p == 1 { q } else { p });
    }
    one(Ok(x.reshape(a).expand(out)))
}

fn tile(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let reps = sizes(node, &node.input_ints(1)?.unwrap_or_default(), "repeats")?;
    one(Ok(x.repeat(&reps)))
}

fn pad(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let rank = x.ndim();
    let pads = node.ints_from(1, "pads")?.or(node.ints("paddings")?).ok_or_else(|| node.error("no pads"))?;
    let axes: Vec<usize> = match node.input_ints(3)? {
        Some(a) => a.iter().map(|&a| node.axis(a, rank)).collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    if pads.len() != 2 * axes.len() {
        return Err(node.error(format!("{} pads for {} axes", pads.len(), axes.len())));
    }
    let mut pairs = vec![(0isize, 0isize); rank];
    for (i, &a) in axes.iter().enumerate() {
        pairs[a] = (pads[i] as isize, pads[i + axes.len()] as isize);
    }
    let value = match node.opset {
        ..11 => node.float("value", 0.0)?,
        _ => node.input_f64s(2)?.and_then(|v| v.first().copied()).unwrap_or(0.0),
    };
    let mode = match node.string("mode", "constant")?.as_str() {
        "constant" => PadMode::Constant(value),
        "reflect" => PadMode::Reflect,
        "edge" => PadMode::Replicate,
        "wrap" => PadMode::Circular,
        m => return Err(node.error(format!("mode {m:?}"))),
    };
    one(Ok(x.pad_mode(&pairs, mode)))
}

fn range(node: &Node) -> Result<Outs> {
    let (s, l, d) = (node.input(0)?, node.input(1)?, node.input(2)?);
    let dt = s.dtype();
    let v = |t: &Tensor| -> Result<f64> { Ok(t.to_f64_vec()?.first().copied().unwrap_or(0.0)) };
    let (start, limit, delta) = (v(s)?, v(l)?, v(d)?);
    if delta == 0.0 {
        return Err(node.error("delta is 0"));
    }
    let n = ((limit - start) / delta).ceil().max(0.0) as usize;
    // start + i * delta in the input's dtype, as ONNX defines it.
    let i = Tensor::arange_dtype(0.0, n as f64, 1.0, DType::F64);
    one(Ok(i.mul(delta).add(start).cast(dt).reshape([n])))
}

fn eye_like(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let shape = x.shape();
    if shape.len() != 2 {
        return Err(node.error(format!("input must be 2-D, it is {shape:?}")));
    }
    let dt = match node.attr("dtype").and_then(|a| a.i) {
        Some(code) => crate::onnx::value::dtype_of(code as i32)
            .ok_or_else(|| crate::onnx::value::unsupported_type(code as i32, "EyeLike's output"))?,
        None => x.dtype(),
    };
    let k = node.int("k", 0)?;
    let r = Tensor::arange_dtype(0.0, shape[0] as f64, 1.0, DType::I64).reshape([shape[0], 1]);
    let c = Tensor::arange_dtype(0.0, shape[1] as f64, 1.0, DType::I64).reshape([1, shape[1]]);
    one(Ok(c.sub(r).eq(k).cast(dt)))
}

fn trilu(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let k = node.input_ints(1)?.and_then(|v| v.first().copied()).unwrap_or(0) as isize;
    one(Ok(if node.int("upper", 1)? != 0 { x.triu(k) } else { x.tril(k) }))
}

fn depth_to_space(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let b = node.int("blocksize", 0)? as usize;
    let [n, c, h, w] = x.shape()[..] else { return Err(node.error("input must be 4-D")) };
    if b == 0 || c % (b * b) != 0 {
        return Err(node.error(format!("blocksize {b} does not divide {c} channels")));
    }
    let y = if node.string("mode", "DCR")? == "CRD" {
        x.reshape([n, c / (b * b), b, b, h, w]).permute([0, 1, 4, 2, 5, 3])
    } else {
        x.reshape([n, b, b, c / (b * b), h, w]).permute([0, 3, 4, 1, 5, 2])
    };
    one(Ok(y.reshape([n, c / (b * b), h * b, w * b])))
}

fn space_to_depth(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let b = node.int("blocksize", 0)? as usize;
    let [n, c, h, w] = x.shape()[..] else { return Err(node.error("input must be 4-D")) };
    if b == 0 || h % b != 0 || w % b != 0 {
        return Err(node.error(format!("blocksize {b} does not divide {h}x{w}")));
    }
    // DCR (the default) puts the block offsets before the channels; CRD (opset 25+) after.
    let y = if node.string("mode", "DCR")? == "CRD" {
        x.reshape([n, c, h / b, b, w / b, b]).permute([0, 1, 3, 5, 2, 4])
    } else {
        x.reshape([n, c, h / b, b, w / b, b]).permute([0, 3, 5, 1, 2, 4])
    };
    one(Ok(y.reshape([n, c * b * b, h / b, w / b])))
}

fn center_crop_pad(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let want = node.input_ints(1)?.ok_or_else(|| node.error("no shape"))?;
    let rank = x.ndim();
    let axes: Vec<usize> = match node.ints("axes")? {
        Some(a) => a.iter().map(|&a| node.axis(a, rank)).collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    if want.len() != axes.len() {
        return Err(node.error(format!("shape {want:?} for axes {axes:?}")));
    }
    let shape = x.shape();
    let mut pads = vec![(0isize, 0isize); rank];
    for (&a, &w) in axes.iter().zip(&want) {
        let (s, w) = (shape[a] as isize, w as isize);
        // Crop: the centered window, an extra element on the right; pad: the extra on the right too.
        pads[a] = if w < s { (-((s - w) / 2), -(s - w - (s - w) / 2)) } else { ((w - s) / 2, w - s - (w - s) / 2) };
    }
    one(Ok(x.pad_constant(&pads, 0.0)))
}
