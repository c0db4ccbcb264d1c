//! The compile cache every device uses. Kernels are found by key (a hash of the compiler's
//! identity and the source): in memory, where they are held weakly (a kernel nothing uses any
//! more is freed, and a CPU shared object unmapped; the engine's bounded LRU keeps the hot ones
//! alive); then on disk, for devices that store binaries; and the rest are built in parallel.
//! The kernels left to build are split into at most one group per core, round-robin, with no
//! two kernels of the same name in a group (so a group can be one shared object), and the
//! groups are built at once.

use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

/// A kernel to build: its cache key and spec.
pub type Todo = (String, Arc<ProgramSpec>);

pub struct CompileCache<T> {
    memory: Mutex<HashMap<String, Weak<T>>>,
}

impl<T> Default for CompileCache<T> {
    fn default() -> Self {
        CompileCache { memory: Mutex::new(HashMap::new()) }
    }
}

impl<T: Send + Sync> CompileCache<T> {
    /// The compiled form of each of `specs` (under its key in `keys`), in order: from memory,
    /// else `from_disk`, else built by `build_group` (called once per group, in parallel; it
    /// returns one result per kernel of its group, in order).
    pub fn get_or_build(
        &self,
        keys: &[String],
        specs: &[Arc<ProgramSpec>],
        from_disk: impl Fn(&str, &ProgramSpec) -> Option<Arc<T>>,
        build_group: impl Fn(&[Todo]) -> Result<Vec<Arc<T>>> + Sync,
    ) -> Result<Vec<Arc<T>>> {
        let mut found: HashMap<String, Arc<T>> = HashMap::new();
        let mut todo: Vec<Todo> = Vec::new();
        {
            let memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
            for (key, spec) in keys.iter().zip(specs) {
                if let Some(p) = memory.get(key).and_then(Weak::upgrade) {
                    found.insert(key.clone(), p);
                } else if !todo.iter().any(|(k, _)| k == key) {
                    todo.push((key.clone(), spec.clone()));
                }
            }
        }
        todo.retain(|(key, spec)| match from_disk(key, spec) {
            Some(p) => {
                found.insert(key.clone(), p);
                false
            }
            None => true,
        });
        let groups = groups(todo);
        let built: Vec<Result<Vec<Arc<T>>>> = std::thread::scope(|s| {
            let handles: Vec<_> = groups.iter().map(|g| s.spawn(|| build_group(g))).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(Error::Other("a compiler thread panicked".into()))))
                .collect()
        });
        for (group, res) in groups.iter().zip(built) {
            let res = res?;
            assert_eq!(res.len(), group.len(), "compile cache: a group built {} of {} kernels", res.len(), group.len());
            for ((key, _), p) in group.iter().zip(res) {
                found.insert(key.clone(), p);
            }
        }
        let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        memory.retain(|_, w| w.strong_count() > 0);
        for (key, p) in &found {
            memory.insert(key.clone(), Arc::downgrade(p));
        }
        Ok(keys.iter().map(|k| found[k].clone()).collect())
    }
}

/// At most one group per core, round-robin; a kernel whose name every group already has
/// starts a new group.
fn groups(todo: Vec<Todo>) -> Vec<Vec<Todo>> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut groups: Vec<Vec<Todo>> = vec![Vec::new(); cores.min(todo.len())];
    for (i, item) in todo.into_iter().enumerate() {
        let n = groups.len();
        let free = (0..n).map(|k| (i + k) % n).find(|&k| !groups[k].iter().any(|(_, s)| s.name == item.1.name));
        match free {
            Some(k) => groups[k].push(item),
            None => groups.push(vec![item]),
        }
    }
    groups
}
