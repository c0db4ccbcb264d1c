use super::uniform_param;
use crate::Tensor;

/// `y = x W^T + b`, weight `(out, in)`, both initialized `U(-1/sqrt(in), 1/sqrt(in))` like
/// PyTorch.
#[derive(crate::nn::Module)]
pub struct Linear {
    pub weight: Tensor,
    pub bias: Option<Tensor>,
}

impl Linear {
    pub fn new(in_features: usize, out_features: usize, bias: bool) -> Linear {
        let bound = 1.0 / (in_features as f64).sqrt();
        Linear {
            weight: uniform_param(vec![out_features, in_features], bound),
            bias: bias.then(|| uniform_param(vec![out_features], bound)),
        }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.linear(&self.weight, self.bias.as_ref())
    }
}
