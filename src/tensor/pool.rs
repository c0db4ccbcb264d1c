//! Sliding windows, pooling and resizing. Windows are built by movement ops only (tinygrad's
//! `_pool`): a pooled view of shape `(..., out..., kernel...)` reads the input through index
//! arithmetic, so a pool or a convolution is one reduce over the window axes, in one kernel.

use super::Tensor;
use crate::uop::DType;

/// Per-axis sizes: one value for every spatial axis, or one per axis.
pub trait IntoSpatial {
    fn into_spatial(self) -> Vec<usize>;
}
impl IntoSpatial for usize {
    fn into_spatial(self) -> Vec<usize> {
        vec![self]
    }
}
impl<const N: usize> IntoSpatial for [usize; N] {
    fn into_spatial(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl IntoSpatial for &[usize] {
    fn into_spatial(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl IntoSpatial for Vec<usize> {
    fn into_spatial(self) -> Vec<usize> {
        self
    }
}

/// Spatial padding: one amount for every side, one per axis (both sides), or a
/// `(before, after)` pair per axis.
#[derive(Clone, Debug, PartialEq)]
pub enum Padding {
    Each(Vec<usize>),
    Sides(Vec<(usize, usize)>),
    /// `(before, after)` pairs that may be negative (crop): convolutions only
    /// (`ConvOpts::padding_signed`).
    Signed(Vec<(isize, isize)>),
}
impl From<usize> for Padding {
    fn from(p: usize) -> Padding {
        Padding::Each(vec![p])
    }
}
impl<const N: usize> From<[usize; N]> for Padding {
    fn from(p: [usize; N]) -> Padding {
        Padding::Each(p.to_vec())
    }
}
impl From<Vec<usize>> for Padding {
    fn from(p: Vec<usize>) -> Padding {
        Padding::Each(p)
    }
}
impl<const N: usize> From<[(usize, usize); N]> for Padding {
    fn from(p: [(usize, usize); N]) -> Padding {
        Padding::Sides(p.to_vec())
    }
}
impl From<Vec<(usize, usize)>> for Padding {
    fn from(p: Vec<(usize, usize)>) -> Padding {
        Padding::Sides(p)
    }
}

impl Padding {
    /// The `(before, after)` pairs for `n` spatial axes.
    pub(crate) fn resolve(&self, op: &str, n: usize) -> Vec<(usize, usize)> {
        match self {
            Padding::Each(v) => spatial(op, "padding", v, n).into_iter().map(|p| (p, p)).collect(),
            Padding::Sides(v) if v.len() == n => v.clone(),
            Padding::Sides(v) if v.len() == 1 => vec![v[0]; n],
            Padding::Sides(v) => panic!("{op}: {} padding pairs for {n} spatial axes", v.len()),
            Padding::Signed(v) => {
                assert!(
                    v.iter().all(|&(b, a)| b >= 0 && a >= 0),
                    "{op}: negative padding {v:?} (only convolutions crop)"
                );
                Padding::Sides(v.iter().map(|&(b, a)| (b as usize, a as usize)).collect()).resolve(op, n)
            }
        }
    }
    /// The `(before, after)` pairs for `n` spatial axes, negative ones (crops) included.
    pub(crate) fn resolve_signed(&self, op: &str, n: usize) -> Vec<(isize, isize)> {
        match self {
            Padding::Signed(v) if v.len() == n => v.clone(),
            Padding::Signed(v) if v.len() == 1 => vec![v[0]; n],
            Padding::Signed(v) => panic!("{op}: {} padding pairs for {n} spatial axes", v.len()),
            other => other.resolve(op, n).into_iter().map(|(b, a)| (b as isize, a as isize)).collect(),
        }
    }
}

/// `v` broadcast to `n` spatial axes (a single value repeats); panics naming the op.
pub(crate) fn spatial(op: &str, what: &str, v: &[usize], n: usize) -> Vec<usize> {
    let out = match v.len() {
        1 => vec![v[0]; n],
        l if l == n => v.to_vec(),
        l => panic!("{op}: {what} has {l} values for {n} spatial axes"),
    };
    // Sizes and steps of a window must be positive; paddings may be 0.
    if matches!(what, "kernel" | "stride" | "dilation") && out.contains(&0) {
        panic!("{op}: {what} must be positive, got {v:?}");
    }
    out
}

/// Options of the pooling ops (the kernel size is an argument of each op).
#[derive(Clone, Debug)]
pub struct PoolOpts {
    /// Default (empty): the kernel size.
    pub stride: Vec<usize>,
    pub padding: Padding,
    pub dilation: Vec<usize>,
    pub ceil_mode: bool,
    /// Average pooling only: whether padded positions count in the divisor.
    pub count_include_pad: bool,
}

impl Default for PoolOpts {
    fn default() -> PoolOpts {
        PoolOpts {
            stride: vec![],
            padding: Padding::Each(vec![0]),
            dilation: vec![1],
            ceil_mode: false,
            count_include_pad: true,
        }
    }
}

impl PoolOpts {
    pub fn stride(mut self, s: impl IntoSpatial) -> PoolOpts {
        self.stride = s.into_spatial();
        self
    }
    pub fn padding(mut self, p: impl Into<Padding>) -> PoolOpts {
        self.padding = p.into();
        self
    }
    pub fn dilation(mut self, d: impl IntoSpatial) -> PoolOpts {
        self.dilation = d.into_spatial();
        self
    }
    pub fn ceil_mode(mut self, on: bool) -> PoolOpts {
        self.ceil_mode = on;
        self
    }
    pub fn count_include_pad(mut self, on: bool) -> PoolOpts {
        self.count_include_pad = on;
        self
    }
}

/// How `interpolate` computes a value between input samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InterpMode {
    /// PyTorch's `nearest`: source index `floor(dst * in / out)`.
    Nearest,
    /// PyTorch's `nearest-exact`: source index `floor((dst + 0.5) * in / out)`.
    NearestExact,
    /// Linear along every resized axis (`linear`, `bilinear`, `trilinear`).
    Linear,
}

/// Resolved geometry of one pooling call.
pub(super) struct Geometry {
    pub(super) k: Vec<usize>,
    s: Vec<usize>,
    d: Vec<usize>,
    /// Padding of each axis, with the extra right padding `ceil_mode` needs.
    pub(super) pads: Vec<(usize, usize)>,
    /// Padding as given (without the `ceil_mode` extra).
    given: Vec<(usize, usize)>,
    out: Vec<usize>,
}

impl Tensor {
    /// Sliding windows over the last `k.len()` axes: shape `(..., out..., k...)` with
    /// `out = (in - d*(k-1) - 1) / s + 1`; element `[.., o, .., j, ..]` is input
    /// `[.., o*s + j*d, ..]`. Only movement ops: nothing is copied.
    pub(crate) fn pool_windows(&self, k: &[usize], s: &[usize], d: &[usize]) -> Tensor {
        let shape = self.shape();
        let n = k.len();
        assert!(shape.len() >= n, "pool: cannot pool shape {shape:?} with kernel {k:?}");
        let lead = shape.len() - n;
        let noop = &shape[..lead];
        let ins = &shape[lead..];
        for i in 0..n {
            assert!(
                k[i] >= 1 && s[i] >= 1 && d[i] >= 1,
                "pool: kernel {k:?}, stride {s:?}, dilation {d:?} must be >= 1"
            );
            assert!(
                d[i] * (k[i] - 1) < ins[i],
                "pool: kernel {k:?} with dilation {d:?} is larger than the (padded) input {ins:?}"
            );
        }
        let o: Vec<usize> = (0..n).map(|i| (ins[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1).collect();
        let with = |parts: Vec<usize>| noop.iter().copied().chain(parts).collect::<Vec<usize>>();
        let keep = |parts: Vec<(usize, usize)>| noop.iter().map(|&x| (0, x)).chain(parts).collect::<Vec<_>>();
        let order: Vec<usize> =
            (0..lead).chain((0..n).map(|i| lead + 2 * i + 1)).chain((0..n).map(|i| lead + 2 * i)).collect();
        if (0..n).all(|i| k[i] <= s[i] && d[i] == 1) {
            // Windows do not overlap: cut to out*s, split into (out, s) and keep the first k.
            let x = self.pad_constant(
                &keep_pairs(lead, (0..n).map(|i| (0, (o[i] * s[i]) as isize - ins[i] as isize)).collect()),
                0.0,
            );
            let x = x.reshape(with((0..n).flat_map(|i| [o[i], s[i]]).collect()));
            let x = x.shrink(&keep((0..n).flat_map(|i| [(0, o[i]), (0, k[i])]).collect()));
            let order: Vec<usize> =
                (0..lead).chain((0..n).map(|i| lead + 2 * i)).chain((0..n).map(|i| lead + 2 * i + 1)).collect();
            return x.permute(order);
        }
        // Overlapping or dilated windows: tile the axis (period p >= in), then read it as rows
        // of length p + d, so row j starts j*d further: [j, m] = x[m + j*d]. Strided columns
        // are then split off like the non-overlapping case.
        let p: Vec<usize> = (0..n).map(|i| ins[i].max((o[i] * s[i]).saturating_sub(d[i]))).collect();
        let x = self.pad(&noop.iter().map(|_| (0, 0)).chain((0..n).map(|i| (0, p[i] - ins[i]))).collect::<Vec<_>>());
        let reps: Vec<usize> = (0..n).map(|i| (k[i] * (p[i] + d[i])).div_ceil(p[i])).collect();
        let x = x.repeat(&std::iter::repeat_n(1, lead).chain(reps).collect::<Vec<_>>());
        let x = x.shrink(&keep((0..n).map(|i| (0, k[i] * (p[i] + d[i]))).collect()));
        let x = x.reshape(with((0..n).flat_map(|i| [k[i], p[i] + d[i]]).collect()));
        let x = x.shrink(&keep((0..n).flat_map(|i| [(0, k[i]), (0, o[i] * s[i])]).collect()));
        let x = x.reshape(with((0..n).flat_map(|i| [k[i], o[i], s[i]]).collect()));
        let x = x.shrink(&keep((0..n).flat_map(|i| [(0, k[i]), (0, o[i]), (0, 1)]).collect()));
        let x = x.reshape(with((0..n).flat_map(|i| [k[i], o[i]]).collect()));
        x.permute(order)
    }

    pub(super) fn pool_geometry(&self, op: &str, kernel: Vec<usize>, opts: &PoolOpts) -> Geometry {
        let n = kernel.len();
        let shape = self.shape();
        assert!(shape.len() > n, "{op}: input of shape {shape:?} needs a batch or channel axis and {n} spatial axes");
        let ins = &shape[shape.len() - n..];
        assert!(!kernel.contains(&0), "{op}: kernel must be positive, got {kernel:?}");
        let k = kernel;
        let s = if opts.stride.is_empty() { k.clone() } else { spatial(op, "stride", &opts.stride, n) };
        let d = spatial(op, "dilation", &opts.dilation, n);
        let given = opts.padding.resolve(op, n);
        let mut pads = given.clone();
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (pb, pa) = given[i];
            let half = (d[i] * (k[i] - 1)).div_ceil(2);
            assert!(pb <= half && pa <= half, "{op}: padding {given:?} should be at most half of the kernel {k:?}");
            let span = d[i] * (k[i] - 1) + 1;
            let total = ins[i] + pb + pa;
            assert!(total >= span, "{op}: kernel {k:?} (dilation {d:?}) is larger than the padded input {ins:?}");
            let mut o = if opts.ceil_mode { (total - span).div_ceil(s[i]) + 1 } else { (total - span) / s[i] + 1 };
            // The last window must start inside the input or its left padding (PyTorch).
            if opts.ceil_mode && (o - 1) * s[i] >= ins[i] + pb {
                o -= 1;
            }
            pads[i].1 += ((o - 1) * s[i] + span).saturating_sub(total);
            out.push(o);
        }
        Geometry { k, s, d, pads, given, out }
    }

    /// Windows of `self` padded by `pads` (`lowest`: with the dtype's lowest value), cut to
    /// exactly `g.out` windows per axis.
    pub(super) fn windows(&self, g: &Geometry, pads: &[(usize, usize)], lowest: bool) -> Tensor {
        let lead = self.ndim() - g.k.len();
        let pairs = keep_pairs(lead, pads.iter().map(|&(b, a)| (b as isize, a as isize)).collect());
        let x = if lowest { self.pad_lowest(&pairs) } else { self.pad_constant(&pairs, 0.0) };
        let w = x.pool_windows(&g.k, &g.s, &g.d);
        let ws = w.shape();
        let cut: Vec<(usize, usize)> = ws
            .iter()
            .enumerate()
            .map(|(i, &x)| if i >= lead && i < lead + g.out.len() { (0, g.out[i - lead]) } else { (0, x) })
            .collect();
        w.shrink(&cut)
    }

    /// Max pooling over the last `kernel.len()` axes (any number of spatial axes). Padding
    /// uses the dtype's lowest value, so it never wins.
    pub fn max_pool(&self, kernel: impl IntoSpatial, opts: &PoolOpts) -> Tensor {
        let g = self.pool_geometry("max_pool", kernel.into_spatial(), opts);
        let axes: Vec<isize> = (1..=g.k.len() as isize).map(|i| -i).collect();
        self.windows(&g, &g.pads, true).max_axis(axes)
    }

    /// Average pooling over the last `kernel.len()` axes. With `count_include_pad` the divisor
    /// counts the given padding (not the extra of `ceil_mode`), as PyTorch does.
    pub fn avg_pool(&self, kernel: impl IntoSpatial, opts: &PoolOpts) -> Tensor {
        let g = self.pool_geometry("avg_pool", kernel.into_spatial(), opts);
        let n = g.k.len();
        let axes: Vec<isize> = (1..=n as isize).map(|i| -i).collect();
        let x = if self.dtype().is_float() { self.clone() } else { self.cast(DType::F32) };
        let sum = x.windows(&g, &g.pads, false).sum_axis(axes);
        let lead = x.ndim() - n;
        let ins = &x.shape()[lead..];
        // The divisor: how many window positions fall inside [lo, hi) (the input plus, with
        // count_include_pad, the given padding). Elementwise in the output index, so it fuses
        // with the sum instead of being a second (broadcast) reduce.
        let mut count: Option<Tensor> = None;
        for (i, &len) in ins.iter().enumerate() {
            let (lo, hi) = if opts.count_include_pad {
                (-(g.given[i].0 as f64), (len + g.given[i].1) as f64)
            } else {
                (0.0, len as f64)
            };
            let start = Tensor::iota(g.out[i], x.dtype(), &x.device()) * g.s[i] as f64 - g.pads[i].0 as f64;
            let d = g.d[i] as f64;
            // First and one-past-last kernel taps j with lo <= start + j*d < hi.
            let first = ((start.neg() + lo + (d - 1.0)) / d).trunc().maximum(0.0);
            let last = ((start.neg() + hi + (d - 1.0)) / d).trunc().minimum(g.k[i] as f64);
            let c = (last - first).reshape((0..n).map(|j| if j == i { g.out[i] } else { 1 }).collect::<Vec<_>>());
            count = Some(match count {
                None => c,
                Some(prev) => prev * c,
            });
        }
        sum / count.expect("avg_pool: at least one spatial axis")
    }

    /// 2-D max pooling of `(N, C, H, W)` or `(C, H, W)` (`stride` defaults to the kernel).
    pub fn max_pool2d(&self, kernel: impl IntoSpatial, opts: &PoolOpts) -> Tensor {
        let k = spatial("max_pool2d", "kernel", &kernel.into_spatial(), 2);
        assert!(matches!(self.ndim(), 3 | 4), "max_pool2d: input must be 3-D or 4-D, shape is {:?}", self.shape());
        self.max_pool(k, opts)
    }

    /// 2-D average pooling of `(N, C, H, W)` or `(C, H, W)` (`stride` defaults to the kernel).
    pub fn avg_pool2d(&self, kernel: impl IntoSpatial, opts: &PoolOpts) -> Tensor {
        let k = spatial("avg_pool2d", "kernel", &kernel.into_spatial(), 2);
        assert!(matches!(self.ndim(), 3 | 4), "avg_pool2d: input must be 3-D or 4-D, shape is {:?}", self.shape());
        self.avg_pool(k, opts)
    }

    /// Resizes the last `size.len()` axes to `size` (PyTorch's `interpolate` with `size`).
    /// Each axis is a contraction with a small weight matrix built from an arange, so values
    /// and gradients follow PyTorch's index rules exactly.
    pub fn interpolate(&self, size: &[usize], mode: InterpMode, align_corners: bool) -> Tensor {
        let shape = self.shape();
        // As PyTorch: the input is (batch, channels, spatial...) and size gives every spatial axis.
        assert!(
            !size.is_empty() && size.len() + 2 == shape.len(),
            "interpolate: size {size:?} has {} values for the {} spatial axes of input {shape:?} (batch, channels, then \
             spatial axes)",
            size.len(),
            shape.len().saturating_sub(2)
        );
        let spatial = &shape[2..];
        assert!(
            !size.contains(&0) && !spatial.contains(&0),
            "interpolate: input {shape:?} and size {size:?} must have no empty spatial axis"
        );
        assert!(
            !align_corners || mode == InterpMode::Linear,
            "interpolate: align_corners only applies to linear modes, not {mode:?}"
        );
        if self.dtype() == DType::U8 && mode == InterpMode::Linear && size.len() == 2 {
            return self.resize_bilinear_u8(size[0], size[1], align_corners);
        }
        if self.dtype() == DType::U8 && mode == InterpMode::Linear && size.len() == 2 {
            return self.resize_bilinear_u8(size[0], size[1], align_corners);
        }
        let x = if self.dtype().is_float() { self.clone() } else { self.cast(DType::F32) };
        let lead = shape.len() - size.len();
        let mut x = x;
        for (i, &out) in size.iter().enumerate() {
            let axis = lead + i;
            let n = shape[axis];
            if out == n {
                continue;
            }
            let w = interp_weights(n, out, mode, align_corners, x.dtype(), &x.device());
            // Move the axis last, contract it with w (out, n), and move the result back.
            let moved = x.transpose(axis as isize, -1);
            let y = (moved.unsqueeze(-2) * &w).sum_axis(-1);
            x = y.transpose(axis as isize, -1);
        }
        // Integer inputs keep their dtype (nearest is exact; linear rounds, saturating).
        match self.dtype() {
            d if d.is_float() => x,
            d if mode == InterpMode::Linear => x.round().cast(d),
            d => x.cast(d),
        }
    }
}

/// `(out, n)` weights: row `o` holds the contributions of the input samples to output `o`.
fn interp_weights(n: usize, out: usize, mode: InterpMode, align_corners: bool, dt: DType, dev: &str) -> Tensor {
    let dst = Tensor::iota(out, DType::F32, dev).reshape([out, 1]);
    let src_idx = Tensor::iota(n, DType::I32, dev).reshape([1, n]);
    match mode {
        InterpMode::Nearest | InterpMode::NearestExact => {
            let scale = n as f32 / out as f32;
            let pos = if mode == InterpMode::Nearest { dst * scale as f64 } else { (dst + 0.5) * scale as f64 };
            let idx = pos.trunc().cast(DType::I32).minimum(n as i32 - 1);
            idx.eq(&src_idx).cast(dt)
        }
        InterpMode::Linear => {
            let src = if align_corners {
                let scale = if out > 1 { (n as f32 - 1.0) / (out as f32 - 1.0) } else { 0.0 };
                dst * scale as f64
            } else {
                ((dst + 0.5) * (n as f32 / out as f32) as f64 - 0.5).maximum(0.0)
            };
            let lo = src.trunc().cast(DType::I32).minimum(n as i32 - 1);
            let hi = (&lo + 1).minimum(n as i32 - 1);
            let frac = &src - lo.cast(DType::F32);
            let w_lo = lo.eq(&src_idx).where_(frac.neg() + 1.0, 0.0);
            let w_hi = hi.eq(&src_idx).where_(&frac, 0.0);
            (w_lo + w_hi).cast(dt)
        }
    }
}

/// `lead` unpadded axes followed by `pads`.
fn keep_pairs(lead: usize, pads: Vec<(isize, isize)>) -> Vec<(isize, isize)> {
    std::iter::repeat_n((0, 0), lead).chain(pads).collect()
}
