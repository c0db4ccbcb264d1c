//! A checkpoint's values as ferrograd sees them (`TorchValue`), and the tensors of its storages:
//! each storage one buffer, each tensor a view of it.

use super::pickle::{kind, Obj, TensorSpec};
use crate::error::Result;
use crate::runtime::{get_device, Buffer};
use crate::tensor::{buffer_view, Tensor};
use std::collections::BTreeMap;

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

/// One storage's bytes as a flat tensor on `device`: copied straight from the file's map into
/// the device buffer (bools normalized to 0/1 on the way).
pub(super) fn storage_tensor(device: &str, dtype: crate::DType, bytes: &[u8]) -> Result<Tensor> {
    let numel = bytes.len() / dtype.itemsize();
    let buf = if dtype.is_bool() {
        Buffer::with_data(device, dtype, bytes.iter().map(|&b| (b != 0) as u8).collect())
    } else {
        let buf = Buffer::new(get_device(device)?, dtype, numel);
        buf.copy_in(bytes)?;
        buf
    };
    Ok(Tensor::from_uop(buffer_view(buf, &[numel])))
}

pub(super) fn convert(
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
    // What each axis and the axes inside it span; every one must fit inside one step of the
    // axis around it (a transpose, a slice, a stepped slice), else elements overlap.
    let mut spans = vec![1usize; axes.len() + 1];
    for k in (0..axes.len()).rev() {
        spans[k] = (size[axes[k]] - 1) * stride[axes[k]] as usize + spans[k + 1];
    }
    let nested = (1..axes.len()).all(|k| stride[axes[k - 1]] as usize >= spans[k]);
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
    // Memory from the offset as [size of the outermost axis, its stride]; then each inner axis
    // splits the last length: cut (or padded, past what is read) to its size times its stride,
    // reshaped to [size, stride]; at the end each element is the first of its innermost step.
    let Some(&outer) = axes.first() else {
        return Ok(flat.shrink(&[(*offset, offset + 1)]).reshape(vec![1usize; size.len()]).expand(size.clone()));
    };
    let span = size[outer] * stride[outer] as usize;
    let end = (offset + span).min(*storage_numel);
    let block = flat.shrink(&[(*offset, end)]).pad(&[(0, offset + span - end)]);
    let mut lengths = vec![size[outer], stride[outer] as usize];
    let mut picked = block.reshape(lengths.clone());
    let cut = |t: &Tensor, lengths: &[usize], last: usize| {
        let n = lengths.len();
        let have = lengths[n - 1];
        if last <= have {
            let ranges: Vec<(usize, usize)> =
                lengths.iter().enumerate().map(|(i, &l)| (0, if i + 1 == n { last } else { l })).collect();
            t.shrink(&ranges)
        } else {
            let pads: Vec<(usize, usize)> = (0..n).map(|i| (0, if i + 1 == n { last - have } else { 0 })).collect();
            t.pad(&pads)
        }
    };
    for &a in &axes[1..] {
        let (l, st) = (size[a], stride[a] as usize);
        picked = cut(&picked, &lengths, l * st);
        lengths.pop();
        lengths.extend([l, st]);
        picked = picked.reshape(lengths.clone());
    }
    picked = cut(&picked, &lengths, 1);
    lengths.pop();
    let picked = picked.reshape(lengths);
    // Back to the axes' own order, then the axes of length 1 and the broadcast ones.
    let mut order: Vec<usize> = (0..axes.len()).collect();
    order.sort_by_key(|&k| axes[k]);
    let kept: Vec<usize> = size.iter().enumerate().map(|(a, &l)| if axes.contains(&a) { l } else { 1 }).collect();
    Ok(picked.permute(order).reshape(kept).expand(size.clone()))
}

#[cfg(test)]
mod tests {
    use crate::nn::torch_load::value::*;

    /// Random sizes, strides (zero, overlapping, stepped, transposed) and offsets: the view reads
    /// what `offset + Σ index·stride` names.
    #[test]
    fn strided_views_read_the_elements_strides_name() {
        let numel = 200usize;
        let flat = Tensor::arange(numel).cast(crate::DType::F32);
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n) as usize
        };
        for round in 0..100 {
            let dims = 1 + next(4);
            let size: Vec<usize> = (0..dims).map(|_| 1 + next(4)).collect();
            let stride: Vec<i64> = (0..dims).map(|_| next(12) as i64).collect();
            let offset = next(20);
            let spec = TensorSpec {
                key: "0".into(),
                storage_numel: numel,
                offset,
                size: size.clone(),
                stride: stride.clone(),
            };
            let n: usize = size.iter().product();
            let want: Vec<f32> = (0..n)
                .map(|mut i| {
                    let mut at = offset;
                    for (&l, &s) in size.iter().zip(&stride).rev() {
                        at += (i % l) * s as usize;
                        i /= l;
                    }
                    at as f32
                })
                .collect();
            let got = strided_view(&flat, &spec).unwrap();
            assert_eq!(got.shape(), size, "round {round}");
            assert_eq!(
                got.to_vec::<f32>().unwrap(),
                want,
                "round {round}: size {size:?} stride {stride:?} offset {offset}"
            );
        }
    }
}
