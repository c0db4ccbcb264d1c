//! The legacy checkpoint format (`torch.save` before PyTorch 1.6, or with
//! `_use_new_zipfile_serialization=False`): five pickles in a row — a magic number, the format
//! version (1001), the writer's system info, the object (storages by persistent id, as in the zip
//! format), the keys of the storages in the order they follow — then each storage as its element
//! count (8 bytes, little-endian) and its raw bytes.

use super::pickle::{unpickle_prefix, Obj};
use super::value::{convert, storage_tensor, TorchValue};
use crate::error::{Error, Result};
use crate::tensor::{default_device, Tensor};
use std::collections::BTreeMap;
use std::path::Path;

/// The first pickle: protocol 2, the 10-byte integer 0x1950a86a20f9469cfc6c, STOP.
pub(super) const MAGIC: &[u8] = b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.";

pub(super) fn load(path: &Path, map: &[u8]) -> Result<TorchValue> {
    let err = |m: String| Error::format(path, format!("legacy checkpoint: {m}"));
    let mut pos = MAGIC.len();
    let mut next = |what: &str| -> Result<super::pickle::Unpickled> {
        let (un, len) = unpickle_prefix(&map[pos..]).map_err(|m| err(format!("{what}: {m}")))?;
        pos += len;
        Ok(un)
    };
    let version = next("the format version")?;
    if !matches!(version.arena[version.root], Obj::Int(1001)) {
        return Err(err("format version is not 1001".into()));
    }
    let info = next("the system info")?;
    let little = match &info.arena[info.root] {
        Obj::Dict(items) => items.iter().any(|&(k, v)| {
            matches!(&info.arena[k], Obj::Str(s) if s == "little_endian") && matches!(info.arena[v], Obj::Bool(true))
        }),
        _ => false,
    };
    if !little {
        return Err(err(
            "written on a big-endian machine (or no system info): only little-endian files are read".into()
        ));
    }
    let un = next("the object")?;
    let keys = next("the storage keys")?;
    let keys: Vec<String> = match &keys.arena[keys.root] {
        Obj::List(items) => items
            .iter()
            .map(|&i| match &keys.arena[i] {
                Obj::Str(s) => Ok(s.clone()),
                _ => Err(err("a storage key that is not a string".into())),
            })
            .collect::<Result<_>>()?,
        _ => return Err(err("the storage keys are not a list".into())),
    };
    // The dtype and length the object's persistent ids give each storage.
    let mut declared = BTreeMap::new();
    for o in &un.arena {
        if let Obj::Storage { key, dtype, numel } = o {
            declared.insert(key.clone(), (*dtype, *numel));
        }
    }
    let device = default_device();
    let mut storages: BTreeMap<String, Tensor> = BTreeMap::new();
    for key in keys {
        let Some(&(dtype, numel)) = declared.get(&key) else {
            return Err(err(format!("storage {key} follows but the object does not use it")));
        };
        let count = map.get(pos..pos + 8).ok_or_else(|| err(format!("storage {key}: the file ends before it")))?;
        let count = u64::from_le_bytes(count.try_into().expect("8 bytes"));
        pos += 8;
        if count != numel as u64 {
            return Err(err(format!("storage {key} holds {count} elements but the object says {numel}")));
        }
        let bytes =
            numel.checked_mul(dtype.itemsize()).ok_or_else(|| err(format!("storage {key}: {numel} elements")))?;
        let data = pos.checked_add(bytes).and_then(|end| map.get(pos..end)).ok_or_else(|| {
            err(format!("storage {key}: {bytes} bytes, past the end of the file ({} bytes)", map.len()))
        })?;
        pos += bytes;
        storages.insert(key, storage_tensor(&device, dtype, data)?);
    }
    if let Some(missing) = declared.keys().find(|k| !storages.contains_key(*k)) {
        return Err(err(format!("storage {missing} is used but not stored")));
    }
    convert(&un.arena, un.root, &storages, 0).map_err(|m| Error::format(path, m))
}
