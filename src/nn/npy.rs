//! NumPy's `.npy` (format versions 1.0, 2.0 and 3.0) and `.npz` (a zip of `.npy` files, stored
//! or deflated) files: every numeric dtype and bool, either byte order, C or Fortran order.
//! A header that lies (a shape whose bytes are not the data's, an unknown dtype, an object
//! array) is an `Err` naming the file and the problem; nothing in a file is ever executed.

use crate::error::{Error, Result};
use crate::runtime::Buffer;
use crate::tensor::{buffer_view, default_device, Tensor};
use crate::uop::DType;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

/// The dtype of a NumPy type string without its byte-order character (`f4`, `i8`, `b1`).
fn dtype_of(code: &str) -> Option<DType> {
    Some(match code {
        "b1" => DType::BOOL,
        "i1" => DType::I8,
        "i2" => DType::I16,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "u1" => DType::U8,
        "u2" => DType::U16,
        "u4" => DType::U32,
        "u8" => DType::U64,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        _ => return None,
    })
}

fn code_of(dt: DType) -> Option<&'static str> {
    Some(match dt {
        DType::BOOL => "|b1",
        DType::I8 => "|i1",
        DType::U8 => "|u1",
        DType::I16 => "<i2",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::U16 => "<u2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        _ => return None,
    })
}

/// A value of the header's Python literal: a string, a bool or a tuple of integers.
#[derive(Debug, PartialEq)]
enum Lit {
    Str(String),
    Bool(bool),
    Ints(Vec<usize>),
}

/// Parses the header dictionary `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
fn parse_header(text: &str) -> std::result::Result<BTreeMap<String, Lit>, String> {
    let s = text.trim().trim_end_matches('\n').trim();
    let body = s
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .ok_or_else(|| format!("the header is not a dictionary: {s:?}"))?;
    let mut out = BTreeMap::new();
    let mut rest = body.trim_start();
    let quoted = |r: &str| -> std::result::Result<(String, usize), String> {
        let q = r
            .chars()
            .next()
            .filter(|c| *c == '\'' || *c == '"')
            .ok_or_else(|| format!("expected a string at {r:?}"))?;
        let end = r[1..].find(q).ok_or_else(|| format!("an unterminated string at {r:?}"))?;
        Ok((r[1..1 + end].to_string(), end + 2))
    };
    while !rest.is_empty() {
        let (key, used) = quoted(rest)?;
        rest = rest[used..]
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| format!("expected `:` after {key:?}"))?
            .trim_start();
        let (value, used) = if rest.starts_with(['\'', '"']) {
            let (v, used) = quoted(rest)?;
            (Lit::Str(v), used)
        } else if let Some(r) = rest.strip_prefix("True") {
            (Lit::Bool(true), rest.len() - r.len())
        } else if let Some(r) = rest.strip_prefix("False") {
            (Lit::Bool(false), rest.len() - r.len())
        } else if rest.starts_with('(') {
            let end = rest.find(')').ok_or_else(|| "an unterminated tuple".to_string())?;
            let dims = rest[1..end]
                .split(',')
                .map(str::trim)
                .filter(|d| !d.is_empty())
                .map(|d| {
                    d.trim_end_matches('L').parse::<usize>().map_err(|_| format!("shape entry {d:?} is not a length"))
                })
                .collect::<std::result::Result<Vec<usize>, String>>()?;
            (Lit::Ints(dims), end + 1)
        } else {
            return Err(format!(
                "unsupported value for {key:?} at {rest:?} (structured or object dtypes are not read)"
            ));
        };
        out.insert(key, value);
        rest = rest[used..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    Ok(out)
}

/// A tensor from the bytes of a `.npy` file (`path` names it in errors; `what` is the array's
/// name inside an `.npz`).
fn parse_npy(bytes: &[u8], path: &Path, what: &str, device: &str) -> Result<Tensor> {
    let err = |m: String| Error::format(path, format!("{what}{m}"));
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(err("not a .npy file (no \\x93NUMPY magic)".into()));
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (len, start): (usize, usize) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12),
        _ => return Err(err(format!("format version {major}.{minor} is not one ferrograd reads (1.0, 2.0, 3.0)"))),
    };
    let header = bytes
        .get(start..start.saturating_add(len))
        .ok_or_else(|| err(format!("the header claims {len} bytes but the file has {}", bytes.len() - start)))?;
    let text = std::str::from_utf8(header).map_err(|_| err("the header is not text".into()))?;
    let dict = parse_header(text).map_err(|m| err(format!("bad header: {m}")))?;
    let (Some(Lit::Str(descr)), Some(Lit::Bool(fortran)), Some(Lit::Ints(shape))) =
        (dict.get("descr"), dict.get("fortran_order"), dict.get("shape"))
    else {
        return Err(err(format!("the header needs 'descr', 'fortran_order' and 'shape', it has {dict:?}")));
    };
    let (order, code) = descr.split_at(descr.len().min(1));
    let dtype = dtype_of(code).filter(|_| matches!(order, "<" | ">" | "|" | "=")).ok_or_else(|| {
        err(format!(
            "dtype {descr:?} is not one ferrograd holds (bool, signed and unsigned 8-64 bit integers, float16/32/64)"
        ))
    })?;
    let numel = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    let data = &bytes[start + len..];
    let want = numel.and_then(|n| n.checked_mul(dtype.itemsize()));
    if want != Some(data.len()) {
        return Err(err(format!(
            "shape {shape:?} of {descr} needs {} bytes of data but the file has {}; it is truncated or its header is wrong",
            want.map_or("more than memory".into(), |w| w.to_string()),
            data.len()
        )));
    }
    let mut data = data.to_vec();
    if order == ">" && dtype.itemsize() > 1 {
        data.chunks_exact_mut(dtype.itemsize()).for_each(|c| c.reverse());
    }
    if dtype.is_bool() {
        data.iter_mut().for_each(|b| *b = (*b != 0) as u8);
    }
    let buf = Buffer::with_data(device, dtype, data);
    if *fortran && shape.len() > 1 {
        // Column-major: the reversed shape in C order, then the axes reversed (a view).
        let reversed: Vec<usize> = shape.iter().rev().copied().collect();
        let t = Tensor::from_uop(buffer_view(buf, &reversed));
        Ok(t.permute((0..shape.len()).rev().collect::<Vec<usize>>()))
    } else {
        Ok(Tensor::from_uop(buffer_view(buf, shape)))
    }
}

/// The `.npy` bytes of `t` (C order, or Fortran order with `fortran`).
fn encode_npy(t: &Tensor, fortran: bool) -> Result<Vec<u8>> {
    let code = code_of(t.dtype()).ok_or_else(|| {
        Error::Other(format!(
            "npy_save: NumPy has no {} dtype; cast the tensor first (to float32 for bfloat16)",
            t.dtype()
        ))
    })?;
    let shape = t.shape();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let tuple = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let fortran = fortran && shape.len() > 1;
    let py_bool = if fortran { "True" } else { "False" };
    let mut header = format!("{{'descr': '{code}', 'fortran_order': {py_bool}, 'shape': {tuple}, }}");
    // Padded with spaces and a newline so the data starts at a multiple of 64 bytes.
    let total = (10 + header.len() + 1).next_multiple_of(64);
    header.push_str(&" ".repeat(total - 10 - header.len() - 1));
    header.push('\n');
    let data_tensor = if fortran { t.permute((0..shape.len()).rev().collect::<Vec<usize>>()) } else { t.clone() };
    let mut out = Vec::with_capacity(total + t.numel() * t.dtype().itemsize());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    let mut data = data_tensor.contiguous().to_bytes()?;
    if t.dtype().is_bool() {
        data.iter_mut().for_each(|b| *b = (*b != 0) as u8);
    }
    out.extend_from_slice(&data);
    Ok(out)
}

/// Reads a `.npy` file onto the default device.
pub fn npy_load(path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(Error::file(path))?;
    parse_npy(&bytes, path, "", &default_device())
}

/// Writes `t` as a `.npy` file in C order (as `numpy.save`).
pub fn npy_save(path: impl AsRef<Path>, t: &Tensor) -> Result<()> {
    npy_save_with(path, t, false)
}

/// Writes `t` as a `.npy` file, in Fortran (column-major) order with `fortran`.
pub fn npy_save_with(path: impl AsRef<Path>, t: &Tensor, fortran: bool) -> Result<()> {
    let path = path.as_ref();
    let bytes = encode_npy(t, fortran)?;
    std::fs::write(path, bytes).map_err(Error::file(path))
}

/// Reads every array of an `.npz` file (as `numpy.load`), by name without the `.npy` suffix.
pub fn npz_load(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(Error::file(path))?;
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| Error::format(path, format!("not a readable .npz (zip) file: {e}")))?;
    let device = default_device();
    let mut out = BTreeMap::new();
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| Error::format(path, format!("entry {i}: {e}")))?;
        let name = entry.name().map_err(|e| Error::format(path, format!("entry {i}: {e}")))?.to_string();
        let size = entry.size();
        let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(1 << 30));
        entry.read_to_end(&mut bytes).map_err(|e| Error::format(path, format!("entry {name:?}: {e}")))?;
        let key = name.strip_suffix(".npy").unwrap_or(&name).to_string();
        out.insert(key, parse_npy(&bytes, path, &format!("array {name:?}: "), &device)?);
    }
    Ok(out)
}

/// Writes the arrays as an `.npz` file (stored, as `numpy.savez`).
pub fn npz_save(path: impl AsRef<Path>, arrays: &BTreeMap<String, Tensor>) -> Result<()> {
    let path = path.as_ref();
    let file = std::fs::File::create(path).map_err(Error::file(path))?;
    let mut zip = zip::ZipWriter::new(file);
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .large_file(arrays.values().any(|t| t.numel() * t.dtype().itemsize() >= u32::MAX as usize));
    for (name, t) in arrays {
        let bytes = encode_npy(t, false)?;
        zip.start_file(format!("{name}.npy"), opts).map_err(|e| Error::format(path, e.to_string()))?;
        zip.write_all(&bytes).map_err(Error::file(path))?;
    }
    zip.finish().map_err(|e| Error::format(path, e.to_string()))?;
    Ok(())
}
