//! Creating tensors: from host data, constants, ranges, identity matrices.

use super::Tensor;
use crate::runtime::Buffer;
use crate::uop::{Arg, BufferHandle, ConstValue, DType, Dim, Element, Ops, UOp};

/// The DEVICE node for a device name.
pub(crate) fn device_node(name: &str) -> UOp {
    UOp::new(Ops::DEVICE, DType::VOID, vec![], Arg::Str(name.into()))
}

thread_local! {
    static DEFAULT_OVERRIDE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Device new tensors are created on: the innermost [`with_default_device`] scope of this
/// thread, else `Device::default()`.
pub(crate) fn default_device() -> String {
    DEFAULT_OVERRIDE.with(|o| o.borrow().clone()).unwrap_or_else(crate::runtime::registry::default_device_label)
}

/// The canonical form of a device name given in code; panics (a programmer error) when its
/// kind is not one ferrograd knows. Whether the device opens is found out when it is used.
pub(crate) fn checked_device_name(name: &str) -> String {
    if name.contains(',') {
        // Several devices (a spread tensor's device name): each part checked.
        return name.split(',').map(checked_device_name).collect::<Vec<_>>().join(",");
    }
    let canonical = crate::runtime::registry::canonical_name(name);
    let kind = canonical.split(':').next().unwrap_or("");
    let known = crate::runtime::registry::known_devices();
    assert!(known.contains(&kind), "unknown device {name:?}; known devices: {}", known.join(", "));
    canonical
}

/// Runs `f` with `device` as the default device for tensors created on this thread (tests run
/// the same code on every device this way).
pub fn with_default_device<R>(device: &str, f: impl FnOnce() -> R) -> R {
    let name = checked_device_name(device);
    let prev = DEFAULT_OVERRIDE.with(|o| o.replace(Some(name)));
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            DEFAULT_OVERRIDE.with(|o| *o.borrow_mut() = prev);
        }
    }
    let _restore = Restore(prev);
    f()
}

/// A BUFFER node (reshaped to `shape`) for a runtime buffer.
pub(crate) fn buffer_view(b: std::sync::Arc<Buffer>, shape: &[usize]) -> UOp {
    let dtype = crate::uop::BufferObj::dtype(&*b);
    let size = crate::uop::BufferObj::size(&*b);
    let node = UOp::new(Ops::BUFFER, dtype, vec![], Arg::Buffer(BufferHandle(b)));
    if shape.len() == 1 && shape[0] == size {
        node
    } else {
        UOp::new(Ops::RESHAPE, dtype, vec![node], Arg::Shape(shape.to_vec()))
    }
}

/// The node a realized tensor is: its buffer at the layout shape, and for symbolic lengths
/// `dims` the leading block of them (a symbolic shape is stored at its largest value).
pub(crate) fn buffer_view_dims(b: std::sync::Arc<Buffer>, layout: &[usize], dims: Option<&[Dim]>) -> UOp {
    let view = buffer_view(b, layout);
    match dims {
        Some(dims) => {
            let pairs = dims.iter().map(|d| (Dim::Const(0), d.clone())).collect();
            UOp::new(Ops::SHRINK, view.dtype(), vec![view], Arg::DimPairs(pairs))
        }
        None => view,
    }
}

fn check_shape(op: &str, shape: &[isize]) -> Vec<usize> {
    shape
        .iter()
        .map(|&d| {
            assert!(d >= 0, "{op}: negative dimension in shape {shape:?}");
            d as usize
        })
        .collect()
}

impl Tensor {
    /// A tensor holding `data` with `shape` on the default device.
    pub fn from_vec<T: Element>(data: Vec<T>, shape: impl super::IntoShape) -> Tensor {
        Tensor::from_slice_on(&data, shape, &default_device())
    }

    /// A 1-D tensor holding a copy of `data`.
    pub fn from_slice<T: Element>(data: &[T]) -> Tensor {
        Tensor::from_slice_on(data, [data.len()], &default_device())
    }

    /// A tensor holding a copy of `data` with `shape` on device `device`.
    pub fn from_slice_on<T: Element>(data: &[T], shape: impl super::IntoShape, device: &str) -> Tensor {
        let shape = check_shape("from_slice", &shape.into_dims());
        let n: usize = shape.iter().product();
        assert_eq!(n, data.len(), "from_slice: shape {shape:?} needs {n} elements, got {}", data.len());
        // The device opens (and the data is copied in) when the tensor is first used, so a
        // device that cannot open is an error of that realize, not a panic here.
        if device.contains(',') {
            // A device name of a spread tensor (`CPU,CPU:1`): a whole copy in each device's memory.
            let copies = device.split(',').map(|d| Tensor::from_slice_on(data, shape.clone(), d).uop()).collect();
            return Tensor::from_uop(crate::schedule::multi::Spread { shards: copies, axis: None }.multi());
        }
        let buf = Buffer::with_data(device, T::DTYPE, T::to_bytes(data));
        Tensor::from_uop(buffer_view(buf, &shape))
    }

    /// A 0-d tensor holding one value.
    pub fn scalar<T: Element>(v: T) -> Tensor {
        Tensor::full_dtype([0usize; 0], v.to_const(), T::DTYPE)
    }

    /// A tensor of `shape` filled with `value` (cast to `dtype`). No memory is used until it
    /// is realized: it is a broadcast constant.
    pub fn full_dtype(shape: impl super::IntoShape, value: ConstValue, dtype: DType) -> Tensor {
        Tensor::full_on(shape, value, dtype, &default_device())
    }

    pub(crate) fn full_on(shape: impl super::IntoShape, value: ConstValue, dtype: DType, device: &str) -> Tensor {
        let shape = check_shape("full", &shape.into_dims());
        let c = UOp::new(Ops::CONST, dtype, vec![device_node(device)], Arg::Const(value.cast(dtype)));
        if shape.is_empty() {
            return Tensor::from_uop(c);
        }
        let ones = vec![1usize; shape.len()];
        let r = UOp::new(Ops::RESHAPE, dtype, vec![c], Arg::Shape(ones));
        Tensor::from_uop(UOp::new(Ops::EXPAND, dtype, vec![r], Arg::Shape(shape)))
    }

    /// A float32 tensor of `shape` filled with `value`.
    pub fn full(shape: impl super::IntoShape, value: f64) -> Tensor {
        Tensor::full_dtype(shape, ConstValue::Float(value), DType::F32)
    }
    pub fn zeros(shape: impl super::IntoShape) -> Tensor {
        Tensor::full(shape, 0.0)
    }
    pub fn ones(shape: impl super::IntoShape) -> Tensor {
        Tensor::full(shape, 1.0)
    }
    /// Same shape, dtype and device as `self`, filled with `value`.
    pub fn full_like(&self, value: f64) -> Tensor {
        let c = if self.dtype().is_float() {
            ConstValue::Float(value)
        } else {
            ConstValue::Float(value).cast(self.dtype())
        };
        Tensor::full_on(self.shape(), c, self.dtype(), &self.device())
    }
    pub fn zeros_like(&self) -> Tensor {
        self.full_like(0.0)
    }
    pub fn ones_like(&self) -> Tensor {
        self.full_like(1.0)
    }

    /// `[0, 1, ..., n-1]` as int32, or int64 when `n` passes 2^31 (computed in the kernel that
    /// uses it; no memory).
    pub fn arange(n: usize) -> Tensor {
        let dtype = if n > i32::MAX as usize { DType::I64 } else { DType::I32 };
        Tensor::iota(n, dtype, &default_device())
    }

    pub(crate) fn iota(n: usize, dtype: DType, device: &str) -> Tensor {
        Tensor::from_uop(UOp::new(Ops::IOTA, dtype, vec![device_node(device)], Arg::Int(n as i64)))
    }

    /// `start, start+step, ...` up to (not including) `stop`, as float32 (NumPy's `arange`).
    pub fn arange_f(start: f64, stop: f64, step: f64) -> Tensor {
        assert!(step != 0.0, "arange: step must not be zero");
        let n = ((stop - start) / step).ceil().max(0.0) as usize;
        Tensor::iota(n, DType::F32, &default_device()) * step + start
    }

    /// `steps` evenly spaced float32 values from `start` to `end` inclusive.
    pub fn linspace(start: f64, end: f64, steps: usize) -> Tensor {
        if steps == 1 {
            return Tensor::full([1], start);
        }
        let step = (end - start) / (steps as f64 - 1.0);
        Tensor::iota(steps, DType::F32, &default_device()) * step + start
    }

    /// The `n`×`n` float32 identity matrix.
    pub fn eye(n: usize) -> Tensor {
        Tensor::eye_dtype(n, n, DType::F32)
    }

    // ---------------------------------------------------------------- with a dtype argument

    /// A tensor whose contents are not to be relied on (as `torch.empty`); today zeros, and like
    /// every constant it takes no memory until realized or assigned into.
    pub fn empty(shape: impl super::IntoShape, dtype: DType) -> Tensor {
        Tensor::zeros_dtype(shape, dtype)
    }
    /// `empty` of this tensor's shape, dtype and device.
    pub fn empty_like(&self) -> Tensor {
        self.zeros_like()
    }
    /// `n` rows, `m` columns, ones on the diagonal, of `dtype` (as `torch.eye(n, m, dtype=)`).
    pub fn eye_dtype(n: usize, m: usize, dtype: DType) -> Tensor {
        let dev = default_device();
        let (i, j) = (Tensor::iota(n, DType::I32, &dev), Tensor::iota(m, DType::I32, &dev));
        i.reshape([n, 1]).eq(j.reshape([1, m])).cast(dtype)
    }
    /// A tensor of `shape` filled with `value` cast to `dtype` (as `torch.full(.., dtype=)`).
    pub fn full_as(shape: impl super::IntoShape, value: f64, dtype: DType) -> Tensor {
        Tensor::full_dtype(shape, ConstValue::Float(value), dtype)
    }
    pub fn zeros_dtype(shape: impl super::IntoShape, dtype: DType) -> Tensor {
        Tensor::full_as(shape, 0.0, dtype)
    }
    pub fn ones_dtype(shape: impl super::IntoShape, dtype: DType) -> Tensor {
        Tensor::full_as(shape, 1.0, dtype)
    }
    /// Same shape and device as `self`, of `dtype`, filled with `value`.
    pub fn full_like_dtype(&self, value: f64, dtype: DType) -> Tensor {
        Tensor::full_on(self.shape(), ConstValue::Float(value).cast(dtype), dtype, &self.device())
    }
    pub fn zeros_like_dtype(&self, dtype: DType) -> Tensor {
        self.full_like_dtype(0.0, dtype)
    }
    pub fn ones_like_dtype(&self, dtype: DType) -> Tensor {
        self.full_like_dtype(1.0, dtype)
    }
    /// `start, start+step, ...` up to (not including) `stop`, of `dtype` (as `torch.arange(start,
    /// end, step, dtype=)`): for integer dtypes the length comes from the float arguments and
    /// the values, exact, from their integer parts (as PyTorch); floats are computed in f32 (f64
    /// for f64) and cast.
    pub fn arange_dtype(start: f64, stop: f64, step: f64, dtype: DType) -> Tensor {
        assert!(step != 0.0, "arange: step must not be zero");
        let n = ((stop - start) / step).ceil().max(0.0) as usize;
        let dev = default_device();
        if !dtype.is_float() && !dtype.is_bool() {
            // PyTorch: the length from the float arguments, the values from their integer parts.
            return Tensor::iota(n, dtype, &dev) * (step.trunc() as i64) + (start.trunc() as i64);
        }
        let work = if dtype == DType::F64 { DType::F64 } else { DType::F32 };
        (Tensor::iota(n, work, &dev) * step + start).cast(dtype)
    }
    /// `steps` evenly spaced values from `start` to `end` inclusive, of `dtype` (computed in
    /// float, then cast: integer dtypes truncate toward zero, as PyTorch).
    pub fn linspace_dtype(start: f64, end: f64, steps: usize, dtype: DType) -> Tensor {
        let work = if dtype == DType::F64 { DType::F64 } else { DType::F32 };
        let dev = default_device();
        if steps == 1 {
            return Tensor::full_as([1], start, work).cast(dtype);
        }
        let step = (end - start) / (steps as f64 - 1.0);
        (Tensor::iota(steps, work, &dev) * step + start).cast(dtype)
    }
}
