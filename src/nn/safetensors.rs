//! Weights in the safetensors format: an 8-byte little-endian header length, a JSON header
//! (`{"name": {"dtype", "shape", "data_offsets"}, "__metadata__": {..}}`) and the raw
//! little-endian tensor bytes.
//!
//! Loading never trusts the file: the header is read into memory, parsed and validated by the
//! `safetensors` crate (offsets contiguous and matching shape × dtype), its total checked against
//! the file's length with overflow-checked arithmetic, and every slice taken with bounds checks.
//! A file that does not fit gives [`Error::Format`] naming the file and the problem.

use crate::error::{Error, Result};
use crate::runtime::{get_device, Buffer};
use crate::tensor::{buffer_view, Tensor};
use crate::uop::{ConstValue, DType};
use memmap2::Mmap;
use safetensors::tensor::Metadata;
use safetensors::Dtype;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest header the format allows (the same limit as the reference implementation).
const MAX_HEADER: u64 = 100_000_000;

/// The safetensors name of a ferrograd dtype.
fn to_st(dt: DType) -> Dtype {
    match dt {
        DType::BOOL => Dtype::BOOL,
        DType::I8 => Dtype::I8,
        DType::I16 => Dtype::I16,
        DType::I32 => Dtype::I32,
        DType::I64 => Dtype::I64,
        DType::U8 => Dtype::U8,
        DType::U16 => Dtype::U16,
        DType::U32 => Dtype::U32,
        DType::U64 => Dtype::U64,
        DType::F16 => Dtype::F16,
        DType::BF16 => Dtype::BF16,
        DType::F32 => Dtype::F32,
        DType::F64 => Dtype::F64,
        other => panic!("safe_save: tensors cannot hold dtype {other}"),
    }
}

/// The ferrograd dtype of a safetensors dtype, if ferrograd has it (not FP8, FP4, complex, ...).
fn from_st(dt: Dtype) -> Option<DType> {
    DType::ALL.into_iter().find(|d| to_st(*d) == dt)
}

/// Writes `dict` to `path` in the safetensors format (readable by the Python `safetensors`
/// package, PyTorch, tinygrad, candle). Tensors are realized and copied to the host.
pub fn safe_save(dict: &BTreeMap<String, Tensor>, path: impl AsRef<Path>) -> Result<()> {
    safe_save_with_metadata(dict, &BTreeMap::new(), path)
}

/// The file a save to `path` writes: symbolic links are followed to the file they name (as
/// `torch.save` writes through them), so a link stays a link and its target gets the new data.
/// A link to a file that does not exist yet creates that file.
fn through_links(path: &Path) -> std::path::PathBuf {
    let mut p = path.to_path_buf();
    // At most 40 links, as Linux allows; a cycle then writes at the last name reached.
    for _ in 0..40 {
        match std::fs::read_link(&p) {
            Ok(target) if target.is_absolute() => p = target,
            Ok(target) => p = p.parent().unwrap_or(Path::new(".")).join(target),
            Err(_) => break,
        }
    }
    p
}

/// [`safe_save`] with string metadata in the header's `__metadata__` entry (omitted when
/// empty). The output is deterministic: keys are sorted, tensors laid out in name order.
///
/// The file is written next to `path` under a temporary name and renamed into place, so a
/// reader (or a memory map from [`safe_load`]) never sees a half-written file. A `path` that
/// is a symbolic link is written through: the file it names gets the data, the link stays.
pub fn safe_save_with_metadata(
    dict: &BTreeMap<String, Tensor>,
    metadata: &BTreeMap<String, String>,
    path: impl AsRef<Path>,
) -> Result<()> {
    let path = &through_links(path.as_ref());
    assert!(!dict.contains_key("__metadata__"), "safe_save: `__metadata__` is reserved and cannot name a tensor");
    let tensors: Vec<&Tensor> = dict.values().collect();
    Tensor::realize_all(&tensors)?;

    let mut header = serde_json::Map::new();
    if !metadata.is_empty() {
        let m = metadata.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.as_str()))).collect();
        header.insert("__metadata__".into(), serde_json::Value::Object(m));
    }
    let mut offset = 0usize;
    for (name, t) in dict {
        let nbytes = t.numel() * t.dtype().itemsize();
        let info = serde_json::json!({
            "dtype": to_st(t.dtype()).to_string(),
            "shape": t.shape(),
            "data_offsets": [offset, offset + nbytes],
        });
        header.insert(name.clone(), info);
        offset += nbytes;
    }
    let mut header = serde_json::Value::Object(header).to_string().into_bytes();
    // Pad with spaces to a multiple of 8 so the data starts aligned (as the reference writer does).
    header.resize(header.len().next_multiple_of(8), b' ');

    let tmp = temp_path(path);
    let write = || -> Result<()> {
        let file = File::create(&tmp).map_err(Error::file(&tmp))?;
        let mut w = std::io::BufWriter::new(file);
        w.write_all(&(header.len() as u64).to_le_bytes()).map_err(Error::file(&tmp))?;
        w.write_all(&header).map_err(Error::file(&tmp))?;
        for t in dict.values() {
            let mut bytes = t.to_bytes()?;
            if t.dtype().is_bool() {
                bytes.iter_mut().for_each(|b| *b = (*b != 0) as u8);
            }
            w.write_all(&bytes).map_err(Error::file(&tmp))?;
        }
        w.into_inner().map_err(|e| Error::File { path: tmp.clone(), source: e.into_error() })?;
        std::fs::rename(&tmp, path).map_err(Error::file(path))
    };
    let result = write();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// `dir/.name.tmp-<pid>-<n>`: a sibling, so that the final rename stays on one file system, and
/// unique per process and call, so that concurrent saves never write the same temporary file.
fn temp_path(path: &Path) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Reads every tensor of a safetensors file onto the default device.
pub fn safe_load(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    safe_load_on(path, &default_device())
}

/// Reads every tensor of a safetensors file onto `device`. Each tensor's bytes are copied
/// straight from a memory map of the file into its device buffer (the file is never read into
/// memory as a whole).
pub fn safe_load_on(path: impl AsRef<Path>, device: &str) -> Result<BTreeMap<String, Tensor>> {
    let path = path.as_ref();
    let dev = get_device(device)?;
    let (file, header_len, meta) = read_header(path)?;
    // SAFETY: mapping a file is unsafe because the mapped bytes may change if another process
    // writes or truncates the file while it is mapped. That is acceptable here:
    // - the header that decides every offset was read and validated from our own copy
    //   (`read_header`), and every slice below is bounds-checked against the map's length,
    //   which is fixed at mapping time — so a concurrent change can never make us read out of
    //   bounds; at worst it yields the changed bytes, and the values are only copied, never
    //   interpreted (no invalid values are possible for these plain numeric types; bools are
    //   normalized);
    // - the map lives only for this call and no reference into it escapes (each tensor owns a
    //   copy in its device buffer);
    // - ferrograd's own writer (`safe_save`) replaces files by rename, never in place.
    // A file truncated by another process during this call could raise SIGBUS, as with every
    // mmap-based loader (PyTorch, the safetensors crate, candle); it cannot corrupt memory.
    let map = unsafe { Mmap::map(&file) }.map_err(Error::file(path))?;
    let data_start = 8 + header_len;
    let expected = data_start.checked_add(meta.data_len());
    if expected != Some(map.len()) {
        return Err(Error::format(
            path,
            format!(
                "the header describes {} bytes of tensor data but the file has {} after the header; \
                 the file is truncated or corrupt (or changed while being read)",
                meta.data_len(),
                map.len().saturating_sub(data_start)
            ),
        ));
    }
    let infos: BTreeMap<String, _> = meta.tensors().into_iter().collect();
    let mut out = BTreeMap::new();
    for (name, info) in infos {
        let dtype = from_st(info.dtype).ok_or_else(|| {
            Error::format(
                path,
                format!(
                    "tensor `{name}` has dtype {}, which ferrograd tensors cannot hold \
                     (supported: BOOL, I8..I64, U8..U64, F16, BF16, F32, F64); convert it before saving",
                    info.dtype
                ),
            )
        })?;
        let numel = info.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let (start, end) = info.data_offsets;
        let range = data_start.checked_add(start).zip(data_start.checked_add(end));
        let bytes = range.and_then(|(s, e)| map.get(s..e));
        let misfit = || {
            let msg = format!(
                "tensor `{name}`: data_offsets [{start}, {end}] do not fit shape {:?} of {} in a file of {} bytes",
                info.shape,
                info.dtype,
                map.len()
            );
            Error::format(path, msg)
        };
        let bytes = match (numel, bytes) {
            (Some(n), Some(b)) if n.checked_mul(dtype.itemsize()) == Some(b.len()) => b,
            _ => return Err(misfit()),
        };
        let buf = Buffer::new(dev.clone(), dtype, numel.unwrap_or(0));
        if dtype.is_bool() {
            let norm: Vec<u8> = bytes.iter().map(|&b| (b != 0) as u8).collect();
            buf.copy_in(&norm)?;
        } else {
            buf.copy_in(bytes)?;
        }
        #[cfg(unix)]
        if let Some((s, e)) = range {
            // The file's pages read so far would otherwise stay in this process's resident
            // memory until the map is dropped, doubling the peak of a large load.
            // SAFETY: MADV_DONTNEED on a read-only shared file mapping only drops our page
            // table entries: a later access faults the same bytes back in from the file (the
            // caveat of a concurrently changed file is the one accepted above), so no
            // reference into the map can observe freed memory. The range is within the map
            // (checked by `map.get` above).
            let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, s, e - s) };
        }
        out.insert(name, Tensor::from_uop(buffer_view(buf, &info.shape)));
    }
    Ok(out)
}

/// The `__metadata__` strings of a safetensors file (empty when it has none).
pub fn safe_load_metadata(path: impl AsRef<Path>) -> Result<BTreeMap<String, String>> {
    let (_, _, meta) = read_header(path.as_ref())?;
    Ok(meta.metadata().iter().flatten().map(|(k, v)| (k.clone(), v.clone())).collect())
}

/// Opens `path`, reads its header into memory and validates it: the length field, UTF-8, the
/// JSON schema, dtypes and offsets (by the `safetensors` crate). Returns the file, the header
/// length and the parsed header. The header must fit inside the file; the data length is
/// checked by the caller against what it maps.
fn read_header(path: &Path) -> Result<(File, usize, Metadata)> {
    let mut file = File::open(path).map_err(Error::file(path))?;
    let len = file.metadata().map_err(Error::file(path))?.len();
    if len < 8 {
        return Err(Error::format(
            path,
            format!("file is {len} bytes, too short for the 8-byte header length; it is truncated or not a safetensors file"),
        ));
    }
    let mut n = [0u8; 8];
    file.read_exact(&mut n).map_err(Error::file(path))?;
    let n = u64::from_le_bytes(n);
    if n > MAX_HEADER {
        return Err(Error::format(
            path,
            format!("header length field says {n} bytes, above the format's limit of {MAX_HEADER}; the file is corrupt or not a safetensors file"),
        ));
    }
    if n > len - 8 {
        return Err(Error::format(
            path,
            format!("header length field says {n} bytes but only {} follow it; the file is truncated", len - 8),
        ));
    }
    let mut header = vec![0u8; n as usize];
    file.read_exact(&mut header).map_err(Error::file(path))?;
    let text = std::str::from_utf8(&header)
        .map_err(|e| Error::format(path, format!("header is not UTF-8 ({e}); the file is corrupt")))?;
    let meta: Metadata = serde_json::from_str(text).map_err(|e| {
        Error::format(path, format!("invalid header ({e}); the file is corrupt or not a safetensors file"))
    })?;
    Ok((file, n as usize, meta))
}

/// The device new tensors are created on (honours `with_default_device`). A 0-d constant holds
/// no memory, so this costs nothing.
fn default_device() -> String {
    Tensor::full_dtype([0usize; 0], ConstValue::Bool(false), DType::BOOL).device()
}
