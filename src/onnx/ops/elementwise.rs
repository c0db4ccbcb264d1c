//! Elementwise operators: unary math and activations, broadcasting binary arithmetic,
//! comparisons and logic, variadic Sum/Mean/Max/Min, Where, Cast.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::onnx::value::{dtype_of, unsupported_type};
use crate::tensor::Tensor;
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "Identity" => one(node.input(0).cloned()),
        "Abs" => unary(node, Tensor::abs),
        "Neg" => unary(node, Tensor::neg),
        "Exp" => unary(node, Tensor::exp),
        "Log" => unary(node, Tensor::log),
        "Sqrt" => unary(node, Tensor::sqrt),
        "Reciprocal" => unary(node, Tensor::reciprocal),
        "Floor" => unary(node, Tensor::floor),
        "Ceil" => unary(node, Tensor::ceil),
        "Round" => unary(node, Tensor::round),
        "Sign" => unary(node, Tensor::sign),
        "Sin" => unary(node, Tensor::sin),
        "Cos" => unary(node, Tensor::cos),
        "Tan" => unary(node, Tensor::tan),
        "Asin" => unary(node, Tensor::asin),
        "Acos" => unary(node, Tensor::acos),
        "Atan" => unary(node, Tensor::atan),
        "Sinh" => unary(node, Tensor::sinh),
        "Cosh" => unary(node, Tensor::cosh),
        "Asinh" => unary(node, Tensor::asinh),
        "Acosh" => unary(node, Tensor::acosh),
        "Atanh" => unary(node, Tensor::atanh),
        "Tanh" => unary(node, Tensor::tanh),
        "Sigmoid" => unary(node, Tensor::sigmoid),
        "Erf" => unary(node, Tensor::erf),
        "Relu" => unary(node, Tensor::relu),
        "Softsign" => unary(node, Tensor::softsign),
        "Softplus" => unary(node, |x| x.exp().add(1.0).log()),
        "Mish" => unary(node, Tensor::mish),
        "HardSwish" => unary(node, Tensor::hardswish),
        "Not" => unary(node, Tensor::logical_not),
        "BitwiseNot" => unary(node, Tensor::bitwise_not),
        "IsNaN" => unary(node, Tensor::isnan),
        "IsInf" => is_inf(node),
        "Elu" => with_alpha(node, 1.0, |x, a| x.gt(0.0).where_(x, x.exp().sub(1.0).mul(a))),
        "Celu" => with_alpha(node, 1.0, |x, a| x.relu().add(x.div(a).exp().sub(1.0).mul(a).minimum(0.0))),
        "LeakyRelu" => with_alpha(node, 0.01, |x, a| x.lt(0.0).where_(x.mul(a), x)),
        "ThresholdedRelu" => with_alpha(node, 1.0, |x, a| x.gt(a).where_(x, x.zeros_like())),
        "SwiGLU" => (|| {
            let (a, b) = (node.input(0)?, node.input(1)?);
            let alpha = node.float("alpha", 1.0)?;
            one(Ok(a.mul(a.mul(alpha).sigmoid()).mul(b)))
        })(),
        "Swish" => with_alpha(node, 1.0, |x, a| x.mul(x.mul(a).sigmoid())),
        "Selu" => selu(node),
        "HardSigmoid" => hard_sigmoid(node),
        "Gelu" => gelu(node),
        "Shrink" => shrink(node),
        "Clip" => clip(node),
        "Add" => binary(node, |a, b| a.add(b)),
        "Sub" => binary(node, |a, b| a.sub(b)),
        "Mul" => binary(node, |a, b| a.mul(b)),
        "Div" => binary(node, |a, b| if a.dtype().is_float() { a.div(b) } else { a.div_trunc(b) }),
        "Pow" => binary(node, |a, b| a.pow(b).cast(a.dtype())),
        "Mod" => modulo(node),
        "PRelu" => prelu(node),
        "Equal" => binary(node, |a, b| a.eq(b)),
        "Less" => binary(node, |a, b| a.lt(b)),
        "LessOrEqual" => binary(node, |a, b| a.le(b)),
        "Greater" => binary(node, |a, b| a.gt(b)),
        "GreaterOrEqual" => binary(node, |a, b| a.ge(b)),
        "And" | "BitwiseAnd" => binary(node, |a, b| a.bitand(b)),
        "Or" | "BitwiseOr" => binary(node, |a, b| a.bitor(b)),
        "Xor" | "BitwiseXor" => binary(node, |a, b| a.bitxor(b)),
        "BitShift" => bit_shift(node),
        "Sum" => variadic(node, |a, b| a.add(b)),
        "Max" => variadic(node, |a, b| a.maximum(b)),
        "Min" => variadic(node, |a, b| a.minimum(b)),
        "Mean" => variadic(node, |a, b| a.add(b)).map(|o| {
            let n = node.present().len() as f64;
            o.into_iter().map(|t| t.map(|t| t.div(n))).collect()
        }),
        "Where" => (|| {
            let (c, x, y) = (node.input(0)?, node.input(1)?, node.input(2)?);
            one(Ok(c.cast(DType::BOOL).where_(x, y)))
        })(),
        "Cast" => (|| {
            let code = node.int("to", 0)? as i32;
            let dt = dtype_of(code).ok_or_else(|| unsupported_type(code, &format!("{}'s output", node.describe())))?;
            one(Ok(node.input(0)?.cast(dt)))
        })(),
        "BitCast" => (|| {
            let code = node.int("to", 0)? as i32;
            let dt = dtype_of(code).ok_or_else(|| unsupported_type(code, &format!("{}'s output", node.describe())))?;
            one(Ok(node.input(0)?.bitcast(dt)))
        })(),
        "CastLike" => (|| one(Ok(node.input(0)?.cast(node.input(1)?.dtype()))))(),
        _ => return None,
    };
    Some(r)
}

fn unary(node: &Node, f: impl Fn(&Tensor) -> Tensor) -> Result<Outs> {
    one(Ok(f(node.input(0)?)))
}

fn with_alpha(node: &Node, default: f64, f: impl Fn(&Tensor, f64) -> Tensor) -> Result<Outs> {
    let alpha = node.float("alpha", default)?;
    one(Ok(f(node.input(0)?, alpha)))
}

fn binary(node: &Node, f: impl Fn(&Tensor, &Tensor) -> Tensor) -> Result<Outs> {
    one(Ok(f(node.input(0)?, node.input(1)?)))
}

fn variadic(node: &Node, f: impl Fn(&Tensor, &Tensor) -> Tensor) -> Result<Outs> {
    let xs = node.present();
    let first = xs.first().ok_or_else(|| node.error("needs at least one input"))?;
    one(Ok(xs[1..].iter().fold((*first).clone(), |acc, x| f(&acc, x))))
}

fn is_inf(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let (neg, pos) = (node.int("detect_negative", 1)? != 0, node.int("detect_positive", 1)? != 0);
    let none = x.ne(x).bitand(false);
    let neg_t = if neg { x.eq(f64::NEG_INFINITY) } else { none.clone() };
    let pos_t = if pos { x.eq(f64::INFINITY) } else { none };
    one(Ok(neg_t.bitor(pos_t)))
}

fn selu(node: &Node) -> Result<Outs> {
    let alpha = node.float("alpha", 1.673_263_192_176_818_8)?;
    let gamma = node.float("gamma", 1.050_701_022_148_132_3)?;
    let x = node.input(0)?;
    one(Ok(x.gt(0.0).where_(x, x.exp().sub(1.0).mul(alpha)).mul(gamma)))
}

fn hard_sigmoid(node: &Node) -> Result<Outs> {
    let (alpha, beta) = (node.float("alpha", 0.2)?, node.float("beta", 0.5)?);
    one(Ok(node.input(0)?.mul(alpha).add(beta).clamp(Some(0.0), Some(1.0))))
}

fn gelu(node: &Node) -> Result<Outs> {
    let approximate = node.string("approximate", "none")?;
    if !matches!(approximate.as_str(), "none" | "tanh") {
        return Err(node.error(format!("approximate {approximate:?} is not none or tanh")));
    }
    one(Ok(node.input(0)?.gelu_approximate(&approximate)))
}

fn shrink(node: &Node) -> Result<Outs> {
    let (bias, lambd) = (node.float("bias", 0.0)?, node.float("lambd", 0.5)?);
    let x = node.input(0)?;
    let f = x.cast(DType::F64);
    let y = f.lt(-lambd).where_(f.add(bias), f.gt(lambd).where_(f.sub(bias), f.zeros_like()));
    one(Ok(y.cast(x.dtype())))
}

fn clip(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let mut y = x.clone();
    if node.opset < 11 {
        y = y.maximum(node.float("min", f64::NEG_INFINITY)?).minimum(node.float("max", f64::INFINITY)?);
        return one(Ok(y));
    }
    if let Some(lo) = node.opt(1) {
        y = y.maximum(lo.cast(x.dtype()));
    }
    if let Some(hi) = node.opt(2) {
        y = y.minimum(hi.cast(x.dtype()));
    }
    one(Ok(y))
}

fn modulo(node: &Node) -> Result<Outs> {
    let (a, b) = (node.input(0)?, node.input(1)?);
    // fmod=1: the sign of the dividend (C's fmod); 0: the sign of the divisor (Python's %).
    if node.int("fmod", 0)? != 0 {
        return one(Ok(a.fmod(b)));
    }
    one(Ok(a.remainder(b)))
}

fn bit_shift(node: &Node) -> Result<Outs> {
    let (a, b) = (node.input(0)?, node.input(1)?);
    match node.string("direction", "")?.as_str() {
        "LEFT" => one(Ok(a.shl(b))),
        "RIGHT" => one(Ok(a.shr(b))),
        d => Err(node.error(format!("direction {d:?} is not LEFT or RIGHT"))),
    }
}

fn prelu(node: &Node) -> Result<Outs> {
    let (x, mut slope) = (node.input(0)?, node.input(1)?.clone());
    let shape = x.shape();
    // Before opset 7 a 1-D slope of one value per channel applied to axis 1.
    if node.opset < 7 && slope.ndim() == 1 && shape.len() > 2 && slope.numel() == shape[1] {
        let mut per_channel = vec![1; shape.len() - 1];
        per_channel[0] = shape[1];
        slope = slope.reshape(per_channel);
    }
    one(Ok(x.lt(0.0).where_(x.mul(&slope), x)))
}
