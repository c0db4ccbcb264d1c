//! Scaled dot-product attention, as `torch.nn.functional.scaled_dot_product_attention`:
//! `softmax(q @ kᵀ * scale + mask) @ v` over the last two axes, leading (batch, head) axes
//! broadcast, any query and key lengths.

use super::Tensor;
use crate::uop::DType;

/// Options of [`Tensor::scaled_dot_product_attention`] (PyTorch's keyword arguments).
#[derive(Clone, Default)]
pub struct AttentionOpts {
    /// A bool mask (true: the query may attend to the key) or a float mask added to the
    /// scores; broadcast to `[..., L, S]`.
    pub mask: Option<Tensor>,
    /// Probability of dropping an attention weight (applied whenever it is above 0, as in
    /// PyTorch's functional form; reproducible under `Tensor::manual_seed`).
    pub dropout_p: f64,
    /// Query `i` attends to keys `j <= i` (the mask aligned top-left, as PyTorch's).
    pub is_causal: bool,
    /// Multiplies the scores (default `1 / sqrt(E)`).
    pub scale: Option<f64>,
    /// Grouped-query attention: `k` and `v` have fewer heads (axis -3) than `q`, each shared
    /// by a group of query heads.
    pub enable_gqa: bool,
}

impl AttentionOpts {
    pub fn mask(mut self, mask: &Tensor) -> Self {
        self.mask = Some(mask.clone());
        self
    }
    pub fn dropout(mut self, p: f64) -> Self {
        self.dropout_p = p;
        self
    }
    pub fn causal(mut self) -> Self {
        self.is_causal = true;
        self
    }
    pub fn scale(mut self, scale: f64) -> Self {
        self.scale = Some(scale);
        self
    }
    pub fn gqa(mut self) -> Self {
        self.enable_gqa = true;
        self
    }
}

impl Tensor {
    /// Attention of queries `self` `[..., L, E]` over keys `k` `[..., S, E]` and values `v`
    /// `[..., S, Ev]`: `[..., L, Ev]`. A row whose keys are all masked out is NaN (as PyTorch's).
    pub fn scaled_dot_product_attention(&self, k: &Tensor, v: &Tensor, opts: &AttentionOpts) -> Tensor {
        let (qs, ks, vs) = (self.sym_shape(), k.sym_shape(), v.sym_shape());
        let fail = |why: &str| -> ! { panic!("scaled_dot_product_attention: {why} (q {qs:?}, k {ks:?}, v {vs:?})") };
        if qs.len() < 2 || ks.len() < 2 || vs.len() < 2 {
            fail("q, k and v need at least 2 axes");
        }
        let (l, e) = (qs[qs.len() - 2].clone(), qs[qs.len() - 1].clone());
        let s = ks[ks.len() - 2].clone();
        if ks[ks.len() - 1] != e || vs[vs.len() - 2] != s {
            fail("k must be [..., S, E] and v [..., S, Ev] for q [..., L, E]");
        }
        if opts.is_causal && opts.mask.is_some() {
            fail("is_causal and a mask cannot be given together");
        }
        let (Some(l), Some(e)) = (l.as_const(), e.as_const()) else {
            fail("the query length and the feature size must be numbers (the key length may be symbolic)")
        };
        let s_const = s.as_const();
        if opts.is_causal && s_const.is_none() {
            fail("is_causal needs a numeric key length; with a symbolic one (a KV cache) pass the mask");
        }
        let (k, v) = if opts.enable_gqa && qs.len() >= 3 && ks.len() >= 3 {
            let (hq, hk) = (qs[qs.len() - 3].max(), ks[ks.len() - 3].max());
            if hk == 0 || hq % hk != 0 {
                fail("with enable_gqa the query heads must be a multiple of the key heads");
            }
            (k.repeat_interleave(hq / hk, Some(-3)), v.repeat_interleave(hq / hk, Some(-3)))
        } else {
            (k.clone(), v.clone())
        };
        let scale = opts.scale.unwrap_or(1.0 / (e as f64).sqrt());
        let q = self.float();
        let mut scores = q.matmul(&k.float().transpose(-1, -2)).mul(scale);
        let dev = q.device();
        if let (true, Some(s)) = (opts.is_causal, s_const) {
            let (i, j) = (Tensor::iota(l, DType::I32, &dev), Tensor::iota(s, DType::I32, &dev));
            // One comparison per score (`j <= i` would be two and an `or`): the weights'
            // recompute cost decides whether they are materialized (`schedule::fused_cost`).
            let future = i.reshape([l, 1]).lt(j.reshape([1, s]));
            scores = scores.masked_fill(&future, f64::NEG_INFINITY);
        }
        if let Some(mask) = &opts.mask {
            scores = if mask.dtype().is_bool() {
                mask.where_(&scores, f64::NEG_INFINITY)
            } else {
                scores.add(mask.cast(scores.dtype()))
            };
        }
        if opts.dropout_p == 0.0 && scores.dtype() == DType::F32 {
            // The softmax normalized after the product, `(exp(s - max) @ v) / sum(exp(s - max))`:
            // the exp is computed once (one kernel, read by the sum and the product) and the
            // division happens where the product stores, so the normalized weights are never
            // written.
            let e = scores.sub(scores.max_keepdim(-1).detach()).exp();
            return e.matmul(&v.float()).div(e.sum_keepdim(-1));
        }
        let mut weights = scores.softmax(-1);
        if opts.dropout_p > 0.0 {
            let p = opts.dropout_p;
            assert!(p <= 1.0, "scaled_dot_product_attention: dropout_p {p} is not in [0, 1]");
            let keep = Tensor::rand_on(weights.shape(), &dev).ge(p);
            weights = keep.where_(weights.mul(if p < 1.0 { 1.0 / (1.0 - p) } else { 0.0 }), 0.0);
        }
        weights.matmul(&v.float().cast(weights.dtype()))
    }
}
