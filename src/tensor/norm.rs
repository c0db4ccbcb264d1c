//! Normalizations as functions (PyTorch's `F.layer_norm`, `F.group_norm`, `F.batch_norm`,
//! `F.instance_norm`, `F.rms_norm`); the `nn` layers hold the parameters and call these.

use super::Tensor;
use crate::uop::DType;

/// `t` shaped `[1, C, 1, ...]` to broadcast per channel over an `ndim`-axis `(N, C, ...)` input.
fn per_channel(t: &Tensor, ndim: usize) -> Tensor {
    let mut shape = vec![1usize; ndim];
    shape[1] = t.numel();
    t.reshape(shape)
}

/// `y * weight + bias` per channel, each optional.
fn channel_affine(y: Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>) -> Tensor {
    let nd = y.ndim();
    let y = match weight {
        Some(w) => y * per_channel(w, nd),
        None => y,
    };
    match bias {
        Some(b) => y + per_channel(b, nd),
        None => y,
    }
}

/// `y * weight + bias` elementwise (broadcast), each optional.
fn affine(y: Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>) -> Tensor {
    let y = match weight {
        Some(w) => y * w,
        None => y,
    };
    match bias {
        Some(b) => y + b,
        None => y,
    }
}

impl Tensor {
    /// Normalizes over the last `normalized_shape.len()` axes (biased variance), then
    /// `* weight + bias` (both of `normalized_shape`, optional).
    pub fn layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Tensor {
        let shape = self.shape();
        let k = normalized_shape.len();
        assert!(
            shape.len() >= k && shape[shape.len() - k..] == normalized_shape[..],
            "layer_norm: input {shape:?} does not end with {normalized_shape:?}"
        );
        let axes: Vec<isize> = (1..=k as isize).map(|i| -i).collect();
        let (var, mean) = self.var_mean_with(axes, true, 0.0);
        affine((self - mean) * (var + eps).rsqrt(), weight, bias)
    }

    /// Normalizes `num_groups` groups of channels of `(N, C, ...)` each over its channels and
    /// spatial axes, then a per-channel `* weight + bias`.
    pub fn group_norm(&self, num_groups: usize, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Tensor {
        let shape = self.shape();
        assert!(shape.len() >= 2, "group_norm: input must be (N, C, ...), shape is {shape:?}");
        assert!(
            num_groups > 0 && shape[1].is_multiple_of(num_groups),
            "group_norm: {} channels of shape {shape:?} do not split into {num_groups} groups",
            shape[1]
        );
        let grouped = self.reshape([shape[0] as isize, num_groups as isize, -1]);
        let (var, mean) = grouped.var_mean_with(-1, true, 0.0);
        let y = ((grouped - mean) * (var + eps).rsqrt()).reshape(shape);
        channel_affine(y, weight, bias)
    }

    /// Normalizes each channel of each sample of `(N, C, spatial...)` over its spatial axes,
    /// then a per-channel `* weight + bias`.
    pub fn instance_norm(&self, weight: Option<&Tensor>, bias: Option<&Tensor>, eps: f64) -> Tensor {
        let shape = self.shape();
        assert!(shape.len() >= 3, "instance_norm: input must be (N, C, spatial...), shape is {shape:?}");
        let axes: Vec<isize> = (2..shape.len() as isize).collect();
        let (var, mean) = self.var_mean_with(axes, true, 0.0);
        channel_affine((self - mean) * (var + eps).rsqrt(), weight, bias)
    }

    /// Batch normalization of `(N, C, ...)` per channel (as `F.batch_norm`): with `training`
    /// (or without running statistics) by the batch's mean and biased variance, and then, when
    /// running statistics are given, updating them in place (`momentum`, unbiased variance);
    /// otherwise by the running statistics.
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm(
        &self,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Tensor {
        let shape = self.shape();
        assert!(shape.len() >= 2, "batch_norm: input must be (N, C, ...), shape is {shape:?}");
        let axes: Vec<isize> = (0..shape.len() as isize).filter(|&a| a != 1).collect();
        let (mean, var) = match (running_mean, running_var) {
            (Some(rm), Some(rv)) if !training => (rm.clone(), rv.clone()),
            _ => {
                let (var, mean) = self.var_mean_with(axes.clone(), false, 0.0);
                if let (Some(rm), Some(rv), true) = (running_mean, running_var, training) {
                    let n: usize = axes.iter().map(|&a| shape[a as usize]).product();
                    let unbiased = &var * (n as f64 / (n.max(2) - 1) as f64);
                    super::no_grad(|| {
                        rm.assign(rm.detach() * (1.0 - momentum) + mean.detach() * momentum);
                        rv.assign(rv.detach() * (1.0 - momentum) + unbiased.detach() * momentum);
                    });
                }
                (mean, var)
            }
        };
        let nd = shape.len();
        let inv = (var + eps).rsqrt();
        let scale = match weight {
            Some(w) => inv * w,
            None => inv,
        };
        let y = (self - per_channel(&mean, nd)) * per_channel(&scale, nd);
        match bias {
            Some(b) => y + per_channel(b, nd),
            None => y,
        }
    }

    /// `x / sqrt(mean(x², last normalized_shape.len() axes) + eps) * weight` (as `F.rms_norm`;
    /// `eps` defaults to the dtype's machine epsilon).
    pub fn rms_norm(&self, normalized_shape: &[usize], weight: Option<&Tensor>, eps: Option<f64>) -> Tensor {
        let shape = self.shape();
        let k = normalized_shape.len();
        assert!(
            shape.len() >= k && shape[shape.len() - k..] == normalized_shape[..],
            "rms_norm: input {shape:?} does not end with {normalized_shape:?}"
        );
        let x = self.float();
        let eps = eps.unwrap_or_else(|| machine_epsilon(x.dtype()));
        let axes: Vec<isize> = (1..=k as isize).map(|i| -i).collect();
        affine(&x * (x.square().mean_keepdim(axes) + eps).rsqrt(), weight, None)
    }
}

/// The gap between 1 and the next float of `dt` (`torch.finfo(dt).eps`).
fn machine_epsilon(dt: DType) -> f64 {
    match dt {
        DType::F16 => 2f64.powi(-10),
        DType::BF16 => 2f64.powi(-7),
        DType::F64 => f64::EPSILON,
        _ => f32::EPSILON as f64,
    }
}
