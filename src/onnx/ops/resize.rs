//! Resize (and the older Upsample): nearest, linear and cubic interpolation, one resized axis at
//! a time. Each output position's source coordinate is computed on the host from the node's
//! coordinate transformation mode; the taps (source indices, clamped to the edge) and their
//! weights become index and weight tensors along that axis, so the whole resize is gathers and
//! multiply-adds the scheduler fuses.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::{Idx, Tensor};
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    match node.op() {
        "Resize" => Some(resize(node)),
        "Upsample" => Some(upsample(node)),
        _ => None,
    }
}

/// How one axis is resized.
struct Axis {
    input: usize,
    output: usize,
    scale: f64,
    /// `tf_crop_and_resize`'s region of interest along this axis (start, end), as fractions.
    roi: (f64, f64),
}

/// What the node's attributes say about every axis.
struct Mode {
    interpolation: String,
    transform: String,
    nearest: String,
    cubic_a: f64,
    exclude_outside: bool,
    extrapolation: f64,
}

impl Mode {
    /// The source coordinate of output position `x`. As ONNX defines it, the output length in
    /// these formulas is `scale * input`, not rounded to the integer output size.
    fn source(&self, a: &Axis, x: usize) -> f64 {
        let (x, s, n_in) = (x as f64, a.scale, a.input as f64);
        let n_out = s * n_in;
        match self.transform.as_str() {
            "align_corners" if n_out == 1.0 => 0.0,
            "align_corners" => x * (n_in - 1.0) / (n_out - 1.0),
            "asymmetric" => x / s,
            "pytorch_half_pixel" if n_out == 1.0 => -0.5,
            "tf_crop_and_resize" if n_out == 1.0 => 0.5 * (a.roi.0 + a.roi.1) * (n_in - 1.0),
            "tf_crop_and_resize" => a.roi.0 * (n_in - 1.0) + x * (a.roi.1 - a.roi.0) * (n_in - 1.0) / (n_out - 1.0),
            "half_pixel_symmetric" => {
                let adjustment = a.output as f64 / n_out;
                let offset = n_in / 2.0 * (1.0 - adjustment);
                offset + (x + 0.5) / s - 0.5
            }
            _ => (x + 0.5) / s - 0.5,
        }
    }

    /// The source indices and weights of output position `x` (indices may be outside the axis:
    /// the caller clamps them).
    fn taps(&self, a: &Axis, x: usize) -> Vec<(i64, f64)> {
        let c = self.source(a, x);
        match self.interpolation.as_str() {
            "nearest" => {
                let i = match self.nearest.as_str() {
                    "floor" => c.floor(),
                    "ceil" => c.ceil(),
                    "round_prefer_ceil" if c.fract().abs() == 0.5 => c.ceil(),
                    "round_prefer_ceil" => c.round(),
                    _ if c - c.floor() == 0.5 => c.floor(),
                    _ => c.round(),
                };
                vec![(i as i64, 1.0)]
            }
            "linear" => {
                let (i, t) = (c.floor(), c - c.floor());
                vec![(i as i64, 1.0 - t), (i as i64 + 1, t)]
            }
            _ => {
                let (i, t, a_) = (c.floor() as i64, c - c.floor(), self.cubic_a);
                let far = |d: f64| ((a_ * d - 5.0 * a_) * d + 8.0 * a_) * d - 4.0 * a_;
                let near = |d: f64| ((a_ + 2.0) * d - (a_ + 3.0)) * d * d + 1.0;
                let mut taps = vec![(i - 1, far(t + 1.0)), (i, near(t)), (i + 1, near(1.0 - t)), (i + 2, far(2.0 - t))];
                if self.exclude_outside {
                    for tap in taps.iter_mut() {
                        if tap.0 < 0 || tap.0 >= a.input as i64 {
                            tap.1 = 0.0;
                        }
                    }
                    let total: f64 = taps.iter().map(|t| t.1).sum();
                    taps.iter_mut().for_each(|t| t.1 /= total);
                }
                taps
            }
        }
    }
}

/// `x` resized along `axis`: the weighted sum of its taps, gathered along the axis.
fn resize_axis(x: &Tensor, axis: usize, a: &Axis, mode: &Mode, device: &str) -> (Tensor, Option<Vec<bool>>) {
    let taps: Vec<Vec<(i64, f64)>> = (0..a.output).map(|o| mode.taps(a, o)).collect();
    let mut along = vec![1; x.ndim()];
    along[axis] = a.output;
    let mut y: Option<Tensor> = None;
    for j in 0..taps[0].len() {
        let idx: Vec<i64> = taps.iter().map(|t| t[j].0.clamp(0, a.input as i64 - 1)).collect();
        let mut ix = vec![Idx::slice(None, None, 1); axis];
        ix.push(Idx::T(Tensor::from_slice_on(&idx, [a.output], device)));
        let picked = x.index(&ix);
        let term = if mode.interpolation == "nearest" {
            picked
        } else {
            let w: Vec<f64> = taps.iter().map(|t| t[j].1).collect();
            picked.mul(Tensor::from_slice_on(&w, along.clone(), device).cast(x.dtype()))
        };
        y = Some(match y {
            Some(y) => y.add(term),
            None => term,
        });
    }
    // tf_crop_and_resize: positions whose source lies outside the input take the extrapolation value.
    let outside = (mode.transform == "tf_crop_and_resize").then(|| {
        (0..a.output)
            .map(|o| {
                let c = mode.source(a, o);
                c < 0.0 || c > a.input as f64 - 1.0
            })
            .collect()
    });
    (y.expect("a resize has at least one tap"), outside)
}

fn apply(node: &Node, x: &Tensor, axes: Vec<(usize, Axis)>, mode: Mode) -> Result<Outs> {
    if !matches!(mode.interpolation.as_str(), "nearest" | "linear" | "cubic") {
        return Err(node.error(format!("mode {:?}", mode.interpolation)));
    }
    let dt = x.dtype();
    let mut y = if mode.interpolation == "nearest" || dt.is_float() { x.clone() } else { x.cast(DType::F32) };
    let mut outside_mask: Option<Tensor> = None;
    for (axis, a) in &axes {
        if a.output == a.input && a.scale == 1.0 && mode.transform != "tf_crop_and_resize" {
            continue;
        }
        if a.input == 0 || a.output == 0 {
            return Err(node.unsupported("resizing an empty axis"));
        }
        let (r, outside) = resize_axis(&y, *axis, a, &mode, node.device);
        y = r;
        if let Some(o) = outside {
            let mut along = vec![1; x.ndim()];
            along[*axis] = a.output;
            let m = Tensor::from_slice_on(&o, along, node.device);
            outside_mask = Some(match outside_mask {
                Some(prev) => prev.bitor(m),
                None => m,
            });
        }
    }
    if let Some(m) = outside_mask {
        y = m.where_(Tensor::full_dtype([0usize; 0], crate::uop::ConstValue::Float(mode.extrapolation), y.dtype()), &y);
    }
    if y.dtype() != dt {
        y = y.round().cast(dt);
    }
    one(Ok(y))
}

fn resize(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let shape = x.shape();
    let rank = shape.len();
    if node.int("antialias", 0)? != 0 {
        return Err(node.unsupported("antialias=1"));
    }
    let axes: Vec<usize> = match node.ints("axes")? {
        Some(a) => a.iter().map(|&a| node.axis(a, rank)).collect::<Result<_>>()?,
        None => (0..rank).collect(),
    };
    // Opset 10 had (X, scales); from 11 (X, roi, scales, sizes).
    let (roi, scales, sizes) = if node.opset < 11 {
        (None, node.input_f64s(1)?, None)
    } else {
        (node.input_f64s(1)?, node.input_f64s(2)?, node.input_ints(3)?)
    };
    let scales = scales.filter(|s| !s.is_empty());
    let sizes = sizes.filter(|s| !s.is_empty());
    let mut per_axis = Vec::new();
    let policy = node.string("keep_aspect_ratio_policy", "stretch")?;
    let uniform = match (&sizes, policy.as_str()) {
        (Some(sz), "not_larger" | "not_smaller") => {
            let ratios = axes.iter().zip(sz).map(|(&a, &s)| s as f64 / shape[a] as f64);
            Some(if policy == "not_larger" { ratios.fold(f64::INFINITY, f64::min) } else { ratios.fold(0.0, f64::max) })
        }
        _ => None,
    };
    for (k, &a) in axes.iter().enumerate() {
        let input = shape[a];
        let (output, scale) = match (&scales, &sizes, uniform) {
            (_, Some(_), Some(u)) => (((input as f64) * u).round() as usize, u),
            (_, Some(sz), None) => {
                let out = *sz.get(k).ok_or_else(|| node.error("sizes do not fit the axes"))? as usize;
                (out, out as f64 / input as f64)
            }
            (Some(sc), None, _) => {
                let s = *sc.get(k).ok_or_else(|| node.error("scales do not fit the axes"))?;
                (((input as f64) * s).floor() as usize, s)
            }
            (None, None, _) => return Err(node.error("neither scales nor sizes")),
        };
        let roi = roi.as_ref().filter(|r| r.len() == 2 * axes.len()).map_or((0.0, 1.0), |r| (r[k], r[k + axes.len()]));
        per_axis.push((a, Axis { input, output, scale, roi }));
    }
    let mode = Mode {
        interpolation: node.string("mode", "nearest")?,
        transform: node.string("coordinate_transformation_mode", "half_pixel")?,
        nearest: node.string("nearest_mode", "round_prefer_floor")?,
        cubic_a: node.float("cubic_coeff_a", -0.75)?,
        exclude_outside: node.int("exclude_outside", 0)? != 0,
        extrapolation: node.float("extrapolation_value", 0.0)?,
    };
    apply(node, x, per_axis, mode)
}

/// Upsample (opsets 7 and 9): scales per axis, nearest (floor) or linear, asymmetric coordinates.
fn upsample(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let scales = match node.floats("scales")? {
        Some(s) => s.iter().map(|&v| f64::from(v)).collect(),
        None => node.input_f64s(1)?.ok_or_else(|| node.error("no scales"))?,
    };
    let shape = x.shape();
    if scales.len() != shape.len() {
        return Err(node.error(format!("scales {scales:?} for shape {shape:?}")));
    }
    let per_axis = (0..shape.len())
        .map(|a| {
            (
                a,
                Axis {
                    input: shape[a],
                    output: ((shape[a] as f64) * scales[a]).floor() as usize,
                    scale: scales[a],
                    roi: (0.0, 1.0),
                },
            )
        })
        .collect();
    let mode = node.string("mode", "nearest")?;
    let mode = Mode {
        interpolation: if mode == "bilinear" { "linear".into() } else { mode },
        transform: "asymmetric".into(),
        nearest: "floor".into(),
        cubic_a: -0.75,
        exclude_outside: false,
        extrapolation: 0.0,
    };
    apply(node, x, per_axis, mode)
}
