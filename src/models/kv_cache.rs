//! The key/value cache of a decoder and the positions its tokens sit at.
//!
//! A cache is one realized `[batch, kv_heads, max_len, head_dim]` tensor per layer for keys and
//! one for values (a static cache, as Hugging Face's `StaticCache`). A forward pass writes its
//! `t` rows at its start position with a lazy assign into those rows and attends over the
//! keys `0..start + t`. A prompt's start is a number (`Start::At`), so its kernels are
//! specialized to it; a decode step's is a bound variable (`Start::Var`, symbolic shapes): the
//! kernels take the position as an argument and loop over `start + t` keys, so every step runs
//! the same kernels and a TinyJit replay only needs the new value.

use crate::tensor::AttentionOpts;
use crate::uop::Dim;
use crate::{DType, Tensor};

/// Where the first of a forward pass's tokens sits in the sequence.
#[derive(Clone)]
pub enum Start {
    /// A position known when the graph is built (a prompt): kernels are specialized to it.
    At(usize),
    /// A bound variable (`Variable::bind`, a decode step): kernels do not depend on its value.
    Var(Dim),
}

impl Start {
    /// The start as a dimension.
    pub fn dim(&self) -> Dim {
        match self {
            Start::At(s) => Dim::Const(*s),
            Start::Var(d) => d.clone(),
        }
    }

    /// The positions of `t` tokens starting here, int32 `[t]`.
    pub fn positions(&self, t: usize) -> Tensor {
        match self {
            Start::At(s) => Tensor::arange(t).cast(DType::I32) + *s as i64,
            // `start..start + t` of an iota long enough for every value of the variable.
            Start::Var(d) => Tensor::arange(d.max() + t).shrink_dims(&[(d.clone(), d + t)]).cast(DType::I32),
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
    /// the keys and values to attend over (`0..start + t`, a symbolic length for `Start::Var`)
    /// with the mask (`[t, start + t]`, true where a query may attend: keys at or before its
    /// own position).
    pub fn update(&self, layer: usize, k: &Tensor, v: &Tensor, start: &Start) -> (Tensor, Tensor, Tensor) {
        let t = k.shape()[2];
        let (kc, vc) = (&self.keys[layer], &self.values[layer]);
        let s = start.dim();
        assert!(
            s.max() + t <= self.max_len,
            "KvCache: tokens {s:?}..{s:?}+{t} can pass the cache's {} positions",
            self.max_len
        );
        // Lazy assigns of rows s..s+t (the kernels loop over those rows only): a write through
        // a slice would realize k right away, and with it every earlier layer's lazy work,
        // again for each layer.
        // The keys and values in kernels of their own first: fused into the cache write, a
        // prompt's projections would run in the cache's layout rather than as packed matmuls.
        let (k, v) = (k.contiguous(), v.contiguous());
        let zero = Dim::Const(0);
        let sh = kc.shape();
        let rows = [
            (zero.clone(), Dim::Const(sh[0])),
            (zero.clone(), Dim::Const(sh[1])),
            (s.clone(), &s + t),
            (zero.clone(), Dim::Const(sh[3])),
        ];
        kc.assign_window(&rows, &k);
        vc.assign_window(&rows, &v);
        let n = &s + t;
        let window = |c: &Tensor| {
            let sh = c.shape();
            c.shrink_dims(&[
                (zero.clone(), Dim::Const(sh[0])),
                (zero.clone(), Dim::Const(sh[1])),
                (zero.clone(), n.clone()),
                (zero.clone(), Dim::Const(sh[3])),
            ])
        };
        let queries = start.positions(t).reshape([t, 1]);
        let keys = Tensor::arange_dim(n.clone()).reshape_dims(&[Dim::Const(1), n.clone()]);
        let mask = keys.le(&queries);
        (window(kc), window(vc), mask)
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
    start: &Start,
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
            let n = mask.sym_shape()[1].clone();
            let keys = Tensor::arange_dim(n.clone()).reshape_dims(&[Dim::Const(1), n]);
            mask.bitand((keys + w as i64).gt(&queries))
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
    let mut opts = AttentionOpts { enable_gqa: k.sym_shape()[1] != Dim::Const(s[1]), ..AttentionOpts::default() };
    match mask {
        Some(m) => opts = opts.mask(m),
        None => opts = opts.causal(),
    }
    q.scaled_dot_product_attention(k, v, &opts).transpose(1, 2).reshape([s[0], s[2], s[1] * s[3]])
}
