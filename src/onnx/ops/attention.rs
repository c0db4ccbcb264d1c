//! Attention (opset 23+): scaled dot-product attention over 3-D `(batch, seq, hidden)` inputs
//! split into heads or 4-D `(batch, heads, seq, head)` ones, with a boolean or additive mask,
//! causal and sliding-window masking aligned to the end of a KV cache (`past_key`/`past_value`
//! concatenated in front), padded keys (`nonpad_kv_seqlen`), grouped-query heads, softcap, and
//! the optional `present_*` and `qk_matmul_output` outputs. A row with every key masked gives 0.
//! RotaryEmbedding: rotary position embeddings from cos/sin caches, halves or interleaved pairs.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::onnx::value::dtype_of;
use crate::tensor::Tensor;
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    match node.op() {
        "Attention" => Some(attention(node)),
        "RotaryEmbedding" => Some(rotary(node)),
        _ => None,
    }
}

/// `(batch, seq, heads * head)` → `(batch, heads, seq, head)`.
fn split_heads(x: &Tensor, heads: usize) -> Tensor {
    let s = x.shape();
    x.reshape([s[0], s[1], heads, s[2] / heads]).permute([0, 2, 1, 3])
}

/// Where `allowed`, 0; elsewhere -inf (an additive mask in `dtype`).
fn bias_of(allowed: &Tensor, dtype: DType) -> Tensor {
    let zero = Tensor::zeros_dtype([0usize; 0], dtype);
    allowed.where_(&zero, zero.sub(f64::INFINITY))
}

fn attention(node: &Node) -> Result<Outs> {
    let (mut q, mut k, mut v) = (node.input(0)?.clone(), node.input(1)?.clone(), node.input(2)?.clone());
    let rank3 = q.ndim() == 3;
    if rank3 {
        let qh = node.int("q_num_heads", 0)?;
        let kvh = node.int("kv_num_heads", 0)?;
        if qh <= 0 || kvh <= 0 {
            return Err(node.error("3-D inputs need q_num_heads and kv_num_heads"));
        }
        (q, k, v) = (split_heads(&q, qh as usize), split_heads(&k, kvh as usize), split_heads(&v, kvh as usize));
    } else if q.ndim() != 4 {
        return Err(node.error(format!("Q must be 3-D or 4-D, it is {:?}", q.shape())));
    }
    let dt = q.dtype();
    let past = node.opt(4).map(|p| p.shape()[2]);
    if let (Some(pk), Some(pv)) = (node.opt(4), node.opt(5)) {
        k = Tensor::cat(&[pk, &k], 2);
        v = Tensor::cat(&[pv, &v], 2);
    }
    let (present_k, present_v) = (k.clone(), v.clone());
    let (batch, heads, lq, head) = (q.shape()[0], q.shape()[1], q.shape()[2], q.shape()[3]);
    let lk = k.shape()[2];
    let nonpad = node.input_ints(6)?;

    // The additive bias, (lq, lk) or (batch, 1, lq, lk).
    let mut bias = Tensor::zeros_dtype([lq, lk], dt);
    let mut mask = node.opt(3).cloned();
    if let Some(m) = &mask {
        let pad = lk as isize - *m.shape().last().unwrap_or(&0) as isize;
        if pad > 0 {
            let mut pads = vec![(0isize, 0isize); m.ndim()];
            pads[m.ndim() - 1] = (0, pad);
            let fill = if m.dtype().is_bool() { 0.0 } else { f64::NEG_INFINITY };
            mask = Some(m.pad_constant(&pads, fill));
        }
    }
    let mask = mask.map(|m| if m.dtype().is_bool() { bias_of(&m, dt) } else { m.cast(dt) });
    if let Some(m) = &mask {
        bias = bias.add(m);
    }
    let rows = Tensor::arange_dtype(0.0, lq as f64, 1.0, DType::I64).reshape([lq, 1]);
    let cols = Tensor::arange_dtype(0.0, lk as f64, 1.0, DType::I64).reshape([1, lk]);
    // A query's absolute position: after the cache, or aligned to the end of the unpadded keys.
    let position = match (&past, &nonpad) {
        (None, Some(n)) => {
            let ends: Vec<i64> = n.iter().map(|&n| n - lq as i64).collect();
            rows.reshape([1, 1, lq, 1]).add(Tensor::from_slice_on(&ends, [batch, 1, 1, 1], node.device))
        }
        _ => rows.add(past.unwrap_or(0) as i64),
    };
    if node.int("is_causal", 0)? != 0 {
        bias = bias.add(bias_of(&cols.le(&position), dt));
    }
    let (left, right) = (node.int("left_window_size", -1)?, node.int("right_window_size", -1)?);
    if left >= 0 {
        bias = bias.add(bias_of(&position.sub(&cols).le(left), dt));
    }
    if right >= 0 {
        bias = bias.add(bias_of(&cols.sub(&position).le(right), dt));
    }
    if let Some(n) = &nonpad {
        let lens = Tensor::from_slice_on(n, [batch, 1, 1, 1], node.device);
        bias = bias.add(bias_of(&cols.reshape([1, 1, 1, lk]).lt(&lens), dt));
    }

    let kv_heads = k.shape()[1];
    if kv_heads != heads {
        if heads % kv_heads != 0 {
            return Err(node.error(format!("{heads} query heads do not group over {kv_heads} key heads")));
        }
        k = k.repeat_interleave(heads / kv_heads, Some(1));
        v = v.repeat_interleave(heads / kv_heads, Some(1));
    }
    let scale = match node.attr("scale").and_then(|a| a.f) {
        Some(s) => f64::from(s),
        None => 1.0 / (head as f64).sqrt(),
    };
    let root = scale.sqrt();
    let mut qk = q.mul(root).matmul(&k.transpose(2, 3).mul(root));
    let softcap = node.float("softcap", 0.0)?;
    if softcap > 0.0 {
        qk = qk.div(softcap).tanh().mul(softcap);
    }
    let with_bias = qk.add(&bias);
    let precision = match node.attr("softmax_precision").and_then(|a| a.i) {
        Some(code) => dtype_of(code as i32).ok_or_else(|| node.error(format!("softmax_precision {code}")))?,
        None => dt,
    };
    let scores = with_bias.cast(precision);
    // A softmax that leaves rows whose every key is masked at 0 (not NaN).
    let top = scores.max_with(-1, true);
    let top = top.eq(f64::NEG_INFINITY).where_(top.zeros_like(), &top);
    let e = scores.sub(top).exp();
    let sum = e.sum_with(-1, true);
    let mut probs = e.div(sum.eq(0.0).where_(sum.ones_like(), &sum));
    let all_masked = bias.max_with(-1, true).eq(f64::NEG_INFINITY);
    probs = all_masked.where_(probs.zeros_like(), &probs).cast(dt);
    let qk_out = match node.int("qk_matmul_output_mode", 0)? {
        0 | 1 => qk,
        2 => with_bias,
        3 => probs.clone(),
        m => return Err(node.error(format!("qk_matmul_output_mode {m}"))),
    };
    let mut y = probs.matmul(&v);
    if rank3 {
        let s = y.shape();
        y = y.permute([0, 2, 1, 3]).reshape([s[0], s[2], s[1] * s[3]]);
    }
    Ok(vec![Some(y), Some(present_k), Some(present_v), Some(qk_out.cast(dt))])
}

/// Rotates the first `rotary_embedding_dim` features of each head by the cached angles of each
/// position (`position_ids` index the caches; without them the caches are per position already).
fn rotary(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let (cos, sin) = (node.input(1)?, node.input(2)?);
    let shape = x.shape();
    // (batch, seq, heads, head) in every case.
    let x4 = match shape.len() {
        4 => x.permute([0, 2, 1, 3]),
        3 => {
            let heads = node.int("num_heads", 0)?;
            if heads <= 0 {
                return Err(node.error("3-D input needs num_heads"));
            }
            x.reshape([shape[0], shape[1], heads as usize, shape[2] / heads as usize])
        }
        _ => return Err(node.error(format!("input must be 3-D or 4-D, it is {shape:?}"))),
    };
    let head = x4.shape()[3];
    let dim = match node.int("rotary_embedding_dim", 0)? {
        0 => head,
        d => d as usize,
    };
    let (cos, sin) = match node.opt(3) {
        Some(ids) => {
            (cos.index(&[crate::tensor::Idx::T(ids.clone())]), sin.index(&[crate::tensor::Idx::T(ids.clone())]))
        }
        None => (cos.clone(), sin.clone()),
    };
    if cos.shape().last() != Some(&(dim / 2)) {
        return Err(node.error(format!("cos cache {:?} does not hold {} angles", cos.shape(), dim / 2)));
    }
    let (cos, sin) = (cos.unsqueeze(-2), sin.unsqueeze(-2));
    let rotate = x4.narrow(3, 0, dim);
    let rest = x4.narrow(3, dim, head - dim);
    let interleaved = node.int("interleaved", 0)? != 0;
    let (x1, x2) = if interleaved {
        let pairs = rotate.reshape([x4.shape()[0], x4.shape()[1], x4.shape()[2], dim / 2, 2]);
        (pairs.narrow(4, 0, 1).squeeze(4), pairs.narrow(4, 1, 1).squeeze(4))
    } else {
        (rotate.narrow(3, 0, dim / 2), rotate.narrow(3, dim / 2, dim / 2))
    };
    let real = cos.mul(&x1).sub(sin.mul(&x2));
    let imag = sin.mul(&x1).add(cos.mul(&x2));
    let rotated = if interleaved {
        Tensor::stack(&[&real, &imag], -1).reshape(rotate.shape())
    } else {
        Tensor::cat(&[&real, &imag], -1)
    };
    let y = Tensor::cat(&[&rotated, &rest], -1);
    one(Ok(if shape.len() == 4 { y.permute([0, 2, 1, 3]) } else { y.reshape(shape) }))
}
