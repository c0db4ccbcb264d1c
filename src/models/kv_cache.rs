//! The key/value cache of a decoder and the positions its tokens sit at.
//!
//! A cache is one realized `[batch, kv_heads, max_len, head_dim]` tensor per layer for keys and
//! one for values (a static cache, as Hugging Face's `StaticCache`). A prompt (`Start::At`)
//! writes its rows at positions fixed when the graph is built and attends over the filled
//! part. A decode step
//! (`Start::In`) takes its position from a tensor: it writes its row where the position
//! matches and attends over the whole cache with the rows past it masked, so every step runs
//! the same kernels and a TinyJit replay only needs the new position's value.

use crate::tensor::AttentionOpts;
use crate::{DType, Tensor};

/// Where the first of a forward pass's tokens sits in the sequence.
#[derive(Clone, Copy)]
pub enum Start<'a> {
    /// A position known when the graph is built (a prompt): kernels are specialized to it.
    At(usize),
    /// A position held in an int32 tensor of shape `[1]` (one decoded token): kernels do not
    /// depend on its value.
    In(&'a Tensor),
}

impl Start<'_> {
    /// The positions of `t` tokens starting here, int32 `[t]`.
    pub fn positions(&self, t: usize) -> Tensor {
        match self {
            Start::At(s) => Tensor::arange(t).cast(DType::I32) + *s as i64,
            Start::In(p) => {
                assert_eq!(t, 1, "Start::In: a position tensor places one token (got {t})");
                assert_eq!(p.shape(), vec![1], "Start::In: the position is an int32 tensor of shape [1]");
                p.cast(DType::I32)
            }
        }
    }
}

/// Per-layer key and value tensors `[batch, kv_heads, max_len, head_dim]`.
pub struct KvCache {
    pub keys: Vec<Tensor>,
    pub values: Vec<Tensor>,
    pub max_len: usize,
}

impl KvCache {
    /// A zeroed cache (realized, so the assigns write into its buffers).
    pub fn new(layers: usize, batch: usize, kv_heads: usize, max_len: usize, head_dim: usize) -> KvCache {
        let zeros = || {
            Tensor::from_vec(vec![0f32; batch * kv_heads * max_len * head_dim], [batch, kv_heads, max_len, head_dim])
        };
        KvCache {
            keys: (0..layers).map(|_| zeros()).collect(),
            values: (0..layers).map(|_| zeros()).collect(),
            max_len,
        }
    }

    /// Stores `k` and `v` (`[batch, kv_heads, t, head_dim]`) of `layer` at `start` and returns
    /// the keys and values to attend over with the mask (`[t, keys]`, true where a query may
    /// attend: keys at or before its own position).
    pub fn update(&self, layer: usize, k: &Tensor, v: &Tensor, start: Start) -> (Tensor, Tensor, Tensor) {
        let t = k.shape()[2];
        let (kc, vc) = (&self.keys[layer], &self.values[layer]);
        match start {
            Start::At(s) => {
                assert!(
                    s + t <= self.max_len,
                    "KvCache: tokens {s}..{} do not fit a cache of {} positions",
                    s + t,
                    self.max_len
                );
                let window = |c: &Tensor, a: usize, b: usize| {
                    let sh = c.shape();
                    c.shrink(&[(0, sh[0]), (0, sh[1]), (a, b), (0, sh[3])])
                };
                // A lazy assign of the whole cache (rows s..s+t from k, the rest kept), not a
                // write through a slice: that would realize k right away, and with it every
                // earlier layer's lazy work, again for each layer.
                // The keys and values in kernels of their own first: fused into the cache
                // write, their projections would run over the cache's padded layout (28 GFLOP/s
                // instead of a packed matmul's 230 at 512 tokens).
                let (k, v) = (&k.contiguous(), &v.contiguous());
                let slots = Tensor::arange(self.max_len).cast(DType::I32);
                let rows = slots.ge(s as i64).bitand(slots.lt((s + t) as i64)).reshape([1, 1, self.max_len, 1]);
                let spread = |x: &Tensor| x.pad(&[(0, 0), (0, 0), (s, self.max_len - s - t), (0, 0)]);
                kc.assign(rows.where_(spread(k), kc));
                vc.assign(rows.where_(spread(v), vc));
                let queries = (Tensor::arange(t).cast(DType::I32) + s as i64).reshape([t, 1]);
                let mask = Tensor::arange(s + t).cast(DType::I32).reshape([1, s + t]).le(&queries);
                (window(kc, 0, s + t), window(vc, 0, s + t), mask)
            }
            Start::In(p) => {
                assert_eq!(t, 1, "KvCache: a position tensor places one token (got {t})");
                let slots = Tensor::arange(self.max_len).cast(DType::I32);
                let pos = Start::In(p).positions(1);
                let here = slots.eq(&pos).reshape([1, 1, self.max_len, 1]);
                kc.assign(here.where_(k, kc));
                vc.assign(here.where_(v, vc));
                let mask = slots.le(&pos).reshape([1, self.max_len]);
                (kc.clone(), vc.clone(), mask)
            }
        }
    }
}

/// A decoder layer's attention of `q` over this step's `k`/`v`: through `layer`'s slot of
/// `cache` (which stores them) when there is one, else causal over the tokens alone (which
/// must then start at 0). With a sliding `window` (Mistral's), a query also ignores keys `window`
/// or more positions behind it. Returns `[batch, t, heads * head_dim]`.
pub fn self_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    start: Start,
    cache: Option<&KvCache>,
    layer: usize,
    window: Option<usize>,
) -> Tensor {
    let t = q.shape()[2];
    // `mask` (`[t, keys]`, keys at positions 0..) narrowed to the keys each query at `start`'s
    // positions sees within the window.
    let within = |mask: Tensor| match window {
        Some(w) => {
            let queries = start.positions(t).reshape([t, 1]);
            let n = mask.shape()[1];
            mask.bitand((Tensor::arange(n).cast(DType::I32) + w as i64).reshape([1, n]).gt(&queries))
        }
        None => mask,
    };
    match cache {
        Some(cache) => {
            let (keys, values, mask) = cache.update(layer, k, v, start);
            attend(q, &keys, &values, Some(&within(mask)))
        }
        None => {
            assert!(matches!(start, Start::At(0)), "self_attention: without a cache the tokens start at 0");
            match window {
                Some(_) => {
                    let positions = Tensor::arange(t).cast(DType::I32);
                    let causal = positions.reshape([1, t]).le(positions.reshape([t, 1]));
                    attend(q, k, v, Some(&within(causal)))
                }
                None => attend(q, k, v, None),
            }
        }
    }
}

/// Attention of `q` (`[batch, heads, t, head_dim]`) over `k`/`v` (`[batch, kv_heads, s,
/// head_dim]`, grouped when there are fewer kv heads) with a bool `mask` (`[t, s]`), or causal
/// when there is none; returns `[batch, t, heads * head_dim]`.
pub fn attend(q: &Tensor, k: &Tensor, v: &Tensor, mask: Option<&Tensor>) -> Tensor {
    let s = q.shape();
    let mut opts = AttentionOpts { enable_gqa: k.shape()[1] != s[1], ..AttentionOpts::default() };
    match mask {
        Some(m) => opts = opts.mask(m),
        None => opts = opts.causal(),
    }
    q.scaled_dot_product_attention(k, v, &opts).transpose(1, 2).reshape([s[0], s[2], s[1] * s[3]])
}
