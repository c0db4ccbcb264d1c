//! Linear quantization to and from 8- and 16-bit integers: per tensor or per axis (a 1-D scale
//! along `axis`), dynamic quantization, and integer matmul and convolution on quantized inputs;
//! blocked quantization and the float8/4-bit types are not implemented.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::onnx::value::{dtype_of, unsupported_type};
use crate::tensor::Tensor;
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "QuantizeLinear" => quantize(node),
        "DequantizeLinear" => dequantize(node),
        "DynamicQuantizeLinear" => dynamic_quantize(node),
        "MatMulInteger" => integer_product(node, |a, b| a.matmul(b)),
        "ConvInteger" => (|| {
            let opts = super::nn::conv_opts(node, node.input(0)?, node.input(1)?)?;
            integer_product(node, |x, w| x.conv(w, None, &opts))
        })(),
        "QLinearMatMul" => qlinear_matmul(node),
        _ => return None,
    };
    Some(r)
}

/// A scale or zero point shaped to broadcast against `x`: a scalar, or one value per position
/// of `axis`.
fn along_axis(node: &Node, p: &Tensor, x: &Tensor) -> Result<Tensor> {
    if node.int("block_size", 0)? != 0 {
        return Err(node.unsupported("blocked quantization (block_size)"));
    }
    if p.numel() == 1 {
        return Ok(p.reshape([0usize; 0]));
    }
    let axis = node.axis(node.int("axis", 1)?, x.ndim())?;
    let mut shape = vec![1; x.ndim()];
    shape[axis] = p.numel();
    Ok(p.reshape(shape))
}

fn quantize(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let scale = along_axis(node, node.input(1)?, x)?;
    let out = match (node.opt(2), node.attr("output_dtype").and_then(|a| a.i)) {
        (Some(z), _) => z.dtype(),
        (None, Some(code)) if code != 0 => {
            dtype_of(code as i32).ok_or_else(|| unsupported_type(code as i32, "QuantizeLinear's output"))?
        }
        _ => DType::U8,
    };
    if !out.is_int() {
        return Err(node.unsupported(format!("quantizing to {out:?}")));
    }
    let mut y = x.cast(DType::F32).div(scale.cast(DType::F32)).round();
    if let Some(z) = node.opt(2) {
        y = y.add(along_axis(node, z, x)?.cast(DType::F32));
    }
    let (lo, hi) = out.int_range();
    one(Ok(y.clamp(Some(lo as f64), Some(hi as f64)).cast(out)))
}

fn dequantize(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    if !x.dtype().is_int() {
        return Err(node.unsupported(format!("dequantizing {:?}", x.dtype())));
    }
    let scale_in = node.input(1)?;
    let scale = along_axis(node, scale_in, x)?;
    let mut y = x.cast(DType::F32);
    if let Some(z) = node.opt(2) {
        y = y.sub(along_axis(node, z, x)?.cast(DType::F32));
    }
    one(Ok(y.mul(scale.cast(DType::F32)).cast(scale_in.dtype())))
}

/// uint8 quantization with the scale and zero point that map `[min(x, 0), max(x, 0)]` onto
/// 0..=255.
fn dynamic_quantize(node: &Node) -> Result<Outs> {
    let x = node.input(0)?.cast(DType::F32);
    let lo = x.min().minimum(0.0);
    let hi = x.max().maximum(0.0);
    let scale = hi.sub(&lo).div(255.0);
    let zero = lo.neg().div(&scale).round().clamp(Some(0.0), Some(255.0));
    let y = x.div(&scale).round().add(&zero).clamp(Some(0.0), Some(255.0)).cast(DType::U8);
    Ok(vec![Some(y), Some(scale), Some(zero.cast(DType::U8))])
}

/// `f` of the two inputs less their zero points (inputs 2 and 3), in int32.
fn integer_product(node: &Node, f: impl Fn(&Tensor, &Tensor) -> Tensor) -> Result<Outs> {
    let (a, b) = (node.input(0)?, node.input(1)?);
    let shifted = |t: &Tensor, zp: Option<&Tensor>, along: usize| -> Tensor {
        let t = t.cast(DType::I32);
        match zp {
            // A per-row (or per output channel) zero point broadcasts along `along`.
            Some(z) if z.numel() > 1 => {
                let mut shape = vec![1; t.ndim()];
                shape[along] = z.numel();
                t.sub(z.cast(DType::I32).reshape(shape))
            }
            Some(z) => t.sub(z.cast(DType::I32).reshape([0usize; 0])),
            None => t,
        }
    };
    let a = shifted(a, node.opt(2), a.ndim().saturating_sub(2));
    let along_b = if node.op() == "ConvInteger" { 0 } else { b.ndim() - 1 };
    let b = shifted(b, node.opt(3), along_b);
    one(Ok(f(&a, &b)))
}

/// Quantized matmul: both inputs dequantized, multiplied, and quantized to the output's scale and
/// zero point.
fn qlinear_matmul(node: &Node) -> Result<Outs> {
    let deq = |t: usize, s: usize, z: usize| -> Result<Tensor> {
        let x = node.input(t)?;
        if !x.dtype().is_int() {
            return Err(node.unsupported(format!("QLinearMatMul on {:?}", x.dtype())));
        }
        let scale = node.input(s)?.cast(DType::F32);
        let zero = node.input(z)?.cast(DType::F32);
        let fit = |p: &Tensor, along: usize| {
            if p.numel() > 1 {
                let mut sh = vec![1; x.ndim()];
                sh[along] = p.numel();
                p.reshape(sh)
            } else {
                p.reshape([0usize; 0])
            }
        };
        let along = if t == 0 { x.ndim() - 2 } else { x.ndim() - 1 };
        Ok(x.cast(DType::F32).sub(fit(&zero, along)).mul(fit(&scale, along)))
    };
    let y = deq(0, 1, 2)?.matmul(&deq(3, 4, 5)?);
    let (ys, yz) = (node.input(6)?.cast(DType::F32).reshape([0usize; 0]), node.input(7)?);
    let out = yz.dtype();
    let (lo, hi) = out.int_range();
    let q = y.div(ys).round().add(yz.cast(DType::F32).reshape([0usize; 0])).clamp(Some(lo as f64), Some(hi as f64));
    one(Ok(q.cast(out)))
}
