//! Neural-network operators: MatMul, Gemm, convolutions, pooling, normalizations, Einsum,
//! Dropout (inference).

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::{ConvOpts, Padding, PoolOpts, Tensor};
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "MatMul" => (|| one(Ok(node.input(0)?.matmul(node.input(1)?))))(),
        "Gemm" => gemm(node),
        "Conv" => conv(node),
        "ConvTranspose" => conv_transpose(node),
        "MaxPool" => pool(node, true),
        "AveragePool" => pool(node, false),
        "GlobalAveragePool" => global_pool(node, |x, a| x.mean_with(a, true)),
        "GlobalMaxPool" => global_pool(node, |x, a| x.max_with(a, true)),
        "BatchNormalization" => batch_norm(node),
        "InstanceNormalization" => instance_norm(node),
        "LayerNormalization" => layer_norm(node),
        "GroupNormalization" => group_norm(node),
        "RMSNormalization" => rms_norm(node),
        "LpPool" => lp_pool(node),
        "LRN" => lrn(node),
        "CausalConvWithState" => causal_conv(node),
        "MeanVarianceNormalization" => (|| {
            let x = node.input(0)?;
            let axes: Vec<usize> = match node.ints("axes")? {
                Some(a) => a.iter().map(|&a| node.axis(a, x.ndim())).collect::<Result<_>>()?,
                None => vec![0, 2, 3],
            };
            let (var, mean) = x.var_mean_with(axes, true, 0.0);
            one(Ok(x.sub(mean).div(var.sqrt().add(1e-9))))
        })(),
        "LpNormalization" => (|| {
            let x = node.input(0)?;
            let axis = node.axis(node.int("axis", -1)?, x.ndim())?;
            let norm = match node.int("p", 2)? {
                1 => x.abs().sum_with(axis, true),
                2 => x.square().sum_with(axis, true).sqrt(),
                p => return Err(node.error(format!("p={p} is not 1 or 2"))),
            };
            // A zero vector stays zero.
            one(Ok(norm.eq(0.0).where_(x.zeros_like(), x.div(&norm))))
        })(),
        "Einsum" => (|| {
            let eq = node.string("equation", "")?;
            one(Ok(Tensor::einsum(&eq.replace(' ', ""), &node.present())))
        })(),
        "Dropout" => dropout(node),
        _ => return None,
    };
    Some(r)
}

fn gemm(node: &Node) -> Result<Outs> {
    let (mut a, mut b) = (node.input(0)?.clone(), node.input(1)?.clone());
    if node.int("transA", 0)? != 0 {
        a = a.t();
    }
    if node.int("transB", 0)? != 0 {
        b = b.t();
    }
    let alpha = node.float("alpha", 1.0)?;
    let beta = node.float("beta", 1.0)?;
    let mut y = a.matmul(&b);
    if alpha != 1.0 {
        y = y.mul(alpha);
    }
    if let Some(c) = node.opt(2) {
        y = y.add(if beta != 1.0 { c.mul(beta) } else { c.clone() });
    }
    one(Ok(y))
}

/// Spatial geometry shared by convolutions and pools: strides, dilations and `(before, after)`
/// padding per spatial axis, from `pads` or `auto_pad`.
struct Geometry {
    strides: Vec<usize>,
    dilations: Vec<usize>,
    pads: Vec<(usize, usize)>,
}

fn geometry(node: &Node, input: &[usize], kernel: &[usize]) -> Result<Geometry> {
    let n = kernel.len();
    let list = |name: &str, default: usize| -> Result<Vec<usize>> {
        match node.ints(name)? {
            Some(v) if v.len() == n && v.iter().all(|&x| x >= 0) => Ok(v.iter().map(|&x| x as usize).collect()),
            Some(v) => Err(node.error(format!("{name} {v:?} does not fit {n} spatial axes"))),
            None => Ok(vec![default; n]),
        }
    };
    let (strides, dilations) = (list("strides", 1)?, list("dilations", 1)?);
    let spatial = &input[input.len() - n..];
    let auto = node.string("auto_pad", "NOTSET")?;
    let pads = match auto.as_str() {
        "NOTSET" => match node.ints("pads")? {
            Some(p) if p.len() == 2 * n && p.iter().all(|&x| x >= 0) => {
                (0..n).map(|i| (p[i] as usize, p[i + n] as usize)).collect()
            }
            Some(p) => return Err(node.error(format!("pads {p:?} do not fit {n} spatial axes"))),
            None => vec![(0, 0); n],
        },
        "VALID" => vec![(0, 0); n],
        "SAME_UPPER" | "SAME_LOWER" => (0..n)
            .map(|i| {
                let out = spatial[i].div_ceil(strides[i]);
                let reach = (kernel[i] - 1) * dilations[i] + 1;
                let total = ((out - 1) * strides[i] + reach).saturating_sub(spatial[i]);
                let small = total / 2;
                if auto == "SAME_UPPER" {
                    (small, total - small)
                } else {
                    (total - small, small)
                }
            })
            .collect(),
        a => return Err(node.error(format!("auto_pad {a:?}"))),
    };
    Ok(Geometry { strides, dilations, pads })
}

/// A convolution's options from the node's strides, dilations, pads or auto_pad, and group.
pub(super) fn conv_opts(node: &Node, x: &Tensor, w: &Tensor) -> Result<ConvOpts> {
    let kernel = w.shape()[2..].to_vec();
    let g = geometry(node, &x.shape(), &kernel)?;
    Ok(ConvOpts {
        stride: g.strides,
        padding: Padding::Sides(g.pads),
        dilation: g.dilations,
        groups: node.int("group", 1)? as usize,
        output_padding: vec![0; kernel.len()],
    })
}

fn conv(node: &Node) -> Result<Outs> {
    let (x, w) = (node.input(0)?, node.input(1)?);
    one(Ok(x.conv(w, node.opt(2), &conv_opts(node, x, w)?)))
}

fn conv_transpose(node: &Node) -> Result<Outs> {
    let (x, w) = (node.input(0)?, node.input(1)?);
    let (xs, ws) = (x.shape(), w.shape());
    let n = ws.len() - 2;
    let kernel = ws[2..].to_vec();
    let list = |name: &str, default: usize| -> Result<Vec<usize>> {
        Ok(node.ints(name)?.map_or(vec![default; n], |v| v.iter().map(|&x| x.max(0) as usize).collect()))
    };
    let (strides, dilations, mut out_pad) = (list("strides", 1)?, list("dilations", 1)?, list("output_padding", 0)?);
    let spatial = &xs[xs.len() - n..];
    let reach: Vec<usize> =
        (0..n).map(|i| strides[i] * (spatial[i] - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1).collect();
    let auto = node.string("auto_pad", "NOTSET")?;
    let want: Option<Vec<usize>> = match node.ints("output_shape")? {
        Some(s) => Some(s[s.len().saturating_sub(n)..].iter().map(|&x| x.max(0) as usize).collect()),
        None if auto.starts_with("SAME") => Some((0..n).map(|i| spatial[i] * strides[i]).collect()),
        None => None,
    };
    let pads: Vec<(usize, usize)> = match want {
        Some(want) => (0..n)
            .map(|i| {
                let total = reach[i] as isize - want[i] as isize;
                if total < 0 {
                    // The output is larger than the strided input reaches: extra zeros at the end.
                    out_pad[i] += (-total) as usize;
                    return (0, 0);
                }
                let total = total as usize;
                if auto == "SAME_UPPER" {
                    (total / 2, total - total / 2)
                } else {
                    (total - total / 2, total / 2)
                }
            })
            .collect(),
        None => match node.ints("pads")? {
            Some(p) if p.len() == 2 * n => (0..n).map(|i| (p[i].max(0) as usize, p[i + n].max(0) as usize)).collect(),
            Some(p) => return Err(node.error(format!("pads {p:?} do not fit {n} spatial axes"))),
            None => vec![(0, 0); n],
        },
    };
    let opts = ConvOpts {
        stride: strides,
        padding: Padding::Sides(pads),
        dilation: dilations,
        groups: node.int("group", 1)? as usize,
        output_padding: out_pad,
    };
    one(Ok(x.conv_transpose(w, node.opt(2), &opts)))
}

/// A pool's window, from `kernel_shape`.
fn kernel_shape(node: &Node) -> Result<Vec<usize>> {
    let k = node.ints("kernel_shape")?.ok_or_else(|| node.error("no kernel_shape"))?;
    Ok(k.iter().map(|&k| k.max(1) as usize).collect())
}

fn pool(node: &Node, max: bool) -> Result<Outs> {
    let x = node.input(0)?;
    let kernel = kernel_shape(node)?;
    let mut g = geometry(node, &x.shape(), &kernel)?;
    if node.int("storage_order", 0)? != 0 {
        return Err(node.unsupported("storage_order=1 (column-major indices)"));
    }
    let count_include_pad = node.int("count_include_pad", 0)? != 0;
    // Padding wider than half the window (which the tensor pools refuse): pad explicitly, with
    // -inf for a max, zeros for an average (whose divisor then counts only real elements unless
    // count_include_pad).
    if g.pads.iter().zip(&kernel).any(|(&(a, b), &k)| a.max(b) > k / 2) && node.int("ceil_mode", 0)? == 0 {
        let n = kernel.len();
        let mut pads = vec![(0isize, 0isize); x.ndim() - n];
        pads.extend(g.pads.iter().map(|&(a, b)| (a as isize, b as isize)));
        g.pads = vec![(0, 0); n];
        let opts = PoolOpts {
            stride: g.strides,
            padding: Padding::Each(vec![0; n]),
            dilation: g.dilations,
            ceil_mode: false,
            count_include_pad: true,
        };
        if max {
            if node.proto.output.len() > 1 && !node.proto.output[1].is_empty() {
                return Err(node.unsupported("MaxPool indices with padding wider than half the window"));
            }
            return one(Ok(x.pad_constant(&pads, f64::NEG_INFINITY).max_pool(kernel, &opts)));
        }
        let sums = x.pad_constant(&pads, 0.0).avg_pool(kernel.clone(), &opts);
        if count_include_pad {
            return one(Ok(sums));
        }
        let counts = x.ones_like().pad_constant(&pads, 0.0).avg_pool(kernel, &opts);
        return one(Ok(sums.div(counts)));
    }
    let opts = PoolOpts {
        stride: g.strides,
        padding: Padding::Sides(g.pads),
        dilation: g.dilations,
        ceil_mode: node.int("ceil_mode", 0)? != 0,
        count_include_pad,
    };
    if !max {
        return one(Ok(x.avg_pool(kernel, &opts)));
    }
    if node.proto.output.len() > 1 && !node.proto.output[1].is_empty() {
        if kernel.len() != 2 {
            return Err(node.unsupported("MaxPool indices for a non-2-D pool"));
        }
        let (y, i) = x.max_pool2d_with_indices(kernel, &opts);
        // ONNX counts indices over the whole (N, C, H, W) tensor; PyTorch's are per plane.
        let s = x.shape();
        let (n, c, plane) = (s[0] as i64, s[1] as i64, (s[2] * s[3]) as i64);
        let base = Tensor::arange_dtype(0.0, (n * c) as f64, 1.0, DType::I64)
            .mul(plane)
            .reshape([n as usize, c as usize, 1, 1]);
        return Ok(vec![Some(y), Some(i.cast(DType::I64).add(base))]);
    }
    one(Ok(x.max_pool(kernel, &opts)))
}

fn global_pool(node: &Node, f: impl Fn(&Tensor, Vec<usize>) -> Tensor) -> Result<Outs> {
    let x = node.input(0)?;
    one(Ok(f(x, (2..x.ndim()).collect())))
}

/// A per-channel parameter `(C,)` shaped to broadcast over `(N, C, *spatial)`.
fn per_channel(p: &Tensor, rank: usize) -> Tensor {
    let mut shape = vec![1; rank.max(2)];
    shape[1] = p.numel();
    p.reshape(shape)
}

fn batch_norm(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    if node.int("training_mode", 0)? != 0 {
        return Err(node.unsupported("training_mode=1 (batch statistics and running-stat outputs)"));
    }
    let r = x.ndim();
    let (scale, bias, mean, var) = (node.input(1)?, node.input(2)?, node.input(3)?, node.input(4)?);
    let eps = node.float("epsilon", 1e-5)?;
    let inv = per_channel(&var.add(eps).rsqrt(), r);
    let y = x.sub(per_channel(mean, r)).mul(inv).mul(per_channel(scale, r)).add(per_channel(bias, r));
    one(Ok(y))
}

fn instance_norm(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let eps = node.float("epsilon", 1e-5)?;
    let r = x.ndim();
    let (var, mean) = x.var_mean_with((2..r).collect::<Vec<_>>(), true, 0.0);
    let y = x.sub(mean).mul(var.add(eps).rsqrt());
    one(Ok(y.mul(per_channel(node.input(1)?, r)).add(per_channel(node.input(2)?, r))))
}

fn layer_norm(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let r = x.ndim();
    let axis = node.axis(node.int("axis", -1)?, r)?;
    let eps = node.float("epsilon", 1e-5)?;
    let axes: Vec<usize> = (axis..r).collect();
    let xf = if x.dtype() == DType::F64 { x.clone() } else { x.cast(DType::F32) };
    let mean = xf.mean_with(axes.clone(), true);
    let d = xf.sub(&mean);
    let inv = d.square().mean_with(axes, true).add(eps).rsqrt();
    let mut y = d.mul(&inv).cast(x.dtype()).mul(node.input(1)?);
    if let Some(b) = node.opt(2) {
        y = y.add(b);
    }
    Ok(vec![Some(y), Some(mean), Some(inv)])
}

fn group_norm(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let shape = x.shape();
    let groups = node.int("num_groups", 0)?.max(1) as usize;
    let eps = node.float("epsilon", 1e-5)?;
    let (n, c) = (shape[0], shape[1]);
    if c % groups != 0 {
        return Err(node.error(format!("{c} channels do not split into {groups} groups")));
    }
    let g = x.reshape([n as isize, groups as isize, -1]);
    let (var, mean) = g.var_mean_with(2, true, 0.0);
    let y = g.sub(mean).mul(var.add(eps).rsqrt()).reshape(shape.clone());
    let (scale, bias) = (node.input(1)?, node.input(2)?);
    // Opset 18 gave scale and bias per group; 21 per channel.
    let expand = |p: &Tensor| {
        if p.numel() == groups && groups != c {
            p.reshape([groups, 1]).expand([groups, c / groups]).reshape([c])
        } else {
            p.clone()
        }
    };
    one(Ok(y.mul(per_channel(&expand(scale), shape.len())).add(per_channel(&expand(bias), shape.len()))))
}

fn dropout(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let training = node.input_ints(2)?.and_then(|v| v.first().copied()).unwrap_or(0) != 0;
    let ratio = node.input_f64s(1)?.and_then(|v| v.first().copied()).unwrap_or(node.float("ratio", 0.5)?);
    if training && ratio != 0.0 {
        return Err(node.unsupported("training_mode=1 (random masks)"));
    }
    Ok(vec![Some(x.clone()), Some(x.ne(x).logical_not())])
}

fn rms_norm(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let r = x.ndim();
    let axis = node.axis(node.int("axis", -1)?, r)?;
    let eps = node.float("epsilon", 1e-5)?;
    let xf = if x.dtype() == DType::F64 { x.clone() } else { x.cast(DType::F32) };
    let inv = xf.square().mean_with((axis..r).collect::<Vec<_>>(), true).add(eps).rsqrt();
    one(Ok(xf.mul(inv).cast(x.dtype()).mul(node.input(1)?)))
}

/// `(sum over the window of |x|^p)^(1/p)`, padding counting as zeros.
fn lp_pool(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let kernel = kernel_shape(node)?;
    let g = geometry(node, &x.shape(), &kernel)?;
    let p = node.int("p", 2)? as f64;
    let ceil_mode = node.int("ceil_mode", 0)? != 0;
    let mut powered = x.abs().pow(p);
    // Zero padding adds nothing to the sums: pad explicitly (any width) unless ceil_mode needs
    // the pool to know where the input ends.
    let padding = if ceil_mode {
        Padding::Sides(g.pads)
    } else {
        let mut pads = vec![(0isize, 0isize); x.ndim() - kernel.len()];
        pads.extend(g.pads.iter().map(|&(a, b)| (a as isize, b as isize)));
        powered = powered.pad_constant(&pads, 0.0);
        Padding::Each(vec![0; kernel.len()])
    };
    let opts = PoolOpts { stride: g.strides, padding, dilation: g.dilations, ceil_mode, count_include_pad: true };
    let window: usize = kernel.iter().product();
    let sum = powered.avg_pool(kernel, &opts).mul(window as f64);
    one(Ok(sum.pow(1.0 / p)))
}

/// Local response normalization across channels: `x / (bias + alpha / size * sum of x^2 over
/// the size channels around)^beta`.
fn lrn(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let size = node.int("size", 0)?;
    if size <= 0 {
        return Err(node.error("size must be positive"));
    }
    let (alpha, beta, bias) = (node.float("alpha", 1e-4)?, node.float("beta", 0.75)?, node.float("bias", 1.0)?);
    let c = x.shape()[1];
    let (before, after) = ((size - 1) / 2, size - 1 - (size - 1) / 2);
    let mut pads = vec![(0isize, 0isize); x.ndim()];
    pads[1] = (before as isize, after as isize);
    let sq = x.square().pad_constant(&pads, 0.0);
    let mut sum = sq.narrow(1, 0, c);
    for i in 1..size as usize {
        sum = sum.add(sq.narrow(1, i, c));
    }
    one(Ok(x.div(sum.mul(alpha / size as f64).add(bias).pow(beta))))
}

/// A depthwise causal 1-D convolution continuing from `past_state` (the last `k - 1` inputs of
/// the previous call, zeros without one); also returns the state for the next call.
fn causal_conv(node: &Node) -> Result<Outs> {
    let (x, w) = (node.input(0)?, node.input(1)?);
    let (xs, ws) = (x.shape(), w.shape());
    if xs.len() != 3 || ws.len() != 3 {
        return Err(node.error(format!("input {xs:?} and weight {ws:?} must be 3-D")));
    }
    let (k, channels) = (ws[2], xs[1]);
    let past = match node.opt(3) {
        Some(p) => p.clone(),
        None => Tensor::zeros_dtype([xs[0], channels, k - 1], x.dtype()),
    };
    let padded = Tensor::cat(&[&past, x], 2);
    let opts = ConvOpts { groups: channels, ..ConvOpts::default() };
    let mut y = padded.conv(w, node.opt(2), &opts);
    match node.string("activation", "none")?.as_str() {
        "none" => {}
        "silu" | "swish" => {
            let yf = y.cast(DType::F32);
            y = yf.mul(yf.sigmoid()).cast(x.dtype());
        }
        a => return Err(node.error(format!("activation {a:?}"))),
    }
    let len = padded.shape()[2];
    Ok(vec![Some(y), Some(padded.narrow(2, len - (k - 1), k - 1))])
}
