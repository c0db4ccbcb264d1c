//! Realizing and reading data: `realize`, `to_vec`, `item`, `Display`.

use super::create::{buffer_view, buffer_view_dims};
use super::Tensor;
use crate::engine;
use crate::error::{Error, Result};
use crate::runtime::Buffer;
use crate::schedule::multi::{self, Lowered, Spread};
use crate::uop::dtype::decode_element;
use crate::uop::{ConstValue, Element};
use std::fmt;
use std::sync::Arc;

impl Tensor {
    /// Computes this tensor now; afterwards it stands for its own buffer.
    pub fn realize(&self) -> Result<Tensor> {
        Tensor::realize_all(&[self])?;
        Ok(self.clone())
    }

    /// Computes several tensors in one schedule (shared work is done once).
    pub fn realize_all(tensors: &[&Tensor]) -> Result<()> {
        Tensor::realize_all_notifying(tensors, &mut |_, _, _| {})
    }

    /// `realize_all`, calling `ready(i, buffer, steps_left)` once tensor `i` (not spread over
    /// devices) holds its value in `buffer`, while `steps_left` steps of the schedule are still
    /// to run (see
    /// `engine::realize_notifying`: `ready` may read the buffer, never realize). A spread
    /// tensor gets no call.
    pub(crate) fn realize_all_notifying(
        tensors: &[&Tensor],
        ready: &mut dyn FnMut(usize, &Arc<Buffer>, usize),
    ) -> Result<()> {
        let asked = tensors.len();
        // Equal graphs are one node (hash-consing): two tensors asking for the same new value
        // must still get buffers of their own, or an assign to one would change the other.
        let pending = super::assign::take_pending_assigns();
        // Index bounds registered by gathers and friends run in the same schedule.
        let checks = super::checks::take_pending();
        let tensors: Vec<&Tensor> = tensors
            .iter()
            .copied()
            .chain(pending.iter().filter(|p| !tensors.iter().any(|t| t.same(p))))
            .chain(checks.iter().map(|c| &c.bounds))
            .collect();
        let mut uops: Vec<crate::UOp> = Vec::with_capacity(tensors.len());
        for t in &tensors {
            let u = t.uop();
            let dup = uops.contains(&u) && crate::schedule::existing_buffer(&u).is_none();
            uops.push(if dup { t.contiguous().uop() } else { u });
        }
        // Tensors spread over devices become one graph per device (`schedule/multi.rs`).
        let lowered: Vec<Lowered> = match multi::needs_lowering() {
            true => multi::lower(&uops),
            false => uops.iter().cloned().map(Lowered::One).collect(),
        };
        let roots: Vec<crate::UOp> = lowered
            .iter()
            .flat_map(|l| match l {
                Lowered::One(u) => vec![u.clone()],
                Lowered::Spread(s) => s.shards.clone(),
            })
            .collect();
        let mut devices: Vec<&str> = roots.iter().filter_map(|u| u.device()).collect();
        devices.sort_unstable();
        devices.dedup();
        for d in devices {
            super::selftest::ensure(d)?;
        }
        // Which asked-for tensor each root is (spread tensors' shards are none).
        let owner: Vec<Option<usize>> = lowered
            .iter()
            .enumerate()
            .flat_map(|(i, l)| match l {
                Lowered::One(_) => vec![(i < asked).then_some(i)],
                Lowered::Spread(s) => vec![None; s.shards.len()],
            })
            .collect();
        let mut notify = |j: usize, b: &Arc<Buffer>, left: usize| {
            if let Some(i) = owner[j] {
                ready(i, b, left)
            }
        };
        let mut bufs = engine::realize_notifying(&roots, &mut notify)?.into_iter();
        for ((t, logical), low) in tensors.iter().zip(&uops).zip(lowered) {
            let old = t.uop();
            let view = match low {
                Lowered::One(u) => {
                    let dims = old.has_symbolic_shape().then(|| old.sym_shape());
                    let view = buffer_view_dims(bufs.next().expect("a buffer per root"), old.shape(), dims.as_deref());
                    if u != *logical {
                        multi::remember_realized(logical, &view);
                    }
                    view
                }
                Lowered::Spread(s) => {
                    let shards =
                        s.shards.iter().map(|x| buffer_view(bufs.next().expect("a buffer per shard"), x.shape()));
                    let view = Spread { shards: shards.collect(), axis: s.axis }.multi();
                    multi::remember_realized(logical, &view);
                    view
                }
            };
            let inner = t.read();
            let keep_graph = !inner.requires_grad && !inner.backward_done;
            drop(inner);
            if keep_graph {
                super::grad::remember_graph(&view, &old);
            }
            t.set_uop(view);
        }
        for c in &checks {
            // A check spread over devices was allreduced: every device holds the same bounds.
            let bounds = c.bounds.uop();
            let held = if bounds.op() == crate::uop::Ops::MULTI { bounds.src()[0].clone() } else { bounds };
            let buf = crate::schedule::existing_buffer(&held).expect("a realized index check");
            super::checks::verify(&buf, c.lo, c.hi, &c.what, c.condition)?;
            let (lo, hi, what, condition) = (c.lo, c.hi, c.what.clone(), c.condition);
            engine::capture::record_check(engine::capture::Check { buf, lo, hi, what, condition });
        }
        Ok(())
    }

    /// The realized buffer holding this tensor's elements in row-major order.
    pub(crate) fn buffer(&self) -> Result<Arc<Buffer>> {
        self.realize()?;
        let bufs = engine::realize(&[self.uop()])?;
        Ok(bufs[0].clone())
    }

    /// The raw little-endian bytes of the elements.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        if engine::capture::is_capturing() {
            engine::capture::note_read();
            return Err(Error::Jit(
                "TinyJit: reading tensor data inside a captured function is not allowed (it would not be replayed)"
                    .into(),
            ));
        }
        if self.is_spread() {
            // Gathered on the first device (shards concatenated, or one copy).
            return self.to(&self.devices()[0]).to_bytes();
        }
        let bytes = self.buffer()?.to_bytes()?;
        if !self.is_symbolic() {
            return Ok(bytes);
        }
        // A symbolic shape is stored in the layout of its largest value: the elements of the
        // bound lengths are a block of it.
        let dims = self.sym_shape();
        let lens: Vec<usize> = dims
            .iter()
            .map(|d| d.value().unwrap_or_else(|| panic!("to_vec: the shape {dims:?} has an unbound variable")))
            .collect();
        Ok(leading_block(&bytes, &self.layout_shape(), &lens, self.dtype().itemsize()))
    }

    /// The elements in row-major order; `T` must match the dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        if self.dtype() != T::DTYPE {
            return Err(Error::DType { have: self.dtype().name().into(), want: T::DTYPE.name().into() });
        }
        Ok(T::from_bytes(&self.to_bytes()?))
    }

    /// Every element converted to f64 (any dtype).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        let dt = self.dtype();
        let bytes = self.to_bytes()?;
        Ok((0..bytes.len() / dt.itemsize().max(1))
            .map(|i| {
                let c = decode_element(&bytes, dt, i);
                match c {
                    ConstValue::Int(v) if dt == crate::DType::U64 => v as u64 as f64,
                    c => c.as_f64(),
                }
            })
            .collect())
    }

    /// The single element of a one-element tensor.
    pub fn item<T: Element>(&self) -> Result<T> {
        assert_eq!(self.numel(), 1, "item: tensor of shape {:?} has {} elements, not 1", self.shape(), self.numel());
        Ok(self.to_vec::<T>()?[0])
    }
}

fn fmt_nested(f: &mut fmt::Formatter<'_>, vals: &[String], shape: &[usize]) -> fmt::Result {
    if shape.is_empty() {
        return write!(f, "{}", vals[0]);
    }
    write!(f, "[")?;
    let inner: usize = shape[1..].iter().product();
    for i in 0..shape[0] {
        if i > 0 {
            write!(f, ", ")?;
        }
        fmt_nested(f, &vals[i * inner..(i + 1) * inner], &shape[1..])?;
    }
    write!(f, "]")
}

impl Tensor {
    /// The values as nested lists, like `[[1.0, 2.0], [3.0, 4.0]]` (realizes the tensor).
    pub fn values_string(&self) -> Result<String> {
        struct Nested<'a>(&'a [String], &'a [usize]);
        impl fmt::Display for Nested<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt_nested(f, self.0, self.1)
            }
        }
        let dt = self.dtype();
        let bytes = self.to_bytes()?;
        // A symbolic tensor shows the elements of its bound lengths.
        let shape: Vec<usize> = self.sym_shape().iter().map(|d| d.value().unwrap_or(0)).collect();
        let n = bytes.len() / dt.itemsize().max(1);
        let vals: Vec<String> = (0..n).map(|i| format_element(decode_element(&bytes, dt, i), dt)).collect();
        Ok(Nested(&vals, &shape).to_string())
    }
}

fn format_element(c: ConstValue, dt: crate::DType) -> String {
    match c {
        ConstValue::Float(x) => format!("{x:?}"),
        ConstValue::Int(x) if dt == crate::DType::U64 => (x as u64).to_string(),
        ConstValue::Int(x) => x.to_string(),
        ConstValue::Bool(b) => b.to_string(),
    }
}

impl fmt::Display for Tensor {
    /// The values as nested lists, then shape, dtype and device (realizes the tensor).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = self.sym_shape();
        let dt = self.dtype();
        match self.values_string() {
            Ok(v) => write!(f, "Tensor({v}, shape={shape:?}, dtype={dt}, device={})", self.device()),
            Err(e) => write!(f, "Tensor(<not realized: {e}>, shape={shape:?}, dtype={dt}, device={})", self.device()),
        }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<Tensor shape={:?} dtype={} device={}>", self.sym_shape(), self.dtype(), self.device())
    }
}

/// The elements `[0..lens[0], 0..lens[1], ...]` of a row-major array of shape `layout`.
fn leading_block(bytes: &[u8], layout: &[usize], lens: &[usize], itemsize: usize) -> Vec<u8> {
    let n: usize = lens.iter().product();
    let mut out = Vec::with_capacity(n * itemsize);
    for k in 0..n {
        let (mut rest, mut offset, mut stride) = (k, 0, 1);
        for (len, size) in lens.iter().zip(layout).rev() {
            offset += (rest % len) * stride;
            rest /= len;
            stride *= size;
        }
        out.extend_from_slice(&bytes[offset * itemsize..(offset + 1) * itemsize]);
    }
    out
}
