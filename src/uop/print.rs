//! Text form of a graph: one node per line, sources by number (DEBUG=5 and `{:?}`).

use super::node::{toposort_many, Arg, FxHashMap, UOp};
use std::fmt::Write;

/// Formats the graph under `root`, one numbered node per line.
pub fn format_graph(root: &UOp) -> String {
    format_graphs(std::slice::from_ref(root))
}

pub fn format_graphs(roots: &[UOp]) -> String {
    let nodes = toposort_many(roots);
    let mut num: FxHashMap<usize, usize> = FxHashMap::default();
    let mut out = String::new();
    for (i, n) in nodes.iter().enumerate() {
        num.insert(n.id(), i);
        let srcs: Vec<String> = n.src().iter().map(|s| format!("%{}", num[&s.id()])).collect();
        let _ = write!(out, "%{i:<3} {:<13} {:<9}", format!("{:?}", n.op()), format!("{:?}", n.dtype()));
        if !srcs.is_empty() {
            let _ = write!(out, " ({})", srcs.join(", "));
        }
        match n.arg() {
            Arg::None => {}
            a => {
                let _ = write!(out, " {}", format_arg(a));
            }
        }
        if let Some(s) = n.try_shape() {
            let _ = write!(out, "  shape={s:?}");
        }
        out.push('\n');
    }
    out
}

/// One node in a line, its sources by op: `ADD f32 (LOAD, CONST)`, with its argument if any
/// (VIZ names the nodes a rewrite rule fired on so).
pub fn format_node(n: &UOp) -> String {
    let mut out = format!("{:?} {:?}", n.op(), n.dtype());
    if !n.src().is_empty() {
        let srcs: Vec<String> = n.src().iter().map(|s| format!("{:?}", s.op())).collect();
        let _ = write!(out, " ({})", srcs.join(", "));
    }
    if !matches!(n.arg(), Arg::None) {
        let _ = write!(out, " {}", format_arg(n.arg()));
    }
    out
}

/// A node's argument as the numbered form prints it.
pub fn format_arg(a: &Arg) -> String {
    match a {
        Arg::Const(c) => format!("{c:?}"),
        Arg::Int(i) => i.to_string(),
        Arg::Str(s) => format!("{s:?}"),
        Arg::Shape(s) => format!("{s:?}"),
        Arg::Axes(s) => format!("{s:?}"),
        Arg::Pairs(p) => format!("{p:?}"),
        Arg::Reduce(op, axes) => format!("{op:?} {axes:?}"),
        Arg::Op(op) => format!("{op:?}"),
        Arg::Range(id, t) => format!("r{id} {t:?}"),
        other => format!("{other:?}"),
    }
}

impl std::fmt::Debug for UOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", format_graph(self))
    }
}
