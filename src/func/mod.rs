//! Functional transforms (as JAX and torch.func): `vmap` maps a function over a batch axis by
//! rewriting the graph it builds with one batching rule per primitive (`batching.rs`); `grad`,
//! `vjp`, `jvp`, `jacrev`, `jacfwd` and `hessian` build derivative graphs with the backward
//! rules of `gradient/` (`autodiff.rs`). A function is traced once on placeholders
//! (`tensor::trace`) and the transform works on the graph it built (`trace.rs` binds it back to
//! the arguments), so transforms compose with each other, with autograd and with TinyJit.

mod autodiff;
mod batching;
mod trace;
mod vmap;

pub use crate::tensor::Randomness;
pub use autodiff::{grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp};
pub use batching::has_batching_rule;
pub use trace::functional_call;
pub use vmap::{vmap, vmap_with, VmapOpts};

use crate::tensor::Tensor;

/// A function of tensors to tensors: what every transform takes and returns.
pub trait TensorFn: Fn(&[Tensor]) -> Vec<Tensor> {}
impl<F: Fn(&[Tensor]) -> Vec<Tensor>> TensorFn for F {}
