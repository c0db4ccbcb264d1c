//! A graph rule (see `graph_rules`): a large matmul on a SIMD CPU reads its right operand from
//! panels. `a @ b` is built as `(a[.., n, 1, k] * b.T[1, m, k]).sum(-1)`; when `b` is a 2-D
//! float `[k, m]` with `m` a multiple of 32 and at least 4M elements, `b` is first copied into
//! panels `[m/32, k, 32]`: each panel is contiguous, so the kernel streams it without the
//! cache-set conflicts of a long power-of-two row stride (BLAS packs for the same reason), and
//! a panel's 32 columns are the SIMD axis. Below 4M elements the copy costs more than it saves.
//! `x @ w.T` with `w` stored `[m, k]` (nn::Linear's weight) is packed from 32K elements and 16
//! rows of `x` on: its output axis is strided by `k`, which no register tile can vectorize.

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
    let (a, layout) = match (operand_layout(rhs, m, k), operand_layout(lhs, m, k)) {
        (Some(l), _) => (lhs, l),
        (None, Some(l)) => (rhs, l),
        _ => return None,
    };
    let worth_it = match &layout {
        Layout::KByM(_) => k * m >= 1 << 22,
        // The copy is one pass over w; a few rows of x already pay for it.
        Layout::MByK(_) => n_rows >= MIN_ROWS_FOR_TRANSPOSED && k * m >= 1 << 15,
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
    let panels = match &layout {
        Layout::KByM(b) => {
            let p = node(Ops::RESHAPE, b.clone(), Arg::Shape(vec![k, m / PANEL, PANEL]));
            node(Ops::PERMUTE, p, Arg::Axes(vec![1, 0, 2]))
        }
        Layout::MByK(w) => {
            let p = node(Ops::RESHAPE, w.clone(), Arg::Shape(vec![m / PANEL, PANEL, k]));
            node(Ops::PERMUTE, p, Arg::Axes(vec![0, 2, 1]))
        }
    };
    let panels = UOp::new(Ops::CONTIGUOUS, dt, vec![panels], Arg::None);
    let lead = &full[..rank - 2];
    let mut wide: Vec<usize> = lead.to_vec();
    wide.extend([m / PANEL, k, PANEL]);
    let mut panel_shape = vec![1; lead.len()];
    panel_shape.extend([m / PANEL, k, PANEL]);
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
    /// `B` is a 2-D `[m, k]` w broadcast as it is (`a @ w.T`).
    MByK(UOp),
}

/// The layout of `u` as the right operand of a matmul with `m` outputs and `k` reduced.
fn operand_layout(u: &UOp, m: usize, k: usize) -> Option<Layout> {
    if let Some(b) = transposed_source(u) {
        // `(w.T).T`: the front end keeps both transposes.
        return Some(match (b.op(), b.arg()) {
            (Ops::PERMUTE, Arg::Axes(order)) if order.as_slice() == [1, 0] => Layout::MByK(b.src()[0].clone()),
            _ => Layout::KByM(b),
        });
    }
    broadcast_source(u, m, k).map(Layout::MByK)
}

/// `w` as `[m, k]` when `u` broadcasts it with leading 1s (`EXPAND(RESHAPE*(w))`) and `w` is
/// not itself a view that moves data (a transposed or sliced w is left to the kernel's own
/// index math).
fn broadcast_source(u: &UOp, m: usize, k: usize) -> Option<UOp> {
    if u.op() != Ops::EXPAND {
        return None;
    }
    let cur = &u.src()[0];
    let s = cur.shape();
    if s.len() < 2 || s[s.len() - 2..] != [m, k] || !s[..s.len() - 2].iter().all(|&d| d == 1) {
        return None;
    }
    let mut base = cur.clone();
    while base.op() == Ops::RESHAPE {
        base = base.src()[0].clone();
    }
    if matches!(base.op(), Ops::PERMUTE | Ops::SHRINK | Ops::PAD | Ops::FLIP | Ops::EXPAND) {
        return None;
    }
    Some(UOp::new(Ops::RESHAPE, cur.dtype(), vec![cur.clone()], Arg::Shape(vec![m, k])))
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
