//! Which graph nodes already are memory: BUFFERs, whole-buffer views of them, and ASSIGNs that
//! an earlier schedule ran (remembered weakly here, with the buffer they wrote).

use crate::runtime::{buffer_of, Buffer};
use crate::uop::{FxHashMap, Ops, UOp, WeakUOp};
use std::sync::{Arc, Mutex, OnceLock};

/// ASSIGN nodes that have been scheduled, and the buffer holding their result. A graph built
/// later that still refers to such a node reads the buffer instead of assigning again.
type AssignedMap = Mutex<FxHashMap<usize, (WeakUOp, Arc<Buffer>)>>;
fn assigned() -> &'static AssignedMap {
    static MAP: OnceLock<AssignedMap> = OnceLock::new();
    MAP.get_or_init(|| Mutex::new(FxHashMap::default()))
}

pub(crate) fn record_assigned(n: &UOp, b: &Arc<Buffer>) {
    let mut map = assigned().lock().unwrap_or_else(|e| e.into_inner());
    map.retain(|_, (w, _)| w.is_alive());
    map.insert(n.id(), (n.downgrade(), b.clone()));
}

/// The buffer a node already is: a BUFFER, a whole-buffer reshape of one, or an ASSIGN that has
/// already been scheduled.
pub fn existing_buffer(n: &UOp) -> Option<Arc<Buffer>> {
    match n.op() {
        Ops::BUFFER => Some(buffer_of(n.buffer()?)),
        Ops::ASSIGN => {
            let map = assigned().lock().unwrap_or_else(|e| e.into_inner());
            map.get(&n.id()).filter(|(w, _)| w.upgrade().as_ref() == Some(n)).map(|(_, b)| b.clone())
        }
        Ops::RESHAPE | Ops::CONTIGUOUS | Ops::DETACH => {
            let b = existing_buffer(&n.src()[0])?;
            (crate::uop::BufferObj::size(&*b) == n.numel()).then_some(b)
        }
        _ => None,
    }
}
