//! Shrinks a failing graph: drops outputs, bypasses ops whose source has the same shape and
//! dtype, replaces subgraphs by plain inputs, turns special input values off — keeping each
//! change only while the graph still fails the same way on the same device and mode.

use super::graph::{Graph, Op};
use super::run::Mode;

/// Attempts at most (each runs the graph once).
const MAX_TRIES: usize = 120;

/// The nodes reachable from the outputs, renumbered in order.
fn prune(g: &Graph) -> Graph {
    let mut live = vec![false; g.nodes.len()];
    for &o in &g.outputs {
        live[o] = true;
    }
    for i in (0..g.nodes.len()).rev() {
        if live[i] {
            for &s in &g.nodes[i].src {
                live[s] = true;
            }
        }
    }
    let mut new_index = vec![usize::MAX; g.nodes.len()];
    let mut nodes = Vec::new();
    for (i, n) in g.nodes.iter().enumerate().filter(|(i, _)| live[*i]) {
        new_index[i] = nodes.len();
        let mut n = n.clone();
        n.src = n.src.iter().map(|&s| new_index[s]).collect();
        nodes.push(n);
    }
    Graph { nodes, outputs: g.outputs.iter().map(|&o| new_index[o]).collect() }
}

/// `g` with every use of node `from` (and the outputs) pointing at node `to` instead.
fn redirect(g: &Graph, from: usize, to: usize) -> Graph {
    let mut h = g.clone();
    for n in h.nodes.iter_mut().skip(from + 1) {
        for s in n.src.iter_mut() {
            if *s == from {
                *s = to;
            }
        }
    }
    for o in h.outputs.iter_mut() {
        if *o == from {
            *o = to;
        }
    }
    prune(&h)
}

fn candidates(g: &Graph) -> Vec<Graph> {
    let mut out = Vec::new();
    if g.outputs.len() > 1 {
        for &o in &g.outputs {
            out.push(prune(&Graph { nodes: g.nodes.clone(), outputs: vec![o] }));
        }
    }
    for i in (0..g.nodes.len()).rev() {
        let n = &g.nodes[i];
        if matches!(n.op, Op::Input { .. }) {
            continue;
        }
        for &s in &n.src {
            let src = &g.nodes[s];
            if src.shape == n.shape && src.dt == n.dt {
                out.push(redirect(g, i, s));
            }
        }
        let mut h = g.clone();
        h.nodes[i].op = Op::Input { seed: 0xfeed ^ i as u64, special: false };
        h.nodes[i].src.clear();
        out.push(prune(&h));
    }
    for (i, n) in g.nodes.iter().enumerate() {
        if let Op::Input { seed, special: true } = n.op {
            let mut h = g.clone();
            h.nodes[i].op = Op::Input { seed, special: false };
            out.push(h);
        }
    }
    out
}

/// A smaller graph that still fails on `dev` in `mode` (the graph itself if none is found).
pub fn minimize(g: &Graph, dev: &str, mode: Mode) -> Graph {
    let mut best = prune(g);
    let mut tries = 0;
    'outer: loop {
        for c in candidates(&best) {
            if tries >= MAX_TRIES {
                break 'outer;
            }
            tries += 1;
            if c.nodes.len() <= best.nodes.len() && super::still_fails(&c, dev, mode) {
                best = c;
                continue 'outer;
            }
        }
        break;
    }
    best
}
