//! Window functions: HannWindow, HammingWindow, BlackmanWindow (symmetric or periodic),
//! computed in float64 and cast to `output_datatype`.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::onnx::value::{dtype_of, unsupported_type};
use crate::tensor::Tensor;
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let tau = 2.0 * std::f64::consts::PI;
    let r = match node.op() {
        "HannWindow" => window(node, |n| n.mul(tau).cos().mul(-0.5).add(0.5)),
        "HammingWindow" => window(node, |n| n.mul(tau).cos().mul(-(21.0 / 46.0)).add(25.0 / 46.0)),
        "BlackmanWindow" => {
            window(node, |n| n.mul(tau).cos().mul(-0.5).add(n.mul(2.0 * tau).cos().mul(0.08)).add(0.42))
        }
        _ => return None,
    };
    Some(r)
}

/// `f` of `n / N` for n in 0..size, where N is `size` (periodic) or `size - 1` (symmetric).
fn window(node: &Node, f: impl Fn(&Tensor) -> Tensor) -> Result<Outs> {
    let size = node.input_ints(0)?.and_then(|v| v.first().copied()).ok_or_else(|| node.error("no size"))?;
    let size = usize::try_from(size).map_err(|_| node.error(format!("size {size} is negative")))?;
    let code = node.int("output_datatype", 1)? as i32;
    let dt = dtype_of(code).ok_or_else(|| unsupported_type(code, "the window"))?;
    let periodic = node.int("periodic", 1)? != 0;
    let denominator = if periodic { size as f64 } else { size.saturating_sub(1).max(1) as f64 };
    let n = Tensor::arange_dtype(0.0, size as f64, 1.0, DType::F64).div(denominator);
    one(Ok(f(&n).cast(dt)))
}
