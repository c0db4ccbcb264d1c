//! Schedule: cut the tensor graph into kernels.
//!
//! A node is materialized (gets its own buffer and kernel) when it is an output of the realize,
//! a CONTIGUOUS, a COPY, or a reduce whose result is broadcast (EXPAND) on the way to its
//! consumer — recomputing it per broadcast element would multiply the work. Everything else
//! fuses into the kernel of the materialized node that consumes it.

pub mod rangeify;

use crate::runtime::{buffer_of, get_device, Buffer};
use crate::uop::uop::toposort_many;
use crate::uop::{FxHashMap, FxHashSet, Ops, UOp};
use rangeify::{index_dtype, Rangeify};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// Run a kernel: `ast` is its SINK.
    Kernel,
    /// Copy `bufs[1]` into `bufs[0]` (across devices).
    Copy,
}

/// One step of a schedule.
pub struct ScheduleItem {
    pub kind: ItemKind,
    pub ast: UOp,
    /// Buffers in DEFINE_GLOBAL order; the output is `bufs[0]`.
    pub bufs: Vec<Arc<Buffer>>,
    pub device: String,
}

/// The ordered kernels of one realize, and the buffer holding each requested output.
pub struct Schedule {
    pub items: Vec<ScheduleItem>,
    pub outputs: Vec<Arc<Buffer>>,
}

/// The buffer a node already is, if it is a BUFFER or a whole-buffer reshape of one.
fn existing_buffer(n: &UOp) -> Option<Arc<Buffer>> {
    match n.op() {
        Ops::BUFFER => Some(buffer_of(n.buffer()?)),
        Ops::RESHAPE | Ops::CONTIGUOUS | Ops::DETACH => {
            let b = existing_buffer(&n.src()[0])?;
            (crate::uop::BufferObj::size(&*b) == n.numel()).then_some(b)
        }
        _ => None,
    }
}

fn is_expanding(n: &UOp) -> bool {
    n.op() == Ops::EXPAND && n.src()[0].shape() != n.shape()
}

/// Which nodes get their own kernel.
fn find_materialized(outs: &[UOp], topo: &[UOp]) -> FxHashSet<UOp> {
    let mut mat: FxHashSet<UOp> = FxHashSet::default();
    for o in outs {
        if existing_buffer(o).is_none() {
            mat.insert(o.clone());
        }
    }
    let mut users: FxHashMap<UOp, Vec<UOp>> = FxHashMap::default();
    for n in topo {
        for s in n.src() {
            users.entry(s.clone()).or_default().push(n.clone());
        }
        if matches!(n.op(), Ops::CONTIGUOUS | Ops::COPY) && existing_buffer(n).is_none() {
            mat.insert(n.clone());
        }
        // A copy reads its source's memory, so the source must be materialized first.
        if n.op() == Ops::COPY && existing_buffer(&n.src()[0]).is_none() {
            mat.insert(n.src()[0].clone());
        }
    }
    // Users come before sources in reverse topological order, so each node's flag is final
    // when it is visited.
    let mut expanded_above: FxHashMap<UOp, bool> = FxHashMap::default();
    for n in topo.iter().rev() {
        let flag =
            users.get(n).into_iter().flatten().any(|u| is_expanding(u) || (!mat.contains(u) && expanded_above[u]));
        if flag && n.op() == Ops::REDUCE_AXIS {
            mat.insert(n.clone());
        }
        expanded_above.insert(n.clone(), flag);
    }
    mat
}

/// Builds the schedule that realizes `outs`.
pub fn create_schedule(outs: &[UOp]) -> Schedule {
    let topo = toposort_many(outs);
    let mat = find_materialized(outs, &topo);
    let max_numel = topo.iter().filter_map(|n| n.try_shape()).map(|s| s.iter().product::<usize>()).max().unwrap_or(1);
    let idx_dt = index_dtype(max_numel);

    let mut realized: FxHashMap<UOp, Arc<Buffer>> = FxHashMap::default();
    let mut items = Vec::new();
    for n in &topo {
        if !mat.contains(n) {
            continue;
        }
        let device_name = n.device().unwrap_or_else(|| panic!("{:?} has no device", n.op())).to_string();
        let device = get_device(&device_name).unwrap_or_else(|e| panic!("{e}"));
        let out = Buffer::new(device, n.dtype(), n.numel());
        if n.op() == Ops::COPY {
            let src = &n.src()[0];
            let sb = existing_buffer(src).or_else(|| realized.get(src).cloned()).expect("COPY source not realized");
            items.push(ScheduleItem {
                kind: ItemKind::Copy,
                ast: n.clone(),
                bufs: vec![out.clone(), sb],
                device: device_name,
            });
        } else if n.numel() > 0 {
            let mut r = Rangeify::new(&realized, out.clone(), idx_dt);
            let ast = r.kernel(n);
            items.push(ScheduleItem { kind: ItemKind::Kernel, ast, bufs: r.bufs, device: device_name });
        }
        realized.insert(n.clone(), out);
    }
    let outputs = outs.iter().map(|o| existing_buffer(o).unwrap_or_else(|| realized[o].clone())).collect();
    Schedule { items, outputs }
}

/// Number of kernels realizing `outs` would run (for fusion tests).
pub fn kernel_count(outs: &[UOp]) -> usize {
    create_schedule(outs).items.iter().filter(|i| i.kind == ItemKind::Kernel).count()
}
