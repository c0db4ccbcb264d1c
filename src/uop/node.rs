//! `UOp`: the immutable, interned node of the one IR — its types, the intern table and the
//! read-only accessors. Building nodes (`UOp::new`, which infers shape, device and bounds) is
//! in `uop.rs`, above the inference passes.
//!
//! Building the same `(op, dtype, src, arg)` twice returns the same allocation, so equality and
//! hashing are pointer operations and rewrites memoize for free. The intern table holds weak
//! references: a node nothing references is freed, and its table entry is removed when it drops.
//! The table is sharded behind mutexes, so nodes can be built from several threads at once.

use super::dtype::{ConstValue, DType};
use super::ops::{AxisType, Ops};
use std::any::Any;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// Memory that a BUFFER node stands for. Implemented by the runtime's buffer type; the IR only
/// needs its device, size and dtype to infer shapes.
pub trait BufferObj: Send + Sync + Any {
    fn device(&self) -> &str;
    /// Number of elements.
    fn size(&self) -> usize;
    fn dtype(&self) -> DType;
    fn as_any_arc(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
}

/// A reference to realized memory, compared and hashed by identity.
#[derive(Clone)]
pub struct BufferHandle(pub Arc<dyn BufferObj>);

impl PartialEq for BufferHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::as_ptr(&self.0) as *const u8 == Arc::as_ptr(&other.0) as *const u8
    }
}
impl Eq for BufferHandle {}
impl Hash for BufferHandle {
    fn hash<H: Hasher>(&self, state: &mut H) {
        (Arc::as_ptr(&self.0) as *const u8 as usize).hash(state)
    }
}
impl fmt::Debug for BufferHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<buf {} {}x{:?} @{:x}>",
            self.0.device(),
            self.0.size(),
            self.0.dtype(),
            Arc::as_ptr(&self.0) as *const u8 as usize & 0xffffff
        )
    }
}

/// Which GPU index builtin a SPECIAL node reads.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SpecialKind {
    /// Work-group id (`blockIdx`, `get_group_id`).
    Group,
    /// Index within the work group (`threadIdx`, `get_local_id`).
    Local,
    /// Global id (`get_global_id`).
    Global,
}

/// An axis length or a movement offset: a number, or a bounded expression over variables
/// (its constructors and arithmetic are in `dim.rs`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    Const(usize),
    /// An i32 index expression over DEFINE_VAR / BIND nodes that is not a constant.
    Sym(UOp),
}

/// The argument of a node; its meaning depends on the op (see [`Ops`]).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Arg {
    None,
    Const(ConstValue),
    Int(i64),
    Str(Arc<str>),
    /// RESHAPE / EXPAND target shape.
    Shape(Vec<usize>),
    /// RESHAPE / EXPAND target shape with symbolic lengths (`Shape` when all are numbers).
    DimShape(Vec<Dim>),
    /// PERMUTE order, FLIP axes.
    Axes(Vec<usize>),
    /// PAD `(before, after)` or SHRINK `(start, end)` per axis.
    Pairs(Vec<(usize, usize)>),
    /// PAD / SHRINK pairs of which some are symbolic (`Pairs` when all are numbers).
    DimPairs(Vec<(Dim, Dim)>),
    /// REDUCE_AXIS: reduce op and axes.
    Reduce(Ops, Vec<usize>),
    /// REDUCE: the reduce op.
    Op(Ops),
    /// RANGE: unique id within a kernel and what the axis is used for.
    Range(u32, AxisType),
    Buffer(BufferHandle),
    /// DEFINE_VAR: name, min, max.
    Var(Arc<str>, i64, i64),
    /// SPECIAL: which builtin and which dimension (0..3).
    Special(SpecialKind, u8),
}

pub(crate) struct UOpInner {
    op: Ops,
    dtype: DType,
    src: Box<[UOp]>,
    arg: Arg,
    hash: u64,
    /// For a symbolic shape, the largest value of each length: the layout of its memory.
    shape: Option<Box<[usize]>>,
    /// The lengths, when some are symbolic (`None` for a shape of numbers).
    sym_shape: Option<Box<[Dim]>>,
    device: Option<Arc<str>>,
    /// Bounds of an integer/bool node's value (range analysis), inferred at creation.
    bounds: Option<(i64, i64)>,
}

/// A weak reference to a node: does not keep it alive.
#[derive(Clone)]
pub struct WeakUOp(Weak<UOpInner>);

impl WeakUOp {
    pub fn upgrade(&self) -> Option<UOp> {
        self.0.upgrade().map(UOp)
    }
    pub fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }
}

/// A node of the IR: a cheap, clonable, interned handle.
#[derive(Clone)]
pub struct UOp(Arc<UOpInner>);

impl PartialEq for UOp {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}
impl Eq for UOp {}
impl Hash for UOp {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash)
    }
}
impl PartialOrd for UOp {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for UOp {
    /// An arbitrary but stable-within-a-process order (by address), for sorting sets of nodes.
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.id().cmp(&other.id())
    }
}

// ---------------------------------------------------------------- interning

/// A small, fast, non-cryptographic hasher (FxHash's multiply-rotate) for the intern table and
/// node-keyed maps.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);
impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64)
    }
}
pub type FxBuild = std::hash::BuildHasherDefault<FxHasher>;
/// A HashMap keyed by nodes (or anything) with the fast hasher.
pub type FxHashMap<K, V> = HashMap<K, V, FxBuild>;
pub type FxHashSet<K> = std::collections::HashSet<K, FxBuild>;

const SHARDS: usize = 32;
type Shard = Mutex<HashMap<u64, Vec<Weak<UOpInner>>, FxBuild>>;

fn table() -> &'static [Shard; SHARDS] {
    static TABLE: OnceLock<[Shard; SHARDS]> = OnceLock::new();
    TABLE.get_or_init(|| std::array::from_fn(|_| Mutex::new(HashMap::default())))
}

fn shard_of(hash: u64) -> &'static Shard {
    &table()[(hash >> 59) as usize % SHARDS]
}

impl Drop for UOpInner {
    fn drop(&mut self) {
        // Remove our own entry; another thread may already have replaced it by a new node with
        // the same key, which must stay. The sources drop after this returns, outside the lock.
        let me = self as *const UOpInner;
        let mut shard = shard_of(self.hash).lock().unwrap_or_else(|e| e.into_inner());
        if let Some(list) = shard.get_mut(&self.hash) {
            list.retain(|w| w.as_ptr() != me);
            if list.is_empty() {
                shard.remove(&self.hash);
            }
        }
    }
}

/// Number of live interned nodes (for tests of freeing).
pub fn live_uop_count() -> usize {
    table().iter().map(|s| s.lock().unwrap_or_else(|e| e.into_inner()).values().map(|v| v.len()).sum::<usize>()).sum()
}

/// What `UOp::new` infers for a node when it is first built.
pub(super) struct Derived {
    pub shape: Option<Box<[usize]>>,
    pub sym_shape: Option<Box<[Dim]>>,
    pub device: Option<Arc<str>>,
    pub bounds: Option<(i64, i64)>,
}

impl UOp {
    /// Finds the node `(op, dtype, src, arg)` in the intern table, or builds it with what
    /// `derive` infers (called outside the table's lock, since inference may panic).
    pub(super) fn intern(
        op: Ops,
        dtype: DType,
        src: Vec<UOp>,
        arg: Arg,
        derive: impl FnOnce(&[UOp], &Arg) -> Derived,
    ) -> UOp {
        let mut h = FxHasher::default();
        op.hash(&mut h);
        dtype.hash(&mut h);
        for s in &src {
            h.write_u64(s.0.hash ^ (s.id() as u64));
        }
        arg.hash(&mut h);
        let hash = h.finish();
        let shard = shard_of(hash);
        {
            let guard = shard.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(list) = guard.get(&hash) {
                for w in list {
                    if let Some(n) = w.upgrade() {
                        if n.op == op
                            && n.dtype == dtype
                            && n.arg == arg
                            && n.src.len() == src.len()
                            && n.src.iter().zip(&src).all(|(a, b)| a == b)
                        {
                            return UOp(n);
                        }
                    }
                }
            }
        }
        // Not found: infer outside the lock, then insert, re-checking in case another thread
        // inserted the same node meanwhile.
        let Derived { shape, sym_shape, device, bounds } = derive(&src, &arg);
        let src = src.into_boxed_slice();
        let node = Arc::new(UOpInner { op, dtype, src, arg, hash, shape, sym_shape, device, bounds });
        let mut guard = shard.lock().unwrap_or_else(|e| e.into_inner());
        let list = guard.entry(hash).or_default();
        for w in list.iter() {
            if let Some(n) = w.upgrade() {
                if n.op == node.op
                    && n.dtype == node.dtype
                    && n.arg == node.arg
                    && n.src.len() == node.src.len()
                    && n.src.iter().zip(node.src.iter()).all(|(a, b)| a == b)
                {
                    drop(guard);
                    return UOp(n);
                }
            }
        }
        list.push(Arc::downgrade(&node));
        UOp(node)
    }

    pub fn op(&self) -> Ops {
        self.0.op
    }
    pub fn dtype(&self) -> DType {
        self.0.dtype
    }
    pub fn src(&self) -> &[UOp] {
        &self.0.src
    }
    pub fn arg(&self) -> &Arg {
        &self.0.arg
    }
    pub fn downgrade(&self) -> WeakUOp {
        WeakUOp(Arc::downgrade(&self.0))
    }
    /// A process-unique id (the node's address).
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
    /// The lengths of a tensor-level node, symbolic or not; panics for kernel-level nodes.
    pub fn sym_shape(&self) -> Vec<Dim> {
        match &self.0.sym_shape {
            Some(s) => s.to_vec(),
            None => self.shape().iter().map(|&d| Dim::Const(d)).collect(),
        }
    }
    /// Whether some length of the shape is symbolic.
    pub fn has_symbolic_shape(&self) -> bool {
        self.0.sym_shape.is_some()
    }
    /// The tensor shape of a tensor-level node (for a symbolic shape, each length's largest
    /// value: the layout of its memory); panics for kernel-level nodes.
    pub fn shape(&self) -> &[usize] {
        self.0.shape.as_deref().unwrap_or_else(|| panic!("{:?} has no shape (kernel-level node)", self.op()))
    }
    /// How many handles (tensors, parent nodes) hold this node; the intern table does not
    /// count. 1 means its holder is the only way to reach it.
    pub fn holders(&self) -> usize {
        Arc::strong_count(&self.0)
    }
    pub fn try_shape(&self) -> Option<&[usize]> {
        self.0.shape.as_deref()
    }
    /// Number of elements of a tensor-level node.
    pub fn numel(&self) -> usize {
        self.shape().iter().product()
    }
    /// The device a tensor-level node lives on.
    pub fn device(&self) -> Option<&str> {
        self.0.device.as_deref()
    }
    pub(crate) fn device_arc(&self) -> Option<Arc<str>> {
        self.0.device.clone()
    }
    /// Smallest value an integer or bool node can take (range analysis).
    pub fn vmin(&self) -> i64 {
        self.bounds().0
    }
    /// Largest value an integer or bool node can take (range analysis).
    pub fn vmax(&self) -> i64 {
        self.bounds().1
    }
    /// `(vmin, vmax)`; for non-integer nodes the whole i64 range.
    pub fn bounds(&self) -> (i64, i64) {
        self.0.bounds.unwrap_or((i64::MIN, i64::MAX))
    }
    // ------------------------------------------------------------ arg accessors

    pub fn const_value(&self) -> Option<ConstValue> {
        match (self.op(), self.arg()) {
            (Ops::CONST, Arg::Const(c)) => Some(*c),
            _ => None,
        }
    }
    /// The value of an integer CONST.
    pub fn as_int(&self) -> Option<i64> {
        self.const_value().and_then(|c| match c {
            ConstValue::Int(i) => Some(i),
            ConstValue::Bool(b) => Some(b as i64),
            _ => None,
        })
    }
    pub fn arg_int(&self) -> i64 {
        match self.arg() {
            Arg::Int(i) => *i,
            a => panic!("{:?} has arg {:?}, expected Int", self.op(), a),
        }
    }
    pub fn buffer(&self) -> Option<&BufferHandle> {
        match self.arg() {
            Arg::Buffer(b) => Some(b),
            _ => None,
        }
    }
    /// `(id, axis type)` of a RANGE.
    pub fn range_arg(&self) -> (u32, AxisType) {
        match self.arg() {
            Arg::Range(i, t) => (*i, *t),
            a => panic!("{:?} has arg {:?}, expected Range", self.op(), a),
        }
    }
    /// The loop bound of a RANGE with a constant bound (opts only ever see those).
    pub fn range_size(&self) -> i64 {
        self.src()[0].as_int().expect("RANGE with symbolic size")
    }
    /// Whether a RANGE's bound is symbolic (an expression over variables).
    pub fn is_symbolic_range(&self) -> bool {
        self.src()[0].as_int().is_none()
    }
    /// The largest bound a RANGE can have: its size, or a symbolic bound's maximum (for
    /// estimates such as names and FLOP counts).
    pub fn range_max(&self) -> i64 {
        self.src()[0].vmax()
    }

    // ------------------------------------------------------------ graph walks

    /// All nodes reachable from this one, sources before users, each once.
    pub fn toposort(&self) -> Vec<UOp> {
        toposort_many(std::slice::from_ref(self))
    }

    /// The RANGE nodes this node depends on.
    pub fn ranges(&self) -> Vec<UOp> {
        self.toposort().into_iter().filter(|n| n.op() == Ops::RANGE).collect()
    }
}

/// All nodes reachable from `roots`, sources before users, each once (iterative: graphs can be
/// deeper than the stack).
pub fn toposort_many(roots: &[UOp]) -> Vec<UOp> {
    let mut seen: FxHashSet<usize> = FxHashSet::default();
    let mut out = Vec::new();
    let mut stack: Vec<(UOp, bool)> = roots.iter().rev().map(|r| (r.clone(), false)).collect();
    while let Some((n, expanded)) = stack.pop() {
        if expanded {
            out.push(n);
            continue;
        }
        if !seen.insert(n.id()) {
            continue;
        }
        stack.push((n.clone(), true));
        for s in n.src().iter().rev() {
            if !seen.contains(&s.id()) {
                stack.push((s.clone(), false));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uop::DType;

    #[test]
    fn unreferenced_nodes_are_freed() {
        let in_table =
            |p: *const UOpInner| table().iter().any(|s| s.lock().unwrap().values().flatten().any(|w| w.as_ptr() == p));
        let (pa, pb);
        {
            let a = UOp::int(DType::I64, 918_273_645);
            let b = &a + 1;
            pa = Arc::as_ptr(&a.0);
            pb = Arc::as_ptr(&b.0);
            assert!(in_table(pa) && in_table(pb));
        }
        assert!(!in_table(pa) && !in_table(pb), "dropped node still in the intern table");
    }
}
