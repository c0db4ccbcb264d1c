//! A graph rule (see `graph_rules`): a large matmul on a SIMD CPU reads its right operand from
//! panels. `a @ b` is built as `(a[.., n, 1, k] * b.T[1, m, k]).sum(-1)`; when `b` is a 2-D
//! float `[k, m]` with `m` a multiple of 32 and at least 4M elements, `b` is first copied into
//! panels `[m/32, k, 32]`: each panel is contiguous, so the kernel streams it without the
//! cache-set conflicts of a long power-of-two row stride (BLAS packs for the same reason), and
//! a panel's 32 columns are the SIMD axis. Below 4M elements the copy costs more than it saves.
//! `x @ w.T` with `w` stored `[m, k]` (nn::Linear's weight) is packed from 32K elements and 16
//! rows of `x` on: its output axis is strided by `k`, which no register tile can vectorize.
//! The same holds per batch for a batched `[.., m, k]` operand (attention's `q @ k.T`, keys
//! stored `[.., keys, head_dim]`): each batch's `[m, k]` is packed into its own panels.

use crate::uop::{Arg, Ops, UOp};

/// Columns per panel: two 16-lane f32 vectors.
const PANEL: usize = 32;

/// The packed form of `REDUCE_AXIS(ADD, last)(MUL(A, B))` (or of a CAST of the MUL) where `B` broadcasts `b.T` of a 2-D
/// `b`, or `None`.
pub(crate) fn pack_panels(n: &UOp) -> Option<UOp> {
    let Arg::Reduce(Ops::ADD, axes) = n.arg() else { return None };
    // 16-bit floats are summed in f32: the product is cast first.
    let (x, cast_to) = match &n.src()[0] {
        c if c.op() == Ops::CAST => (&c.src()[0], Some(c.dtype())),
        x => (x, None),
    };
    let rank = x.shape().len();
    if n.op() != Ops::REDUCE_AXIS || axes.as_slice() != [rank - 1] || rank < 3 || x.op() != Ops::MUL {
        return None;
    }
    let (lhs, rhs) = (&x.src()[0], &x.src()[1]);
    let full = x.shape();
    let (n_rows, m, k) = (full[..rank - 2].iter().product::<usize>(), full[rank - 2], full[rank - 1]);
    // The right operand is either `b.T` of a `[k, m]` b, or a `[m, k]` w itself (`x @ w.T`,
    // nn::Linear's layout), whose output axis is strided by k: without panels every SIMD load
    // of it is 16 scalar loads (a 1024³ `x @ w.T` ran at 15 GFLOP/s against 284 for `x @ w`).
    let (a, layout) = match (operand_layout(rhs, rank, m, k), operand_layout(lhs, rank, m, k)) {
        (Some(l), _) => (lhs, l),
        (None, Some(l)) => (rhs, l),
        _ => return None,
    };
    let worth_it = match &layout {
        Layout::KByM(_) => k * m >= 1 << 22,
        // The copy is one pass over w; a few rows of x already pay for it. Each batch's panels
        // serve the rows of that batch (and of every batch it is broadcast to).
        Layout::MByK(w) => {
            let batches: usize = w.shape()[..rank - 3].iter().product();
            // A batched operand is small per batch (attention: keys × head_dim), but the
            // kernel streams every batch's rows from it; packed from 4K elements on.
            let min_elements = if batches > 1 { 1 << 12 } else { 1 << 15 };
            n_rows / batches >= MIN_ROWS_FOR_TRANSPOSED && k * m >= min_elements
        }
    };
    let b = match &layout {
        Layout::KByM(b) | Layout::MByK(b) => b,
    };
    if !b.dtype().is_float() || !m.is_multiple_of(PANEL) || !worth_it {
        return None;
    }
    // `a` broadcast along m: its source has 1 there.
    let a_src = if a.op() == Ops::EXPAND { &a.src()[0] } else { return None };
    if a_src.shape()[rank - 2] != 1 || a_src.shape()[rank - 1] != k {
        return None;
    }
    let simd = crate::runtime::get_device(b.device()?).is_ok_and(|d| d.renderer().target().simd_bytes > 0);
    if !simd {
        return None;
    }
    let dt = b.dtype();
    let node = |op, src: UOp, arg| UOp::new(op, src.dtype(), vec![src], arg);
    // The batch dims of the panels (1s for a 2-D operand), before the `n` axis.
    let (panels, batch) = match &layout {
        Layout::KByM(b) => {
            let p = node(Ops::RESHAPE, b.clone(), Arg::Shape(vec![k, m / PANEL, PANEL]));
            (node(Ops::PERMUTE, p, Arg::Axes(vec![1, 0, 2])), vec![1; rank - 3])
        }
        Layout::MByK(w) => {
            let batch = w.shape()[..rank - 3].to_vec();
            let nb = batch.len();
            let mut split = batch.clone();
            split.extend([m / PANEL, PANEL, k]);
            let mut order: Vec<usize> = (0..nb).collect();
            order.extend([nb, nb + 2, nb + 1]);
            (node(Ops::PERMUTE, node(Ops::RESHAPE, w.clone(), Arg::Shape(split)), Arg::Axes(order)), batch)
        }
    };
    let panels = UOp::new(Ops::CONTIGUOUS, dt, vec![panels], Arg::None);
    let lead = &full[..rank - 2];
    let mut wide: Vec<usize> = lead.to_vec();
    wide.extend([m / PANEL, k, PANEL]);
    let mut panel_shape = batch;
    panel_shape.extend([1, m / PANEL, k, PANEL]);
    let panels = node(Ops::EXPAND, node(Ops::RESHAPE, panels, Arg::Shape(panel_shape)), Arg::Shape(wide.clone()));
    let mut a_shape: Vec<usize> = a_src.shape()[..rank - 2].to_vec();
    a_shape.extend([1, k, 1]);
    let a_wide = node(Ops::EXPAND, node(Ops::RESHAPE, a_src.clone(), Arg::Shape(a_shape)), Arg::Shape(wide));
    let prod = UOp::new(Ops::MUL, x.dtype(), vec![a_wide, panels], Arg::None);
    let prod = match cast_to {
        Some(dt) => prod.cast(dt),
        None => prod,
    };
    let summed = UOp::new(Ops::REDUCE_AXIS, n.dtype(), vec![prod], Arg::Reduce(Ops::ADD, vec![rank - 1]));
    Some(node(Ops::RESHAPE, summed, Arg::Shape(n.shape().to_vec())))
}

/// Rows of the left operand from which an `x @ w.T` packs `w`.
const MIN_ROWS_FOR_TRANSPOSED: usize = 16;

/// How the right operand of `(a[.., n, 1, k] * B[1, m, k]).sum(-1)` is stored.
enum Layout {
    /// `B` is `b.T` of a 2-D `[k, m]` b (`a @ b`).
    KByM(UOp),
    /// `B` is a `[.., m, k]` w broadcast as it is (`a @ w.T`), its batch dims (all but the last
    /// three of the product, 1 where broadcast) kept: shape `[batch.., m, k]`.
    MByK(UOp),
}

/// The layout of `u` as the right operand of a matmul (a product of rank `rank`) with `m`
/// outputs and `k` reduced.
fn operand_layout(u: &UOp, rank: usize, m: usize, k: usize) -> Option<Layout> {
    if let Some(b) = transposed_source(u) {
        // `(w.T).T`: the front end keeps both transposes. The 2-D w gets batch dims of 1.
        return Some(match (b.op(), b.arg()) {
            (Ops::PERMUTE, Arg::Axes(order)) if order.as_slice() == [1, 0] => {
                let mut shape = vec![1; rank - 3];
                shape.extend([m, k]);
                Layout::MByK(UOp::new(Ops::RESHAPE, b.dtype(), vec![b.src()[0].clone()], Arg::Shape(shape)))
            }
            _ => Layout::KByM(b),
        });
    }
    broadcast_source(u, m, k).map(Layout::MByK)
}

/// `w` as `[batch.., m, k]` when `u` broadcasts it along the `n` axis (`EXPAND(RESHAPE*(w))`).
/// A 2-D `w` must not itself be a view that moves data (a transposed or sliced w is left to
/// the kernel's own index math) once pairs of transposes cancel; a batched one may be any
/// expression whose last axis is `k`, not a transpose of an `m`-contiguous tensor.
fn broadcast_source(u: &UOp, m: usize, k: usize) -> Option<UOp> {
    if u.op() != Ops::EXPAND {
        return None;
    }
    let cur = &u.src()[0];
    let s = cur.shape();
    let rank = s.len();
    if rank < 3 || s[rank - 2..] != [m, k] || s[rank - 3] != 1 {
        return None;
    }
    let mut batch = s[..rank - 3].to_vec();
    let (mut base, swapped) = through_transposes(cur);
    if swapped {
        return None;
    }
    if batch.iter().all(|&d| d == 1) {
        while base.op() == Ops::RESHAPE {
            base = base.src()[0].clone();
        }
        if matches!(base.op(), Ops::PERMUTE | Ops::SHRINK | Ops::PAD | Ops::FLIP | Ops::EXPAND) {
            return None;
        }
    }
    batch.extend([m, k]);
    Some(UOp::new(Ops::RESHAPE, cur.dtype(), vec![cur.clone()], Arg::Shape(batch)))
}

/// `u` seen through reshapes that only add or drop 1s and through transposes of its last two
/// axes, and whether an odd number of such transposes was passed (then its `m` axis is the
/// contiguous one).
fn through_transposes(u: &UOp) -> (UOp, bool) {
    let mut cur = strip_unit_reshapes(u);
    let mut swapped = false;
    while let Some(src) = last_two_swapped(&cur) {
        swapped = !swapped;
        cur = strip_unit_reshapes(&src);
    }
    (cur, swapped)
}

/// `u` below any reshapes that only add or remove axes of size 1.
fn strip_unit_reshapes(u: &UOp) -> UOp {
    let mut cur = u.clone();
    let non_unit = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    while cur.op() == Ops::RESHAPE && non_unit(cur.shape()) == non_unit(cur.src()[0].shape()) {
        cur = cur.src()[0].clone();
    }
    cur
}

/// The source of `u` when `u` is a PERMUTE that swaps exactly its last two axes.
fn last_two_swapped(u: &UOp) -> Option<UOp> {
    let (Ops::PERMUTE, Arg::Axes(order)) = (u.op(), u.arg()) else { return None };
    let r = order.len();
    let swap = r >= 2 && order[r - 2] == r - 1 && order[r - 1] == r - 2 && (0..r - 2).all(|i| order[i] == i);
    swap.then(|| u.src()[0].clone())
}

/// The 2-D `b` when `u` is `b.T` (a `[k, m]` transposed) reshaped with leading 1s and
/// expanded: `EXPAND(RESHAPE*(PERMUTE[1, 0](b)))`.
fn transposed_source(u: &UOp) -> Option<UOp> {
    let mut cur = if u.op() == Ops::EXPAND { u.src()[0].clone() } else { u.clone() };
    while cur.op() == Ops::RESHAPE {
        let s = cur.shape();
        let inner = cur.src()[0].shape();
        let lead_ones = s.len() >= 2 && s[..s.len() - 2].iter().all(|&d| d == 1);
        if !lead_ones || inner.len() < 2 || inner[inner.len() - 2..] != s[s.len() - 2..] {
            return None;
        }
        cur = cur.src()[0].clone();
    }
    match (cur.op(), cur.arg()) {
        (Ops::PERMUTE, Arg::Axes(order)) if order.as_slice() == [1, 0] => Some(cur.src()[0].clone()),
        _ => None,
    }
}
