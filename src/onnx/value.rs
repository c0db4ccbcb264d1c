//! ONNX tensors (`TensorProto`) as ferrograd tensors: every numeric dtype ferrograd holds, from
//! `raw_data` (little-endian bytes), the typed fields, or an external data file next to the model.
//! A tensor whose bytes do not match its dims, or a dtype ferrograd lacks (strings, complex,
//! float8/4-bit), is an `Err` saying so.

use super::proto::{data_type as dt, TensorProto};
use crate::error::{Error, Result};
use crate::runtime::Buffer;
use crate::tensor::{buffer_view, Tensor};
use crate::uop::DType;
use std::path::Path;

/// ferrograd's dtype for an ONNX `TensorProto.DataType` code.
pub(crate) fn dtype_of(code: i32) -> Option<DType> {
    Some(match code {
        dt::FLOAT => DType::F32,
        dt::UINT8 => DType::U8,
        dt::INT8 => DType::I8,
        dt::UINT16 => DType::U16,
        dt::INT16 => DType::I16,
        dt::INT32 => DType::I32,
        dt::INT64 => DType::I64,
        dt::BOOL => DType::BOOL,
        dt::FLOAT16 => DType::F16,
        dt::DOUBLE => DType::F64,
        dt::UINT32 => DType::U32,
        dt::UINT64 => DType::U64,
        dt::BFLOAT16 => DType::BF16,
        _ => return None,
    })
}

/// The name of an ONNX data type code, for messages.
pub(crate) fn type_name(code: i32) -> String {
    const NAMES: [&str; 29] = [
        "UNDEFINED",
        "FLOAT",
        "UINT8",
        "INT8",
        "UINT16",
        "INT16",
        "INT32",
        "INT64",
        "STRING",
        "BOOL",
        "FLOAT16",
        "DOUBLE",
        "UINT32",
        "UINT64",
        "COMPLEX64",
        "COMPLEX128",
        "BFLOAT16",
        "FLOAT8E4M3FN",
        "FLOAT8E4M3FNUZ",
        "FLOAT8E5M2",
        "FLOAT8E5M2FNUZ",
        "UINT4",
        "INT4",
        "FLOAT4E2M1",
        "FLOAT8E8M0",
        "UINT2",
        "INT2",
        "FLOAT6E2M3",
        "FLOAT6E3M2",
    ];
    usize::try_from(code).ok().and_then(|i| NAMES.get(i)).map_or_else(|| format!("data type {code}"), |s| s.to_string())
}

/// A dtype ferrograd does not hold: an `Err` naming it (the ONNX runner counts it unsupported).
pub(crate) fn unsupported_type(code: i32, what: &str) -> Error {
    Error::Unsupported(format!("{what} has ONNX type {}, which ferrograd does not hold", type_name(code)))
}

/// `t` as a tensor on `device`. `origin` names the file in messages; `model_dir` is where
/// external data lives.
pub(crate) fn tensor_from_proto(t: &TensorProto, origin: &Path, model_dir: &Path, device: &str) -> Result<Tensor> {
    let name = t.name.clone().unwrap_or_default();
    let what = if name.is_empty() { "a tensor".to_string() } else { format!("tensor {name:?}") };
    let err = |m: String| Error::format(origin, format!("{what}: {m}"));
    let code = t.data_type.unwrap_or(0);
    let dtype = dtype_of(code).ok_or_else(|| unsupported_type(code, &what))?;
    let mut shape = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        shape.push(usize::try_from(d).map_err(|_| err(format!("negative dimension in dims {:?}", t.dims)))?);
    }
    let numel = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let nbytes =
        numel.and_then(|n| n.checked_mul(dtype.itemsize())).ok_or_else(|| err(format!("dims {shape:?} overflow")))?;
    let numel = numel.unwrap_or(0);
    let bytes = if t.data_location == Some(1) {
        external_bytes(t, model_dir, nbytes).map_err(err)?
    } else if let Some(raw) = &t.raw_data {
        raw.clone()
    } else {
        typed_bytes(t, code, dtype, numel).map_err(err)?
    };
    if bytes.len() != nbytes {
        return Err(err(format!(
            "dims {shape:?} of {} need {nbytes} bytes but the data has {}; the file is truncated or corrupt",
            type_name(code),
            bytes.len()
        )));
    }
    let mut bytes = bytes;
    if dtype.is_bool() {
        bytes.iter_mut().for_each(|b| *b = (*b != 0) as u8);
    }
    Ok(Tensor::from_uop(buffer_view(Buffer::with_data(device, dtype, bytes), &shape)))
}

/// The values of a tensor stored in the typed fields, as little-endian bytes of `dtype`.
fn typed_bytes(t: &TensorProto, code: i32, dtype: DType, numel: usize) -> std::result::Result<Vec<u8>, String> {
    let count = |n: usize, field: &str| {
        if n == numel {
            Ok(())
        } else {
            Err(format!("{field} holds {n} values but the dims hold {numel}"))
        }
    };
    Ok(match code {
        dt::FLOAT => {
            count(t.float_data.len(), "float_data")?;
            t.float_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        dt::DOUBLE => {
            count(t.double_data.len(), "double_data")?;
            t.double_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        dt::INT64 => {
            count(t.int64_data.len(), "int64_data")?;
            t.int64_data.iter().flat_map(|v| v.to_le_bytes()).collect()
        }
        dt::UINT32 | dt::UINT64 => {
            count(t.uint64_data.len(), "uint64_data")?;
            let size = dtype.itemsize();
            t.uint64_data.iter().flat_map(|v| v.to_le_bytes()[..size].to_vec()).collect()
        }
        // Every narrower type (and float16/bfloat16 as bit patterns) travels in int32_data.
        _ => {
            count(t.int32_data.len(), "int32_data")?;
            let size = dtype.itemsize();
            t.int32_data.iter().flat_map(|v| v.to_le_bytes()[..size].to_vec()).collect()
        }
    })
}

/// The bytes of a tensor whose data is in a file next to the model (`external_data`: location,
/// offset, length). The location must stay inside the model's folder.
fn external_bytes(t: &TensorProto, model_dir: &Path, nbytes: usize) -> std::result::Result<Vec<u8>, String> {
    let get = |k: &str| t.external_data.iter().find(|e| e.key.as_deref() == Some(k)).and_then(|e| e.value.clone());
    let location = get("location").ok_or("external data without a location")?;
    let rel = Path::new(&location);
    if rel.is_absolute() || rel.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(format!("external data location {location:?} leaves the model's folder"));
    }
    let parse =
        |k: &str| get(k).map(|v| v.parse::<u64>().map_err(|_| format!("external data {k} {v:?} is not a number")));
    let offset = parse("offset").transpose()?.unwrap_or(0);
    let length = parse("length").transpose()?.unwrap_or(nbytes as u64);
    let path = model_dir.join(rel);
    let data = std::fs::read(&path).map_err(|e| format!("external data file {}: {e}", path.display()))?;
    let end = offset.checked_add(length).filter(|&e| e <= data.len() as u64).ok_or_else(|| {
        format!("external data {}: bytes {offset}..+{length} are past its end ({} bytes)", path.display(), data.len())
    })?;
    Ok(data[offset as usize..end as usize].to_vec())
}

/// A `TensorProto` file (the ONNX test data's `input_0.pb`) as a tensor on the default device.
pub fn load_tensor(path: impl AsRef<Path>) -> Result<Tensor> {
    use prost::Message;
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(Error::file(path))?;
    let t = TensorProto::decode(bytes.as_slice())
        .map_err(|e| Error::format(path, format!("not an ONNX TensorProto: {e}")))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    tensor_from_proto(&t, path, dir, &crate::tensor::default_device())
}
