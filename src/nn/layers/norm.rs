use super::filled;
use crate::Tensor;

/// `[1, C, 1, 1, ...]` for broadcasting per-channel values over `x`.
fn per_channel(t: &Tensor, ndim: usize) -> Tensor {
    let c = t.numel();
    let mut shape = vec![1usize; ndim];
    shape[1] = c;
    t.reshape(shape)
}

/// `y * weight + bias` per channel, each optional.
fn channel_affine(y: Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>, ndim: usize) -> Tensor {
    let y = match weight {
        Some(w) => y * per_channel(w, ndim),
        None => y,
    };
    match bias {
        Some(b) => y + per_channel(b, ndim),
        None => y,
    }
}

fn param(shape: Vec<usize>, v: f32) -> Tensor {
    filled(shape, v).requires_grad()
}

/// Batch normalization over `(N, C, ...)` (BatchNorm1d/2d/3d in one). In training mode it
/// normalizes with the batch statistics and updates the running ones (momentum, unbiased
/// variance, like PyTorch); in eval mode it uses the running statistics.
#[derive(crate::nn::Module)]
pub struct BatchNorm {
    pub weight: Option<Tensor>,
    pub bias: Option<Tensor>,
    pub running_mean: Option<Tensor>,
    pub running_var: Option<Tensor>,
    pub num_batches_tracked: Option<Tensor>,
    #[module(skip)]
    pub eps: f64,
    #[module(skip)]
    pub momentum: f64,
}

impl BatchNorm {
    /// PyTorch's defaults: eps 1e-5, momentum 0.1, affine, tracking running statistics.
    pub fn new(num_features: usize) -> BatchNorm {
        BatchNorm::with(num_features, 1e-5, 0.1, true, true)
    }
    pub fn with(num_features: usize, eps: f64, momentum: f64, affine: bool, track_running_stats: bool) -> BatchNorm {
        let c = num_features;
        BatchNorm {
            weight: affine.then(|| param(vec![c], 1.0)),
            bias: affine.then(|| param(vec![c], 0.0)),
            running_mean: track_running_stats.then(|| filled(vec![c], 0.0)),
            running_var: track_running_stats.then(|| filled(vec![c], 1.0)),
            num_batches_tracked: track_running_stats.then(|| Tensor::from_vec(vec![0i64], [0usize; 0])),
            eps,
            momentum,
        }
    }

    pub fn forward(&self, x: &Tensor) -> Tensor {
        let shape = x.shape();
        assert!(shape.len() >= 2, "BatchNorm: input must be (N, C, ...), shape is {shape:?}");
        let axes: Vec<isize> = (0..shape.len() as isize).filter(|&a| a != 1).collect();
        let use_batch = Tensor::training() || self.running_mean.is_none();
        let (mean, var) = if use_batch {
            let (var, mean) = x.var_mean_with(axes.clone(), false, 0.0);
            if Tensor::training() {
                if let (Some(rm), Some(rv), Some(nbt)) =
                    (&self.running_mean, &self.running_var, &self.num_batches_tracked)
                {
                    let n: usize = axes.iter().map(|&a| shape[a as usize]).product();
                    let unbiased = &var * (n as f64 / (n.max(2) - 1) as f64);
                    let m = self.momentum;
                    crate::tensor::no_grad(|| {
                        rm.assign(rm.detach() * (1.0 - m) + mean.detach() * m);
                        rv.assign(rv.detach() * (1.0 - m) + unbiased.detach() * m);
                        nbt.assign(nbt.detach() + 1);
                    });
                }
            }
            (mean, var)
        } else {
            (self.running_mean.clone().expect("running mean"), self.running_var.clone().expect("running var"))
        };
        let nd = shape.len();
        let inv = (var + self.eps).rsqrt();
        let scale = match &self.weight {
            Some(w) => inv * w,
            None => inv,
        };
        let y = (x - per_channel(&mean, nd)) * per_channel(&scale, nd);
        match &self.bias {
            Some(b) => y + per_channel(b, nd),
            None => y,
        }
    }
}

/// Normalizes over the last `normalized_shape.len()` axes (biased variance), with an
/// elementwise affine transform.
#[derive(crate::nn::Module)]
pub struct LayerNorm {
    pub weight: Option<Tensor>,
    pub bias: Option<Tensor>,
    #[module(skip)]
    pub normalized_shape: Vec<usize>,
    #[module(skip)]
    pub eps: f64,
}

impl LayerNorm {
    pub fn new(normalized_shape: Vec<usize>) -> LayerNorm {
        LayerNorm::with(normalized_shape, 1e-5, true)
    }
    pub fn with(normalized_shape: Vec<usize>, eps: f64, affine: bool) -> LayerNorm {
        LayerNorm {
            weight: affine.then(|| param(normalized_shape.clone(), 1.0)),
            bias: affine.then(|| param(normalized_shape.clone(), 0.0)),
            normalized_shape,
            eps,
        }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let shape = x.shape();
        let k = self.normalized_shape.len();
        assert!(
            shape.len() >= k && shape[shape.len() - k..] == self.normalized_shape[..],
            "LayerNorm: input {shape:?} does not end with {:?}",
            self.normalized_shape
        );
        let axes: Vec<isize> = (1..=k as isize).map(|i| -i).collect();
        let (var, mean) = x.var_mean_with(axes, true, 0.0);
        let y = (x - mean) * (var + self.eps).rsqrt();
        let y = match &self.weight {
            Some(w) => y * w,
            None => y,
        };
        match &self.bias {
            Some(b) => y + b,
            None => y,
        }
    }
}

/// Normalizes groups of channels over `(N, C, ...)`, then a per-channel affine transform.
#[derive(crate::nn::Module)]
pub struct GroupNorm {
    pub weight: Option<Tensor>,
    pub bias: Option<Tensor>,
    #[module(skip)]
    pub num_groups: usize,
    #[module(skip)]
    pub eps: f64,
}

impl GroupNorm {
    pub fn new(num_groups: usize, num_channels: usize) -> GroupNorm {
        GroupNorm::with(num_groups, num_channels, 1e-5, true)
    }
    pub fn with(num_groups: usize, num_channels: usize, eps: f64, affine: bool) -> GroupNorm {
        assert!(num_channels.is_multiple_of(num_groups), "GroupNorm: {num_channels} channels in {num_groups} groups");
        GroupNorm {
            weight: affine.then(|| param(vec![num_channels], 1.0)),
            bias: affine.then(|| param(vec![num_channels], 0.0)),
            num_groups,
            eps,
        }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let shape = x.shape();
        let grouped = x.reshape([shape[0] as isize, self.num_groups as isize, -1]);
        let (var, mean) = grouped.var_mean_with(-1, true, 0.0);
        let y = ((grouped - mean) * (var + self.eps).rsqrt()).reshape(shape.clone());
        channel_affine(y, self.weight.as_ref(), self.bias.as_ref(), shape.len())
    }
}

/// Normalizes each channel of each sample over its spatial axes (PyTorch's defaults: no
/// affine transform, no running statistics).
#[derive(crate::nn::Module)]
pub struct InstanceNorm {
    pub weight: Option<Tensor>,
    pub bias: Option<Tensor>,
    #[module(skip)]
    pub eps: f64,
}

impl InstanceNorm {
    pub fn new(num_features: usize) -> InstanceNorm {
        InstanceNorm::with(num_features, 1e-5, false)
    }
    pub fn with(num_features: usize, eps: f64, affine: bool) -> InstanceNorm {
        InstanceNorm {
            weight: affine.then(|| param(vec![num_features], 1.0)),
            bias: affine.then(|| param(vec![num_features], 0.0)),
            eps,
        }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        let shape = x.shape();
        assert!(shape.len() >= 3, "InstanceNorm: input must be (N, C, spatial...), shape is {shape:?}");
        let axes: Vec<isize> = (2..shape.len() as isize).collect();
        let (var, mean) = x.var_mean_with(axes, true, 0.0);
        let y = (x - mean) * (var + self.eps).rsqrt();
        channel_affine(y, self.weight.as_ref(), self.bias.as_ref(), shape.len())
    }
}

/// `x / sqrt(mean(x^2, last axis) + eps) * weight`.
#[derive(crate::nn::Module)]
pub struct RMSNorm {
    pub weight: Tensor,
    #[module(skip)]
    pub eps: f64,
}

impl RMSNorm {
    /// eps defaults to float32's machine epsilon, as PyTorch does when none is given.
    pub fn new(dim: usize) -> RMSNorm {
        RMSNorm::with(dim, f32::EPSILON as f64)
    }
    pub fn with(dim: usize, eps: f64) -> RMSNorm {
        RMSNorm { weight: param(vec![dim], 1.0), eps }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x * (x.square().mean_keepdim(-1) + self.eps).rsqrt() * &self.weight
    }
}
