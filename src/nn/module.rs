//! `Module`: anything that holds tensors under names. Models are plain structs with
//! `#[derive(Module)]`; layers, `Vec`s, `Option`s and tensors implement it here.

use crate::tensor::Tensor;
use std::collections::BTreeMap;

/// Visits every tensor (parameters and buffers such as running statistics) with its dotted
/// name.
pub trait Module {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor));
}

/// `prefix.name`, or `name` at the top level.
pub fn join_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

impl Module for Tensor {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor)) {
        f(prefix, self)
    }
}
impl<M: Module> Module for Option<M> {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor)) {
        if let Some(m) = self {
            m.visit(prefix, f)
        }
    }
}
impl<M: Module> Module for Vec<M> {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor)) {
        for (i, m) in self.iter().enumerate() {
            m.visit(&join_name(prefix, &i.to_string()), f)
        }
    }
}
impl<M: Module, const N: usize> Module for [M; N] {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor)) {
        for (i, m) in self.iter().enumerate() {
            m.visit(&join_name(prefix, &i.to_string()), f)
        }
    }
}
impl<M: Module + ?Sized> Module for Box<M> {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor)) {
        (**self).visit(prefix, f)
    }
}
impl<M: Module + ?Sized> Module for &M {
    fn visit(&self, prefix: &str, f: &mut dyn FnMut(&str, &Tensor)) {
        (**self).visit(prefix, f)
    }
}
/// Configuration fields (sizes, rates, flags) hold no tensors.
macro_rules! no_tensors {
    ($($t:ty),*) => {$(impl Module for $t { fn visit(&self, _: &str, _: &mut dyn FnMut(&str, &Tensor)) {} })*};
}
no_tensors!(bool, f32, f64, i32, i64, usize, u32, String, ());

/// Every tensor of a module by name (parameters and buffers), like PyTorch's `state_dict()`.
pub fn state_dict(m: &impl Module) -> BTreeMap<String, Tensor> {
    let mut out = BTreeMap::new();
    m.visit("", &mut |name, t| {
        out.insert(name.to_string(), t.clone());
    });
    out
}

/// The trainable tensors of a module (those that require grad), in a stable order.
pub fn get_parameters(m: &impl Module) -> Vec<Tensor> {
    let mut out = Vec::new();
    m.visit("", &mut |_, t| {
        if t.is_requires_grad() {
            out.push(t.clone());
        }
    });
    out
}
