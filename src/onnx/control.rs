//! Control flow: If, Loop and Scan run their subgraphs (attributes of type GRAPH) in a scope
//! that sees the enclosing graph's values. Loop's condition and trip count are read to the
//! host each iteration; every step's tensors stay lazy.

use super::graph::{OnnxModel, Scope};
use super::node::{Node, Outs};
use super::proto::GraphProto;
use crate::error::Result;
use crate::tensor::Tensor;
use crate::uop::DType;

/// The names of a subgraph's inputs, in order.
fn input_names(g: &GraphProto) -> Vec<String> {
    g.input.iter().map(|v| v.name.clone().unwrap_or_default()).collect()
}

fn graph_attr<'a>(node: &'a Node, name: &str) -> Result<&'a GraphProto> {
    node.attr(name).and_then(|a| a.g.as_deref()).ok_or_else(|| node.error(format!("no {name} graph")))
}

impl OnnxModel {
    /// Runs `g` with its inputs bound to `values`, inside `parent`.
    fn call(&self, g: &GraphProto, values: Vec<Tensor>, parent: &Scope<'_>) -> Result<Vec<Tensor>> {
        let mut scope = Scope::child(parent);
        for (name, v) in input_names(g).into_iter().zip(values) {
            scope.set(name, v);
        }
        self.run_graph(g, scope)
    }

    pub(crate) fn run_if(&self, node: &Node<'_>, scope: &Scope<'_>) -> Result<Outs> {
        let cond = node.input(0)?.cast(DType::BOOL).to_vec::<bool>()?;
        let branch = if cond.first().copied().unwrap_or(false) { "then_branch" } else { "else_branch" };
        let outs = self.call(graph_attr(node, branch)?, vec![], scope)?;
        Ok(outs.into_iter().map(Some).collect())
    }

    /// Loop: `M` (trip count) and `cond` (both optional), then the loop-carried values. The body
    /// takes (iteration, cond, carried...) and gives (cond, carried..., scan outputs...); the
    /// scan outputs of every iteration are stacked.
    pub(crate) fn run_loop(&self, node: &Node<'_>, scope: &Scope<'_>) -> Result<Outs> {
        let body = graph_attr(node, "body")?;
        let trips = node.input_ints(0)?.and_then(|v| v.first().copied());
        let mut cond = match node.opt(1) {
            Some(c) => c.cast(DType::BOOL).to_vec::<bool>()?.first().copied().unwrap_or(false),
            None => true,
        };
        let mut carried: Vec<Tensor> = node
            .inputs
            .iter()
            .skip(2)
            .map(|t| t.clone().ok_or_else(|| node.error("a loop-carried value is missing")))
            .collect::<Result<_>>()?;
        let n_carried = carried.len();
        let mut scans: Vec<Vec<Tensor>> = Vec::new();
        let mut i = 0i64;
        while cond && trips.is_none_or(|m| i < m) {
            let mut args = vec![Tensor::scalar(i), Tensor::scalar(cond)];
            args.extend(carried.iter().cloned());
            let outs = self.call(body, args, scope)?;
            if outs.len() < 1 + n_carried {
                return Err(node.error("the body gives fewer outputs than the loop carries"));
            }
            cond = outs[0].cast(DType::BOOL).to_vec::<bool>()?.first().copied().unwrap_or(false);
            carried = outs[1..1 + n_carried].to_vec();
            let rest = &outs[1 + n_carried..];
            scans.resize(rest.len(), Vec::new());
            for (s, t) in scans.iter_mut().zip(rest) {
                s.push(t.contiguous());
            }
            i += 1;
            if i > 1_000_000 {
                return Err(node.error("more than a million iterations"));
            }
        }
        let mut out: Outs = carried.into_iter().map(Some).collect();
        for s in scans {
            out.push(Some(Tensor::stack(&s.iter().collect::<Vec<_>>(), 0)));
        }
        Ok(out)
    }

    /// Scan (opset 9+): states, then scan inputs sliced along their axes (backwards where the
    /// direction is 1); the body gives (states..., scan outputs...), stacked along their axes.
    pub(crate) fn run_scan(&self, node: &Node<'_>, scope: &Scope<'_>) -> Result<Outs> {
        if node.opset < 9 {
            return Err(node.unsupported("Scan before opset 9 (batched, with sequence_lens)"));
        }
        let body = graph_attr(node, "body")?;
        let n_scan = node.int("num_scan_inputs", 0)? as usize;
        let inputs: Vec<Tensor> = node.present().into_iter().cloned().collect();
        if n_scan == 0 || n_scan > inputs.len() {
            return Err(node.error(format!("num_scan_inputs {n_scan} for {} inputs", inputs.len())));
        }
        let n_state = inputs.len() - n_scan;
        let list = |name: &str, n: usize| -> Result<Vec<i64>> { Ok(node.ints(name)?.unwrap_or_else(|| vec![0; n])) };
        let (in_axes, in_dirs) = (list("scan_input_axes", n_scan)?, list("scan_input_directions", n_scan)?);
        let scanned: Vec<(Tensor, usize, bool)> = inputs[n_state..]
            .iter()
            .enumerate()
            .map(|(k, t)| {
                Ok((t.clone(), node.axis(*in_axes.get(k).unwrap_or(&0), t.ndim())?, in_dirs.get(k) == Some(&1)))
            })
            .collect::<Result<_>>()?;
        let len = scanned[0].0.shape()[scanned[0].1];
        let mut states = inputs[..n_state].to_vec();
        let mut outs: Vec<Vec<Tensor>> = Vec::new();
        for i in 0..len {
            let mut args = states.clone();
            for (t, axis, backwards) in &scanned {
                let at = if *backwards { len - 1 - i } else { i };
                args.push(t.narrow(*axis as isize, at, 1).squeeze(*axis as isize));
            }
            let r = self.call(body, args, scope)?;
            if r.len() < n_state {
                return Err(node.error("the body gives fewer outputs than there are states"));
            }
            states = r[..n_state].to_vec();
            outs.resize(r.len() - n_state, Vec::new());
            for (o, t) in outs.iter_mut().zip(&r[n_state..]) {
                o.push(t.contiguous());
            }
        }
        let (out_axes, out_dirs) = (list("scan_output_axes", outs.len())?, list("scan_output_directions", outs.len())?);
        let mut result: Outs = states.into_iter().map(Some).collect();
        for (k, mut steps) in outs.into_iter().enumerate() {
            if out_dirs.get(k) == Some(&1) {
                steps.reverse();
            }
            let rank = steps.first().map_or(0, |t| t.ndim()) + 1;
            let axis = node.axis(*out_axes.get(k).unwrap_or(&0), rank)?;
            result.push(Some(Tensor::stack(&steps.iter().collect::<Vec<_>>(), axis as isize)));
        }
        Ok(result)
    }
}
