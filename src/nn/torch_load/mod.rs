//! `torch_load`: PyTorch checkpoints (`torch.save`'s zip format: `<name>/data.pkl` and one
//! `<name>/data/<key>` entry per storage; and the legacy format of PyTorch before 1.6, a stream
//! of pickles then the raw storages: `legacy.rs`) read without running any code. The pickle goes
//! through a restricted unpickler (`pickle.rs`); each storage becomes one buffer, and each
//! tensor a view of it — its strides as movement ops (a transpose is a permute, a slice a
//! shrink, a broadcast an expand), or a gather where strides overlap.

mod legacy;
mod pickle;
mod value;

use crate::error::{Error, Result};
use crate::tensor::{default_device, Tensor};
use memmap2::Mmap;
use pickle::{unpickle, Obj};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
pub use value::TorchValue;
use value::{convert, storage_tensor};

/// Where an archive entry's bytes are.
enum Entry {
    Mapped(std::ops::Range<usize>),
    Read(Vec<u8>),
}

/// Reads a PyTorch checkpoint (`.pt`, `.pth`, `.bin` written by `torch.save` since PyTorch 1.6)
/// onto the default device. Only tensors, storages, dicts (and `OrderedDict`s), lists, tuples,
/// numbers, strings and bytes are read; a pickle naming any other class or function is an
/// `Err` naming it, and nothing in the file is executed.
pub fn torch_load(path: impl AsRef<Path>) -> Result<TorchValue> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(Error::file(path))?;
    // SAFETY: mapping a file is unsafe because its bytes may change if another process writes
    // or truncates it while it is mapped. Here every slice of the map is bounds-checked against
    // its length (fixed when mapped), the bytes are only copied into buffers (plain numbers, bools
    // normalized; nothing is interpreted from them), and no reference into the map outlives this
    // call. A concurrent writer can at worst change the values read (or raise SIGBUS on a
    // truncation, as with every mmap-based loader); it cannot make us read out of bounds.
    let map = unsafe { Mmap::map(&file) }.map_err(Error::file(path))?;
    if map.starts_with(legacy::MAGIC) {
        return legacy::load(path, &map);
    }
    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
        Error::format(
            path,
            format!("not a PyTorch checkpoint: neither a zip archive ({e}) nor the legacy format's pickle stream"),
        )
    })?;
    let names: Vec<String> = zip
        .file_names()
        .map(|n| n.map(|n| n.to_string()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| Error::format(path, format!("an entry name: {e}")))?;
    let pkl = names
        .iter()
        .find(|n| n.ends_with("data.pkl") && n.matches('/').count() <= 1)
        .ok_or_else(|| Error::format(path, "the archive has no data.pkl: not a PyTorch checkpoint"))?
        .clone();
    let prefix = pkl.strip_suffix("data.pkl").expect("ends with it").to_string();
    // An entry's bytes: where the archive stores it uncompressed (as torch.save does, aligned),
    // its range in the map; else decompressed into memory.
    let mut entry_data = |name: &str, want: Option<usize>| -> Result<Entry> {
        let mut entry = zip.by_name(name).map_err(|e| Error::format(path, format!("entry {name}: {e}")))?;
        if let Some(w) = want {
            if entry.size() != w as u64 {
                return Err(Error::format(
                    path,
                    format!("entry {name} has {} bytes, its tensors need {w}", entry.size()),
                ));
            }
        }
        if entry.compression() == zip::CompressionMethod::Stored {
            let start = entry.data_start().and_then(|s| usize::try_from(s).ok());
            let range = start.and_then(|s| Some(s..s.checked_add(usize::try_from(entry.size()).ok()?)?));
            if let Some(r) = range.filter(|r| r.end <= map.len()) {
                return Ok(Entry::Mapped(r));
            }
        }
        let mut out = Vec::with_capacity(want.unwrap_or(0));
        entry.read_to_end(&mut out).map_err(|e| Error::format(path, format!("entry {name}: {e}")))?;
        Ok(Entry::Read(out))
    };
    let mut read = |name: &str| -> Result<Vec<u8>> {
        Ok(match entry_data(name, None)? {
            Entry::Mapped(r) => map[r].to_vec(),
            Entry::Read(v) => v,
        })
    };
    if names.contains(&format!("{prefix}byteorder")) {
        let order = read(&format!("{prefix}byteorder"))?;
        if order != b"little" {
            return Err(Error::format(
                path,
                format!("byte order {:?}: only little-endian checkpoints are read", String::from_utf8_lossy(&order)),
            ));
        }
    }
    let pickled = read(&pkl)?;
    let un = unpickle(&pickled).map_err(|m| Error::format(path, format!("{pkl}: {m}")))?;
    // One buffer per storage, shared by the tensors that view it.
    let device = default_device();
    let mut storages: BTreeMap<String, Tensor> = BTreeMap::new();
    for o in &un.arena {
        if let Obj::Storage { key, dtype, numel } = o {
            if storages.contains_key(key) {
                continue;
            }
            let bytes = numel
                .checked_mul(dtype.itemsize())
                .ok_or_else(|| Error::format(path, format!("storage {key}: {numel} elements")))?;
            let t = match entry_data(&format!("{prefix}data/{key}"), Some(bytes))? {
                Entry::Mapped(r) => storage_tensor(&device, *dtype, &map[r])?,
                Entry::Read(v) => storage_tensor(&device, *dtype, &v)?,
            };
            storages.insert(key.clone(), t);
        }
    }
    convert(&un.arena, un.root, &storages, 0).map_err(|m| Error::format(path, m))
}

/// Reads a checkpoint and returns every tensor by its dotted path ([`TorchValue::state_dict`]).
pub fn torch_load_state_dict(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    Ok(torch_load(path)?.state_dict())
}
