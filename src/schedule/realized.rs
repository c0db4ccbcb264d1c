//! Which graph nodes already are memory: BUFFERs, whole-buffer views of them, and ASSIGNs that
//! an earlier schedule ran (remembered weakly here, with the buffer they wrote).

use crate::runtime::{buffer_of, Buffer};
use crate::uop::node_table::NodeTable;
use crate::uop::{Ops, UOp};
use std::sync::Arc;

/// ASSIGN nodes that have been scheduled, and the buffer holding their result. A graph built
/// later that still refers to such a node reads the buffer instead of assigning again.
static ASSIGNED: NodeTable<Arc<Buffer>> = NodeTable::new();

pub(crate) fn record_assigned(n: &UOp, b: &Arc<Buffer>) {
    ASSIGNED.insert(n, b.clone());
}

/// The buffer a node already is: a BUFFER, a whole-buffer reshape of one, or an ASSIGN that has
/// already been scheduled.
pub fn existing_buffer(n: &UOp) -> Option<Arc<Buffer>> {
    match n.op() {
        Ops::BUFFER => Some(buffer_of(n.buffer()?)),
        Ops::ASSIGN => ASSIGNED.get(n),
        Ops::RESHAPE | Ops::CONTIGUOUS | Ops::DETACH => {
            let b = existing_buffer(&n.src()[0])?;
            (crate::uop::BufferObj::size(&*b) == n.numel()).then_some(b)
        }
        _ => None,
    }
}
