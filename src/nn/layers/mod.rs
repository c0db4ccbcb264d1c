//! Layers with PyTorch-compatible parameter shapes, initialization and names.

mod conv;
mod embedding;
mod linear;
mod norm;
mod rnn;

pub use conv::{Conv1d, Conv2d, ConvNd, ConvTranspose2d};
pub use embedding::Embedding;
pub use linear::Linear;
pub use norm::{BatchNorm, GroupNorm, InstanceNorm, LayerNorm, RMSNorm};
pub use rnn::LSTMCell;

use crate::Tensor;

/// `U(-b, b)`, realized, as a trainable parameter.
pub(crate) fn uniform_param(shape: Vec<usize>, bound: f64) -> Tensor {
    realized_param(Tensor::uniform(shape, -bound, bound))
}

/// A parameter with a buffer of its own. If the device cannot run the init kernel (it is not
/// there, or has no compiler), the parameter stays lazy: the next realize reports that error.
/// Inside `skip_init` it stays lazy too (a placeholder `load_state_dict` replaces).
pub(crate) fn realized_param(t: Tensor) -> Tensor {
    if !crate::tensor::is_skip_init() {
        let _ = t.realize();
    }
    t.requires_grad()
}

/// A realized constant tensor (its own buffer).
pub(crate) fn filled(shape: Vec<usize>, value: f32) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_vec(vec![value; n], shape)
}

/// Dropout as a layer (active only in training mode).
#[derive(Clone, Debug)]
pub struct Dropout {
    pub p: f64,
}

impl Dropout {
    pub fn new(p: f64) -> Dropout {
        Dropout { p }
    }
    pub fn forward(&self, x: &Tensor) -> Tensor {
        x.dropout(self.p)
    }
}

impl super::Module for Dropout {
    fn visit(&self, _: &str, _: &mut dyn FnMut(&str, &Tensor)) {}
}
