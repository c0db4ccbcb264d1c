//! Tensors spread over several devices. A `MULTI` node holds one tensor per device, either
//! consecutive slices of one axis (sharded) or whole copies (replicated); every node built on
//! it has the joined device name (`CPU,CPU:1`) and the logical shape, so the front end,
//! autograd and the user see one tensor. Before scheduling, `lower` rewrites such a graph into
//! one graph per device, node by node in topological order (one rule per op group below):
//!
//! - elementwise ops run per device; a replicated source meeting a sharded one is sliced to
//!   each device's part (a view, no copy); a source sharded on another axis is gathered whole on
//!   every device first (an all-gather; `DEBUG=1` says where);
//! - movement ops run per device with their argument restated for one shard; one that needs
//!   other devices' elements (a pad, shrink or flip along the sharded axis, a reshape that
//!   splits the shards) runs on the tensor gathered whole on every device;
//! - a reduce over the sharded axis reduces each shard, then combines them with an
//!   **allreduce built from copies**: naive (every shard copied to every device, combined in
//!   the same order everywhere, so the copies agree bit for bit) below `ALLREDUCE_RING`
//!   elements, else a ring (reduce-scatter: each of n chunks travels once around the ring
//!   gathering the other devices' parts; all-gather: each reduced chunk travels on around it),
//!   which moves 2(n-1)/n of the tensor per device instead of n-1 times it;
//! - a copy to one device (`.to(device)`) gathers: the shards are copied there and
//!   concatenated (pad and add, as `Tensor::cat`);
//! - an assign writes each device's part into that device's memory.
//!
//! Realized assigns are remembered (weakly, by node), so a graph built before a realize and
//! used after it reads the memory instead of assigning again.

use crate::uop::node::toposort_many;
use crate::uop::node_table::NodeTable;
use crate::uop::{Arg, DType, FxHashMap, Ops, UOp};
use std::sync::atomic::{AtomicBool, Ordering};

/// The devices of a node's device name (one for an ordinary node).
pub fn devices_of(n: &UOp) -> Vec<String> {
    n.device().map(|d| d.split(',').map(str::to_string).collect()).unwrap_or_default()
}

/// Whether a node lives on several devices.
pub fn is_spread(n: &UOp) -> bool {
    n.device().is_some_and(|d| d.contains(','))
}

/// A node of a graph on several devices, lowered: one node per device, and the axis its
/// shards are slices of (`None`: each is a whole copy).
#[derive(Clone, Debug)]
pub struct Spread {
    pub shards: Vec<UOp>,
    pub axis: Option<usize>,
}

impl Spread {
    /// The `MULTI` node that holds these shards.
    pub fn multi(&self) -> UOp {
        let dtype = self.shards[0].dtype();
        UOp::new(Ops::MULTI, dtype, self.shards.clone(), Arg::Int(self.axis.map_or(-1, |a| a as i64)))
    }
}

/// A root after lowering.
pub enum Lowered {
    /// On one device (rebuilt if it read a gathered tensor).
    One(UOp),
    Spread(Spread),
}

static EVER_SPREAD: AtomicBool = AtomicBool::new(false);
/// Logical assign → the node holding its realized value (a `MULTI` of buffer views, or a view).
static REALIZED: NodeTable<UOp> = NodeTable::new();

/// Notes that a tensor was spread over devices: until then `needs_lowering` is false at no cost.
pub fn note_spread() {
    EVER_SPREAD.store(true, Ordering::Relaxed);
}

/// Whether `lower` could change anything (no tensor was ever spread in this process: no).
pub fn needs_lowering() -> bool {
    EVER_SPREAD.load(Ordering::Relaxed)
}

/// Remembers that `logical` (a root given to `lower`) is now held by `realized`, when it is an
/// assign: an assign is an event that must not run twice. Other values are computed again when
/// a later graph uses them, as the engine does: the memory they read may have been assigned
/// since (a gather of a parameter read before and after its update must see the update).
pub fn remember_realized(logical: &UOp, realized: &UOp) {
    if logical.op() == Ops::ASSIGN {
        REALIZED.insert(logical, realized.clone());
    }
}

/// The shards and axis a `MULTI` node holds.
fn spread_of_multi(m: &UOp) -> Spread {
    let axis = match m.arg() {
        Arg::Int(a) if *a >= 0 => Some(*a as usize),
        _ => None,
    };
    Spread { shards: m.src().to_vec(), axis }
}

/// The axis a node on several devices is sharded along (`None`: replicated).
pub fn shard_axis(n: &UOp) -> Option<usize> {
    match lower(std::slice::from_ref(n)).pop() {
        Some(Lowered::Spread(s)) => s.axis,
        _ => None,
    }
}

/// One graph per device for `roots` (see the module comment).
pub fn lower(roots: &[UOp]) -> Vec<Lowered> {
    let mut spread: FxHashMap<UOp, Spread> = FxHashMap::default();
    let mut rebuilt: FxHashMap<UOp, UOp> = FxHashMap::default();
    for n in toposort_many(roots) {
        if let Some(r) = REALIZED.get(&n) {
            match r.op() {
                Ops::MULTI => drop(spread.insert(n, spread_of_multi(&r))),
                _ => drop(rebuilt.insert(n, r)),
            }
            continue;
        }
        let changed = n.src().iter().any(|s| spread.contains_key(s) || rebuilt.contains_key(s));
        if is_spread(&n) {
            let s = lower_node(&n, &spread, &rebuilt);
            spread.insert(n, s);
        } else if changed {
            let new = match spread.get(&n.src()[0]) {
                Some(s) if n.op() == Ops::COPY => gather(s, &n),
                _ => {
                    let src = n.src().iter().map(|s| rebuilt.get(s).cloned().unwrap_or_else(|| s.clone())).collect();
                    n.with_src(src)
                }
            };
            rebuilt.insert(n, new);
        }
    }
    roots
        .iter()
        .map(|r| match spread.get(r) {
            Some(s) => Lowered::Spread(s.clone()),
            None => Lowered::One(rebuilt.get(r).cloned().unwrap_or_else(|| r.clone())),
        })
        .collect()
}

fn device_node(name: &str) -> UOp {
    UOp::new(Ops::DEVICE, DType::VOID, vec![], Arg::Str(name.into()))
}

/// `x` on `device` (itself when it is there already).
fn copy_to(x: &UOp, device: &str) -> UOp {
    match x.device() == Some(device) {
        true => x.clone(),
        false => UOp::new(Ops::COPY, x.dtype(), vec![x.clone()], Arg::Str(device.into())),
    }
}

/// Part `i` of `parts` of a whole tensor along `axis` (a view).
fn slice(x: &UOp, axis: usize, i: usize, parts: usize) -> UOp {
    let shape = x.shape();
    let len = shape[axis] / parts;
    let pairs = shape.iter().enumerate().map(|(k, &d)| if k == axis { (i * len, (i + 1) * len) } else { (0, d) });
    UOp::new(Ops::SHRINK, x.dtype(), vec![x.clone()], Arg::Pairs(pairs.collect()))
}

/// Concatenates `parts` (all on one device) along `axis`, as `Tensor::cat` does.
fn concat(parts: &[UOp], axis: usize) -> UOp {
    let total: usize = parts.iter().map(|p| p.shape()[axis]).sum();
    let mut start = 0;
    let mut acc: Option<UOp> = None;
    for p in parts {
        let d = p.shape()[axis];
        let pads = (0..p.shape().len()).map(|k| if k == axis { (start, total - start - d) } else { (0, 0) });
        let padded = UOp::new(Ops::PAD, p.dtype(), vec![p.clone()], Arg::Pairs(pads.collect()));
        start += d;
        let op = if p.dtype().is_bool() { Ops::OR } else { Ops::ADD };
        acc = Some(acc.map_or(padded.clone(), |a| UOp::alu(op, vec![a, padded])));
    }
    acc.expect("at least one part")
}

/// `.to(device)` of a spread tensor: one shard copied (replicated), or all of them copied and
/// concatenated in order (sharded).
fn gather(s: &Spread, copy: &UOp) -> UOp {
    let target = copy.device().expect("a COPY names its device");
    match s.axis {
        None => {
            let here = s.shards.iter().find(|x| x.device() == Some(target)).unwrap_or(&s.shards[0]);
            copy_to(here, target)
        }
        Some(axis) => concat(&s.shards.iter().map(|x| copy_to(x, target)).collect::<Vec<_>>(), axis),
    }
}

/// A sharded tensor made whole on every device (an all-gather: each device receives every
/// other device's shard and concatenates them), for an op that cannot work shard by shard.
fn replicate(s: &Spread, devices: &[String], why: impl FnOnce() -> String) -> Spread {
    let Some(axis) = s.axis else { return s.clone() };
    if crate::helpers::debug_level() >= 1 {
        eprintln!("multi: {}: the tensor is gathered on every device", why());
    }
    let shards =
        devices.iter().map(|d| concat(&s.shards.iter().map(|x| copy_to(x, d)).collect::<Vec<_>>(), axis)).collect();
    Spread { shards, axis: None }
}

/// Sources of an elementwise node, one list per device, and the axis of the result.
fn align(n: &UOp, sources: &[Option<&Spread>], parts: usize) -> (Vec<Vec<UOp>>, Option<usize>) {
    // The first sharded source decides; sources sharded on another axis are gathered first.
    let axis = sources.iter().flatten().find_map(|s| s.axis);
    let devices = devices_of(n);
    let regathered: Vec<Option<Spread>> = sources
        .iter()
        .map(|s| {
            s.filter(|s| s.axis.is_some() && s.axis != axis).map(|s| {
                replicate(s, &devices, || format!("{:?} of sources sharded on axes {axis:?} and {:?}", n.op(), s.axis))
            })
        })
        .collect();
    let sources: Vec<Option<&Spread>> = sources.iter().zip(&regathered).map(|(s, r)| r.as_ref().or(*s)).collect();
    let per_device = (0..parts)
        .map(|i| {
            n.src()
                .iter()
                .zip(&sources)
                .map(|(x, s)| match (*s, axis) {
                    (Some(s), Some(a)) if s.axis.is_none() => slice(&s.shards[i], a, i, parts),
                    (Some(s), _) => s.shards[i].clone(),
                    // Sources without a device (variables) are shared.
                    (None, _) => x.clone(),
                })
                .collect()
        })
        .collect();
    (per_device, axis)
}

fn lower_node(n: &UOp, spread: &FxHashMap<UOp, Spread>, rebuilt: &FxHashMap<UOp, UOp>) -> Spread {
    let devices = devices_of(n);
    let parts = devices.len();
    if n.has_symbolic_shape() {
        panic!("{:?}: symbolic shapes on tensors spread over devices are not supported yet", n.op());
    }
    match n.op() {
        Ops::DEVICE => Spread { shards: devices.iter().map(|d| device_node(d)).collect(), axis: None },
        Ops::MULTI => {
            let s = spread_of_multi(n);
            let shards = s.shards.iter().map(|x| rebuilt.get(x).cloned().unwrap_or_else(|| x.clone())).collect();
            Spread { shards, ..s }
        }
        Ops::RESHAPE | Ops::PERMUTE | Ops::EXPAND | Ops::PAD | Ops::SHRINK | Ops::FLIP => {
            movement(n, &spread[&n.src()[0]], &devices)
        }
        Ops::REDUCE_AXIS => {
            let s = &spread[&n.src()[0]];
            let Arg::Reduce(op, axes) = n.arg() else { unreachable!("REDUCE_AXIS has a Reduce arg") };
            let shards: Vec<UOp> = s.shards.iter().map(|x| n.with_src(vec![x.clone()])).collect();
            match s.axis {
                Some(a) if axes.contains(&a) => Spread { shards: allreduce(&shards, *op, &devices), axis: None },
                axis => Spread { shards, axis },
            }
        }
        Ops::ASSIGN => assign(n, spread, &devices),
        op if op.is_alu()
            || matches!(op, Ops::CAST | Ops::BITCAST | Ops::CONTIGUOUS | Ops::DETACH | Ops::CONST | Ops::IOTA) =>
        {
            let sources: Vec<Option<&Spread>> = n.src().iter().map(|s| spread.get(s)).collect();
            let (per_device, axis) = align(n, &sources, parts);
            Spread { shards: per_device.into_iter().map(|src| n.with_src(src)).collect(), axis }
        }
        op => panic!("{op:?} on a tensor spread over ({}) is not supported", devices.join(", ")),
    }
}

/// A movement op on one shard: its argument restated for the shard's shape. One that would
/// need another device's elements (a pad, shrink or flip along the sharded axis, a reshape that
/// splits the shards) runs on the tensor gathered whole on every device.
fn movement(n: &UOp, s: &Spread, devices: &[String]) -> Spread {
    let parts = devices.len();
    let on_each = |s: &Spread, arg: Arg, axis: Option<usize>| Spread {
        shards: s.shards.iter().map(|x| UOp::new(n.op(), n.dtype(), vec![x.clone()], arg.clone())).collect(),
        axis,
    };
    let Some(a) = s.axis else { return on_each(s, n.arg().clone(), None) };
    let old = n.src()[0].shape();
    let whole = |what: &str| {
        let r = replicate(s, devices, || format!("{:?}: {what} of shape {old:?} sharded on axis {a}", n.op()));
        on_each(&r, n.arg().clone(), None)
    };
    match (n.op(), n.arg()) {
        (Ops::PERMUTE, Arg::Axes(order)) => {
            let to = order.iter().position(|&x| x == a).expect("a permutation");
            on_each(s, n.arg().clone(), Some(to))
        }
        (Ops::EXPAND, Arg::Shape(shape)) => {
            let mut shard = shape.clone();
            shard[a] /= parts;
            on_each(s, Arg::Shape(shard), Some(a))
        }
        (Ops::RESHAPE, Arg::Shape(shape)) => {
            // The axis of the new shape that starts where the sharded one did and still splits
            // into `parts` whole blocks: each shard is then one contiguous block of it.
            let before: usize = old[..a].iter().product();
            let to = (0..shape.len()).find(|&b| {
                shape[..b].iter().product::<usize>() == before && shape[b].is_multiple_of(parts) && shape[b] > 1
            });
            match to {
                Some(b) => {
                    let mut shard = shape.clone();
                    shard[b] /= parts;
                    on_each(s, Arg::Shape(shard), Some(b))
                }
                None => whole("a reshape that splits the shards"),
            }
        }
        (Ops::PAD, Arg::Pairs(p)) if p[a] == (0, 0) => on_each(s, n.arg().clone(), Some(a)),
        (Ops::SHRINK, Arg::Pairs(p)) if p[a] == (0, old[a]) => {
            let mut shard = p.clone();
            shard[a] = (0, old[a] / parts);
            on_each(s, Arg::Pairs(shard), Some(a))
        }
        (Ops::FLIP, Arg::Axes(axes)) if !axes.contains(&a) => on_each(s, n.arg().clone(), Some(a)),
        (Ops::PAD, _) => whole("a pad along the sharded axis"),
        (Ops::SHRINK, _) => whole("a shrink along the sharded axis"),
        (Ops::FLIP, _) => whole("a flip along the sharded axis"),
        (op, arg) => unreachable!("{op:?} with argument {arg:?}"),
    }
}

/// An assign into a spread tensor: each device's part of the value into that device's memory
/// (a value placed otherwise is gathered first, then sliced like the target).
fn assign(n: &UOp, spread: &FxHashMap<UOp, Spread>, devices: &[String]) -> Spread {
    let parts = devices.len();
    let target = &spread[&n.src()[0]];
    if n.src().len() > 2 && target.axis.is_some() {
        panic!("assign_window into a sharded tensor is not supported; write into a replicated one");
    }
    let value = match spread[&n.src()[1]].clone() {
        v if v.axis == target.axis => v,
        v => replicate(&v, devices, || {
            format!("assign of a value sharded on {:?} into one sharded on {:?}", v.axis, target.axis)
        }),
    };
    let shards = (0..parts)
        .map(|i| {
            let v = match (target.axis, value.axis) {
                (Some(a), None) => slice(&value.shards[i], a, i, parts),
                _ => value.shards[i].clone(),
            };
            let mut src = vec![target.shards[i].clone(), v];
            src.extend(n.src()[2..].iter().map(|w| spread[w].shards[i].clone()));
            n.with_src(src)
        })
        .collect();
    Spread { shards, axis: target.axis }
}

/// Elements from which `allreduce` goes around a ring instead of copying everything to
/// everyone (`ALLREDUCE_RING`).
fn ring_threshold() -> usize {
    crate::flags::int("ALLREDUCE_RING").max(1) as usize
}

/// Every device's shard combined with `op` (ADD, MAX or MUL), the result on every device.
pub fn allreduce(shards: &[UOp], op: Ops, devices: &[String]) -> Vec<UOp> {
    let numel = shards[0].numel();
    if shards.len() > 1 && numel >= ring_threshold() && numel >= shards.len() {
        ring_allreduce(shards, op, devices)
    } else {
        naive_allreduce(shards, op, devices)
    }
}

/// Every shard copied to every device and combined there in device order.
fn naive_allreduce(shards: &[UOp], op: Ops, devices: &[String]) -> Vec<UOp> {
    devices
        .iter()
        .map(|d| {
            let mut parts = shards.iter().map(|s| copy_to(s, d));
            let first = parts.next().expect("a shard");
            parts.fold(first, |acc, x| UOp::alu(op, vec![acc, x]))
        })
        .collect()
}

/// Reduce-scatter then all-gather around the ring of devices, on the flattened shards.
fn ring_allreduce(shards: &[UOp], op: Ops, devices: &[String]) -> Vec<UOp> {
    let n = shards.len();
    let (shape, numel) = (shards[0].shape().to_vec(), shards[0].numel());
    let flat: Vec<UOp> =
        shards.iter().map(|s| UOp::new(Ops::RESHAPE, s.dtype(), vec![s.clone()], Arg::Shape(vec![numel]))).collect();
    let bound = |c: usize| c * numel / n;
    let chunk = |dev: usize, c: usize| {
        UOp::new(Ops::SHRINK, flat[dev].dtype(), vec![flat[dev].clone()], Arg::Pairs(vec![(bound(c), bound(c + 1))]))
    };
    // Chunk c starts on device c+1 and ends, summed over every device, on device c.
    let reduced: Vec<UOp> = (0..n)
        .map(|c| {
            let mut acc = chunk((c + 1) % n, c);
            for step in 2..=n {
                let dev = (c + step) % n;
                acc = UOp::alu(op, vec![copy_to(&acc, &devices[dev]), chunk(dev, c)]);
            }
            acc
        })
        .collect();
    // Each reduced chunk travels on around the ring; a hop shared by later devices is one copy.
    (0..n)
        .map(|j| {
            let pieces: Vec<UOp> = (0..n)
                .map(|c| {
                    let (mut piece, mut dev) = (reduced[c].clone(), c);
                    while dev != j {
                        dev = (dev + 1) % n;
                        piece = copy_to(&piece, &devices[dev]);
                    }
                    piece
                })
                .collect();
            let whole = concat(&pieces, 0);
            UOp::new(Ops::RESHAPE, whole.dtype(), vec![whole], Arg::Shape(shape.clone()))
        })
        .collect()
}
