//! ONNX models (cargo feature `onnx`): a `.onnx` file read with prost and ONNX's schema
//! ([`proto`]), its graph run node by node on lazy tensors, so the whole model fuses and
//! schedules like any ferrograd program and runs on any device.
//!
//! ```no_run
//! use ferrograd::onnx::OnnxModel;
//! use ferrograd::Tensor;
//! let model = OnnxModel::load("mnist.onnx")?;
//! let x = Tensor::zeros([1, 1, 28, 28]);
//! let out = model.run([("input", x)])?;
//! println!("{:?}", out["logits"].to_vec::<f32>()?);
//! # Ok::<(), ferrograd::error::Error>(())
//! ```
//!
//! Ops are dispatched by `op_type` and the opset the model imports (`ops/`); an op ferrograd does
//! not implement is `Error::Unsupported` naming it and its opset. Coverage is measured by ONNX's
//! own backend tests (`examples/onnx_node_tests.rs`).

mod control;
mod graph;
mod node;
mod ops;
pub mod proto;
mod value;

pub use graph::OnnxModel;
pub use value::load_tensor;
