//! Optimizers. A step is lazy: it builds the updated parameters, which `assign` writes into
//! the parameters' own buffers, and realizes all of them (and the backward graph they read) in
//! one schedule. The learning rate is a tensor, so changing it needs no recompilation.

use crate::error::Result;
use crate::tensor::{no_grad, Tensor};
use crate::DType;

/// What every optimizer does.
pub trait Optimizer {
    /// The parameters it updates.
    fn params(&self) -> &[Tensor];
    /// The lazy updates of one step (parameters and optimizer state, already assigned); realize
    /// them together with anything else of the step to run it as one schedule.
    fn schedule_step(&mut self) -> Vec<Tensor>;
    /// The learning rate tensor (a scalar).
    fn lr(&self) -> &Tensor;

    /// Clears the gradients of all parameters.
    fn zero_grad(&mut self) {
        for p in self.params() {
            p.set_grad(None);
        }
    }
    /// Runs one update now.
    fn step(&mut self) -> Result<()> {
        let ts = self.schedule_step();
        Tensor::realize_all(&ts.iter().collect::<Vec<_>>())
    }
    /// Sets the learning rate (written into its tensor; compiled kernels stay valid).
    fn set_lr(&mut self, lr: f64) -> Result<()> {
        self.lr().assign(lr).realize().map(|_| ())
    }
}

/// A realized f32 scalar (a one-element buffer) on the parameters' device.
fn state_scalar(v: f64, like: Option<&Tensor>) -> Tensor {
    let dev = like.map(|t| t.device()).unwrap_or_else(|| crate::Device::default().name().to_string());
    Tensor::from_slice_on(&[v as f32], [0usize; 0], &dev)
}

fn zeros_state(p: &Tensor) -> Tensor {
    Tensor::from_slice_on(&vec![0f32; p.numel()], p.shape(), &p.device())
        .cast(p.dtype())
        .realize()
        .expect("allocating optimizer state")
}

fn grad_of(p: &Tensor) -> Tensor {
    p.grad().unwrap_or_else(|| {
        panic!("optimizer step: a parameter of shape {:?} has no gradient (call backward first)", p.shape())
    })
}

/// Stochastic gradient descent with momentum, Nesterov momentum and weight decay (PyTorch's
/// formulation).
pub struct SGD {
    params: Vec<Tensor>,
    lr: Tensor,
    momentum: f64,
    weight_decay: f64,
    nesterov: bool,
    buf: Vec<Tensor>,
}

impl SGD {
    pub fn new(params: Vec<Tensor>, lr: f64) -> SGD {
        SGD::with(params, lr, 0.0, 0.0, false)
    }
    pub fn with(params: Vec<Tensor>, lr: f64, momentum: f64, weight_decay: f64, nesterov: bool) -> SGD {
        assert!(!nesterov || momentum > 0.0, "SGD: nesterov needs momentum > 0");
        let buf = if momentum != 0.0 { params.iter().map(zeros_state).collect() } else { Vec::new() };
        SGD { lr: state_scalar(lr, params.first()), params, momentum, weight_decay, nesterov, buf }
    }
}

impl Optimizer for SGD {
    fn params(&self) -> &[Tensor] {
        &self.params
    }
    fn lr(&self) -> &Tensor {
        &self.lr
    }
    fn schedule_step(&mut self) -> Vec<Tensor> {
        no_grad(|| {
            let mut out = Vec::new();
            for (i, p) in self.params.iter().enumerate() {
                let mut g = grad_of(p).detach();
                if self.weight_decay != 0.0 {
                    g = g + p.detach() * self.weight_decay;
                }
                if self.momentum != 0.0 {
                    let b = &self.buf[i];
                    b.assign(&b.detach() * self.momentum + &g);
                    g = if self.nesterov { g + b.clone() * self.momentum } else { b.clone() };
                    out.push(b.clone());
                }
                p.assign(p.detach() - g * self.lr.cast(p.dtype()));
                out.push(p.clone());
            }
            out
        })
    }
}

/// LAMB (layer-wise adaptive moments); with `adam` set it is Adam/AdamW (trust ratio 1).
/// Weight decay is decoupled (AdamW); `Adam` uses none.
pub struct LAMB {
    params: Vec<Tensor>,
    lr: Tensor,
    b1: f64,
    b2: f64,
    eps: f64,
    weight_decay: f64,
    adam: bool,
    b1_t: Tensor,
    b2_t: Tensor,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
}

impl LAMB {
    #[allow(clippy::too_many_arguments)]
    pub fn with(params: Vec<Tensor>, lr: f64, b1: f64, b2: f64, eps: f64, weight_decay: f64, adam: bool) -> LAMB {
        let first = params.first();
        LAMB {
            lr: state_scalar(lr, first),
            b1_t: state_scalar(1.0, first),
            b2_t: state_scalar(1.0, first),
            m: params.iter().map(zeros_state).collect(),
            v: params.iter().map(zeros_state).collect(),
            params,
            b1,
            b2,
            eps,
            weight_decay,
            adam,
        }
    }
    /// LAMB with tinygrad's defaults (lr 0.001, betas 0.9/0.999, eps 1e-6, weight decay 0).
    pub fn new(params: Vec<Tensor>, lr: f64) -> LAMB {
        LAMB::with(params, lr, 0.9, 0.999, 1e-6, 0.0, false)
    }
}

/// Adam (PyTorch defaults: betas 0.9/0.999, eps 1e-8).
pub fn adam(params: Vec<Tensor>, lr: f64) -> LAMB {
    LAMB::with(params, lr, 0.9, 0.999, 1e-8, 0.0, true)
}

/// AdamW (PyTorch defaults: betas 0.9/0.999, eps 1e-8, weight decay 0.01).
pub fn adamw(params: Vec<Tensor>, lr: f64, weight_decay: f64) -> LAMB {
    LAMB::with(params, lr, 0.9, 0.999, 1e-8, weight_decay, true)
}

impl Optimizer for LAMB {
    fn params(&self) -> &[Tensor] {
        &self.params
    }
    fn lr(&self) -> &Tensor {
        &self.lr
    }
    fn schedule_step(&mut self) -> Vec<Tensor> {
        no_grad(|| {
            self.b1_t.assign(self.b1_t.detach() * self.b1);
            self.b2_t.assign(self.b2_t.detach() * self.b2);
            let mut out = vec![self.b1_t.clone(), self.b2_t.clone()];
            for (i, p) in self.params.iter().enumerate() {
                let g = grad_of(p).detach().cast(DType::F32);
                let (m, v) = (&self.m[i], &self.v[i]);
                m.assign(&m.detach() * self.b1 + &g * (1.0 - self.b1));
                v.assign(&v.detach() * self.b2 + (&g * &g) * (1.0 - self.b2));
                let m_hat = m.clone() / (1.0 - self.b1_t.clone());
                let v_hat = v.clone() / (1.0 - self.b2_t.clone());
                let pf = p.detach().cast(DType::F32);
                let up = m_hat / (v_hat.sqrt() + self.eps) + &pf * self.weight_decay;
                let trust = if self.adam {
                    None
                } else {
                    let r1 = pf.square().sum().sqrt();
                    let r2 = up.square().sum().sqrt();
                    Some(r1.gt(0.0).where_(r2.gt(0.0).where_(&r1 / &r2, 1.0), 1.0))
                };
                let scaled = match trust {
                    Some(t) => up * t * self.lr.clone(),
                    None => up * self.lr.clone(),
                };
                p.assign((pf - scaled).cast(p.dtype()));
                out.extend([m.clone(), v.clone(), p.clone()]);
            }
            out
        })
    }
}
