//! One large reduce per kernel. A kernel's opts (register tiles, the reduce split, the vector
//! axis) shape one reduce; a second large reduce beside it in the same kernel — SwiGLU's
//! `silu(x @ gate) * (x @ up)`, two matmuls meeting in one elementwise op — runs as plain
//! scalar loops inside the first one's tiles, 5-10x slower than on its own. So when a kernel
//! would hold several large reduces side by side (neither inside the other), the largest stays
//! and the others get kernels of their own (except one that shares the kept one's loop: the
//! same input in as many steps, see `fused_reduces.rs`). So does a large reduce that the kernel
//! reads at shifted indices as well as in place (each reading would compute it again).

use super::fused_reduces::shares_loop;
use super::realized::existing_buffer;
use crate::uop::{FxHashMap, FxHashSet, Ops, UOp};

/// Reduces over at least this many input elements count as large (a 1-row matmul with a
/// 2048 x 2048 weight is 4M).
const LARGE_REDUCE: usize = 1 << 22;

/// A reduce read at shifted indices is worth a kernel of its own from this many input
/// elements: recomputing it costs more than a launch and a small buffer.
const SHIFTED_READ_REDUCE: usize = 1 << 16;

/// Adds to `mat` the large reduces that would share a kernel with a larger one.
pub(super) fn split_sibling_reduces(mat: &mut FxHashSet<UOp>) {
    let mut scopes: Vec<UOp> = mat.iter().filter(|n| existing_buffer(n).is_none()).cloned().collect();
    let mut done: FxHashSet<UOp> = FxHashSet::default();
    while let Some(scope) = scopes.pop() {
        if !done.insert(scope.clone()) {
            continue;
        }
        // The reduces directly in this scope: reached without passing another reduce or
        // leaving the kernel.
        let mut found = Vec::new();
        // Per reduce: whether it is read in place, and whether through a shifting view.
        let mut reads: FxHashMap<UOp, (bool, bool)> = FxHashMap::default();
        let mut seen: FxHashSet<(UOp, bool)> = FxHashSet::default();
        let start = if scope.op() == Ops::REDUCE_AXIS { scope.src().to_vec() } else { vec![scope.clone()] };
        let mut stack: Vec<(UOp, bool)> = start.into_iter().map(|x| (x, false)).collect();
        while let Some((x, shifted)) = stack.pop() {
            if !seen.insert((x.clone(), shifted)) {
                continue;
            }
            if x != scope && (mat.contains(&x) || existing_buffer(&x).is_some()) {
                continue;
            }
            if x.op() == Ops::REDUCE_AXIS {
                let r = reads.entry(x.clone()).or_insert((false, false));
                if shifted {
                    r.1 = true;
                } else {
                    r.0 = true;
                }
                if !found.contains(&x) {
                    found.push(x);
                }
                continue;
            }
            let shifts = shifted || matches!(x.op(), Ops::SHRINK | Ops::PAD | Ops::FLIP);
            stack.extend(x.src().iter().map(|s| (s.clone(), shifts)));
        }
        let work = |r: &UOp| r.src()[0].numel();
        // A large reduce read at shifted indices as well as in place (RoPE's `rotate_half` reads
        // a projection at columns d and d +- half): each reading computes it again, so it gets
        // its own kernel.
        for r in found.iter().filter(|r| work(r) >= SHIFTED_READ_REDUCE) {
            if reads[r] == (true, true) {
                mat.insert(r.clone());
            }
        }
        let large: Vec<&UOp> = found.iter().filter(|r| work(r) >= LARGE_REDUCE && !mat.contains(*r)).collect();
        let keep = large.iter().enumerate().max_by_key(|(_, r)| work(r)).map(|(i, _)| i);
        for (i, r) in large.iter().enumerate() {
            // One that reads the same input as the kept one in as many steps shares its loop.
            let shares = keep.is_some_and(|k| shares_loop(r, large[k]) || shares_loop(large[k], r));
            if large.len() >= 2 && Some(i) != keep && !shares {
                mat.insert((*r).clone());
            }
        }
        // Reduces inside the ones found are scopes of their own (in this kernel or another).
        scopes.extend(found);
    }
}
