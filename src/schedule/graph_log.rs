//! VIZ's view of a schedule: the tensor graph it cut, and which nodes each item computes.

use super::realized::existing_buffer;
use crate::compiler_log::{GraphLog, NodeLog};
use crate::uop::print::format_arg;
use crate::uop::{Arg, FxHashMap, FxHashSet, UOp};

/// `topo`: the scheduled graph, sources first; `mat`: its materialized nodes; `produces[i]`:
/// the node item `i` computes; `order`: the order the items run in. A node's kernels are
/// positions in `order`; the engine fills in their names once they are compiled.
pub(super) fn graph_log(topo: &[UOp], mat: &FxHashSet<UOp>, produces: &[UOp], order: &[usize]) -> GraphLog {
    let index: FxHashMap<&UOp, usize> = topo.iter().enumerate().map(|(i, n)| (n, i)).collect();
    let mut kernels_of: Vec<Vec<usize>> = vec![Vec::new(); topo.len()];
    for (position, &item) in order.iter().enumerate() {
        // The item's own node, then everything it reads without a buffer in between.
        let root = &produces[item];
        let mut stack = vec![root];
        let mut seen: FxHashSet<&UOp> = FxHashSet::default();
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            kernels_of[index[n]].push(position);
            for s in n.src() {
                if !mat.contains(s) && existing_buffer(s).is_none() {
                    stack.push(s);
                }
            }
        }
    }
    let nodes = topo
        .iter()
        .zip(kernels_of)
        .map(|(n, kernels)| NodeLog {
            op: format!("{:?}", n.op()),
            dtype: format!("{:?}", n.dtype()),
            shape: n.try_shape().map(|s| s.to_vec()).unwrap_or_default(),
            arg: if matches!(n.arg(), Arg::None) { String::new() } else { format_arg(n.arg()) },
            src: n.src().iter().map(|s| index[s]).collect(),
            kernels,
            buffer: mat.contains(n) || existing_buffer(n).is_some(),
        })
        .collect();
    GraphLog { realize: 0, nodes, kernels: Vec::new() }
}
