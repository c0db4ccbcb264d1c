//! Loading a model's tensors from a state dict (name → tensor), like PyTorch's
//! `load_state_dict`. Every problem (missing keys, unexpected keys, shape or dtype mismatches) is
//! collected and reported in one error, before anything is written: a dict that does not fit
//! leaves the model unchanged.
//!
//! Dtypes: a value is cast to the dtype of the model's tensor when both are of the same kind
//! (float ↔ float, integer ↔ integer), as PyTorch's `copy_` does — so an f16 or bf16 checkpoint
//! loads into an f32 model. A change of kind (float ↔ integer ↔ bool) is reported as a mismatch:
//! it almost always means the key points at the wrong tensor, and silently truncating weights to
//! integers would hide that.

use super::module::{state_dict, Module};
use crate::error::{Error, Result};
use crate::runtime::{get_device, Buffer};
use crate::schedule::existing_buffer;
use crate::tensor::{buffer_view, no_grad, Tensor};
use crate::uop::{DType, Ops};
use std::collections::BTreeMap;

/// Every tensor of a module by name (tinygrad's `get_state_dict`); the same as [`state_dict`].
pub fn get_state_dict(m: &impl Module) -> BTreeMap<String, Tensor> {
    state_dict(m)
}

/// Loads `dict` into `model` in place, strictly: every key of the model must be in `dict` and
/// every key of `dict` in the model, with the same shape and a dtype of the same kind (see the
/// module docs). The values are written into the model's existing tensors (every handle of them
/// sees the new values) and realized.
pub fn load_state_dict(model: &impl Module, dict: BTreeMap<String, Tensor>) -> Result<()> {
    load_state_dict_with(model, dict, true)
}

/// [`load_state_dict`]; with `strict == false`, keys missing from `dict` keep their values and
/// keys of `dict` the model lacks are ignored. Shape and dtype mismatches are errors either way
/// (as in PyTorch).
pub fn load_state_dict_with(model: &impl Module, dict: BTreeMap<String, Tensor>, strict: bool) -> Result<()> {
    load_state_dict_opts(model, dict, &LoadOptions { strict, ..LoadOptions::default() })
}

/// How [`load_state_dict_opts`] loads.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Every key of the model must be in the dict and every key of the dict in the model
    /// (PyTorch's `strict`). Default true.
    pub strict: bool,
    /// Keys of the dict to leave out before loading, as exact names or patterns with `*`
    /// (matching any run of characters): extras a checkpoint carries that the model does not
    /// use, such as saved rotary tables (`*.rotary_emb.inv_freq`).
    pub ignore: Vec<String>,
    /// For inference: a model tensor not yet backed by memory (built inside `skip_init`) takes
    /// the value as it is stored instead of a converted copy — an f16/bf16 weight stays 16-bit
    /// in memory and is cast inside the kernels that read it, a quantized GGUF weight stays
    /// packed and is dequantized there. Such a tensor is a lazy expression, not a buffer, so an
    /// optimizer cannot update it. Default false.
    pub keep_stored: bool,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions { strict: true, ignore: Vec::new(), keep_stored: false }
    }
}

/// Bytes of the memory a tensor reads: its buffer, or for a value installed as stored
/// (`LoadOptions::keep_stored`) the 16-bit or quantized buffer under its lazy conversion.
pub fn stored_bytes(t: &Tensor) -> usize {
    let nodes = t.uop().toposort();
    nodes.iter().filter_map(|n| n.buffer()).map(|b| b.0.size() * b.0.dtype().itemsize()).sum()
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return name == pattern;
    }
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

/// [`load_state_dict`] with [`LoadOptions`]: strictness, keys to ignore, and values kept as
/// stored.
pub fn load_state_dict_opts(model: &impl Module, mut dict: BTreeMap<String, Tensor>, opts: &LoadOptions) -> Result<()> {
    dict.retain(|k, _| !opts.ignore.iter().any(|p| matches(p, k)));
    let targets = state_dict(model);
    let mut missing = Vec::new();
    let mut mismatched = Vec::new();
    let mut pairs = Vec::new();
    for (name, target) in &targets {
        match dict.get(name) {
            None => missing.push(name.clone()),
            Some(value) => match mismatch(name, target, value) {
                Some(problem) => mismatched.push(problem),
                None => pairs.push((target, name)),
            },
        }
    }
    let mut unexpected: Vec<String> = dict.keys().filter(|k| !targets.contains_key(*k)).cloned().collect();
    if !opts.strict {
        missing.clear();
        unexpected.clear();
    }
    if !missing.is_empty() || !unexpected.is_empty() || !mismatched.is_empty() {
        return Err(Error::StateDict { missing, unexpected, mismatched });
    }
    // One tensor at a time, each value dropped once copied: a model built inside `skip_init`
    // from a dict the caller handed over peaks at the weights plus one tensor, not twice them.
    no_grad(|| {
        for (target, name) in pairs {
            let value = dict.remove(name).expect("paired above");
            if takes_over(target, &value) {
                target.set_uop(value.uop());
                continue;
            }
            if opts.keep_stored && !backed(target) && target.device() == value.device() {
                target.set_uop(value.cast(target.dtype()).uop());
                continue;
            }
            give_own_buffer(target)?;
            let dev = target.device();
            let value = if value.device() == dev { value } else { value.to(&dev) };
            target.assign(&value);
            target.realize()?;
        }
        Ok(())
    })
}

/// Whether `target` stands for memory already (a realized tensor, or a pending assign into one).
fn backed(target: &Tensor) -> bool {
    let u = target.uop();
    let view = if u.op() == Ops::ASSIGN { u.src()[0].clone() } else { u };
    existing_buffer(&view).is_some()
}

/// Whether `target` (not backed by memory yet) can simply take `value`'s buffer instead of a
/// copy: same dtype and device, and `value` is the only way to reach that buffer (one handle,
/// a plain view, no other node or tensor holding it) — as the tensors `safe_load` returns are.
fn takes_over(target: &Tensor, value: &Tensor) -> bool {
    if backed(target) || target.dtype() != value.dtype() || target.device() != value.device() {
        return false;
    }
    let v = value.uop();
    let plain_view = match v.op() {
        Ops::BUFFER => true,
        Ops::RESHAPE => v.src()[0].op() == Ops::BUFFER && v.src()[0].holders() == 1,
        _ => false,
    };
    let Some(buf) = existing_buffer(&v) else { return false };
    // The top node is held by the value's handle and by `v` here; the buffer by the BUFFER node
    // and by `buf` here.
    plain_view && value.handle_count() == 1 && v.holders() == 2 && std::sync::Arc::strong_count(&buf) == 2
}

/// Makes a target that is not yet backed by memory (a lazy `Tensor::zeros`, say) stand for a
/// fresh buffer of its own, so that `assign` writes into memory the model owns. Not realizing it
/// instead: structurally equal lazy tensors realized together may share one buffer, and
/// assigning without a buffer would make the target stand for the state dict's own buffer.
fn give_own_buffer(target: &Tensor) -> Result<()> {
    if !backed(target) {
        let buf = Buffer::new(get_device(&target.device())?, target.dtype(), target.numel());
        target.set_uop(buffer_view(buf, &target.shape()));
    }
    Ok(())
}

/// Why `value` cannot be loaded into `target`, if it cannot.
fn mismatch(name: &str, target: &Tensor, value: &Tensor) -> Option<String> {
    let (ts, vs) = (target.shape(), value.shape());
    let (td, vd) = (target.dtype(), value.dtype());
    let shape_ok = ts == vs;
    let dtype_ok = kind(td) == kind(vd);
    match (shape_ok, dtype_ok) {
        (true, true) => None,
        (false, true) => Some(format!("`{name}`: shape mismatch: model has {ts:?}, state dict has {vs:?}")),
        (true, false) => Some(format!(
            "`{name}`: dtype mismatch: model has {td}, state dict has {vd} (only float↔float and int↔int convert)"
        )),
        (false, false) => {
            Some(format!("`{name}`: shape and dtype mismatch: model has {ts:?} {td}, state dict has {vs:?} {vd}"))
        }
    }
}

/// The kind of values a dtype holds: 0 bool, 1 integer, 2 float.
fn kind(dt: DType) -> u8 {
    if dt.is_float() {
        2
    } else if dt.is_int() {
        1
    } else {
        0
    }
}
