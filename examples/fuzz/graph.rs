//! The fuzzer's graphs: a small SSA program of tensor ops (each node names its sources by
//! index), the random generator that writes them, shape and dtype inference, and a printer
//! that shows a graph as the ferrograd calls it stands for.

use std::fmt::Write;

/// xorshift64*: the fuzzer's own generator (graphs and input data), independent of ferrograd's.
#[derive(Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03 | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dt {
    F32,
    F16,
    BF16,
    I32,
    I64,
    U8,
    U32,
    Bool,
}

impl Dt {
    pub fn is_float(self) -> bool {
        matches!(self, Dt::F32 | Dt::F16 | Dt::BF16)
    }
    pub fn is_int(self) -> bool {
        matches!(self, Dt::I32 | Dt::I64 | Dt::U8 | Dt::U32)
    }
    pub fn dtype(self) -> ferrograd::DType {
        use ferrograd::DType;
        match self {
            Dt::F32 => DType::F32,
            Dt::F16 => DType::F16,
            Dt::BF16 => DType::BF16,
            Dt::I32 => DType::I32,
            Dt::I64 => DType::I64,
            Dt::U8 => DType::U8,
            Dt::U32 => DType::U32,
            Dt::Bool => DType::BOOL,
        }
    }
    /// The dtype ferrograd sums this dtype into: small ints widen to 32 bits, bools count as
    /// int32.
    pub fn sum_dtype(self) -> Dt {
        match self {
            Dt::U8 => Dt::U32,
            Dt::Bool => Dt::I32,
            d => d,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Un {
    Neg,
    Exp,
    Log,
    Sqrt,
    Sin,
    Recip,
    Relu,
    Abs,
    Floor,
    Trunc,
    Square,
    Sigmoid,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Lt,
    Eq,
    Ne,
    And,
    Or,
    Xor,
}

impl Bin {
    pub fn is_comparison(self) -> bool {
        matches!(self, Bin::Lt | Bin::Eq | Bin::Ne)
    }
}

/// Float functions composed of the primitives (the op surface beyond tinygrad's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fun {
    Atan,
    Asin,
    Acos,
    Tan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Expm1,
    Log1p,
}

/// Float functions of two tensors, broadcast.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fun2 {
    Atan2,
    Logaddexp,
    Copysign,
}

/// The functional norms (no weight or bias): over the last axis (`Layer`, `Rms`), the spatial
/// axes of `(N, C, ...)` (`Instance`), all but the channels (`Batch`, training statistics), or
/// groups of channels with their spatial axes (`Group(groups)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormKind {
    Layer,
    Rms,
    Instance,
    Batch,
    Group(usize),
}

/// What the fuzzer checks of a matrix decomposition: quantities a correct one determines
/// whatever its sign choices and however ill-conditioned the matrix (the factors themselves
/// are not unique, or not well-conditioned, for many inputs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decomp {
    /// `q · r` of `qr` (the input again).
    QrProduct,
    /// `qᵀ q` of `qr` (the identity).
    QrGram,
    /// `s` of `svd`.
    SvdValues,
    /// `u · diag(s) · vᵀ` of `svd` (the input again).
    SvdProduct,
    /// `fᵀ f` of the factor the rotations build (`v` when `m >= n`, else `u`): the identity.
    SvdGram,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Red {
    Sum,
    Max,
    Min,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Input data, generated from `seed` (`special`: with zeros, infinities, NaNs, extremes).
    Input {
        seed: u64,
        special: bool,
    },
    Unary(Un),
    /// Two tensors, broadcast against each other.
    Binary(Bin),
    /// `x op c`.
    Scalar(Bin, f64),
    /// `cond.where_(a, b)`, broadcast.
    Where,
    Cast(Dt),
    /// Integer `div_floor` (or `remainder`) by a constant.
    IntDiv {
        divisor: i64,
        remainder: bool,
    },
    Reshape(Vec<usize>),
    Permute(Vec<usize>),
    Pad(Vec<(usize, usize)>),
    /// `(start, end)` per axis.
    Shrink(Vec<(usize, usize)>),
    /// `Pad` built with symbolic offsets: each padded axis's `before` is a `Variable` over
    /// `0..=before + after` bound to `before` (so one kernel would serve every placement).
    SymPad(Vec<(usize, usize)>),
    /// `Shrink` built with symbolic starts: a `Variable` over every start the window fits at,
    /// bound to `start`.
    SymShrink(Vec<(usize, usize)>),
    Flip(Vec<usize>),
    Expand(Vec<usize>),
    /// Reduce over axes, keeping them as size 1 or not.
    Reduce(Red, Vec<usize>, bool),
    Cumsum(usize),
    Matmul,
    Conv2d {
        stride: usize,
        padding: usize,
    },
    Contiguous,
    Func(Fun),
    Func2(Fun2),
    /// Sorted values along `axis` (`k`: the `k` largest, as `topk`), or with `indices` the
    /// stable `argsort` (int64).
    Sort {
        axis: usize,
        descending: bool,
        k: Option<usize>,
        indices: bool,
    },
    Softmax {
        axis: usize,
        log: bool,
    },
    /// `unfold(axis, size, step)`: windows along `axis`, a new last axis of `size`.
    Unfold {
        axis: usize,
        size: usize,
        step: usize,
    },
    /// The diagonal of the last two axes, shifted by `offset`.
    Diagonal(isize),
    /// `diag(offset)` of a 1-D tensor: the square matrix with it on that diagonal.
    Diag(isize),
    /// A functional norm (eps 1e-5; 1e-6 for `Rms`).
    Norm(NormKind),
    /// `q.scaled_dot_product_attention(k, v)`: q `[.., L, D]`, k `[.., S, D]`, v `[.., S, Dv]`.
    Attention {
        causal: bool,
    },
    /// `max_pool2d_with_indices(kernel, stride)` of `[.., H, W]`: the values, or the indices
    /// into each `H * W` plane (int64).
    MaxPool {
        kernel: usize,
        stride: usize,
        indices: bool,
    },
    /// A check of `qr` or `svd` of the f32 matrices in the last two axes.
    Decomp(Decomp),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub op: Op,
    pub src: Vec<usize>,
    pub shape: Vec<usize>,
    pub dt: Dt,
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub outputs: Vec<usize>,
}

/// NumPy broadcasting.
pub fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let pad = |s: &[usize]| -> Vec<usize> { std::iter::repeat_n(1, n - s.len()).chain(s.iter().copied()).collect() };
    pad(a)
        .iter()
        .zip(pad(b))
        .map(|(&x, y)| match (x, y) {
            _ if x == y => Some(x),
            (1, _) => Some(y),
            (_, 1) => Some(x),
            _ => None,
        })
        .collect()
}

/// Shape and dtype of `op` applied to sources of these shapes and dtypes; `None` where the op
/// does not apply (the generator and the minimizer only build graphs that pass this).
pub fn infer(op: &Op, src: &[(&[usize], Dt)]) -> Option<(Vec<usize>, Dt)> {
    let s0 = || src[0].0.to_vec();
    let d0 = || src[0].1;
    match op {
        Op::Input { .. } => None,
        Op::Unary(u) => {
            let dt = d0();
            let ok = match u {
                Un::Not => dt == Dt::Bool,
                Un::Neg | Un::Abs | Un::Square | Un::Relu => dt != Dt::Bool,
                Un::Floor | Un::Trunc => dt.is_float() || dt.is_int(),
                _ => dt.is_float(),
            };
            ok.then(|| (s0(), dt))
        }
        Op::Binary(b) => {
            let (a, c) = (src[0], src[1]);
            if a.1 != c.1 || !bin_applies(*b, a.1) {
                return None;
            }
            let shape = broadcast(a.0, c.0)?;
            Some((shape, if b.is_comparison() { Dt::Bool } else { a.1 }))
        }
        Op::Scalar(b, _) => {
            let dt = d0();
            (bin_applies(*b, dt) && dt != Dt::Bool).then(|| (s0(), if b.is_comparison() { Dt::Bool } else { dt }))
        }
        Op::Where => {
            let (c, a, b) = (src[0], src[1], src[2]);
            if c.1 != Dt::Bool || a.1 != b.1 {
                return None;
            }
            Some((broadcast(&broadcast(c.0, a.0)?, b.0)?, a.1))
        }
        Op::Cast(dt) => Some((s0(), *dt)),
        Op::IntDiv { divisor, .. } => (d0().is_int() && *divisor != 0).then(|| (s0(), d0())),
        Op::Reshape(new) => {
            (new.iter().product::<usize>() == src[0].0.iter().product::<usize>()).then(|| (new.clone(), d0()))
        }
        Op::Permute(order) => {
            let s = s0();
            let mut sorted = order.clone();
            sorted.sort_unstable();
            (sorted == (0..s.len()).collect::<Vec<_>>()).then(|| (order.iter().map(|&i| s[i]).collect(), d0()))
        }
        Op::Pad(p) | Op::SymPad(p) => {
            (p.len() == src[0].0.len()).then(|| (s0().iter().zip(p).map(|(d, (a, b))| d + a + b).collect(), d0()))
        }
        Op::Shrink(r) | Op::SymShrink(r) => {
            let s = s0();
            let ok = r.len() == s.len() && r.iter().zip(&s).all(|((a, b), d)| a <= b && b <= d);
            ok.then(|| (r.iter().map(|(a, b)| b - a).collect(), d0()))
        }
        Op::Flip(axes) => axes.iter().all(|&a| a < src[0].0.len()).then(|| (s0(), d0())),
        Op::Expand(new) => {
            let s = s0();
            let ok = new.len() == s.len() && s.iter().zip(new).all(|(a, b)| a == b || *a == 1);
            ok.then(|| (new.clone(), d0()))
        }
        Op::Reduce(r, axes, keep) => {
            let s = s0();
            if axes.is_empty() || axes.iter().any(|&a| a >= s.len()) {
                return None;
            }
            let dt = match r {
                Red::Sum => d0().sum_dtype(),
                _ => d0(),
            };
            let shape = if *keep {
                s.iter().enumerate().map(|(i, &d)| if axes.contains(&i) { 1 } else { d }).collect()
            } else {
                s.iter().enumerate().filter(|(i, _)| !axes.contains(i)).map(|(_, &d)| d).collect()
            };
            Some((shape, dt))
        }
        Op::Cumsum(axis) => {
            let dt = if d0().is_float() { d0() } else { Dt::I64 };
            (*axis < src[0].0.len()).then(|| (s0(), dt))
        }
        Op::Matmul => {
            // `b` is 2-D, or batched with `a`'s rank (each batch dim equal to `a`'s or 1).
            let (a, b) = (src[0], src[1]);
            let (ra, rb) = (a.0.len(), b.0.len());
            let batched = rb == ra && (0..ra - 2).all(|i| b.0[i] == a.0[i] || b.0[i] == 1);
            if !a.1.is_float() || a.1 != b.1 || ra < 2 || !(rb == 2 || batched) {
                return None;
            }
            let (k, k2) = (a.0[ra - 1], b.0[rb - 2]);
            (k == k2).then(|| {
                let mut shape = a.0[..ra - 1].to_vec();
                shape.push(b.0[rb - 1]);
                (shape, a.1)
            })
        }
        Op::Conv2d { stride, padding } => {
            let (x, w) = (src[0], src[1]);
            if !x.1.is_float() || x.1 != w.1 || x.0.len() != 4 || w.0.len() != 4 || x.0[1] != w.0[1] || *stride == 0 {
                return None;
            }
            let out = |n: usize, k: usize| (n + 2 * padding).checked_sub(k).map(|d| d / stride + 1);
            Some((vec![x.0[0], w.0[0], out(x.0[2], w.0[2])?, out(x.0[3], w.0[3])?], x.1))
        }
        Op::Contiguous => Some((s0(), d0())),
        Op::Func(_) => d0().is_float().then(|| (s0(), d0())),
        Op::Func2(_) => {
            let (a, c) = (src[0], src[1]);
            (a.1.is_float() && a.1 == c.1).then(|| broadcast(a.0, c.0).map(|s| (s, a.1))).flatten()
        }
        Op::Sort { axis, k, indices, .. } => {
            let mut s = s0();
            let ok =
                d0().is_float() && *axis < s.len() && k.is_none_or(|k| k <= s[*axis]) && !(*indices && k.is_some());
            if let (true, Some(k)) = (ok, k) {
                s[*axis] = *k;
            }
            ok.then_some((s, if *indices { Dt::I64 } else { d0() }))
        }
        Op::Softmax { axis, .. } => (d0().is_float() && *axis < src[0].0.len()).then(|| (s0(), d0())),
        Op::Unfold { axis, size, step } => {
            let mut s = s0();
            if *axis >= s.len() || *size == 0 || *step == 0 || *size > s[*axis] {
                return None;
            }
            s[*axis] = (s[*axis] - size) / step + 1;
            s.push(*size);
            Some((s, d0()))
        }
        Op::Diagonal(offset) => {
            let s = s0();
            let n = s.len();
            if n < 2 {
                return None;
            }
            let (r, c) = (s[n - 2] as isize, s[n - 1] as isize);
            let len = if *offset >= 0 { r.min(c - offset) } else { (r + offset).min(c) };
            (len > 0).then(|| (s[..n - 2].iter().copied().chain([len as usize]).collect(), d0()))
        }
        Op::Diag(offset) => {
            let s = s0();
            (d0().is_float() && s.len() == 1).then(|| {
                let n = s[0] + offset.unsigned_abs();
                (vec![n, n], d0())
            })
        }
        Op::Norm(kind) => {
            let s = s0();
            let ok = d0().is_float()
                && match kind {
                    NormKind::Layer | NormKind::Rms => !s.is_empty(),
                    NormKind::Instance => s.len() >= 3,
                    NormKind::Batch => s.len() >= 2,
                    NormKind::Group(g) => s.len() >= 2 && *g > 0 && s[1] % g == 0,
                };
            ok.then_some((s, d0()))
        }
        Op::Attention { .. } => {
            let (q, k, v) = (src[0], src[1], src[2]);
            let n = q.0.len();
            let ok = q.1.is_float()
                && q.1 == k.1
                && q.1 == v.1
                && n >= 2
                && k.0.len() == n
                && v.0.len() == n
                && q.0[..n - 2] == k.0[..n - 2]
                && q.0[..n - 2] == v.0[..n - 2]
                && q.0[n - 1] == k.0[n - 1]
                && k.0[n - 2] == v.0[n - 2];
            ok.then(|| (q.0[..n - 1].iter().copied().chain([v.0[n - 1]]).collect(), q.1))
        }
        Op::MaxPool { kernel, stride, indices } => {
            let s = s0();
            let n = s.len();
            if !d0().is_float() || !(3..=4).contains(&n) || *stride == 0 || *kernel == 0 {
                return None;
            }
            let out = |d: usize| (d >= *kernel).then(|| (d - kernel) / stride + 1);
            let shape = s[..n - 2].iter().copied().chain([out(s[n - 2])?, out(s[n - 1])?]).collect();
            Some((shape, if *indices { Dt::I64 } else { d0() }))
        }
        Op::Decomp(what) => {
            let s = s0();
            let n = s.len();
            if d0() != Dt::F32 || n < 2 || s[n - 2] == 0 || s[n - 1] == 0 {
                return None;
            }
            let (lead, m, c) = (&s[..n - 2], s[n - 2], s[n - 1]);
            let k = m.min(c);
            let shape = match what {
                Decomp::QrProduct | Decomp::SvdProduct => s.clone(),
                Decomp::QrGram | Decomp::SvdGram => lead.iter().copied().chain([k, k]).collect(),
                Decomp::SvdValues => lead.iter().copied().chain([k]).collect(),
            };
            Some((shape, Dt::F32))
        }
    }
}

fn bin_applies(b: Bin, dt: Dt) -> bool {
    match b {
        Bin::And | Bin::Or | Bin::Xor => !dt.is_float(),
        Bin::Div => dt.is_float(),
        Bin::Add | Bin::Sub | Bin::Mul => dt != Dt::Bool,
        _ => true,
    }
}

// ---------------------------------------------------------------- generation

/// Sizes of axes: small ones most of the time, now and then one long axis (the unroll, split
/// and vector paths of reduces over 336 or 1024 elements).
const SMALL: [usize; 10] = [1, 1, 2, 2, 3, 4, 5, 7, 8, 16];
const LONG: [usize; 3] = [64, 336, 1024];
/// Elements an input may have.
const MAX_NUMEL: usize = 4096;

struct Builder<'a> {
    rng: &'a mut Rng,
    nodes: Vec<Node>,
}

impl Builder<'_> {
    fn push(&mut self, op: Op, src: Vec<usize>) -> Option<usize> {
        let shapes: Vec<(&[usize], Dt)> =
            src.iter().map(|&i| (self.nodes[i].shape.as_slice(), self.nodes[i].dt)).collect();
        let (shape, dt) = infer(&op, &shapes)?;
        if shape.iter().product::<usize>() > 4 * MAX_NUMEL {
            return None;
        }
        self.nodes.push(Node { op, src, shape, dt });
        Some(self.nodes.len() - 1)
    }

    fn input(&mut self, shape: Vec<usize>, dt: Dt) -> usize {
        let seed = self.rng.next();
        let special = self.rng.chance(8);
        self.nodes.push(Node { op: Op::Input { seed, special }, src: vec![], shape, dt });
        self.nodes.len() - 1
    }

    fn random_dt(&mut self) -> Dt {
        let r = self.rng.below(100);
        match r {
            0..=59 => Dt::F32,
            60..=67 => Dt::F16,
            68..=74 => Dt::BF16,
            75..=85 => Dt::I32,
            86..=89 => Dt::I64,
            90..=92 => Dt::U8,
            93..=94 => Dt::U32,
            _ => Dt::Bool,
        }
    }

    fn random_shape(&mut self) -> Vec<usize> {
        let rank = self.rng.pick(&[0usize, 1, 1, 2, 2, 2, 3, 3, 4]);
        let long_axis = self.rng.chance(15).then(|| self.rng.below(rank.max(1)));
        let mut shape: Vec<usize> = (0..rank)
            .map(|i| if Some(i) == long_axis { self.rng.pick(&LONG) } else { self.rng.pick(&SMALL) })
            .collect();
        while shape.iter().product::<usize>() > MAX_NUMEL {
            let i = self.rng.below(shape.len());
            shape[i] = (shape[i] / 2).max(1);
        }
        shape
    }

    /// A shape that broadcasts with `shape`: each axis kept or 1, leading axes maybe dropped.
    fn compatible_shape(&mut self, shape: &[usize]) -> Vec<usize> {
        let drop = if shape.is_empty() {
            0
        } else {
            self.rng.below(shape.len() + 1).min(if self.rng.chance(70) { 0 } else { shape.len() })
        };
        shape[drop..].iter().map(|&d| if self.rng.chance(25) { 1 } else { d }).collect()
    }

    /// A node of the pool, recent ones more likely.
    fn pick_node(&mut self) -> usize {
        let n = self.nodes.len();
        let back = (self.rng.next().trailing_ones() as usize).min(n - 1);
        n - 1 - back
    }

    /// A node whose shape broadcasts with `shape` and has dtype `dt`, or a new input.
    fn partner(&mut self, shape: &[usize], dt: Dt) -> usize {
        let fits: Vec<usize> = (0..self.nodes.len())
            .filter(|&i| self.nodes[i].dt == dt && broadcast(&self.nodes[i].shape, shape).is_some_and(|b| b == shape))
            .collect();
        if !fits.is_empty() && self.rng.chance(50) {
            return self.rng.pick(&fits);
        }
        let s = self.compatible_shape(shape);
        self.input(s, dt)
    }

    /// `a @ keys.T` with keys stored `[batch.., m, k]` (attention's scores; a batch dim of the
    /// keys may be 1, as grouped-query heads share them). Half the time (always when `a` has
    /// no batch dim) `a` is a fresh `[batch, 16, 32]` query, so the product is large enough for
    /// the packed-panel path.
    fn keys_matmul(&mut self, a: usize, dt: Dt) -> Option<usize> {
        // A fresh query: 16 rows per batch and 128 keys of 32, the packing thresholds.
        let fresh = self.nodes[a].shape.len() < 3 || self.rng.chance(50);
        let a = if fresh {
            let batch = self.rng.pick(&[2usize, 2, 3]);
            self.input(vec![batch, 16, 32], dt)
        } else {
            a
        };
        let shape = self.nodes[a].shape.clone();
        let rank = shape.len();
        let mut keys: Vec<usize> = shape[..rank - 2].iter().map(|&d| if self.rng.chance(25) { 1 } else { d }).collect();
        let m = if fresh { 128 } else { self.rng.pick(&[32usize, 64, 128]) };
        keys.extend([m, shape[rank - 1]]);
        let keys = self.input(keys, dt);
        let mut order: Vec<usize> = (0..rank).collect();
        order.swap(rank - 2, rank - 1);
        let transposed = self.push(Op::Permute(order), vec![keys])?;
        self.push(Op::Matmul, vec![a, transposed])
    }

    fn step(&mut self) -> Option<usize> {
        let a = self.pick_node();
        let (shape, dt) = (self.nodes[a].shape.clone(), self.nodes[a].dt);
        let rank = shape.len();
        if self.rng.chance(if decomp_focus() { 50 } else { 12 }) {
            return self.composite(a);
        }
        match self.rng.below(100) {
            0..=14 => {
                let u = if dt.is_float() {
                    self.rng.pick(&[
                        Un::Neg,
                        Un::Exp,
                        Un::Log,
                        Un::Sqrt,
                        Un::Sin,
                        Un::Recip,
                        Un::Relu,
                        Un::Abs,
                        Un::Floor,
                        Un::Trunc,
                        Un::Square,
                        Un::Sigmoid,
                    ])
                } else if dt == Dt::Bool {
                    Un::Not
                } else {
                    self.rng.pick(&[Un::Neg, Un::Abs, Un::Square, Un::Relu])
                };
                self.push(Op::Unary(u), vec![a])
            }
            15..=32 => {
                let b = self.partner(&shape, dt);
                let op = self.rng.pick(&[
                    Bin::Add,
                    Bin::Sub,
                    Bin::Mul,
                    Bin::Div,
                    Bin::Max,
                    Bin::Min,
                    Bin::Lt,
                    Bin::Eq,
                    Bin::Ne,
                    Bin::And,
                    Bin::Or,
                    Bin::Xor,
                ]);
                let (x, y) = if self.rng.chance(50) { (a, b) } else { (b, a) };
                self.push(Op::Binary(op), vec![x, y])
            }
            33..=40 => {
                let op = self.rng.pick(&[
                    Bin::Add,
                    Bin::Sub,
                    Bin::Mul,
                    Bin::Div,
                    Bin::Max,
                    Bin::Min,
                    Bin::Lt,
                    Bin::And,
                    Bin::Or,
                    Bin::Xor,
                ]);
                let c = if dt.is_float() {
                    self.rng.pick(&[0.0, 0.5, -1.25, 2.0, 3.0, 0.125, -4.0])
                } else {
                    self.rng.pick(&[0.0, 1.0, -1.0, 2.0, 3.0, 7.0, -5.0])
                };
                if op == Bin::Div && c == 0.0 {
                    return None;
                }
                self.push(Op::Scalar(op, c), vec![a])
            }
            41..=45 => {
                let cond = match (0..self.nodes.len()).rev().find(|&i| self.nodes[i].dt == Dt::Bool) {
                    Some(c) if self.rng.chance(60) && broadcast(&self.nodes[c].shape, &shape).is_some() => c,
                    _ => {
                        let zero = if dt.is_float() { 0.0 } else { 1.0 };
                        if dt == Dt::Bool {
                            a
                        } else {
                            self.push(Op::Scalar(Bin::Lt, zero), vec![a])?
                        }
                    }
                };
                let b = self.partner(&shape, dt);
                self.push(Op::Where, vec![cond, a, b])
            }
            46..=52 => {
                let to = self.random_dt();
                self.push(Op::Cast(to), vec![a])
            }
            53..=55 if dt.is_int() => {
                let divisor = self.rng.pick(&[-3i64, -2, 2, 3, 7]);
                let remainder = self.rng.chance(50);
                self.push(Op::IntDiv { divisor, remainder }, vec![a])
            }
            53..=58 => {
                let numel: usize = shape.iter().product();
                let new = self.factorize(numel);
                self.push(Op::Reshape(new), vec![a])
            }
            59..=62 if rank >= 2 => {
                let mut order: Vec<usize> = (0..rank).collect();
                for i in (1..rank).rev() {
                    let j = self.rng.below(i + 1);
                    order.swap(i, j);
                }
                self.push(Op::Permute(order), vec![a])
            }
            63..=66 if rank >= 1 => {
                let pads: Vec<(usize, usize)> = (0..rank)
                    .map(|_| if self.rng.chance(50) { (self.rng.below(3), self.rng.below(3)) } else { (0, 0) })
                    .collect();
                let op = if symbolic_variant(&pads) { Op::SymPad(pads) } else { Op::Pad(pads) };
                self.push(op, vec![a])
            }
            67..=69 if rank >= 1 => {
                let r: Vec<(usize, usize)> = shape
                    .iter()
                    .map(|&d| {
                        if d <= 1 || self.rng.chance(40) {
                            (0, d)
                        } else {
                            let s = self.rng.below(d);
                            (s, s + 1 + self.rng.below(d - s))
                        }
                    })
                    .collect();
                let op = if symbolic_variant(&r) { Op::SymShrink(r) } else { Op::Shrink(r) };
                self.push(op, vec![a])
            }
            70..=71 if rank >= 1 => {
                let axes = (0..rank).filter(|_| self.rng.chance(50)).collect::<Vec<_>>();
                self.push(Op::Flip(axes), vec![a])
            }
            72..=74 if shape.contains(&1) => {
                let new = shape
                    .iter()
                    .map(|&d| if d == 1 && self.rng.chance(70) { self.rng.pick(&[2, 3, 5]) } else { d })
                    .collect();
                self.push(Op::Expand(new), vec![a])
            }
            75..=86 if rank >= 1 => {
                let red = self.rng.pick(&[Red::Sum, Red::Sum, Red::Max, Red::Min]);
                let mut axes: Vec<usize> = (0..rank).filter(|_| self.rng.chance(50)).collect();
                if axes.is_empty() {
                    axes.push(self.rng.below(rank));
                }
                let keep = self.rng.chance(40);
                self.push(Op::Reduce(red, axes, keep), vec![a])
            }
            87..=89 if rank >= 1 => {
                let axis = self.rng.below(rank);
                self.push(Op::Cumsum(axis), vec![a])
            }
            90..=94 if dt.is_float() && self.rng.chance(40) => self.keys_matmul(a, dt),
            90..=94 if dt.is_float() && rank >= 2 => {
                let k = shape[rank - 1];
                let n = self.rng.pick(&[1usize, 3, 4, 8, 16, 32]);
                let b = self.input(vec![k, n], dt);
                self.push(Op::Matmul, vec![a, b])
            }
            95..=96 if dt.is_float() && rank == 4 => {
                let (stride, padding) = (self.rng.pick(&[1usize, 1, 2]), self.rng.below(2));
                let kh = self.rng.pick(&[1usize, 2, 3]).min(shape[2] + 2 * padding);
                let kw = self.rng.pick(&[1usize, 2, 3]).min(shape[3] + 2 * padding);
                let cout = self.rng.pick(&[1usize, 2, 4, 8]);
                let w = self.input(vec![cout, shape[1], kh, kw], dt);
                self.push(Op::Conv2d { stride, padding }, vec![a, w])
            }
            _ => self.push(Op::Contiguous, vec![a]),
        }
    }

    /// One of the ops composed of primitives (inverse trig and hyperbolic functions, sort and
    /// topk, softmax, unfold, diagonals, layer norm) on node `a`.
    fn composite(&mut self, a: usize) -> Option<usize> {
        let (shape, dt) = (self.nodes[a].shape.clone(), self.nodes[a].dt);
        let rank = shape.len();
        if !dt.is_float() {
            return None;
        }
        let axis = self.rng.below(rank.max(1));
        let op = match if decomp_focus() { 11 } else { self.rng.below(12) } {
            0..=2 => Op::Func(self.rng.pick(&[
                Fun::Atan,
                Fun::Asin,
                Fun::Acos,
                Fun::Tan,
                Fun::Sinh,
                Fun::Cosh,
                Fun::Tanh,
                Fun::Asinh,
                Fun::Acosh,
                Fun::Atanh,
                Fun::Expm1,
                Fun::Log1p,
            ])),
            3 => {
                let b = self.partner(&shape, dt);
                let op = Op::Func2(self.rng.pick(&[Fun2::Atan2, Fun2::Logaddexp, Fun2::Copysign]));
                let (x, y) = if self.rng.chance(50) { (a, b) } else { (b, a) };
                return self.push(op, vec![x, y]);
            }
            4 if rank >= 1 => {
                let indices = self.rng.chance(30);
                let k = (!indices && self.rng.chance(40)).then(|| 1 + self.rng.below(shape[axis]));
                Op::Sort { axis, descending: k.is_some() || self.rng.chance(50), k, indices }
            }
            5 if rank >= 1 => Op::Softmax { axis, log: self.rng.chance(40) },
            6 if rank >= 1 => {
                let size = 1 + self.rng.below(shape[axis].min(4));
                Op::Unfold { axis, size, step: 1 + self.rng.below(3) }
            }
            7 if rank >= 2 => Op::Diagonal(self.rng.below(5) as isize - 2),
            7 if rank == 1 => Op::Diag(self.rng.below(5) as isize - 2),
            8 if rank >= 1 => {
                let groups: Vec<usize> = match shape.get(1) {
                    Some(&c) => (1..=c).filter(|g| c % g == 0).collect(),
                    None => vec![1],
                };
                let group = NormKind::Group(self.rng.pick(&groups));
                Op::Norm(self.rng.pick(&[NormKind::Layer, NormKind::Rms, NormKind::Instance, NormKind::Batch, group]))
            }
            9 if rank >= 2 => {
                let lead = &shape[..rank - 2];
                let (s, dv) = (self.rng.pick(&[1usize, 2, 3, 5, 8, 16]), self.rng.pick(&[1usize, 2, 4, 8]));
                let k = self.input(lead.iter().copied().chain([s, shape[rank - 1]]).collect(), dt);
                let v = self.input(lead.iter().copied().chain([s, dv]).collect(), dt);
                let causal = self.rng.chance(40);
                return self.push(Op::Attention { causal }, vec![a, k, v]);
            }
            10 if rank == 3 || rank == 4 => {
                let kernel = self.rng.pick(&[1usize, 2, 2, 3]);
                Op::MaxPool { kernel, stride: self.rng.pick(&[1usize, 2]), indices: self.rng.chance(50) }
            }
            // Small f32 matrices (an svd is ~10 sweeps of n - 1 steps, each a few kernels): `a`
            // when it is one, else a new input.
            11 if dt == Dt::F32 => {
                let fits = rank >= 2 && shape[rank - 2] <= 8 && shape[rank - 1] <= 8;
                let x = if fits && self.rng.chance(50) {
                    a
                } else {
                    let lead = self.rng.pick(&[vec![], vec![], vec![2], vec![3], vec![2, 2]]);
                    let (m, n) =
                        (self.rng.pick(&[1usize, 2, 3, 4, 5, 6, 8]), self.rng.pick(&[1usize, 2, 3, 4, 5, 6, 8]));
                    self.input(lead.into_iter().chain([m, n]).collect(), dt)
                };
                let what = self.rng.pick(&[
                    Decomp::QrProduct,
                    Decomp::QrGram,
                    Decomp::SvdValues,
                    Decomp::SvdProduct,
                    Decomp::SvdGram,
                ]);
                return self.push(Op::Decomp(what), vec![x]);
            }
            _ => return None,
        };
        self.push(op, vec![a])
    }

    /// A random shape of `numel` elements, up to 4 axes.
    fn factorize(&mut self, numel: usize) -> Vec<usize> {
        let mut left = numel;
        let mut out = Vec::new();
        let rank = 1 + self.rng.below(4);
        for _ in 0..rank - 1 {
            let divisors: Vec<usize> = (1..=left.min(64)).filter(|d| left.is_multiple_of(*d)).collect();
            let d = self.rng.pick(&divisors);
            out.push(d);
            left /= d;
        }
        out.push(left);
        let k = self.rng.below(out.len());
        out.rotate_left(k);
        out
    }
}

/// A random graph from `seed`: 1–3 inputs, 1–10 ops, one or two outputs. One graph in four is
/// a chain of movement ops on a small input (then maybe a reduce), the shape of index
/// arithmetic and gated loads that compilers have got wrong.
/// `FUZZ_DECOMP=1`: every composite step that can check a decomposition does (to fuzz `qr` and
/// `svd` alone).
/// Whether a pad or shrink is built with symbolic offsets: about a third of those that move
/// something, decided from the pairs so the generator's random stream (and every seed's graph)
/// stays what it was before symbolic offsets existed.
fn symbolic_variant(pairs: &[(usize, usize)]) -> bool {
    let moved = pairs.iter().any(|&(a, _)| a > 0);
    let h = pairs.iter().fold(pairs.len(), |h, &(a, b)| h.wrapping_mul(31).wrapping_add(a * 7 + b));
    moved && h % 3 == 0
}

fn decomp_focus() -> bool {
    static FOCUS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *FOCUS.get_or_init(|| std::env::var_os("FUZZ_DECOMP").is_some())
}

pub fn generate(seed: u64) -> Graph {
    let mut rng = Rng::new(seed);
    if rng.chance(25) {
        return movement_chain(&mut rng);
    }
    let mut b = Builder { rng: &mut rng, nodes: Vec::new() };
    for _ in 0..1 + b.rng.below(2) {
        let (shape, dt) = (b.random_shape(), b.random_dt());
        b.input(shape, dt);
    }
    let steps = 1 + b.rng.below(10);
    let mut done = 0;
    for _ in 0..steps * 4 {
        if done == steps {
            break;
        }
        if b.step().is_some() {
            done += 1;
        }
    }
    let last = b.nodes.len() - 1;
    let mut outputs = vec![last];
    if b.nodes.len() > 2 && b.rng.chance(20) {
        let other = b.rng.below(b.nodes.len() - 1);
        if !matches!(b.nodes[other].op, Op::Input { .. }) {
            outputs.push(other);
        }
    }
    Graph { nodes: b.nodes, outputs }
}

fn movement_chain(rng: &mut Rng) -> Graph {
    let mut b = Builder { rng, nodes: Vec::new() };
    let rank = 1 + b.rng.below(3);
    let shape: Vec<usize> = (0..rank).map(|_| b.rng.pick(&[1usize, 2, 2, 3, 4, 5, 6, 7, 9])).collect();
    let dt = if b.rng.chance(70) { Dt::F32 } else { b.random_dt() };
    let mut x = b.input(shape, dt);
    for _ in 0..1 + b.rng.below(3) {
        let (shape, rank) = (b.nodes[x].shape.clone(), b.nodes[x].shape.len());
        let op = match b.rng.below(6) {
            0 | 1 => Op::Pad(
                (0..rank).map(|_| if b.rng.chance(60) { (b.rng.below(3), b.rng.below(3)) } else { (0, 0) }).collect(),
            ),
            2 => Op::Flip((0..rank).filter(|_| b.rng.chance(60)).collect()),
            3 => Op::Shrink(
                shape
                    .iter()
                    .map(|&d| {
                        let s = b.rng.below(d);
                        (s, s + 1 + b.rng.below(d - s))
                    })
                    .collect(),
            ),
            4 if rank >= 2 => Op::Permute({
                let mut o: Vec<usize> = (0..rank).collect();
                o.rotate_left(1 + b.rng.below(rank - 1));
                o
            }),
            _ => Op::Reshape(b.factorize(shape.iter().product())),
        };
        if let Some(y) = b.push(op, vec![x]) {
            x = y;
        }
    }
    let rank = b.nodes[x].shape.len();
    if rank >= 1 && b.rng.chance(50) {
        let op = if b.rng.chance(30) {
            Op::Cumsum(b.rng.below(rank))
        } else {
            let mut axes: Vec<usize> = (0..rank).filter(|_| b.rng.chance(50)).collect();
            if axes.is_empty() {
                axes.push(b.rng.below(rank));
            }
            Op::Reduce(b.rng.pick(&[Red::Sum, Red::Max, Red::Min]), axes, b.rng.chance(30))
        };
        if let Some(y) = b.push(op, vec![x]) {
            x = y;
        }
    }
    Graph { nodes: b.nodes, outputs: vec![x] }
}

// ---------------------------------------------------------------- printing

fn dt_name(dt: Dt) -> &'static str {
    match dt {
        Dt::F32 => "F32",
        Dt::F16 => "F16",
        Dt::BF16 => "BF16",
        Dt::I32 => "I32",
        Dt::I64 => "I64",
        Dt::U8 => "U8",
        Dt::U32 => "U32",
        Dt::Bool => "BOOL",
    }
}

impl Graph {
    /// The graph as ferrograd calls, one `let` per node (inputs as `input(shape, dtype, seed)`).
    pub fn to_rust(&self) -> String {
        let mut out = String::new();
        for (i, n) in self.nodes.iter().enumerate() {
            let s = |k: usize| format!("t{}", n.src[k]);
            let expr = match &n.op {
                Op::Input { seed, special } => {
                    format!(
                        "input(&{:?}, DType::{}, {seed:#x}{})",
                        n.shape,
                        dt_name(n.dt),
                        if *special { ", special" } else { "" }
                    )
                }
                Op::Unary(u) => format!(
                    "{}.{}()",
                    s(0),
                    format!("{u:?}").to_lowercase().replace("not", "logical_not").replace("recip", "reciprocal")
                ),
                Op::Binary(b) => format!("{}.{}(&{})", s(0), bin_method(*b), s(1)),
                Op::Scalar(b, c) => {
                    if self.nodes[n.src[0]].dt.is_float() {
                        format!("{}.{}({c:?})", s(0), bin_method(*b))
                    } else {
                        format!("{}.{}({}i64)", s(0), bin_method(*b), *c as i64)
                    }
                }
                Op::Where => format!("{}.where_(&{}, &{})", s(0), s(1), s(2)),
                Op::Cast(d) => format!("{}.cast(DType::{})", s(0), dt_name(*d)),
                Op::IntDiv { divisor, remainder } => {
                    format!("{}.{}({divisor}i64)", s(0), if *remainder { "remainder" } else { "div_floor" })
                }
                Op::Reshape(v) => format!("{}.reshape({v:?})", s(0)),
                Op::Permute(v) => format!("{}.permute({v:?})", s(0)),
                Op::Pad(p) => format!("{}.pad(&{p:?})", s(0)),
                Op::Shrink(p) => format!("{}.shrink(&{p:?})", s(0)),
                Op::SymPad(p) => format!("sym_pad(&{}, &{p:?})", s(0)),
                Op::SymShrink(p) => format!("sym_shrink(&{}, &{p:?})", s(0)),
                Op::Flip(v) => format!("{}.flip({v:?})", s(0)),
                Op::Expand(v) => format!("{}.expand({v:?})", s(0)),
                Op::Reduce(r, axes, keep) => {
                    let name = format!("{r:?}").to_lowercase();
                    format!("{}.{name}_{}({axes:?})", s(0), if *keep { "keepdim" } else { "axis" })
                }
                Op::Cumsum(a) => format!("{}.cumsum({a})", s(0)),
                Op::Matmul => format!("{}.matmul(&{})", s(0), s(1)),
                Op::Conv2d { stride, padding } => format!(
                    "{}.conv2d(&{}, None, &ConvOpts::default().stride({stride}).padding({padding}))",
                    s(0),
                    s(1)
                ),
                Op::Contiguous => format!("{}.contiguous()", s(0)),
                Op::Func(f) => format!("{}.{}()", s(0), format!("{f:?}").to_lowercase()),
                Op::Func2(f) => format!("{}.{}(&{})", s(0), format!("{f:?}").to_lowercase(), s(1)),
                Op::Sort { axis, descending, k: None, indices: false } => format!("{}.sort({axis}, {descending}).0", s(0)),
                Op::Sort { axis, descending, indices: true, .. } => format!("{}.argsort({axis}, {descending})", s(0)),
                Op::Sort { axis, k: Some(k), .. } => format!("{}.topk({k}, {axis}, true).0", s(0)),
                Op::Softmax { axis, log } => format!("{}.{}softmax({axis})", s(0), if *log { "log_" } else { "" }),
                Op::Unfold { axis, size, step } => format!("{}.unfold({axis}, {size}, {step})", s(0)),
                Op::Diagonal(offset) => format!("{}.diagonal_offset({offset}, -2, -1)", s(0)),
                Op::Attention { causal } => format!(
                    "{}.scaled_dot_product_attention(&{}, &{}, &AttentionOpts {{ is_causal: {causal}, ..Default::default() }})",
                    s(0),
                    s(1),
                    s(2)
                ),
                Op::MaxPool { kernel, stride, indices } => format!(
                    "{}.max_pool2d_with_indices({kernel}, &PoolOpts::default().stride({stride})).{}",
                    s(0),
                    *indices as u8
                ),
                Op::Diag(offset) => format!("{}.diag({offset})", s(0)),
                Op::Decomp(what) => {
                    let x = s(0);
                    match what {
                        Decomp::QrProduct => format!("{{ let (q, r) = {x}.qr(); q.matmul(&r) }}"),
                        Decomp::QrGram => format!("{{ let q = {x}.qr().0; q.transpose(-1, -2).matmul(&q) }}"),
                        Decomp::SvdValues => format!("{x}.svd().1"),
                        Decomp::SvdProduct => format!(
                            "{{ let (u, s, v) = {x}.svd(); u.mul(&s.unsqueeze(-2)).matmul(&v.transpose(-1, -2)) }}"
                        ),
                        Decomp::SvdGram => {
                            let d = &self.nodes[n.src[0]].shape;
                            let f = if d[d.len() - 2] >= d[d.len() - 1] { "2" } else { "0" };
                            format!("{{ let f = {x}.svd().{f}; f.transpose(-1, -2).matmul(&f) }}")
                        }
                    }
                }
                Op::Norm(kind) => {
                    let last = n.shape.last().copied().unwrap_or(1);
                    match kind {
                        NormKind::Layer => format!("{}.layer_norm(&[{last}], None, None, 1e-5)", s(0)),
                        NormKind::Rms => format!("{}.rms_norm(&[{last}], None, Some(1e-6))", s(0)),
                        NormKind::Instance => format!("{}.instance_norm(None, None, 1e-5)", s(0)),
                        NormKind::Batch => format!("{}.batch_norm(None, None, None, None, true, 0.1, 1e-5)", s(0)),
                        NormKind::Group(g) => format!("{}.group_norm({g}, None, None, 1e-5)", s(0)),
                    }
                }
            };
            let _ = writeln!(out, "let t{i} = {expr}; // {:?} {:?}", n.shape, n.dt);
        }
        let outs: Vec<String> = self.outputs.iter().map(|o| format!("t{o}")).collect();
        let _ = write!(out, "outputs: {}", outs.join(", "));
        out
    }
}

fn bin_method(b: Bin) -> &'static str {
    match b {
        Bin::Add => "add",
        Bin::Sub => "sub",
        Bin::Mul => "mul",
        Bin::Div => "div",
        Bin::Max => "maximum",
        Bin::Min => "minimum",
        Bin::Lt => "lt",
        Bin::Eq => "eq",
        Bin::Ne => "ne",
        Bin::And => "bitand",
        Bin::Or => "bitor",
        Bin::Xor => "bitxor",
    }
}
