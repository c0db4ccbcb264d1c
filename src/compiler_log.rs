//! What the compiler did, kept for VIZ (`VIZ` set, or [`set_enabled`]): for each kernel
//! compiled, its AST, the kernel after each named codegen pass (`codegen/passes.rs`) with the
//! rewrite rules that fired in it (named by where they are written), the opts, the linear
//! program and the source; and each kernel launch with its time. `VIZ=json` writes it
//! all as JSON to `VIZ_OUT` after every realize. Off, each hook costs one relaxed atomic load.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

/// The kernel after one named pass.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PassLog {
    /// `prepare/<pass>` or `lowering/<pass>`.
    pub pass: String,
    pub kernel: String,
    /// The rewrite rules that fired in the pass, in the order they first fired.
    pub rules: Vec<RuleLog>,
}

/// A rewrite rule that fired in a pass.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RuleLog {
    /// Where the rule is written (`file:line`).
    pub rule: String,
    /// How many times it fired.
    pub count: usize,
    /// The first nodes it rewrote ([`RULE_NODES_KEPT`] at most), each as
    /// `OP dtype (source ops) arg -> what it became`.
    pub nodes: Vec<String>,
}

/// How many of the nodes a rule rewrote in one pass are kept.
pub const RULE_NODES_KEPT: usize = 4;

/// One compiled kernel.
#[derive(Clone, Debug, serde::Serialize)]
pub struct KernelLog {
    pub name: String,
    pub device: String,
    /// The scheduled kernel AST (numbered nodes, as DEBUG=5 prints it).
    pub ast: String,
    pub passes: Vec<PassLog>,
    /// The applied opts, in `OPTS=` syntax.
    pub opts: String,
    /// The linear program the renderer walked.
    pub linear: String,
    pub source: String,
    pub flops: u64,
}

/// One kernel launch.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LaunchLog {
    /// Which realize (counted from 0) ran it.
    pub realize: usize,
    pub kernel: String,
    pub device: String,
    pub seconds: f64,
    pub flops: u64,
    /// Bytes of the buffers it read and wrote.
    pub bytes: usize,
}

/// One node of a realize's tensor graph.
#[derive(Clone, Debug, serde::Serialize)]
pub struct NodeLog {
    pub op: String,
    pub dtype: String,
    /// Empty for nodes without a shape (SINK, variables).
    pub shape: Vec<usize>,
    /// The node's argument as DEBUG=5 prints it (empty if none).
    pub arg: String,
    /// Its sources, as indices into [`GraphLog::nodes`].
    pub src: Vec<usize>,
    /// The kernels (indices into [`GraphLog::kernels`]) that compute this node: the one it is
    /// the output of, and every kernel it is fused into (a node recomputed by two consumers
    /// is in both). Empty for a buffer that already held data.
    pub kernels: Vec<usize>,
    /// Whether the node gets a buffer of its own: a kernel's output or realized data.
    pub buffer: bool,
}

/// The tensor graph one realize scheduled, and which of its nodes each kernel computes.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct GraphLog {
    /// Which realize (counted from 0) scheduled it.
    pub realize: usize,
    /// In topological order (sources first).
    pub nodes: Vec<NodeLog>,
    /// The schedule's steps in the order they run: a kernel's name, or `copy` for a copy
    /// between devices.
    pub kernels: Vec<String>,
}

/// 0: not read yet, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static REALIZES: AtomicUsize = AtomicUsize::new(0);
static KERNELS: Mutex<Vec<KernelLog>> = Mutex::new(Vec::new());
static LAUNCHES: Mutex<Vec<LaunchLog>> = Mutex::new(Vec::new());
static GRAPHS: Mutex<Vec<GraphLog>> = Mutex::new(Vec::new());

thread_local! {
    /// The passes of the kernel this thread is compiling: the last run of each pass list (a
    /// heuristic that tries a smaller opt list runs the lowering passes again).
    static PREPARE: RefCell<Vec<PassLog>> = const { RefCell::new(Vec::new()) };
    static LOWERING: RefCell<Vec<PassLog>> = const { RefCell::new(Vec::new()) };
    static CURRENT_REALIZE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// Rules fired since the last pass was logged.
    static FIRED: RefCell<Vec<Fired>> = const { RefCell::new(Vec::new()) };
}

/// A rule's firings in the running pass: file, line, count, the first nodes it rewrote.
type Fired = (&'static str, u32, usize, Vec<String>);

/// A rewrite rule written at `file:line` fired (counted toward the pass that is running);
/// `node` describes what it rewrote, called only for the first [`RULE_NODES_KEPT`] nodes.
pub fn rule_fired(file: &'static str, line: u32, node: impl FnOnce() -> String) {
    FIRED.with(|f| {
        let mut f = f.borrow_mut();
        let entry = match f.iter().position(|(fl, l, _, _)| *l == line && *fl == file) {
            Some(i) => &mut f[i],
            None => {
                f.push((file, line, 0, Vec::new()));
                f.last_mut().expect("just pushed")
            }
        };
        entry.2 += 1;
        if entry.3.len() < RULE_NODES_KEPT {
            entry.3.push(node());
        }
    });
}

fn take_fired() -> Vec<RuleLog> {
    FIRED.with(|f| {
        std::mem::take(&mut *f.borrow_mut())
            .into_iter()
            .map(|(f, l, count, nodes)| RuleLog { rule: format!("{f}:{l}"), count, nodes })
            .collect()
    })
}

/// Whether the compiler is being logged.
pub fn enabled() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let on = crate::flags::text("VIZ").is_some_and(|v| v.trim() != "0");
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
    }
}

/// Turns logging on or off (as `VIZ` does at start).
pub fn set_enabled(on: bool) {
    STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
}

/// Which pass list a pass belongs to.
#[derive(Clone, Copy)]
pub enum Phase {
    Prepare,
    Lowering,
}

fn list(phase: Phase) -> &'static std::thread::LocalKey<RefCell<Vec<PassLog>>> {
    match phase {
        Phase::Prepare => &PREPARE,
        Phase::Lowering => &LOWERING,
    }
}

/// A pass list starts: its log of the previous run is dropped.
pub fn passes_started(phase: Phase) {
    if enabled() {
        list(phase).with(|l| l.borrow_mut().clear());
        take_fired();
    }
}

/// The kernel after pass `name` (`kernel` formats it only when logging).
pub fn pass(phase: Phase, name: &str, kernel: impl FnOnce() -> String) {
    if enabled() {
        let prefix = match phase {
            Phase::Prepare => "prepare",
            Phase::Lowering => "lowering",
        };
        let entry = PassLog { pass: format!("{prefix}/{name}"), kernel: kernel(), rules: take_fired() };
        list(phase).with(|l| l.borrow_mut().push(entry));
    }
}

/// A kernel finished compiling: `log` with the passes this thread ran for it.
pub fn kernel_compiled(mut log: KernelLog) {
    let mut passes = PREPARE.with(|l| std::mem::take(&mut *l.borrow_mut()));
    passes.extend(LOWERING.with(|l| std::mem::take(&mut *l.borrow_mut())));
    log.passes = passes;
    KERNELS.lock().unwrap_or_else(|e| e.into_inner()).push(log);
}

/// A realize starts on this thread: its launches are numbered with it.
pub fn realize_started() {
    if enabled() {
        let n = REALIZES.fetch_add(1, Ordering::Relaxed);
        CURRENT_REALIZE.with(|c| c.set(n));
    }
}

/// A kernel ran (`realize` is filled in with this thread's current realize).
pub fn launched(mut log: LaunchLog) {
    log.realize = CURRENT_REALIZE.with(|c| c.get());
    LAUNCHES.lock().unwrap_or_else(|e| e.into_inner()).push(log);
}

/// A realize scheduled `graph` (`realize` is filled in with this thread's current realize).
pub fn graph_scheduled(mut graph: GraphLog) {
    graph.realize = CURRENT_REALIZE.with(|c| c.get());
    GRAPHS.lock().unwrap_or_else(|e| e.into_inner()).push(graph);
}

/// Everything logged so far, as JSON: `{"kernels": [...], "launches": [...], "graphs": [...]}`,
/// each entry an object with the fields of [`KernelLog`], [`LaunchLog`] or [`GraphLog`] (its
/// nodes with the fields of [`NodeLog`]).
pub fn to_json() -> String {
    let kernels = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    let launches = LAUNCHES.lock().unwrap_or_else(|e| e.into_inner());
    let graphs = GRAPHS.lock().unwrap_or_else(|e| e.into_inner());
    let log = serde_json::json!({ "kernels": *kernels, "launches": *launches, "graphs": *graphs });
    log.to_string()
}

/// Forgets everything logged so far.
pub fn clear() {
    KERNELS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    LAUNCHES.lock().unwrap_or_else(|e| e.into_inner()).clear();
    GRAPHS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// After a realize: with `VIZ=json`, the log so far is written to `VIZ_OUT`.
pub fn realize_finished() -> std::io::Result<()> {
    if enabled() && crate::flags::text("VIZ").is_some_and(|v| v.trim() == "json") {
        let path = crate::flags::text("VIZ_OUT").unwrap_or_else(|| "ferrograd-viz.json".into());
        let tmp = format!("{path}.tmp");
        std::fs::write(&tmp, to_json())?;
        std::fs::rename(&tmp, &path)?;
    }
    Ok(())
}
