use crate::Tensor;

/// A lookup table `(num_embeddings, dim)` initialized `N(0, 1)` like PyTorch.
#[derive(crate::nn::Module)]
pub struct Embedding {
    pub weight: Tensor,
}

impl Embedding {
    pub fn new(num_embeddings: usize, dim: usize) -> Embedding {
        let weight = super::realized_param(Tensor::randn([num_embeddings, dim]));
        Embedding { weight }
    }
    /// Rows of the table for integer indices of any shape: output `(idx.shape..., dim)`.
    pub fn forward(&self, idx: &Tensor) -> Tensor {
        let shape = idx.shape();
        let dim = self.weight.shape()[1];
        let flat = idx.flatten().reshape([idx.numel(), 1]).expand([idx.numel(), dim]);
        let rows = self.weight.gather(0, &flat.cast(crate::DType::I32));
        let mut out = shape.clone();
        out.push(dim);
        rows.reshape(out)
    }
}
