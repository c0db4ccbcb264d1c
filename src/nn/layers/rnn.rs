use super::uniform_param;
use crate::Tensor;

/// One LSTM step, PyTorch's `LSTMCell`: gates `i, f, g, o` stacked in `weight_ih (4h, in)` and
/// `weight_hh (4h, h)`, all parameters `U(-1/sqrt(h), 1/sqrt(h))`.
#[derive(crate::nn::Module)]
pub struct LSTMCell {
    pub weight_ih: Tensor,
    pub weight_hh: Tensor,
    pub bias_ih: Option<Tensor>,
    pub bias_hh: Option<Tensor>,
}

impl LSTMCell {
    pub fn new(input_size: usize, hidden_size: usize, bias: bool) -> LSTMCell {
        let b = 1.0 / (hidden_size as f64).sqrt();
        LSTMCell {
            weight_ih: uniform_param(vec![4 * hidden_size, input_size], b),
            weight_hh: uniform_param(vec![4 * hidden_size, hidden_size], b),
            bias_ih: bias.then(|| uniform_param(vec![4 * hidden_size], b)),
            bias_hh: bias.then(|| uniform_param(vec![4 * hidden_size], b)),
        }
    }
    /// `(h, c)` after one step from `x (N, in)` and the previous `(h, c)` (zeros if `None`).
    pub fn forward(&self, x: &Tensor, hc: Option<(&Tensor, &Tensor)>) -> (Tensor, Tensor) {
        let hidden = self.weight_hh.shape()[1];
        let n = x.shape()[0];
        let (h, c) = match hc {
            Some((h, c)) => (h.clone(), c.clone()),
            None => (Tensor::zeros([n, hidden]), Tensor::zeros([n, hidden])),
        };
        let gates = x.linear(&self.weight_ih, self.bias_ih.as_ref()) + h.linear(&self.weight_hh, self.bias_hh.as_ref());
        let g = gates.chunk(4, 1);
        let (i, f, cell, o) = (g[0].sigmoid(), g[1].sigmoid(), g[2].tanh(), g[3].sigmoid());
        let c2 = f * &c + i * cell;
        let h2 = o * c2.tanh();
        (h2, c2)
    }
}
