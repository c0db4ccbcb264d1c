//! Text generation with a causal language model: a prompt pass that fills the KV cache, then
//! one token per step (optionally under TinyJit), sampled greedily or with temperature, top-k
//! and top-p on the host from the step's logits.

use super::kv_cache::{KvCache, Start};
use crate::error::Result;
use crate::tensor::no_grad;
use crate::{DType, Dim, Tensor, TinyJit, Variable};
use std::rc::Rc;
use std::time::Instant;

/// A decoder that maps tokens to next-token logits.
pub trait CausalLm {
    /// The last hidden states `[batch, t, width]` (after the final norm) of `tokens`
    /// (`[batch, t]`, integer) that sit at `start`, reading and extending `cache` (without one
    /// the tokens must start at 0).
    fn hidden(&self, tokens: &Tensor, start: Start, cache: Option<&KvCache>) -> Tensor;
    /// Next-token logits `[.., vocab]` of hidden states `[.., width]`.
    fn logits(&self, hidden: &Tensor) -> Tensor;
    /// Logits `[batch, t, vocab]` of every token.
    fn forward(&self, tokens: &Tensor, start: Start, cache: Option<&KvCache>) -> Tensor {
        self.logits(&self.hidden(tokens, start, cache))
    }
    /// Logits `[batch, vocab]` of the last token only (what generation needs: the output
    /// projection runs on one row).
    fn forward_last(&self, tokens: &Tensor, start: Start, cache: Option<&KvCache>) -> Tensor {
        let h = self.hidden(tokens, start, cache);
        let s = h.shape();
        self.logits(&h.shrink(&[(0, s[0]), (s[1] - 1, s[1]), (0, s[2])]).reshape([s[0], s[2]]))
    }
    /// An empty cache for `batch` sequences of up to `max_len` tokens.
    fn new_cache(&self, batch: usize, max_len: usize) -> KvCache;
    /// The longest sequence the model's positions cover.
    fn max_positions(&self) -> usize;
}

/// How the next token is chosen from the logits.
#[derive(Clone, Debug)]
pub struct Sampling {
    /// 0 picks the most likely token (greedy); otherwise logits are divided by it.
    pub temperature: f64,
    /// Keep only the `top_k` most likely tokens (0: all).
    pub top_k: usize,
    /// Keep the most likely tokens whose probabilities sum to `top_p` (1: all).
    pub top_p: f64,
    /// Seed of the host generator that draws the samples.
    pub seed: u64,
}

impl Sampling {
    pub fn greedy() -> Sampling {
        Sampling { temperature: 0.0, top_k: 0, top_p: 1.0, seed: 0 }
    }
}

/// How tokens are generated.
#[derive(Clone, Debug)]
pub struct GenerateOpts {
    pub sampling: Sampling,
    /// Keep keys and values in a KV cache (otherwise every step recomputes the whole sequence,
    /// padded to its final length so each step runs the same kernels).
    pub kv_cache: bool,
    /// Run each decode step under TinyJit (with the KV cache).
    pub jit: bool,
}

impl Default for GenerateOpts {
    fn default() -> GenerateOpts {
        GenerateOpts { sampling: Sampling::greedy(), kv_cache: true, jit: true }
    }
}

/// The new tokens and how long they took.
pub struct Generated {
    pub tokens: Vec<u32>,
    /// Seconds from the call to the first new token (the prompt pass and its sampling).
    pub first_token_s: f64,
    /// Seconds for the later tokens.
    pub decode_s: f64,
    /// Kernels one decode step replays (with TinyJit, once captured).
    pub kernels_per_step: Option<usize>,
    /// Seconds a replayed step spends outside its kernels, per kernel (measured on the last
    /// step, with TinyJit).
    pub replay_overhead_s: Option<f64>,
}

/// A small deterministic generator for sampling (SplitMix64).
struct HostRng(u64);

impl HostRng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The index of the largest logit (the first one on ties, as `torch.argmax`).
pub fn argmax(logits: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &l) in logits.iter().enumerate() {
        if l > logits[best] {
            best = i;
        }
    }
    best as u32
}

/// Draws a token from `logits` as `sampling` says.
fn sample(logits: &[f32], sampling: &Sampling, rng: &mut HostRng) -> u32 {
    if sampling.temperature <= 0.0 {
        return argmax(logits);
    }
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
    if sampling.top_k > 0 {
        order.truncate(sampling.top_k);
    }
    let top = logits[order[0]] as f64;
    let mut probs: Vec<f64> = order.iter().map(|&i| ((logits[i] as f64 - top) / sampling.temperature).exp()).collect();
    let total: f64 = probs.iter().sum();
    probs.iter_mut().for_each(|p| *p /= total);
    if sampling.top_p < 1.0 {
        // Keep tokens until their mass reaches top_p (always at least the first).
        let mut mass = 0.0;
        let keep = probs.iter().take_while(|&&p| {
            let before = mass;
            mass += p;
            before < sampling.top_p
        });
        let n = keep.count().max(1);
        probs.truncate(n);
        order.truncate(n);
    }
    let total: f64 = probs.iter().sum();
    let mut u = rng.uniform() * total;
    for (p, &i) in probs.iter().zip(&order) {
        if u < *p {
            return i as u32;
        }
        u -= p;
    }
    order[order.len() - 1] as u32
}

fn ids_tensor(ids: &[u32]) -> Tensor {
    Tensor::from_vec(ids.iter().map(|&t| t as i32).collect::<Vec<_>>(), [1, ids.len()])
}

/// Generates `n` tokens after `prompt` (one sequence), calling `on_token` with each as it comes.
pub fn generate<M: CausalLm + ?Sized + 'static>(
    model: &Rc<M>,
    prompt: &[u32],
    n: usize,
    opts: &GenerateOpts,
    mut on_token: impl FnMut(u32),
) -> Result<Generated> {
    assert!(!prompt.is_empty(), "generate: the prompt is empty");
    let total = prompt.len() + n;
    assert!(
        total <= model.max_positions(),
        "generate: {} prompt tokens + {n} new ones is more than the model's {} positions",
        prompt.len(),
        model.max_positions()
    );
    let mut rng = HostRng(opts.sampling.seed);
    let start = Instant::now();
    let mut tokens = prompt.to_vec();
    let mut first_token_s = 0.0;
    if !opts.kv_cache {
        // Every step runs the whole sequence padded to `total` tokens (the causal mask keeps the
        // padding out of earlier positions), so every step runs the same kernels.
        for step in 0..n {
            let mut padded = tokens.clone();
            padded.resize(total, 0);
            let row = tokens.len() - 1;
            let last = no_grad(|| {
                let h = model.hidden(&ids_tensor(&padded), Start::At(0), None);
                let w = h.shape()[2];
                model.logits(&h.shrink(&[(0, 1), (row, row + 1), (0, w)]).reshape([1, w]))
            });
            let last = last.cast(DType::F32).to_vec::<f32>()?;
            let next = sample(&last, &opts.sampling, &mut rng);
            tokens.push(next);
            on_token(next);
            if step == 0 {
                first_token_s = start.elapsed().as_secs_f64();
            }
        }
        return Ok(Generated {
            tokens: tokens[prompt.len()..].to_vec(),
            first_token_s,
            decode_s: start.elapsed().as_secs_f64() - first_token_s,
            kernels_per_step: None,
            replay_overhead_s: None,
        });
    }

    let cache = Rc::new(model.new_cache(1, total));
    let logits = no_grad(|| model.forward_last(&ids_tensor(prompt), Start::At(0), Some(&cache)));
    let v = logits.shape()[1];
    let last = logits.cast(DType::F32).to_vec::<f32>()?;
    let mut next = sample(&last, &opts.sampling, &mut rng);
    tokens.push(next);
    on_token(next);
    first_token_s = start.elapsed().as_secs_f64();

    let (m, c) = (model.clone(), cache.clone());
    // The position is a variable: every step runs the same kernels (attending over `pos + 1`
    // keys), and a replay launches them with the new value.
    let start_pos = Variable::new("start_pos", 0, total as i64 - 1);
    let step = move |inputs: &[Tensor], vars: &[Dim]| -> Vec<Tensor> {
        no_grad(|| {
            let logits = m.forward_last(&inputs[0], Start::Var(vars[0].clone()), Some(&c));
            vec![logits.reshape([v]).contiguous()]
        })
    };
    let mut jit = opts.jit.then(|| TinyJit::with_vars(step.clone()));
    let mut replay_overhead_s = None;
    for i in 1..n {
        let token = Tensor::from_vec(vec![next as i32], [1, 1]);
        let pos = start_pos.bind((tokens.len() - 1) as i64);
        let out = match jit.as_mut() {
            // The last step of a long enough run is a replay: time it against its kernels.
            Some(j) if i == n - 1 && i >= 4 => {
                let began = Instant::now();
                let (out, runs) = crate::engine::record_kernels(|| j.call_vars(&[&token], &[pos]));
                let outside = began.elapsed().as_secs_f64() - runs.iter().map(|r| r.seconds).sum::<f64>();
                replay_overhead_s = Some(outside.max(0.0) / runs.len().max(1) as f64);
                out?
            }
            Some(j) => j.call_vars(&[&token], &[pos])?,
            None => step(&[token], &[pos]),
        };
        let last = out[0].cast(DType::F32).to_vec::<f32>()?;
        next = sample(&last, &opts.sampling, &mut rng);
        tokens.push(next);
        on_token(next);
    }
    Ok(Generated {
        tokens: tokens[prompt.len()..].to_vec(),
        first_token_s,
        decode_s: start.elapsed().as_secs_f64() - first_token_s,
        kernels_per_step: jit.as_ref().and_then(|j| j.captured_len()),
        replay_overhead_s,
    })
}
