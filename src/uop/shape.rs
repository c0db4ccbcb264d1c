//! Shape and device inference for tensor-level nodes. Kernel-level nodes have no shape.
//! Invalid shapes here are bugs of the front end (which checks user input first and panics
//! with a friendlier message), so these panics name the op and shapes plainly.

use super::dtype::DType;
use super::node::{Arg, Dim, UOp};
use super::ops::Ops;
use std::sync::Arc;

/// The shape of a new node, checked to be addressable: its element count times its item size
/// fits in `isize` (what an allocation can hold), so byte sizes computed from shapes never wrap.
pub(crate) fn infer_shape(op: Ops, dtype: DType, src: &[UOp], arg: &Arg) -> Option<Vec<usize>> {
    let shape = infer_shape_unchecked(op, dtype, src, arg)?;
    let bytes = shape.iter().try_fold(dtype.itemsize().max(1), |acc, &d| acc.checked_mul(d));
    if bytes.is_none_or(|b| b > isize::MAX as usize) {
        panic!("{op:?}: shape {shape:?} of {dtype:?} has more elements than memory can hold");
    }
    Some(shape)
}

fn infer_shape_unchecked(op: Ops, dtype: DType, src: &[UOp], arg: &Arg) -> Option<Vec<usize>> {
    let s0 = || src[0].try_shape().map(|s| s.to_vec());
    match op {
        Ops::BUFFER => match arg {
            Arg::Buffer(b) => Some(vec![b.0.size()]),
            _ => panic!("BUFFER needs a Buffer arg"),
        },
        Ops::CONST | Ops::DEFINE_VAR => {
            if src.iter().any(|s| s.op() == Ops::DEVICE) {
                Some(vec![])
            } else {
                None
            }
        }
        Ops::IOTA => match arg {
            Arg::Int(n) => Some(vec![*n as usize]),
            _ => panic!("IOTA needs an Int arg"),
        },
        Ops::CONTIGUOUS | Ops::COPY | Ops::DETACH | Ops::CAST | Ops::ASSIGN => s0(),
        Ops::MULTI => {
            let mut s = s0()?;
            assert!(
                src.iter().all(|x| x.try_shape() == Some(&s[..])),
                "MULTI: the tensors on the devices have different shapes {:?}",
                src.iter().map(|x| x.try_shape()).collect::<Vec<_>>()
            );
            if let Arg::Int(axis) = arg {
                if *axis >= 0 {
                    s[*axis as usize] *= src.len();
                }
            }
            Some(s)
        }
        Ops::BITCAST => {
            let s = s0()?;
            if src[0].dtype().itemsize() != dtype.itemsize() {
                panic!("bitcast: {:?} -> {:?} changes the item size; shape {:?}", src[0].dtype(), dtype, s);
            }
            Some(s)
        }
        _ if op.is_alu() => {
            let shapes: Vec<Option<&[usize]>> = src.iter().map(|s| s.try_shape()).collect();
            let first = shapes[0]?;
            for s in &shapes[1..] {
                match s {
                    Some(s) if *s == first => {}
                    _ => panic!("{op:?}: sources have different shapes {:?}", shapes),
                }
            }
            Some(first.to_vec())
        }
        Ops::RESHAPE => {
            let s = s0()?;
            let Arg::Shape(new) = arg else { panic!("RESHAPE needs a Shape arg") };
            let (a, b): (usize, usize) = (s.iter().product(), new.iter().product());
            assert_eq!(a, b, "reshape: cannot reshape {s:?} ({a} elements) to {new:?} ({b} elements)");
            Some(new.clone())
        }
        Ops::EXPAND => {
            let s = s0()?;
            let Arg::Shape(new) = arg else { panic!("EXPAND needs a Shape arg") };
            let ok = s.len() == new.len() && s.iter().zip(new).all(|(a, b)| a == b || *a == 1);
            assert!(ok, "expand: cannot expand {s:?} to {new:?}");
            Some(new.clone())
        }
        Ops::PERMUTE => {
            let s = s0()?;
            let Arg::Axes(order) = arg else { panic!("PERMUTE needs an Axes arg") };
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert!(
                sorted == (0..s.len()).collect::<Vec<_>>(),
                "permute: {order:?} is not a permutation of the axes of {s:?}"
            );
            Some(order.iter().map(|&i| s[i]).collect())
        }
        Ops::FLIP => {
            let s = s0()?;
            let Arg::Axes(axes) = arg else { panic!("FLIP needs an Axes arg") };
            assert!(axes.iter().all(|&a| a < s.len()), "flip: axes {axes:?} out of range for shape {s:?}");
            Some(s)
        }
        Ops::PAD => {
            let s = s0()?;
            let Arg::Pairs(p) = arg else { panic!("PAD needs a Pairs arg") };
            assert_eq!(p.len(), s.len(), "pad: {} pairs for shape {s:?}", p.len());
            Some(s.iter().zip(p).map(|(d, (b, a))| d + b + a).collect())
        }
        Ops::SHRINK => {
            let s = s0()?;
            let Arg::Pairs(p) = arg else { panic!("SHRINK needs a Pairs arg") };
            let ok = p.len() == s.len() && s.iter().zip(p).all(|(d, (b, e))| b <= e && e <= d);
            assert!(ok, "shrink: {p:?} is not inside shape {s:?}");
            Some(p.iter().map(|(b, e)| e - b).collect())
        }
        Ops::REDUCE_AXIS => {
            let mut s = s0()?;
            let Arg::Reduce(_, axes) = arg else { panic!("REDUCE_AXIS needs a Reduce arg") };
            for &a in axes {
                assert!(a < s.len(), "reduce: axis {a} out of range for shape {s:?}");
                s[a] = 1;
            }
            Some(s)
        }
        _ => None,
    }
}

/// The lengths of a new node when some source has a symbolic shape or the arg has symbolic
/// lengths or offsets (`None` otherwise: `infer_shape` does the all-numbers case). Lengths are
/// compared as simplified expressions; a window must fit for every value of its variables.
pub(crate) fn infer_sym_shape(op: Ops, dtype: DType, src: &[UOp], arg: &Arg) -> Option<Vec<Dim>> {
    let symbolic_arg = matches!(arg, Arg::DimShape(_) | Arg::DimPairs(_));
    if !symbolic_arg && !src.iter().any(|s| s.try_shape().is_some() && s.has_symbolic_shape()) {
        return None;
    }
    let s0 = || src[0].sym_shape();
    let dims = match op {
        Ops::CONTIGUOUS | Ops::COPY | Ops::DETACH | Ops::CAST | Ops::BITCAST | Ops::ASSIGN => s0(),
        _ if op.is_alu() => {
            let shapes: Vec<Vec<Dim>> = src.iter().map(|s| s.sym_shape()).collect();
            assert!(shapes.iter().all(|s| *s == shapes[0]), "{op:?}: sources have different shapes {shapes:?}");
            shapes[0].clone()
        }
        Ops::RESHAPE => {
            let s = s0();
            let new = shape_arg(arg, "RESHAPE");
            let (a, b) = (product(&s), product(&new));
            assert!(a == b, "reshape: cannot reshape {s:?} ({a:?} elements) to {new:?} ({b:?} elements)");
            new
        }
        Ops::EXPAND => {
            let s = s0();
            let new = shape_arg(arg, "EXPAND");
            let ok = s.len() == new.len() && s.iter().zip(&new).all(|(a, b)| a == b || *a == Dim::Const(1));
            assert!(ok, "expand: cannot expand {s:?} to {new:?}");
            new
        }
        Ops::PERMUTE => {
            let s = s0();
            let Arg::Axes(order) = arg else { panic!("PERMUTE needs an Axes arg") };
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert!(sorted == (0..s.len()).collect::<Vec<_>>(), "permute: {order:?} is not a permutation of {s:?}");
            order.iter().map(|&i| s[i].clone()).collect()
        }
        Ops::FLIP | Ops::REDUCE_AXIS if matches!(arg, Arg::Axes(_) | Arg::Reduce(..)) => {
            let mut s = s0();
            let axes = match arg {
                Arg::Axes(a) | Arg::Reduce(_, a) => a,
                _ => unreachable!(),
            };
            assert!(axes.iter().all(|&a| a < s.len()), "{op:?}: axes {axes:?} out of range for shape {s:?}");
            if op == Ops::REDUCE_AXIS {
                for &a in axes {
                    s[a] = Dim::Const(1);
                }
            }
            s
        }
        Ops::PAD => {
            let s = s0();
            let p = super::dim::dim_pairs(arg);
            assert_eq!(p.len(), s.len(), "pad: {} pairs for shape {s:?}", p.len());
            s.iter().zip(&p).map(|(d, (b, a))| b + d + a).collect()
        }
        Ops::SHRINK => {
            let s = s0();
            let p = super::dim::dim_pairs(arg);
            // end <= length for every value (end - start >= 0 is checked by the subtraction).
            let ok = p.len() == s.len() && s.iter().zip(&p).all(|(d, (_, e))| fits_sym(e, d));
            assert!(ok, "shrink: {p:?} is not inside shape {s:?} for every value of its variables");
            p.iter().map(|(b, e)| e - b).collect()
        }
        _ => return None,
    };
    let max_bytes = dims.iter().try_fold(dtype.itemsize().max(1), |acc, d| acc.checked_mul(d.max()));
    assert!(
        max_bytes.is_some_and(|b| b <= isize::MAX as usize),
        "{op:?}: shape {dims:?} of {dtype:?} can have more elements than memory can hold"
    );
    Some(dims)
}

/// Whether `end <= len` for every value of the variables: `len - end` never negative.
fn fits_sym(end: &Dim, len: &Dim) -> bool {
    let diff = super::symbolic::simplify(&(&len.uop() - &end.uop()));
    diff.vmin() >= 0
}

fn shape_arg(arg: &Arg, op: &str) -> Vec<Dim> {
    match arg {
        Arg::Shape(s) => s.iter().map(|&d| Dim::Const(d)).collect(),
        Arg::DimShape(s) => s.clone(),
        a => panic!("{op} needs a Shape arg, got {a:?}"),
    }
}

/// The number of elements of a symbolic shape.
pub(crate) fn product(s: &[Dim]) -> Dim {
    s.iter().fold(Dim::Const(1), |acc, d| acc * d)
}

pub(crate) fn infer_device(op: Ops, src: &[UOp], arg: &Arg) -> Option<Arc<str>> {
    match (op, arg) {
        (Ops::DEVICE, Arg::Str(name)) => return Some(name.clone()),
        (Ops::BUFFER, Arg::Buffer(b)) => return Some(Arc::from(b.0.device())),
        (Ops::COPY, Arg::Str(name)) => return Some(name.clone()),
        (Ops::MULTI, _) => {
            let names: Vec<&str> = src.iter().map(|s| s.device().expect("MULTI: a source without a device")).collect();
            for (i, n) in names.iter().enumerate() {
                assert!(!n.contains(','), "MULTI: a source is itself spread over devices ({n})");
                assert!(!names[..i].contains(n), "MULTI: device {n} appears twice in {names:?}");
            }
            return Some(Arc::from(names.join(",")));
        }
        _ => {}
    }
    let mut found: Option<Arc<str>> = None;
    for s in src {
        if let Some(d) = s.device_arc() {
            match &found {
                None => found = Some(d),
                Some(f) if **f != *d => panic!("{op:?}: sources are on different devices, {}", placements(f, &d)),
                _ => {}
            }
        }
    }
    found
}

/// The devices of a device name: several for a tensor spread over devices (`CPU,CPU:1`).
pub fn placement_devices(device: &str) -> Vec<&str> {
    device.split(',').collect()
}

/// Two placements that do not meet, named for a panic message with what to do.
fn placements(a: &str, b: &str) -> String {
    let name = |d: &str| match d.contains(',') {
        true => format!("a tensor spread over ({})", placement_devices(d).join(", ")),
        false => d.to_string(),
    };
    if a.contains(',') || b.contains(',') {
        format!(
            "{} and {}; give both the same placement (`.shard(&devices, axis)` spreads a tensor, `.to(device)` \
             gathers one)",
            name(a),
            name(b)
        )
    } else {
        format!("{a} and {b}; move one with .to(device)")
    }
}
