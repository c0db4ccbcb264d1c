//! Sampling at coordinates: GridSample (nearest or linear over any number of spatial axes;
//! zeros, border or reflection padding) and AffineGrid (the normalized grid an affine matrix
//! maps). Coordinates stay tensors: taps are gathered from the flattened spatial axes.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::Tensor;
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "GridSample" => grid_sample(node),
        "AffineGrid" => affine_grid(node),
        _ => return None,
    };
    Some(r)
}

/// `x` reflected into `[lo, hi]` (a triangle wave).
fn reflect(x: &Tensor, lo: f64, hi: f64) -> Tensor {
    let span = hi - lo;
    if span <= 0.0 {
        return x.zeros_like();
    }
    let d = x.sub(lo).abs();
    let flips = d.div(span).floor();
    let extra = d.sub(flips.mul(span));
    let even = flips.sub(flips.div(2.0).floor().mul(2.0)).eq(0.0);
    even.where_(extra.add(lo), extra.neg().add(hi))
}

fn grid_sample(node: &Node) -> Result<Outs> {
    let (x, grid) = (node.input(0)?, node.input(1)?);
    let (xs, gs) = (x.shape(), grid.shape());
    let n = xs.len() - 2;
    if gs.len() != n + 2 || gs[n + 1] != n {
        return Err(node.error(format!("grid {gs:?} does not fit input {xs:?}")));
    }
    let mode = node.string("mode", "linear")?;
    let linear = match mode.as_str() {
        "linear" | "bilinear" => true,
        "nearest" => false,
        m => return Err(node.unsupported(format!("mode {m}"))),
    };
    let padding = node.string("padding_mode", "zeros")?;
    let align = node.int("align_corners", 0)? != 0;
    let (batch, channels) = (xs[0], xs[1]);
    let spatial = &xs[2..];
    let out_spatial = &gs[1..n + 1];
    let points: usize = out_spatial.iter().product();
    let g = grid.cast(DType::F32).reshape([batch, points, n]);
    // Pixel coordinates per spatial axis (the grid's last axis lists them x first: reversed).
    let mut coords = Vec::with_capacity(n);
    for (d, &size) in spatial.iter().enumerate() {
        let u = g.narrow(2, n - 1 - d, 1).squeeze(2);
        let s = size as f64;
        let mut c = if align { u.add(1.0).mul((s - 1.0) / 2.0) } else { u.add(1.0).mul(s).sub(1.0).div(2.0) };
        match padding.as_str() {
            "border" => c = c.clamp(Some(0.0), Some(s - 1.0)),
            "reflection" => {
                c = if align { reflect(&c, 0.0, s - 1.0) } else { reflect(&c, -0.5, s - 0.5) };
                c = c.clamp(Some(0.0), Some(s - 1.0));
            }
            "zeros" => {}
            p => return Err(node.error(format!("padding_mode {p:?}"))),
        }
        coords.push(c);
    }
    let flat = x.reshape([batch, channels, spatial.iter().product()]);
    // Each tap: an integer position and weight per axis; 2^n taps for linear, 1 for nearest.
    let taps = if linear { 1usize << n } else { 1 };
    let mut out: Option<Tensor> = None;
    for tap in 0..taps {
        let mut index: Option<Tensor> = None;
        let mut weight: Option<Tensor> = None;
        let mut inside: Option<Tensor> = None;
        for (d, c) in coords.iter().enumerate() {
            let (pos, w) = if linear {
                let lo = c.floor();
                let frac = c.sub(&lo);
                if tap >> d & 1 == 1 {
                    (lo.add(1.0), frac)
                } else {
                    (lo, frac.neg().add(1.0))
                }
            } else {
                (c.round(), c.ones_like())
            };
            let size = spatial[d] as f64;
            let ok = pos.ge(0.0).bitand(pos.le(size - 1.0));
            let stride: usize = spatial[d + 1..].iter().product();
            let term = pos.clamp(Some(0.0), Some(size - 1.0)).cast(DType::I64).mul(stride as i64);
            index = Some(index.map_or(term.clone(), |i| i.add(&term)));
            weight = Some(weight.map_or(w.clone(), |v| v.mul(&w)));
            inside = Some(inside.map_or(ok.clone(), |v| v.bitand(&ok)));
        }
        let (index, weight, inside) = (index.expect("n > 0"), weight.expect("n > 0"), inside.expect("n > 0"));
        let weight = inside.where_(&weight, weight.zeros_like());
        let picked = flat.gather(2, &index.unsqueeze(1).expand([batch, channels, points]));
        let term = picked.cast(DType::F32).mul(weight.unsqueeze(1));
        out = Some(out.map_or(term.clone(), |o| o.add(&term)));
    }
    let mut shape = vec![batch, channels];
    shape.extend_from_slice(out_spatial);
    one(Ok(out.expect("at least one tap").reshape(shape).cast(x.dtype())))
}

/// The normalized sampling grid of `theta` (N, n, n + 1) over `size` (N, C, *spatial):
/// `(N, *spatial, n)` with coordinates x first.
fn affine_grid(node: &Node) -> Result<Outs> {
    let theta = node.input(0)?;
    let size = node.input_ints(1)?.ok_or_else(|| node.error("no size"))?;
    let n = size.len() - 2;
    let align = node.int("align_corners", 0)? != 0;
    let batch = size[0] as usize;
    let spatial: Vec<usize> = size[2..].iter().map(|&s| s as usize).collect();
    // Base coordinates per axis, in [-1, 1].
    let base = |s: usize| -> Tensor {
        let i = Tensor::arange_dtype(0.0, s as f64, 1.0, DType::F32);
        if align {
            if s == 1 {
                i.zeros_like()
            } else {
                i.mul(2.0 / (s as f64 - 1.0)).sub(1.0)
            }
        } else {
            i.mul(2.0).add(1.0).div(s as f64).sub(1.0)
        }
    };
    let points: usize = spatial.iter().product();
    // Homogeneous coordinates (points, n + 1): x (last spatial axis) first, then 1.
    let mut columns = Vec::with_capacity(n + 1);
    for d in (0..n).rev() {
        let mut along = vec![1; n];
        along[d] = spatial[d];
        columns.push(base(spatial[d]).reshape(along).expand(spatial.clone()).reshape([points, 1]));
    }
    columns.push(Tensor::ones([points, 1]));
    let homogeneous = Tensor::cat(&columns.iter().collect::<Vec<_>>(), 1);
    let theta = theta.cast(DType::F32);
    let grid = homogeneous.unsqueeze(0).matmul(&theta.transpose(1, 2));
    let mut shape = vec![batch];
    shape.extend_from_slice(&spatial);
    shape.push(n);
    one(Ok(grid.reshape(shape).cast(node.input(0)?.dtype())))
}
