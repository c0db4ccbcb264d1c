//! GGUF files (llama.cpp's model format): a header of typed metadata and tensor descriptions,
//! then aligned tensor data. Versions 2 and 3, little-endian.
//!
//! [`gguf_load`] reads the metadata and every tensor. Plain types (F32, F16, BF16, F64, I8..I64)
//! become tensors of that dtype; block-quantized types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K)
//! stay quantized in memory and come back as lazy f32 tensors that dequantize inside the
//! kernels reading them (see `quant.rs`). Shapes are PyTorch's order: GGUF lists dimensions
//! fastest-first, so `[ne0, ne1]` is a `[ne1, ne0]` tensor.
//!
//! Nothing in the file is trusted: every length and offset is checked against the file before
//! use, so a corrupt or truncated file is an [`Error::Format`] naming the file and the problem.

mod quant;

pub use quant::GgmlType;

use crate::error::{Error, Result};
use crate::runtime::{get_device, Buffer};
use crate::tensor::{buffer_view, Tensor};
use crate::uop::DType;
use memmap2::Mmap;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

/// A metadata value.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufValue {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Bool(bool),
    String(String),
    Array(Vec<GgufValue>),
}

impl GgufValue {
    /// The value as an unsigned integer, if it is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        use GgufValue::*;
        match *self {
            U8(v) => Some(v as u64),
            U16(v) => Some(v as u64),
            U32(v) => Some(v as u64),
            U64(v) => Some(v),
            I8(v) => u64::try_from(v).ok(),
            I16(v) => u64::try_from(v).ok(),
            I32(v) => u64::try_from(v).ok(),
            I64(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
    /// The value as a float, if it is a number.
    pub fn as_f64(&self) -> Option<f64> {
        use GgufValue::*;
        match *self {
            F32(v) => Some(v as f64),
            F64(v) => Some(v),
            I8(v) => Some(v as f64),
            I16(v) => Some(v as f64),
            I32(v) => Some(v as f64),
            I64(v) => Some(v as f64),
            _ => self.as_u64().map(|v| v as f64),
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            GgufValue::String(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&[GgufValue]> {
        match self {
            GgufValue::Array(a) => Some(a),
            _ => None,
        }
    }
}

/// What a GGUF file holds.
pub struct Gguf {
    /// Every metadata key (`general.architecture`, `llama.block_count`, `tokenizer.ggml.tokens`, ...).
    pub metadata: BTreeMap<String, GgufValue>,
    /// Every tensor by name, in PyTorch's dimension order (quantized ones as lazy f32).
    pub tensors: BTreeMap<String, Tensor>,
    /// The type each tensor is stored as in the file (and in memory).
    pub types: BTreeMap<String, GgmlType>,
}

/// Reads a GGUF file onto the default device (see the module docs).
pub fn gguf_load(path: impl AsRef<Path>) -> Result<Gguf> {
    gguf_load_on(path, &crate::tensor::default_device())
}

/// Reads a GGUF file onto `device`.
pub fn gguf_load_on(path: impl AsRef<Path>, device: &str) -> Result<Gguf> {
    let path = path.as_ref();
    let dev = get_device(device)?;
    let map = map_file(path)?;
    let fail = |message: String| Error::Format { path: path.to_path_buf(), message };
    let header = parse_header(&map).map_err(fail)?;
    let mut out = Gguf { metadata: header.metadata, tensors: BTreeMap::new(), types: BTreeMap::new() };
    for info in header.tensors {
        let start = header.data_start.checked_add(info.offset);
        let bytes = start.and_then(|s| s.checked_add(info.bytes).and_then(|e| map.get(s..e)));
        let Some(bytes) = bytes else {
            return Err(fail(format!(
                "tensor `{}` ({:?}, shape {:?}) needs {} bytes at offset {} of the data section, which \
                 starts at byte {} of a {}-byte file; the file is truncated or corrupt",
                info.name,
                info.ty,
                info.shape,
                info.bytes,
                info.offset,
                header.data_start,
                map.len()
            )));
        };
        let tensor = match info.ty.plain_dtype() {
            Some(dtype) => {
                let buf = Buffer::new(dev.clone(), dtype, bytes.len() / dtype.itemsize());
                buf.copy_in(bytes)?;
                Tensor::from_uop(buffer_view(buf, &info.shape))
            }
            None => {
                let block_bytes = info.ty.block().1;
                let buf = Buffer::new(dev.clone(), DType::U8, bytes.len());
                buf.copy_in(bytes)?;
                let raw = Tensor::from_uop(buffer_view(buf, &[bytes.len() / block_bytes, block_bytes]));
                quant::dequantize(&raw, info.ty).reshape(info.shape.clone())
            }
        };
        #[cfg(unix)]
        if let Some(s) = start {
            // Drop the pages read so far from this process's resident set (see safe_load_on).
            // SAFETY: MADV_DONTNEED on a read-only shared file mapping only drops page table
            // entries; a later access faults the same bytes back in from the file. The range
            // is inside the map (checked by `map.get` above).
            let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, s, info.bytes) };
        }
        out.types.insert(info.name.clone(), info.ty);
        out.tensors.insert(info.name, tensor);
    }
    Ok(out)
}

/// Reads only the metadata of a GGUF file (its tensors are not loaded).
pub fn gguf_metadata(path: impl AsRef<Path>) -> Result<BTreeMap<String, GgufValue>> {
    let path = path.as_ref();
    let map = map_file(path)?;
    let header = parse_header(&map).map_err(|message| Error::Format { path: path.to_path_buf(), message })?;
    Ok(header.metadata)
}

/// A read-only map of the file at `path`, for the two readers above.
fn map_file(path: &Path) -> Result<Mmap> {
    let file = File::open(path).map_err(|source| Error::File { path: path.to_path_buf(), source })?;
    // SAFETY: a file map's bytes may change if another process writes the file meanwhile. Both
    // callers check every offset against the map's length, fixed at mapping time, so such a
    // change cannot make them read out of bounds; they parse bytes by value (never cast to
    // references of other types), only copy tensor bytes, and drop the map before returning,
    // with nothing borrowing from it. A file truncated by another process meanwhile could raise
    // SIGBUS, as with every mmap-based loader.
    unsafe { Mmap::map(&file) }.map_err(|source| Error::File { path: path.to_path_buf(), source })
}

/// One tensor's description in the header.
struct TensorInfo {
    name: String,
    shape: Vec<usize>,
    ty: GgmlType,
    offset: usize,
    bytes: usize,
}

struct Header {
    metadata: BTreeMap<String, GgufValue>,
    tensors: Vec<TensorInfo>,
    data_start: usize,
}

/// The most dimensions a GGUF tensor has (ggml's `GGML_MAX_DIMS`).
const MAX_DIMS: u32 = 4;

fn parse_header(bytes: &[u8]) -> std::result::Result<Header, String> {
    let mut r = Reader { bytes, at: 0 };
    let magic = r.take(4).map_err(|_| format!("file is {} bytes, too short for a GGUF header", bytes.len()))?;
    if magic != b"GGUF" {
        return Err(format!("does not start with the GGUF magic (found {magic:02x?}); it is not a GGUF file"));
    }
    let version = r.u32()?;
    match version {
        2 | 3 => {}
        1 => return Err("GGUF version 1 is not supported (re-convert the model with a current llama.cpp)".into()),
        v if v.swap_bytes() <= 3 => {
            return Err("is a big-endian GGUF file; only little-endian files are supported".into());
        }
        v => return Err(format!("GGUF version {v} is not supported (versions 2 and 3 are)")),
    }
    let n_tensors = r.count("tensor count", 8 + 4 + 4 + 8)?;
    let n_kv = r.count("metadata count", 8 + 4)?;
    let mut metadata = BTreeMap::new();
    for _ in 0..n_kv {
        let key = r.string()?;
        let ty = r.u32()?;
        let value = r.value(ty).map_err(|e| format!("metadata `{key}`: {e}"))?;
        metadata.insert(key, value);
    }
    let mut tensors = Vec::with_capacity(n_tensors);
    for _ in 0..n_tensors {
        let name = r.string()?;
        let dims = r.u32()?;
        if dims > MAX_DIMS {
            return Err(format!("tensor `{name}` has {dims} dimensions (at most {MAX_DIMS}); the file is corrupt"));
        }
        let mut ne = Vec::new();
        for _ in 0..dims {
            ne.push(usize::try_from(r.u64()?).map_err(|_| format!("tensor `{name}`: a dimension overflows"))?);
        }
        let ty = GgmlType::from_id(r.u32()?)
            .map_err(|t| format!("tensor `{name}` has type {t}, which ferrograd cannot read yet"))?;
        let offset = usize::try_from(r.u64()?).map_err(|_| format!("tensor `{name}`: offset overflows"))?;
        let (block, block_bytes) = ty.block();
        let row = ne.first().copied().unwrap_or(1);
        if row % block != 0 {
            return Err(format!(
                "tensor `{name}` ({ty:?}) has rows of {row} elements, not a multiple of its block of {block}"
            ));
        }
        let numel = ne.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let bytes = numel.and_then(|n| (n / block).checked_mul(block_bytes));
        let bytes = bytes.ok_or_else(|| format!("tensor `{name}`: shape {ne:?} overflows"))?;
        let shape = ne.into_iter().rev().collect();
        tensors.push(TensorInfo { name, shape, ty, offset, bytes });
    }
    let alignment = match metadata.get("general.alignment") {
        None => 32,
        Some(v) => match v.as_u64() {
            Some(a) if a > 0 && a.is_power_of_two() => a as usize,
            _ => return Err(format!("general.alignment is {v:?}, not a power of two")),
        },
    };
    let data_start = r.at.div_ceil(alignment) * alignment;
    for t in &tensors {
        if t.offset % alignment != 0 {
            return Err(format!("tensor `{}` starts at offset {}, not a multiple of {alignment}", t.name, t.offset));
        }
    }
    Ok(Header { metadata, tensors, data_start })
}

/// A bounds-checked little-endian reader over the file's bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| {
            format!(
                "the header needs {n} more bytes at byte {} but the file ends at {}; it is truncated",
                self.at,
                self.bytes.len()
            )
        })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        Ok(self.take(N)?.try_into().expect("took N bytes"))
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A count of items of at least `min_bytes` each, checked against the bytes left (so a
    /// corrupt count cannot make us allocate or loop without bound).
    fn count(&mut self, what: &str, min_bytes: usize) -> std::result::Result<usize, String> {
        let n = self.u64()?;
        let left = (self.bytes.len() - self.at) as u64;
        if n.checked_mul(min_bytes as u64).is_none_or(|b| b > left) {
            return Err(format!("{what} is {n} but only {left} bytes follow; the file is corrupt or truncated"));
        }
        Ok(n as usize)
    }
    fn string(&mut self) -> std::result::Result<String, String> {
        let n = self.count("a string length", 1)?;
        let s = self.take(n)?;
        String::from_utf8(s.to_vec())
            .map_err(|_| format!("a string at byte {} is not UTF-8; the file is corrupt", self.at - n))
    }
    fn value(&mut self, ty: u32) -> std::result::Result<GgufValue, String> {
        use GgufValue::*;
        Ok(match ty {
            0 => U8(self.array::<1>()?[0]),
            1 => I8(self.array::<1>()?[0] as i8),
            2 => U16(u16::from_le_bytes(self.array()?)),
            3 => I16(i16::from_le_bytes(self.array()?)),
            4 => U32(self.u32()?),
            5 => I32(i32::from_le_bytes(self.array()?)),
            6 => F32(f32::from_le_bytes(self.array()?)),
            7 => match self.array::<1>()?[0] {
                0 => Bool(false),
                1 => Bool(true),
                b => return Err(format!("bool byte is {b}, not 0 or 1; the file is corrupt")),
            },
            8 => String(self.string()?),
            9 => {
                let item = self.u32()?;
                if item == 9 {
                    return Err("nested arrays are not supported".into());
                }
                let n = self.count("array length", 1)?;
                let mut items = Vec::with_capacity(n.min(1 << 20));
                for _ in 0..n {
                    items.push(self.value(item)?);
                }
                Array(items)
            }
            10 => U64(self.u64()?),
            11 => I64(i64::from_le_bytes(self.array()?)),
            12 => F64(f64::from_le_bytes(self.array()?)),
            t => return Err(format!("unknown value type {t}; the file is corrupt")),
        })
    }
}
