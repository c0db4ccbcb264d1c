//! Reverse-mode autodiff on the tensor graph: one rule per primitive op. Gradients are lazy
//! graphs themselves, so a backward pass is scheduled and fused like any other computation.
//! This stage sits above `tensor` (its rules are written with tensor ops).

mod backward;
mod rules;

pub use rules::compute_gradient;
