//! Losses: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (class weights, an ignored
//! class index, mean/sum/none reductions).

use crate::error::Result;
use crate::onnx::node::{Node, Outs};
use crate::tensor::{Idx, Tensor};
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "NegativeLogLikelihoodLoss" => (|| Ok(vec![Some(nll(node, node.input(0)?)?)]))(),
        "SoftmaxCrossEntropyLoss" => (|| {
            let log_prob = node.input(0)?.log_softmax(1);
            Ok(vec![Some(nll(node, &log_prob)?), Some(log_prob)])
        })(),
        _ => return None,
    };
    Some(r)
}

/// `-log_prob[n, target[n, ..], ..]` weighted by the target's class weight (0 for the ignored
/// index), reduced as the node says; "mean" divides by the sum of the weights.
fn nll(node: &Node, log_prob: &Tensor) -> Result<Tensor> {
    let shape = log_prob.shape();
    if shape.len() < 2 {
        return Err(node.error(format!("input must be (N, C, ...), it is {shape:?}")));
    }
    let classes = shape[1] as i64;
    let target = node.input(1)?.cast(DType::I64);
    let valid = match node.attr("ignore_index").and_then(|a| a.i) {
        Some(i) => target.ne(i),
        None => target.eq(&target),
    };
    // Ignored positions may hold any index: read class 0 there (its weight is 0).
    let safe = valid.where_(&target, 0i64).clamp(Some(0.0), Some((classes - 1) as f64));
    let picked = log_prob.gather(1, &safe.unsqueeze(1)).squeeze(1);
    let weight = match node.opt(2) {
        Some(w) => w.index(&[Idx::T(safe.clone())]),
        None => picked.ones_like(),
    };
    let weight = valid.where_(&weight, weight.zeros_like()).cast(log_prob.dtype());
    let loss = picked.neg().mul(&weight);
    Ok(match node.string("reduction", "mean")?.as_str() {
        "none" => loss,
        "sum" => loss.sum(),
        "mean" => loss.sum().div(weight.sum()),
        r => return Err(node.error(format!("reduction {r:?} is not none, sum or mean"))),
    })
}
