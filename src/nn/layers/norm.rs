use super::filled;
use crate::Tensor;

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
        let training = Tensor::training();
        if training {
            if let Some(nbt) = &self.num_batches_tracked {
                crate::tensor::no_grad(|| nbt.assign(nbt.detach() + 1));
            }
        }
        x.batch_norm(
            self.running_mean.as_ref(),
            self.running_var.as_ref(),
            self.weight.as_ref(),
            self.bias.as_ref(),
            training,
            self.momentum,
            self.eps,
        )
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
        x.layer_norm(&self.normalized_shape, self.weight.as_ref(), self.bias.as_ref(), self.eps)
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
        x.group_norm(self.num_groups, self.weight.as_ref(), self.bias.as_ref(), self.eps)
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
        x.instance_norm(self.weight.as_ref(), self.bias.as_ref(), self.eps)
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
        x.rms_norm(&self.weight.shape(), Some(&self.weight), Some(self.eps))
    }
}
