use super::uniform_param;
use crate::tensor::{ConvOpts, Padding};
use crate::Tensor;

fn opts(stride: usize, padding: usize, dilation: usize, groups: usize, output_padding: usize) -> ConvOpts {
    ConvOpts {
        stride: vec![stride],
        padding: Padding::Each(vec![padding]),
        dilation: vec![dilation],
        groups,
        output_padding: vec![output_padding],
    }
}

/// Weight `(out, in/groups, k...)`; weight and bias `U(-1/sqrt(fan_in), ..)` with
/// `fan_in = in/groups * prod(k)`, like PyTorch.
fn conv_params(cin: usize, cout: usize, k: &[usize], groups: usize, bias: bool) -> (Tensor, Option<Tensor>) {
    assert!(
        cin.is_multiple_of(groups) && cout.is_multiple_of(groups),
        "conv: {cin} in and {cout} out channels are not divisible by {groups} groups"
    );
    let fan_in = cin / groups * k.iter().product::<usize>();
    let bound = 1.0 / (fan_in as f64).sqrt();
    let mut shape = vec![cout, cin / groups];
    shape.extend_from_slice(k);
    (uniform_param(shape, bound), bias.then(|| uniform_param(vec![cout], bound)))
}

/// N-d convolution over `(batch, C, spatial...)` with a cubic kernel; `Conv1d` and `Conv2d`
/// are its 1-D and 2-D forms.
#[derive(crate::nn::Module)]
pub struct ConvNd<const N: usize> {
    pub weight: Tensor,
    pub bias: Option<Tensor>,
    #[module(skip)]
    pub opts: ConvOpts,
}

/// 1-D convolution over `(N, C, L)`.
pub type Conv1d = ConvNd<1>;
/// 2-D convolution over `(N, C, H, W)`.
pub type Conv2d = ConvNd<2>;

impl<const N: usize> ConvNd<N> {
    /// Stride 1, no padding, with bias.
    pub fn new(cin: usize, cout: usize, kernel: usize) -> Self {
        Self::with(cin, cout, kernel, 1, 0, 1, 1, true)
    }
    #[allow(clippy::too_many_arguments)]
    pub fn with(
        cin: usize,
        cout: usize,
        kernel: usize,
        stride: usize,
        padding: usize,
        dilation: usize,
        groups: usize,
        bias: bool,
    ) -> Self {
        let (weight, bias) = conv_params(cin, cout, &[kernel; N], groups, bias);
        ConvNd { weight, bias, opts: opts(stride, padding, dilation, groups, 0) }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.conv(&self.weight, self.bias.as_ref(), &self.opts)
    }
}

/// Transposed 2-D convolution; weight `(in, out/groups, kh, kw)` like PyTorch.
#[derive(crate::nn::Module)]
pub struct ConvTranspose2d {
    pub weight: Tensor,
    pub bias: Option<Tensor>,
    #[module(skip)]
    pub opts: ConvOpts,
}

impl ConvTranspose2d {
    pub fn new(cin: usize, cout: usize, kernel: usize) -> ConvTranspose2d {
        ConvTranspose2d::with(cin, cout, kernel, 1, 0, 0, 1, true)
    }
    #[allow(clippy::too_many_arguments)]
    pub fn with(
        cin: usize,
        cout: usize,
        kernel: usize,
        stride: usize,
        padding: usize,
        output_padding: usize,
        groups: usize,
        bias: bool,
    ) -> ConvTranspose2d {
        assert!(
            cin.is_multiple_of(groups) && cout.is_multiple_of(groups),
            "conv_transpose2d: channels not divisible by {groups} groups"
        );
        // PyTorch's fan in for this weight layout is weight.size(1) * kernel area.
        let fan_in = cout / groups * kernel * kernel;
        let bound = 1.0 / (fan_in as f64).sqrt();
        ConvTranspose2d {
            weight: uniform_param(vec![cin, cout / groups, kernel, kernel], bound),
            bias: bias.then(|| uniform_param(vec![cout], bound)),
            opts: opts(stride, padding, 1, groups, output_padding),
        }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.conv_transpose2d(&self.weight, self.bias.as_ref(), &self.opts)
    }
}
