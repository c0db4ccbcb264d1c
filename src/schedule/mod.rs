//! Schedule: cut the tensor graph into kernels.
//!
//! A node is materialized (gets its own buffer and kernel) when it is an output of the realize,
//! a CONTIGUOUS, a COPY, or a reduce whose result is broadcast (EXPAND) on the way to its
//! consumer — recomputing it per broadcast element would multiply the work; where the reduce's
//! one use is an elementwise tail, the tail's top instead; not a row reduce a CPU kernel runs
//! once per row, nor one sharing a loop with a sibling (`fused_reduces.rs`) — or a large reduce
//! beside a larger one in the same kernel (`sibling_reduces.rs`). Everything else fuses into
//! the kernel of the materialized node that consumes it.

mod fused_reduces;
mod graph_log;
pub(crate) mod graph_rules;
pub(crate) mod multi;
mod pack_panels;
mod padded_inputs;
pub(crate) mod rangeify;
pub(crate) mod realized;
mod sibling_reduces;
mod split_reduce;

pub use realized::existing_buffer;
use realized::record_assigned;

use crate::runtime::Buffer;
use crate::uop::node::toposort_many;
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
    /// The kernel writes an assign's target (an existing buffer), not a new one.
    pub assign: bool,
    /// Values of the variables its kernel takes, by name (sorted); the AST holds only the
    /// variables, so one compiled kernel serves every value.
    pub var_vals: Vec<(Arc<str>, i64)>,
}

/// The ordered kernels of one realize, and the buffer holding each requested output.
pub struct Schedule {
    pub items: Vec<ScheduleItem>,
    pub outputs: Vec<Arc<Buffer>>,
    /// For VIZ (only while the compiler is logged): the tensor graph and which of its nodes
    /// each item computes; the engine names the kernels once they are compiled.
    pub graph_log: Option<crate::compiler_log::GraphLog>,
}

fn is_expanding(n: &UOp) -> bool {
    n.op() == Ops::EXPAND && n.src()[0].shape() != n.shape()
}

fn is_padding(n: &UOp) -> bool {
    n.op() == Ops::PAD && n.src()[0].shape() != n.shape()
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
    // An assign writes its target's buffer; its value must be read at the same index it is
    // written, or from a copy made first.
    for n in topo.iter().filter(|n| n.op() == Ops::ASSIGN && existing_buffer(n).is_none()) {
        mat.insert(n.clone());
        let value = &n.src()[1];
        // Into a window (a third source), its indices are the window's: any read of the target
        // reads a copy.
        let in_place =
            if n.src().len() > 2 { !reads_buffer(value, &n.src()[0]) } else { same_index_reads(value, &n.src()[0]) };
        if !in_place && existing_buffer(value).is_none() {
            mat.insert(value.clone());
        }
    }
    // Users come before sources in reverse topological order, so each node's flag is final
    // when it is visited.
    // A reduce is also materialized when several kernels would compute it (it is not worth
    // doing twice); `reach` is the kernel (or "many") each node's value ends up in.
    // `tail[n]`: n is elementwise work on a reduce's result (a chain of ALU ops, casts,
    // reshapes and permutes down to a REDUCE_AXIS, each link the only use of the one below: a
    // reduce that other kernels read is materialized anyway). Where such a chain is broadcast,
    // its top ALU op is materialized rather than the reduce: the tail runs once per element at
    // the reduce's store, not once per broadcast element in the consumer (attention's output
    // divided by the softmax sum, read by every row of the output projection).
    let only_user = |s: &UOp| users.get(s).is_some_and(|u| u.len() == 1);
    let mut tail: FxHashMap<&UOp, bool> = FxHashMap::default();
    for n in topo {
        let link = n.op().is_alu() || matches!(n.op(), Ops::CAST | Ops::RESHAPE | Ops::PERMUTE);
        let t = link && n.src().iter().any(|s| (s.op() == Ops::REDUCE_AXIS || tail[s]) && only_user(s));
        tail.insert(n, t);
    }
    let mut expanded_above: FxHashMap<UOp, bool> = FxHashMap::default();
    // `padded_above[n]`: n's value reaches its kernel through a pad (a `cat`). A reduce there
    // reading `PADDED_REDUCE_WORK` inputs or more is materialized: fused, its loops would run
    // for every element of the padded output, the padding included (a cat of two gradients
    // would compute both for every element).
    let mut padded_above: FxHashMap<UOp, bool> = FxHashMap::default();
    let mut reach: FxHashMap<UOp, Reach> = FxHashMap::default();
    // `reduced_again[n]`: n's value is reduced again in the same kernel (through a chain of
    // elementwise and movement ops up to another REDUCE_AXIS): the fewest outputs of such a
    // reduce. A large reduce that would run nested inside one with far fewer outputs (the squared
    // norm of a weight gradient, a batch mean of a convolution) is materialized: nested, its
    // loops sit inside the outer reduce's, whose few outputs are the only parallel axis, with no
    // register tile; on its own it gets the layout and opts of a plain reduce. A reduce over a
    // few of its outputs into many (a max-pool after a convolution) stays fused.
    let mut reduced_again: FxHashMap<&UOp, Option<usize>> = FxHashMap::default();
    for n in topo.iter().rev() {
        let us = users.get(n).map(Vec::as_slice).unwrap_or(&[]);
        let outer = us
            .iter()
            .filter(|u| !mat.contains(*u))
            .filter_map(|u| match u.op() {
                Ops::REDUCE_AXIS => Some(u.numel()),
                op if op.is_alu() || op.is_movement() || op == Ops::CAST => reduced_again[u],
                _ => None,
            })
            .min();
        reduced_again.insert(n, outer);
        if let (Some(outer), Ops::REDUCE_AXIS) = (outer, n.op()) {
            let (outputs, inputs) = (n.numel(), n.src()[0].numel());
            let far_fewer = inputs >= NESTED_REDUCE_WORK && outputs >= NESTED_REDUCE_RATIO * outer.max(1);
            let too_few = inputs >= NESTED_REDUCE_WORK / 16 && outer <= NESTED_REDUCE_FEW;
            if outputs >= NESTED_REDUCE_OUTPUTS && (far_fewer || too_few) {
                mat.insert(n.clone());
            }
        }

        let flag = us.iter().any(|u| is_expanding(u) || (!mat.contains(u) && expanded_above[u]));
        let padded = us.iter().any(|u| is_padding(u) || (!mat.contains(u) && padded_above[u]));
        if padded && n.op() == Ops::REDUCE_AXIS && n.src()[0].numel() >= PADDED_REDUCE_WORK {
            mat.insert(n.clone());
        }
        let r = us.iter().fold(Reach::None, |acc, u| {
            acc.join(if mat.contains(u) { Reach::One(u.clone()) } else { reach[u].clone() })
        });
        let expensive = || n.op().is_alu() && fused_cost(n, &mat, RECOMPUTE_LIMIT) >= RECOMPUTE_LIMIT;
        let top_of_tail = || n.op().is_alu() && tail[n] && !us.iter().any(|u| u.op().is_alu() && !mat.contains(u));
        let shared = n.op() == Ops::REDUCE_AXIS && r == Reach::Many;
        // A row reduce read back along its row runs once per row in its consumer's kernel: its
        // inputs are not recomputed per broadcast element (`fused_reduces`).
        let broadcast_reduce = flag && n.op() == Ops::REDUCE_AXIS;
        let row_reduce = broadcast_reduce && fused_reduces::hoisted_row_reduce(n, &users, &mat);
        let fused_reduce = row_reduce || (broadcast_reduce && fused_reduces::beside_sibling_reduce(n, &users));
        if (broadcast_reduce && !fused_reduce) || (flag && (expensive() || top_of_tail())) || shared {
            mat.insert(n.clone());
        }
        expanded_above.insert(n.clone(), flag && !row_reduce);
        padded_above.insert(n.clone(), padded);
        reach.insert(n.clone(), r);
    }
    sibling_reduces::split_sibling_reduces(&mut mat);
    mat
}

/// Which kernels a node's value flows into.
#[derive(Clone, PartialEq, Eq)]
enum Reach {
    None,
    One(UOp),
    Many,
}

impl Reach {
    fn join(self, other: Reach) -> Reach {
        match (self, other) {
            (Reach::None, x) | (x, Reach::None) => x,
            (Reach::One(a), Reach::One(b)) if a == b => Reach::One(a),
            _ => Reach::Many,
        }
    }
}

/// Elementwise work (ALU ops, a transcendental counting `TRANSCENDENTAL_COST`, plus 2 per
/// memory read) above which a broadcast value that reads
/// memory from at least two places is materialized instead of recomputed for every element it
/// is broadcast to. (Index math on aranges and constants is always recomputed: it is cheap.)
const RECOMPUTE_LIMIT: usize = 12;

/// A reduce reduced again is materialized from this many outputs (below, nesting is cheaper
/// than a second kernel: a cross-entropy's pick of each row's target), when it reads this many
/// inputs and the reduce around it has at most 1/64 as many outputs, or when it reads 1/16 as
/// many and the reduce around it has so few outputs (a norm per example) that they cannot keep
/// the machine busy.
const NESTED_REDUCE_OUTPUTS: usize = 1024;
const NESTED_REDUCE_WORK: usize = 1 << 20;
const NESTED_REDUCE_RATIO: usize = 64;
const NESTED_REDUCE_FEW: usize = 256;

/// A reduce under a pad is materialized from this many inputs (smaller ones cost less than the
/// extra kernel would).
const PADDED_REDUCE_WORK: usize = 1 << 16;

/// What `exp2`, `log2` and `sin` cost in `fused_cost` on a device whose kernels are loops (a
/// CPU): each is a polynomial of a dozen or so operations, and a SIMD one only along the kernel's
/// vector axis. So there softmax's weights (`exp(x - max) / sum`) are computed once, vectorized
/// along the keys, before the matmul with the values, not inside it as scalars.
const TRANSCENDENTAL_COST: usize = 8;
/// The same on a device with work groups (a GPU): one special-function instruction issued beside
/// the ALU work. There the weights are recomputed inside the matmul with the values rather than
/// written out and read back (attention in 3 kernels: scores, row max, weights @ values).
const GPU_TRANSCENDENTAL_COST: usize = 2;

/// The work of computing `n` inside a kernel: its ALU ops and reads down to materialized nodes,
/// each node counted once; stops counting at `limit`. Returns 0 when it reads fewer than two
/// memory locations.
fn fused_cost(n: &UOp, mat: &FxHashSet<UOp>, limit: usize) -> usize {
    let mut seen: FxHashSet<UOp> = FxHashSet::default();
    let mut stack = vec![n.clone()];
    let (mut cost, mut reads) = (0, 0);
    // The device is looked up only for a graph that has a transcendental.
    let transcendental = || {
        let gpu = fused_reduces::launches_work_groups(n) == Some(true);
        if gpu {
            GPU_TRANSCENDENTAL_COST
        } else {
            TRANSCENDENTAL_COST
        }
    };
    while let Some(x) = stack.pop() {
        if (cost >= limit && reads >= 2) || !seen.insert(x.clone()) {
            continue;
        }
        if &x != n && (mat.contains(&x) || matches!(x.op(), Ops::BUFFER | Ops::REDUCE_AXIS | Ops::ASSIGN)) {
            cost += 2;
            reads += 1;
            continue;
        }
        if matches!(x.op(), Ops::EXP2 | Ops::LOG2 | Ops::SIN) {
            cost += transcendental();
        } else if x.op().is_alu() {
            cost += 1;
        }
        stack.extend(x.src().iter().cloned());
    }
    if reads >= 2 {
        cost
    } else {
        0
    }
}

/// Whether `value` reads `target`'s buffer anywhere.
fn reads_buffer(value: &UOp, target: &UOp) -> bool {
    let Some(tb) = existing_buffer(target) else { return false };
    toposort_many(std::slice::from_ref(value))
        .iter()
        .any(|n| n == target || (n.op() == Ops::BUFFER && existing_buffer(n).is_some_and(|b| Arc::ptr_eq(&b, &tb))))
}

/// Whether every read of `target`'s buffer inside `value` is elementwise at the written index:
/// every path from `value` to it passes only elementwise ops and ends at `target` itself.
fn same_index_reads(value: &UOp, target: &UOp) -> bool {
    let Some(tb) = existing_buffer(target) else { return true };
    let topo = toposort_many(std::slice::from_ref(value));
    // `safe[n]`: n does not touch the target buffer except through `target` elementwise;
    // `reaches[n]`: `target` is among n's sources (one pass each: a KV-cache write's value
    // depends on the whole network below it).
    let mut safe: FxHashMap<UOp, bool> = FxHashMap::with_capacity_and_hasher(topo.len(), Default::default());
    let mut reaches: FxHashMap<UOp, bool> = FxHashMap::with_capacity_and_hasher(topo.len(), Default::default());
    for n in topo {
        let ok = if &n == target {
            true
        } else if n.op() == Ops::BUFFER {
            existing_buffer(&n).is_none_or(|b| !Arc::ptr_eq(&b, &tb))
        } else {
            let elementwise = n.op().is_alu() || matches!(n.op(), Ops::CAST | Ops::BITCAST | Ops::DETACH);
            n.src().iter().all(|s| safe[s] && (elementwise || !reaches[s]))
        };
        reaches.insert(n.clone(), &n == target || n.src().iter().any(|s| reaches[s]));
        safe.insert(n, ok);
    }
    safe[value]
}

/// Builds the schedule that realizes `outs`.
pub fn create_schedule(outs: &[UOp]) -> Schedule {
    build_schedule(outs, true)
}

/// `record`: remember the ASSIGNs as done (only for a schedule that will run; counting kernels
/// must not make a later realize skip the assign).
fn build_schedule(outs: &[UOp], record: bool) -> Schedule {
    // Device-dependent graph rewrites first; `origin` maps a rebuilt node to the one the
    // tensors hold (a rebuilt ASSIGN is remembered as done under its original).
    let (outs, origin) = graph_rules::apply_graph_rules(outs);
    let outs = outs.as_slice();
    let topo = toposort_many(outs);
    let mat = find_materialized(outs, &topo);
    let max_numel = topo.iter().filter_map(|n| n.try_shape()).map(|s| s.iter().product::<usize>()).max().unwrap_or(1);
    let idx_dt = index_dtype(max_numel);

    let mut realized: FxHashMap<UOp, Arc<Buffer>> = FxHashMap::default();
    let mut items = Vec::new();
    let mut reads: Vec<Vec<UOp>> = Vec::new();
    let mut produces: Vec<UOp> = Vec::new();
    for n in &topo {
        if !mat.contains(n) {
            continue;
        }
        let device_name = n.device().unwrap_or_else(|| panic!("{:?} has no device", n.op())).to_string();
        let out = if n.op() == Ops::ASSIGN {
            existing_buffer(&n.src()[0])
                .unwrap_or_else(|| panic!("assign: the target must be realized (shape {:?})", n.shape()))
        } else {
            Buffer::on(&device_name, n.dtype(), n.numel())
        };
        if n.op() == Ops::COPY {
            let src = &n.src()[0];
            let sb = existing_buffer(src).or_else(|| realized.get(src).cloned()).expect("COPY source not realized");
            items.push(ScheduleItem {
                kind: ItemKind::Copy,
                ast: n.clone(),
                bufs: vec![out.clone(), sb],
                device: device_name,
                assign: false,
                var_vals: Vec::new(),
            });
            // `reads` and `produces` are indexed like `items`.
            reads.push(vec![src.clone()]);
            produces.push(n.clone());
        } else if n.numel() > 0 {
            let mut r = Rangeify::new(&realized, out.clone(), idx_dt);
            let ast = r.kernel(n);
            reads.push(r.reads);
            produces.push(n.clone());
            let assign = n.op() == Ops::ASSIGN;
            let (bufs, var_vals) = (r.bufs, r.var_vals);
            items.push(ScheduleItem { kind: ItemKind::Kernel, ast, bufs, device: device_name, assign, var_vals });
        }
        if record && n.op() == Ops::ASSIGN {
            record_assigned(origin.get(n).unwrap_or(n), &out);
        }
        realized.insert(n.clone(), out);
    }
    let order = order_items(&items, &produces, &reads);
    let graph_log = (record && !order.is_empty() && crate::compiler_log::enabled())
        .then(|| graph_log::graph_log(&topo, &mat, &produces, &order));
    let mut slots: Vec<Option<ScheduleItem>> = items.into_iter().map(Some).collect();
    let items = order.into_iter().map(|i| slots[i].take().expect("each item is placed once")).collect();
    let outputs = outs.iter().map(|o| existing_buffer(o).unwrap_or_else(|| realized[o].clone())).collect();
    Schedule { items, outputs, graph_log }
}

/// Orders the items by their dependencies. Read-after-write: an item runs after the items
/// producing the nodes it reads. Write-after-read: an assign overwrites memory that others may
/// read in its old state, so it runs after every item reading its target's old buffer.
/// The order the items run in (indices into `items`; `produces[i]` is the node item `i`
/// computes, `reads[i]` the nodes it reads).
fn order_items(items: &[ScheduleItem], produces: &[UOp], reads: &[Vec<UOp>]) -> Vec<usize> {
    let n = items.len();
    let producer: FxHashMap<&UOp, usize> = produces.iter().enumerate().map(|(i, u)| (u, i)).collect();
    let mut deps: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (i, rd) in reads.iter().enumerate() {
        deps[i].extend(rd.iter().filter_map(|u| producer.get(u).copied()));
    }
    // Write-after-read: a reader of an older version of an assign's target (the buffer as it
    // was, or an earlier assign's result that this assign builds on) runs before it.
    let raw = deps.clone();
    let reaches = |from: usize, to: usize| {
        let mut stack = vec![from];
        let mut seen = vec![false; n];
        while let Some(x) = stack.pop() {
            if x == to {
                return true;
            }
            if !std::mem::replace(&mut seen[x], true) {
                stack.extend(&raw[x]);
            }
        }
        false
    };
    for (a, node) in produces.iter().enumerate() {
        if node.op() != Ops::ASSIGN {
            continue;
        }
        let target = &items[a].bufs[0];
        for (r, rd) in reads.iter().enumerate() {
            let reads_older = rd.iter().any(|u| match producer.get(u) {
                None => existing_buffer(u).is_some_and(|b| Arc::ptr_eq(&b, target)),
                Some(&p) => p != a && Arc::ptr_eq(&items[p].bufs[0], target) && reaches(a, p),
            });
            if r != a && reads_older && !reaches(r, a) {
                deps[a].push(r);
            }
        }
    }
    // Kahn's algorithm, preferring the original (topological) order.
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    while order.len() < n {
        let i = (0..n)
            .find(|&i| !done[i] && deps[i].iter().all(|&d| done[d]))
            .expect("schedule: an assign's target is read after the assign and before it at once");
        done[i] = true;
        order.push(i);
    }
    order
}

/// The schedule that would realize `outs`, for inspection: unlike `create_schedule`, its
/// assigns are not remembered as done (a later realize still runs them).
pub fn preview_schedule(outs: &[UOp]) -> Schedule {
    build_schedule(outs, false)
}

/// Number of kernels realizing `outs` would run (for fusion tests).
pub fn kernel_count(outs: &[UOp]) -> usize {
    build_schedule(outs, false).items.iter().filter(|i| i.kind == ItemKind::Kernel).count()
}

/// Number of different kernel ASTs among them: what a cold cache would compile.
pub fn distinct_kernel_count(outs: &[UOp]) -> usize {
    let items = build_schedule(outs, false).items;
    let asts: std::collections::HashSet<&UOp> =
        items.iter().filter(|i| i.kind == ItemKind::Kernel).map(|i| &i.ast).collect();
    asts.len()
}
