//! Convolutions in any number of spatial dimensions: the input is padded and cut into
//! windows by movement ops (`pool_windows`), multiplied by the weight and summed — one kernel.
//! A transposed convolution is a convolution of the zero-stuffed input with the flipped,
//! regrouped weight.

use super::pool::{spatial, IntoSpatial, Padding};
use super::Tensor;

/// Options of the convolutions (PyTorch's keyword arguments).
#[derive(Clone, Debug)]
pub struct ConvOpts {
    pub stride: Vec<usize>,
    pub padding: Padding,
    pub dilation: Vec<usize>,
    pub groups: usize,
    /// Transposed convolutions only: extra size on the right of each output axis.
    pub output_padding: Vec<usize>,
}

impl Default for ConvOpts {
    fn default() -> ConvOpts {
        ConvOpts {
            stride: vec![1],
            padding: Padding::Each(vec![0]),
            dilation: vec![1],
            groups: 1,
            output_padding: vec![0],
        }
    }
}

impl ConvOpts {
    pub fn stride(mut self, s: impl IntoSpatial) -> ConvOpts {
        self.stride = s.into_spatial();
        self
    }
    /// One amount for every side, one per axis, or a `(before, after)` pair per axis.
    pub fn padding(mut self, p: impl Into<Padding>) -> ConvOpts {
        self.padding = p.into();
        self
    }
    /// `(before, after)` padding per spatial axis where negative amounts crop the input (as
    /// tinygrad's convolutions allow; PyTorch users crop first).
    pub fn padding_signed(mut self, p: &[(isize, isize)]) -> ConvOpts {
        self.padding = Padding::Signed(p.to_vec());
        self
    }
    pub fn dilation(mut self, d: impl IntoSpatial) -> ConvOpts {
        self.dilation = d.into_spatial();
        self
    }
    pub fn groups(mut self, g: usize) -> ConvOpts {
        self.groups = g;
        self
    }
    pub fn output_padding(mut self, p: impl IntoSpatial) -> ConvOpts {
        self.output_padding = p.into_spatial();
        self
    }
}

impl Tensor {
    /// N-d convolution (cross-correlation, as PyTorch): input `(N, C_in, *spatial)` or
    /// `(C_in, *spatial)`, weight `(C_out, C_in / groups, *kernel)`, bias `(C_out,)`.
    pub fn conv(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        let (xs, ws) = (self.shape(), weight.shape());
        assert!(ws.len() >= 3, "conv: weight must be (out, in/groups, *kernel), shape is {ws:?}");
        let n = ws.len() - 2;
        if xs.len() == n + 1 {
            return self.unsqueeze(0).conv(weight, bias, opts).squeeze(0);
        }
        assert_eq!(xs.len(), n + 2, "conv: input of shape {xs:?} does not fit weight of shape {ws:?}");
        let g = opts.groups;
        let (cin_all, cout, cin) = (xs[1], ws[0], ws[1]);
        assert!(g >= 1 && cout % g == 0, "conv: {cout} output channels (weight {ws:?}) not divisible by groups={g}");
        assert_eq!(
            cin * g,
            cin_all,
            "conv: groups={g}, weight of shape {ws:?} expects input with {} channels, but input {xs:?} has {cin_all}",
            cin * g
        );
        let s = spatial("conv", "stride", &opts.stride, n);
        let d = spatial("conv", "dilation", &opts.dilation, n);
        let pads = opts.padding.resolve_signed("conv", n);
        let pairs: Vec<(isize, isize)> = [(0, 0), (0, 0)].into_iter().chain(pads).collect();
        self.conv_padded(weight, bias, &pairs, &s, &d, g)
    }

    /// The convolution of `self` padded by `pairs` (negative amounts cut).
    fn conv_padded(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        pairs: &[(isize, isize)],
        s: &[usize],
        d: &[usize],
        g: usize,
    ) -> Tensor {
        let ws = weight.shape();
        let n = ws.len() - 2;
        let k = &ws[2..];
        let (cout, cin) = (ws[0], ws[1]);
        let x = self.pad_constant(pairs, 0.0);
        let padded = x.shape();
        for i in 0..n {
            assert!(
                padded[2 + i] > d[i] * (k[i] - 1),
                "conv: kernel {k:?} (dilation {d:?}) is larger than the padded input {:?}",
                &padded[2..]
            );
        }
        // (N, G*cin, o..., k...) -> (N, G, rcout, o..., cin, k...)
        let w = x.pool_windows(k, s, d);
        let o: Vec<usize> = w.shape()[2..2 + n].to_vec();
        let rcout = cout / g;
        let bs = padded[0];
        let mut split: Vec<usize> = vec![bs, g, cin, 1];
        split.extend(o.iter().chain(k));
        let mut wide = split.clone();
        wide[3] = rcout;
        let order: Vec<usize> = [0, 1, 3].into_iter().chain(4..4 + n).chain([2]).chain(4 + n..4 + 2 * n).collect();
        let win = w.reshape(split).expand(wide).permute(order);
        let mut wshape: Vec<usize> = vec![1, g, rcout];
        wshape.extend(std::iter::repeat_n(1, n));
        wshape.push(cin);
        wshape.extend(k);
        let axes: Vec<isize> = (1..=(n as isize + 1)).map(|i| -i).collect();
        // The weights stored channels-last (a small copy): the kernel's loads of them are then
        // contiguous along the output channels, which the code generator makes its SIMD axis.
        let to_last: Vec<usize> = (1..n + 2).chain([0]).collect();
        let back: Vec<usize> = [n + 1].into_iter().chain(0..n + 1).collect();
        let w_last = weight.permute(to_last).contiguous().permute(back);
        let out = (win * w_last.reshape(wshape)).sum_axis(axes);
        let out = out.reshape([bs, cout].into_iter().chain(o).collect::<Vec<_>>());
        if !crate::tensor::is_no_grad() {
            conv_backward(&out, &x, weight, s, d, g);
        }
        match bias {
            None => out,
            Some(b) => {
                assert_eq!(b.shape(), vec![cout], "conv: bias of shape {:?} for {cout} output channels", b.shape());
                out + b.reshape([cout].into_iter().chain(std::iter::repeat_n(1, n)).collect::<Vec<_>>())
            }
        }
    }

    /// 1-D convolution: input `(N, C, L)` or `(C, L)`, weight `(C_out, C/groups, k)`.
    pub fn conv1d(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        assert_eq!(weight.ndim(), 3, "conv1d: weight must be 3-D, shape is {:?}", weight.shape());
        self.conv(weight, bias, opts)
    }
    /// 2-D convolution: input `(N, C, H, W)` or `(C, H, W)`, weight `(C_out, C/groups, kh, kw)`.
    pub fn conv2d(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        assert_eq!(weight.ndim(), 4, "conv2d: weight must be 4-D, shape is {:?}", weight.shape());
        self.conv(weight, bias, opts)
    }
    /// 3-D convolution: input `(N, C, D, H, W)` or `(C, D, H, W)`.
    pub fn conv3d(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        assert_eq!(weight.ndim(), 5, "conv3d: weight must be 5-D, shape is {:?}", weight.shape());
        self.conv(weight, bias, opts)
    }

    /// N-d transposed convolution (the gradient of `conv` with respect to its input), weight
    /// `(C_in, C_out / groups, *kernel)` as in PyTorch. Output size per axis:
    /// `(in - 1) * stride - pad_before - pad_after + dilation * (k - 1) + output_padding + 1`.
    pub fn conv_transpose(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        let (xs, ws) = (self.shape(), weight.shape());
        assert!(ws.len() >= 3, "conv_transpose: weight must be (in, out/groups, *kernel), shape is {ws:?}");
        let n = ws.len() - 2;
        if xs.len() == n + 1 {
            return self.unsqueeze(0).conv_transpose(weight, bias, opts).squeeze(0);
        }
        assert_eq!(xs.len(), n + 2, "conv_transpose: input of shape {xs:?} does not fit weight of shape {ws:?}");
        let g = opts.groups;
        let cin = ws[0];
        assert_eq!(xs[1], cin, "conv_transpose: weight of shape {ws:?} expects {cin} input channels, input is {xs:?}");
        assert!(g >= 1 && cin % g == 0, "conv_transpose: {cin} input channels not divisible by groups={g}");
        let k: Vec<usize> = ws[2..].to_vec();
        let s = spatial("conv_transpose", "stride", &opts.stride, n);
        let d = spatial("conv_transpose", "dilation", &opts.dilation, n);
        let op = spatial("conv_transpose", "output_padding", &opts.output_padding, n);
        let pads = opts.padding.resolve("conv_transpose", n);
        for i in 0..n {
            assert!(
                op[i] < s[i] || op[i] < d[i],
                "conv_transpose: output_padding {op:?} must be smaller than stride {s:?} or dilation {d:?}"
            );
        }
        // (C_in, C_out/G, k...) -> (G, C_out/G, C_in/G, k...) flipped -> (C_out, C_in/G, k...)
        let mut grouped = vec![g, cin / g, ws[1]];
        grouped.extend(&k);
        let flip_axes: Vec<isize> = (3..3 + n as isize).collect();
        let w = weight.reshape(grouped).transpose(1, 2).flip(flip_axes);
        let w = w.reshape([g * ws[1], cin / g].into_iter().chain(k.iter().copied()).collect::<Vec<_>>());
        // Stride: put s-1 zeros between input samples.
        let mut x = self.clone();
        if s.iter().any(|&s| s > 1) {
            let sp = &xs[2..];
            let split: Vec<usize> = xs[..2].iter().copied().chain(sp.iter().flat_map(|&i| [i, 1])).collect();
            let gaps: Vec<(usize, usize)> =
                [(0, 0), (0, 0)].into_iter().chain(s.iter().flat_map(|&s| [(0, 0), (0, s - 1)])).collect();
            let merged: Vec<usize> = xs[..2].iter().copied().chain(sp.iter().zip(&s).map(|(&i, &s)| i * s)).collect();
            let cut: Vec<(usize, usize)> = [(0, xs[0]), (0, xs[1])]
                .into_iter()
                .chain(sp.iter().zip(&s).map(|(&i, &s)| (0, i * s - (s - 1))))
                .collect();
            x = x.reshape(split).pad(&gaps).reshape(merged).shrink(&cut);
        }
        let pairs: Vec<(isize, isize)> = [(0, 0), (0, 0)]
            .into_iter()
            .chain((0..n).map(|i| {
                let full = (d[i] * (k[i] - 1)) as isize;
                (full - pads[i].0 as isize, full - pads[i].1 as isize + op[i] as isize)
            }))
            .collect();
        x.conv_padded(&w, bias, &pairs, &vec![1; n], &d, g)
    }

    /// 1-D transposed convolution: input `(N, C_in, L)`, weight `(C_in, C_out/groups, k)`.
    pub fn conv_transpose1d(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        assert_eq!(weight.ndim(), 3, "conv_transpose1d: weight must be 3-D, shape is {:?}", weight.shape());
        self.conv_transpose(weight, bias, opts)
    }
    /// 2-D transposed convolution: input `(N, C_in, H, W)`, weight `(C_in, C_out/groups, kh, kw)`.
    pub fn conv_transpose2d(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        assert_eq!(weight.ndim(), 4, "conv_transpose2d: weight must be 4-D, shape is {:?}", weight.shape());
        self.conv_transpose(weight, bias, opts)
    }
    /// 3-D transposed convolution: input `(N, C_in, D, H, W)`.
    pub fn conv_transpose3d(&self, weight: &Tensor, bias: Option<&Tensor>, opts: &ConvOpts) -> Tensor {
        assert_eq!(weight.ndim(), 5, "conv_transpose3d: weight must be 5-D, shape is {:?}", weight.shape());
        self.conv_transpose(weight, bias, opts)
    }
}

/// The backward of a convolution `out = conv(xpad, weight)` (`xpad` already padded): the input
/// gradient is a transposed convolution of the output gradient (one kernel of the same shape
/// as a forward convolution), the weight gradient a reduce over the batch and output
/// positions (`conv_weight_grad`).
fn conv_backward(out: &Tensor, xpad: &Tensor, weight: &Tensor, s: &[usize], d: &[usize], g: usize) {
    // Weak references: the registry must not keep the graph (and its buffers) alive; while
    // `out` lives, so do its sources.
    let (x_weak, w_weak) = (xpad.uop().downgrade(), weight.uop().downgrade());
    let (s, d) = (s.to_vec(), d.to_vec());
    let (padded, k) = (xpad.shape(), weight.shape()[2..].to_vec());
    super::grad::set_custom_gradient(
        &out.uop(),
        std::sync::Arc::new(move |grad: &Tensor, needed| {
            let (Some(x_node), Some(w_node)) = (x_weak.upgrade(), w_weak.upgrade()) else {
                return Vec::new();
            };
            let w_keep = Tensor::from_uop(w_node.clone());
            // The output gradient, materialized once in channels-last order: both gradients read
            // every element many times (once per kernel tap, once per input channel), so what
            // produced it (a ReLU's mask, a pooling's routing) is not recomputed at each read,
            // and the weight gradient's loads of it are contiguous along the output channels.
            let n = k.len();
            let to_last: Vec<usize> = [0].into_iter().chain(2..n + 2).chain([1]).collect();
            let back: Vec<usize> = [0, n + 1].into_iter().chain(1..n + 1).collect();
            let grad = grad.permute(to_last).contiguous().permute(back);
            let mut grads = Vec::new();
            if needed.contains(&x_node) {
                // Output size of the transposed convolution, `(o-1)*s + d*(k-1) + 1`, falls
                // short of the padded input by the rows the strided windows never reached.
                let o = &grad.shape()[2..];
                let extra: Vec<usize> =
                    (0..k.len()).map(|i| padded[2 + i] - ((o[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1)).collect();
                let opts = ConvOpts::default()
                    .stride(s.clone())
                    .dilation(d.clone())
                    .groups(g)
                    .padding(0)
                    .output_padding(extra);
                let gx = grad.cast(x_node.dtype()).conv_transpose(&w_keep, None, &opts);
                grads.push((x_node.clone(), gx));
            }
            if needed.contains(&w_node) {
                let x = Tensor::from_uop(x_node.clone());
                grads.push((w_node.clone(), conv_weight_grad(&x, &grad, &k, &s, &d, g).cast(w_node.dtype())));
            }
            grads
        }),
    );
}

/// The weight gradient of a convolution: `dW[co, ci, k...] = sum over n, o... of
/// xpad[n, ci, o*s + k*d] * grad[n, co, o...]`, per group. `grad` is stored channels-last, so
/// the kernel's loads of it are contiguous along the output channels (its SIMD axis) and the
/// input's windows are broadcast across them, as in a matmul. The batch
/// is cut into chunks of about 1 MiB of input and output gradient, each chunk's partial sums
/// one output of the first kernel (its outermost loop), added up by a second: every register
/// tile then re-reads a chunk from cache instead of the whole batch from memory.
fn conv_weight_grad(xpad: &Tensor, grad: &Tensor, k: &[usize], s: &[usize], d: &[usize], g: usize) -> Tensor {
    let n = k.len();
    let (gs, xs) = (grad.shape(), xpad.shape());
    let (bs, cout, cin) = (gs[0], gs[1], xs[1] / g);
    let o: Vec<usize> = gs[2..].to_vec();
    let per_image = (xs[1..].iter().product::<usize>() + gs[1..].iter().product::<usize>()) * 4;
    let per_chunk = ((1usize << 20) / per_image.max(1)).max(1);
    let images = (1..=bs).rev().find(|c| bs.is_multiple_of(*c) && *c <= per_chunk).unwrap_or(bs);
    let chunks = if bs == 0 { 1 } else { bs / images };
    // (N, G*cin, o..., k...) -> (chunks, images, G, 1, cin, o..., k...)
    let win = xpad.pool_windows(k, s, d);
    let win_shape: Vec<usize> = [chunks, images, g, 1, cin].iter().chain(&o).chain(k).copied().collect();
    let win = win.reshape(win_shape);
    // (N, G*cout/G, o...) -> (chunks, images, G, cout/G, 1, o..., 1...)
    let g_shape: Vec<usize> =
        [chunks, images, g, cout / g, 1].iter().chain(&o).copied().chain(std::iter::repeat_n(1, n)).collect();
    let grad_last = grad.reshape(g_shape);
    let axes: Vec<isize> = [1].into_iter().chain(5..5 + n as isize).collect();
    let partial = (win * grad_last).sum_axis(axes);
    let dw = if chunks > 1 { partial.contiguous().sum_axis(0) } else { partial.squeeze(0) };
    dw.reshape([cout, cin].iter().chain(k).copied().collect::<Vec<_>>())
}
