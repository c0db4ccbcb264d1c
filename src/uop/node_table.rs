//! `NodeTable`: values attached to graph nodes from outside the IR (a realized ASSIGN's buffer,
//! the graph behind a realized value, a custom gradient) without keeping the nodes alive. An
//! entry goes once its node is freed (swept on insert, each time the table has doubled); since a freed node's address can be
//! reused, a lookup also checks that the node living there is the one asked about.

use super::node::{FxHashMap, UOp, WeakUOp};
use std::sync::{Mutex, MutexGuard, OnceLock};

pub struct NodeTable<V> {
    map: OnceLock<Mutex<Table<V>>>,
}

struct Table<V> {
    entries: FxHashMap<usize, (WeakUOp, V)>,
    /// The size at which the next insert sweeps out freed nodes: twice the live entries after
    /// the last sweep, so sweeping costs O(1) per insert however many entries stay alive.
    sweep_at: usize,
}

impl<V: Clone> NodeTable<V> {
    pub const fn new() -> Self {
        NodeTable { map: OnceLock::new() }
    }

    fn lock(&self) -> MutexGuard<'_, Table<V>> {
        self.map
            .get_or_init(|| Mutex::new(Table { entries: FxHashMap::default(), sweep_at: 0 }))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Attaches `value` to `node` (replacing an earlier value).
    pub fn insert(&self, node: &UOp, value: V) {
        let mut table = self.lock();
        if table.entries.len() >= table.sweep_at {
            table.entries.retain(|_, (w, _)| w.is_alive());
            table.sweep_at = (2 * table.entries.len()).max(64);
        }
        table.entries.insert(node.id(), (node.downgrade(), value));
    }

    /// The value attached to `node`, if any.
    pub fn get(&self, node: &UOp) -> Option<V> {
        let table = self.lock();
        let (w, v) = table.entries.get(&node.id())?;
        (w.upgrade().as_ref() == Some(node)).then(|| v.clone())
    }

    /// Every live node and its value.
    #[cfg(test)]
    pub fn entries(&self) -> Vec<(UOp, V)> {
        self.lock().entries.values().filter_map(|(w, v)| Some((w.upgrade()?, v.clone()))).collect()
    }
}

impl<V: Clone> Default for NodeTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::DType;

    #[test]
    fn entries_go_with_their_nodes() {
        static TABLE: NodeTable<i32> = NodeTable::new();
        let a = UOp::int(DType::I64, 5_550_001);
        TABLE.insert(&a, 7);
        assert_eq!(TABLE.get(&a), Some(7));
        let b = UOp::int(DType::I64, 5_550_002);
        assert_eq!(TABLE.get(&b), None);
        drop(a);
        assert!(TABLE.entries().is_empty(), "a freed node's entry is not live");
    }
}
