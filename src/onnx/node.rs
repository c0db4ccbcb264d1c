//! One node being run: its inputs (absent optional inputs are `None`), its attributes, the
//! opset it binds to, and the errors that name it.

use super::proto::{attribute_type as at, AttributeProto, NodeProto};
use super::value::tensor_from_proto;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::path::Path;

/// A node's outputs in order; `None` where an optional output is not computed.
pub(crate) type Outs = Vec<Option<Tensor>>;

/// The outputs of a node with one output.
pub(crate) fn one(t: Result<Tensor>) -> Result<Outs> {
    Ok(vec![Some(t?)])
}

pub(crate) struct Node<'a> {
    pub proto: &'a NodeProto,
    pub inputs: Vec<Option<Tensor>>,
    /// The version of the node's domain that the model imports.
    pub opset: i64,
    pub origin: &'a Path,
    pub device: &'a str,
}

impl Node<'_> {
    pub fn op(&self) -> &str {
        self.proto.op_type.as_deref().unwrap_or("")
    }

    /// "node NAME (OP, opset N)", the start of every message about this node.
    pub fn describe(&self) -> String {
        let name = self.proto.name.as_deref().filter(|n| !n.is_empty());
        let out = self.proto.output.first().map(String::as_str).unwrap_or("");
        format!("node {:?} ({}, opset {})", name.unwrap_or(out), self.op(), self.opset)
    }

    /// An `Err` naming this node: the model is wrong or uses something not implemented.
    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::format(self.origin, format!("{}: {message}", self.describe()))
    }

    pub fn unsupported(&self, what: impl std::fmt::Display) -> Error {
        Error::Unsupported(format!("{}: {what}", self.describe()))
    }

    pub fn input(&self, i: usize) -> Result<&Tensor> {
        self.opt(i).ok_or_else(|| self.error(format!("input {i} is required")))
    }

    pub fn opt(&self, i: usize) -> Option<&Tensor> {
        self.inputs.get(i).and_then(Option::as_ref)
    }

    /// The inputs that are present, in order (variadic ops: Sum, Max, Concat).
    pub fn present(&self) -> Vec<&Tensor> {
        self.inputs.iter().flatten().collect()
    }

    pub fn attr(&self, name: &str) -> Option<&AttributeProto> {
        self.proto.attribute.iter().find(|a| a.name.as_deref() == Some(name))
    }

    fn typed(&self, name: &str, want: i32) -> Result<Option<&AttributeProto>> {
        match self.attr(name) {
            Some(a) if a.r#type.is_some_and(|t| t != want) => {
                Err(self.error(format!("attribute {name} has type {:?}, not {want}", a.r#type)))
            }
            a => Ok(a),
        }
    }

    pub fn int(&self, name: &str, default: i64) -> Result<i64> {
        Ok(self.typed(name, at::INT)?.and_then(|a| a.i).unwrap_or(default))
    }

    pub fn float(&self, name: &str, default: f64) -> Result<f64> {
        Ok(self.typed(name, at::FLOAT)?.and_then(|a| a.f).map_or(default, f64::from))
    }

    pub fn ints(&self, name: &str) -> Result<Option<Vec<i64>>> {
        Ok(self.typed(name, at::INTS)?.map(|a| a.ints.clone()))
    }

    pub fn floats(&self, name: &str) -> Result<Option<Vec<f32>>> {
        Ok(self.typed(name, at::FLOATS)?.map(|a| a.floats.clone()))
    }

    pub fn string(&self, name: &str, default: &str) -> Result<String> {
        Ok(match self.typed(name, at::STRING)?.and_then(|a| a.s.as_ref()) {
            Some(s) => String::from_utf8_lossy(s).into_owned(),
            None => default.to_string(),
        })
    }

    pub fn tensor_attr(&self, name: &str) -> Result<Option<Tensor>> {
        match self.typed(name, at::TENSOR)?.and_then(|a| a.t.as_ref()) {
            Some(t) => Ok(Some(tensor_from_proto(
                t,
                self.origin,
                self.origin.parent().unwrap_or(Path::new(".")),
                self.device,
            )?)),
            None => Ok(None),
        }
    }

    /// The values of integer input `i` (shapes, axes, pads: small tensors read to the host).
    pub fn input_ints(&self, i: usize) -> Result<Option<Vec<i64>>> {
        let Some(t) = self.opt(i) else { return Ok(None) };
        if !(t.dtype().is_int() || t.dtype().is_bool()) {
            return Err(self.error(format!("input {i} must be integers, it is {:?}", t.dtype())));
        }
        Ok(Some(t.cast(crate::uop::DType::I64).to_vec::<i64>()?))
    }

    /// The values of input `i` as floats (scalar parameters given as tensors).
    pub fn input_f64s(&self, i: usize) -> Result<Option<Vec<f64>>> {
        self.opt(i).map(|t| t.to_f64_vec()).transpose()
    }

    /// Input `i`'s values if present, else the attribute `name` (opsets moved many attributes
    /// to inputs: axes, split, pads).
    pub fn ints_from(&self, i: usize, name: &str) -> Result<Option<Vec<i64>>> {
        match self.input_ints(i)? {
            Some(v) => Ok(Some(v)),
            None => self.ints(name),
        }
    }

    /// Axis `a` (negative from the end) of a rank-`rank` tensor.
    pub fn axis(&self, a: i64, rank: usize) -> Result<usize> {
        let r = rank as i64;
        if (-r.max(1)..r.max(1)).contains(&a) {
            Ok(a.rem_euclid(r.max(1)) as usize)
        } else {
            Err(self.error(format!("axis {a} is out of range for rank {rank}")))
        }
    }
}
