//! `torch_load`: PyTorch checkpoints (`torch.save`'s zip format: `<name>/data.pkl` and one
//! `<name>/data/<key>` entry per storage) read without running any code. The pickle goes
//! through a restricted unpickler (`pickle.rs`); each storage becomes one buffer, and each
//! tensor a view of it — its strides as movement ops (a transpose is a permute, a slice a
//! shrink, a broadcast an expand), or a gather where strides overlap.

mod pickle;

use crate::error::{Error, Result};
use crate::runtime::Buffer;
use crate::tensor::{buffer_view, default_device, Tensor};
use pickle::{kind, unpickle, Obj, TensorSpec};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

/// A value of a checkpoint: tensors inside dicts, lists and tuples, and plain values.
#[derive(Clone, Debug)]
pub enum TorchValue {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    Tensor(Tensor),
    List(Vec<TorchValue>),
    Tuple(Vec<TorchValue>),
    /// Keys in the file's order (integer keys as their decimal text).
    Dict(Vec<(String, TorchValue)>),
}

impl TorchValue {
    /// The value under `key` of a dict.
    pub fn get(&self, key: &str) -> Option<&TorchValue> {
        match self {
            TorchValue::Dict(d) => d.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            TorchValue::Tensor(t) => Some(t),
            _ => None,
        }
    }
    /// Every tensor by its dotted path (`model.layer.0.weight`; list items by index), as
    /// `load_state_dict` takes them.
    pub fn state_dict(&self) -> BTreeMap<String, Tensor> {
        fn walk(v: &TorchValue, prefix: &str, out: &mut BTreeMap<String, Tensor>) {
            let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
            match v {
                TorchValue::Tensor(t) => {
                    out.insert(prefix.to_string(), t.clone());
                }
                TorchValue::Dict(d) => d.iter().for_each(|(k, v)| walk(v, &join(k), out)),
                TorchValue::List(l) | TorchValue::Tuple(l) => {
                    l.iter().enumerate().for_each(|(i, v)| walk(v, &join(&i.to_string()), out))
                }
                _ => {}
            }
        }
        let mut out = BTreeMap::new();
        walk(self, "", &mut out);
        out
    }
}

fn format_err(path: &Path, message: impl Into<String>) -> Error {
    Error::Format { path: path.to_path_buf(), message: message.into() }
}

/// Reads a PyTorch checkpoint (`.pt`, `.pth`, `.bin` written by `torch.save` since PyTorch 1.6)
/// onto the default device. Only tensors, storages, dicts (and `OrderedDict`s), lists, tuples,
/// numbers, strings and bytes are read; a pickle naming any other class or function is an
/// `Err` naming it, and nothing in the file is executed.
pub fn torch_load(path: impl AsRef<Path>) -> Result<TorchValue> {
    let path = path.as_ref();
    let file = std::fs::File::open(path).map_err(|source| Error::File { path: path.to_path_buf(), source })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| {
        format_err(
            path,
            format!(
                "not a zip-format PyTorch checkpoint ({e}); files from PyTorch before 1.6 (the legacy format) \
                 are not read: load and save them again with a current PyTorch"
            ),
        )
    })?;
    let names: Vec<String> = zip
        .file_names()
        .map(|n| n.map(|n| n.to_string()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| format_err(path, format!("an entry name: {e}")))?;
    let pkl = names
        .iter()
        .find(|n| n.ends_with("data.pkl") && n.matches('/').count() <= 1)
        .ok_or_else(|| format_err(path, "the archive has no data.pkl: not a PyTorch checkpoint"))?
        .clone();
    let prefix = pkl.strip_suffix("data.pkl").expect("ends with it").to_string();
    let mut read = |name: &str, want: Option<usize>| -> Result<Vec<u8>> {
        let mut entry = zip.by_name(name).map_err(|e| format_err(path, format!("entry {name}: {e}")))?;
        if let Some(w) = want {
            if entry.size() != w as u64 {
                return Err(format_err(path, format!("entry {name} has {} bytes, its tensors need {w}", entry.size())));
            }
        }
        let mut out = Vec::with_capacity(want.unwrap_or(0));
        entry.read_to_end(&mut out).map_err(|e| format_err(path, format!("entry {name}: {e}")))?;
        Ok(out)
    };
    if names.contains(&format!("{prefix}byteorder")) {
        let order = read(&format!("{prefix}byteorder"), None)?;
        if order != b"little" {
            return Err(format_err(
                path,
                format!("byte order {:?}: only little-endian checkpoints are read", String::from_utf8_lossy(&order)),
            ));
        }
    }
    let pickled = read(&pkl, None)?;
    let un = unpickle(&pickled).map_err(|m| format_err(path, format!("{pkl}: {m}")))?;
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
                .ok_or_else(|| format_err(path, format!("storage {key}: {numel} elements")))?;
            let mut data = read(&format!("{prefix}data/{key}"), Some(bytes))?;
            if dtype.is_bool() {
                data.iter_mut().for_each(|b| *b = (*b != 0) as u8);
            }
            let buf = Buffer::with_data(&device, *dtype, data);
            storages.insert(key.clone(), Tensor::from_uop(buffer_view(buf, &[*numel])));
        }
    }
    convert(&un.arena, un.root, &storages, 0).map_err(|m| format_err(path, m))
}

/// Reads a checkpoint and returns every tensor by its dotted path ([`TorchValue::state_dict`]).
pub fn torch_load_state_dict(path: impl AsRef<Path>) -> Result<BTreeMap<String, Tensor>> {
    Ok(torch_load(path)?.state_dict())
}

fn convert(
    arena: &[Obj],
    i: usize,
    storages: &BTreeMap<String, Tensor>,
    depth: usize,
) -> std::result::Result<TorchValue, String> {
    if depth > 200 {
        return Err("values nested more than 200 deep".into());
    }
    let c = |j: usize| convert(arena, j, storages, depth + 1);
    Ok(match &arena[i] {
        Obj::None => TorchValue::None,
        Obj::Bool(b) => TorchValue::Bool(*b),
        Obj::Int(v) => TorchValue::Int(*v),
        Obj::Float(v) => TorchValue::Float(*v),
        Obj::Str(s) => TorchValue::Str(s.clone()),
        Obj::Bytes(b) => TorchValue::Bytes(b.clone()),
        Obj::Tuple(items) => TorchValue::Tuple(items.iter().map(|&j| c(j)).collect::<std::result::Result<_, _>>()?),
        Obj::List(items) => TorchValue::List(items.iter().map(|&j| c(j)).collect::<std::result::Result<_, _>>()?),
        Obj::Dict(items) => TorchValue::Dict(
            items
                .iter()
                .map(|&(k, v)| {
                    let key = match &arena[k] {
                        Obj::Str(s) => s.clone(),
                        Obj::Int(n) => n.to_string(),
                        o => return Err(format!("a dict key that is {}", kind(o))),
                    };
                    Ok((key, c(v)?))
                })
                .collect::<std::result::Result<_, String>>()?,
        ),
        Obj::Tensor(spec) => TorchValue::Tensor(strided_view(&storages[&spec.key], spec)?),
        o => return Err(format!("the checkpoint holds {} outside a tensor", kind(o))),
    })
}

/// The tensor `spec` describes, as a view of its storage `flat` (`[numel]`).
fn strided_view(flat: &Tensor, spec: &TensorSpec) -> std::result::Result<Tensor, String> {
    let TensorSpec { key, offset, size, stride, storage_numel, .. } = spec;
    let n: usize = size.iter().product();
    if n == 0 {
        return Ok(flat.shrink(&[(0, 0)]).reshape(size.clone()));
    }
    if stride.iter().any(|&s| s < 0) {
        return Err(format!("storage {key}: negative strides {stride:?}"));
    }
    let last = size.iter().zip(stride).try_fold(*offset, |a, (&l, &s)| a.checked_add((l - 1).checked_mul(s as usize)?));
    if last.is_none_or(|l| l >= *storage_numel) {
        return Err(format!(
            "storage {key} has {storage_numel} elements but a tensor of size {size:?}, stride {stride:?} at offset {offset} reads beyond it"
        ));
    }
    // The axes that move through memory, outermost first.
    let mut axes: Vec<usize> = (0..size.len()).filter(|&a| size[a] > 1 && stride[a] > 0).collect();
    axes.sort_by_key(|&a| std::cmp::Reverse(stride[a]));
    let nested = axes.windows(2).all(|w| {
        let (outer, inner) = (stride[w[0]] as usize, stride[w[1]] as usize);
        outer % inner == 0 && outer >= inner * size[w[1]]
    });
    if !nested {
        // Overlapping strides: gather each element.
        let mut index =
            Tensor::full_dtype(vec![1usize; size.len()], crate::ConstValue::Int(*offset as i64), crate::DType::I64);
        for (a, (&l, &s)) in size.iter().zip(stride).enumerate() {
            let mut shape = vec![1usize; size.len()];
            shape[a] = l;
            index = index + Tensor::arange(l).cast(crate::DType::I64).reshape(shape) * s;
        }
        let index = index.expand(size.clone()).flatten();
        return Ok(flat.gather(0, &index).reshape(size.clone()));
    }
    // Memory from the offset as [size of the outermost axis, then each axis's period, then the
    // innermost stride]; every axis taken from 0 to its size, the last at 0.
    let Some(&outer) = axes.first() else {
        return Ok(flat.shrink(&[(*offset, offset + 1)]).reshape(vec![1usize; size.len()]).expand(size.clone()));
    };
    let inner_stride = stride[*axes.last().expect("not empty")] as usize;
    let mut lengths = vec![size[outer]];
    lengths.extend(axes.windows(2).map(|w| stride[w[0]] as usize / stride[w[1]] as usize));
    lengths.push(inner_stride);
    let span = size[outer] * stride[outer] as usize;
    let end = (offset + span).min(*storage_numel);
    let block = flat.shrink(&[(*offset, end)]).pad(&[(0, offset + span - end)]);
    let mut ranges: Vec<(usize, usize)> = axes.iter().map(|&a| (0, size[a])).collect();
    ranges.push((0, 1));
    let picked = block.reshape(lengths).shrink(&ranges).reshape(axes.iter().map(|&a| size[a]).collect::<Vec<_>>());
    // Back to the axes' own order, then the axes of length 1 and the broadcast ones.
    let mut order: Vec<usize> = (0..axes.len()).collect();
    order.sort_by_key(|&k| axes[k]);
    let kept: Vec<usize> = size.iter().enumerate().map(|(a, &l)| if axes.contains(&a) { l } else { 1 }).collect();
    Ok(picked.permute(order).reshape(kept).expand(size.clone()))
}
