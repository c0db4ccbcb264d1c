//! Tracing a function for the functional transforms of `crate::func` (`vmap`, `grad`, `jvp`):
//! the function runs once on *placeholders* — fresh leaves that stand for its arguments and
//! never get memory — and the transform rewrites the graph it built. Random ops called while a
//! `vmap` traces follow that `vmap`'s [`Randomness`]; the stack of batching levels lives here
//! because the random generator (this stage) consults it.

use super::create::buffer_view_dims;
use super::Tensor;
use crate::runtime::Buffer;
use crate::uop::{DType, Dim, UOp};
use std::cell::RefCell;

/// What a random op inside a `vmap`ped function draws (torch.func's `randomness`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Randomness {
    /// A random op is an error naming the op (the default, as in torch.func).
    #[default]
    Error,
    /// Every element of the batch gets the same numbers.
    Same,
    /// Every element of the batch gets its own numbers.
    Different,
}

/// A tensor of `dims`, `dtype` and `device` that stands for a function argument while the
/// function is traced: a BUFFER of its own (so it is a node nothing else shares), whose values
/// cannot be read — a realize that reaches it is an `Err` saying so.
pub(crate) fn placeholder(dims: &[Dim], dtype: DType, device: &str) -> Tensor {
    let layout: Vec<usize> = dims.iter().map(|d| d.max()).collect();
    let buf = Buffer::placeholder(device, dtype, layout.iter().product());
    let symbolic = dims.iter().any(|d| d.as_const().is_none());
    let view = buffer_view_dims(buf, &layout, symbolic.then_some(dims));
    Tensor::from_uop(view)
}

/// A placeholder shaped like `x`.
pub(crate) fn placeholder_like(x: &Tensor) -> Tensor {
    placeholder(&x.sym_shape(), x.dtype(), &x.device())
}

struct BatchLevel {
    size: usize,
    randomness: Randomness,
    /// Random numbers drawn while tracing under `Randomness::Different`: the placeholder the
    /// function saw and the batched numbers (`[size, n]`) it stands for.
    drawn: Vec<(UOp, Tensor)>,
}

thread_local! {
    static LEVELS: RefCell<Vec<BatchLevel>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` as one batching level of `size` elements; returns its result and the random
/// numbers drawn inside it under `Randomness::Different` (placeholder → batched numbers).
pub(crate) fn with_batch_level<R>(
    size: usize,
    randomness: Randomness,
    f: impl FnOnce() -> R,
) -> (R, Vec<(UOp, Tensor)>) {
    struct Pop(usize);
    impl Drop for Pop {
        fn drop(&mut self) {
            LEVELS.with(|l| l.borrow_mut().truncate(self.0));
        }
    }
    let depth = LEVELS.with(|l| {
        let mut l = l.borrow_mut();
        l.push(BatchLevel { size, randomness, drawn: Vec::new() });
        l.len() - 1
    });
    let guard = Pop(depth);
    let out = f();
    let drawn = LEVELS.with(|l| std::mem::take(&mut l.borrow_mut()[depth].drawn));
    drop(guard);
    (out, drawn)
}

/// `n` random words for a random op called while a `vmap` traces, or `None` outside `vmap`
/// and under `Randomness::Same`. Under `Different` the words are drawn for the whole batch
/// (through the outer levels, so nested maps differ along every batch axis) and the function
/// sees a placeholder for its own row.
pub(crate) fn random_under_vmap(n: usize, device: &str, draw: impl FnOnce(usize) -> Tensor) -> Option<Tensor> {
    let (size, randomness) = LEVELS.with(|l| l.borrow().last().map(|t| (t.size, t.randomness)))?;
    match randomness {
        Randomness::Same => None,
        Randomness::Error => panic!(
            "vmap: a random op was called inside the mapped function; choose what it draws with \
             VmapOpts::randomness (Randomness::Same: one draw for the whole batch, Different: one per element)"
        ),
        Randomness::Different => {
            let level = LEVELS.with(|l| l.borrow_mut().pop().expect("a level is open"));
            struct Push(Option<BatchLevel>);
            impl Drop for Push {
                fn drop(&mut self) {
                    if let Some(level) = self.0.take() {
                        LEVELS.with(|l| l.borrow_mut().push(level));
                    }
                }
            }
            let mut restore = Push(Some(level));
            let words = draw(n * size).reshape([size, n]);
            let row = placeholder(&[Dim::Const(n)], words.dtype(), device);
            restore.0.as_mut().expect("not yet restored").drawn.push((row.uop(), words));
            Some(row)
        }
    }
}
