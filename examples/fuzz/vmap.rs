//! `--vmap`: each random graph, taken as a function of its inputs, is mapped with
//! `ferrograd::func::vmap` over a batch of input sets (each input batched along a random axis,
//! or shared by the whole batch), its results stacked along random axes; every element of the
//! batch is compared with the f64 reference evaluated on that element's inputs.

use super::first_mismatch;
use super::graph::{Dt, Graph, Op, Rng};
use super::reference::{evaluate, input_data, Arr};
use super::run::{build_with, input_tensor, panic_text, Got};
use ferrograd::func::vmap;
use ferrograd::tensor::{no_grad, with_default_device};
use ferrograd::{DType, Tensor};

/// What mapping one graph gave.
pub enum VmapVerdict {
    Ok,
    Mismatch(String),
    /// The graph uses something `vmap` refuses with a clear message (reading values inside).
    Unsupported(String),
}

/// The graph with input `k`'s seed changed for batch element `j` (shared inputs keep theirs).
fn element(g: &Graph, shared: &[bool], j: u64) -> Graph {
    let mut g = g.clone();
    let mut input = 0;
    for node in &mut g.nodes {
        if let Op::Input { seed, .. } = &mut node.op {
            if !shared[input] {
                *seed = seed.wrapping_add(j.wrapping_mul(0x9E37_79B9));
            }
            input += 1;
        }
    }
    g
}

/// A tensor's elements as the comparison takes them (floats as f64, integers as i128).
pub fn read(t: &Tensor, dt: Dt) -> ferrograd::Result<Vec<Got>> {
    Ok(if dt.is_float() {
        t.cast(DType::F32).to_vec::<f32>()?.into_iter().map(|v| Got { v: v as f64, i: 0 }).collect()
    } else {
        t.cast(DType::I64).to_vec::<i64>()?.into_iter().map(|i| Got { v: 0.0, i: i as i128 }).collect()
    })
}

/// Maps graph `g` (seed `seed`) over a batch of 1–3 input sets on `device`.
pub fn check(g: &Graph, seed: u64, device: &str) -> VmapVerdict {
    let mut rng = Rng::new(seed ^ 0x7a3a_9e11);
    let batch = 1 + rng.below(3);
    let inputs: Vec<&super::graph::Node> = g.nodes.iter().filter(|n| matches!(n.op, Op::Input { .. })).collect();
    let mut shared: Vec<bool> = inputs.iter().map(|_| rng.chance(25)).collect();
    if !shared.is_empty() && shared.iter().all(|&s| s) {
        shared[0] = false;
    }
    let axes: Vec<Option<usize>> =
        inputs.iter().zip(&shared).map(|(n, &s)| (!s).then(|| rng.below(n.shape.len() + 1))).collect();
    let elements: Vec<Graph> = (0..batch as u64).map(|j| element(g, &shared, j)).collect();
    let Ok(refs) = std::panic::catch_unwind(|| elements.iter().map(evaluate).collect::<Vec<Vec<Arr>>>()) else {
        return VmapVerdict::Ok; // the reference's own limits; the plain fuzzer reports those
    };
    let out_axes: Vec<usize> = g.outputs.iter().map(|&o| rng.below(g.nodes[o].shape.len() + 1)).collect();
    let run = || -> ferrograd::Result<Vec<Vec<Vec<Got>>>> {
        // The batched inputs: each input's element tensors stacked along its axis.
        let args: Vec<Tensor> = inputs
            .iter()
            .enumerate()
            .map(|(k, n)| {
                let of = |e: &Graph| {
                    let node = e.nodes.iter().filter(|m| matches!(m.op, Op::Input { .. })).nth(k).expect("same inputs");
                    input_tensor(&input_data(node), &n.shape, n.dt, device)
                };
                match axes[k] {
                    None => of(&elements[0]),
                    Some(a) => {
                        let parts: Vec<Tensor> = elements.iter().map(of).collect();
                        Tensor::stack(&parts.iter().collect::<Vec<_>>(), a as isize)
                    }
                }
            })
            .collect();
        let f = |xs: &[Tensor]| {
            let mut next = xs.iter();
            build_with(g, &mut |_| next.next().expect("one tensor per input").clone(), false)
        };
        let in_axes: Vec<Option<isize>> = axes.iter().map(|a| a.map(|a| a as isize)).collect();
        let outs_axes: Vec<isize> = out_axes.iter().map(|&a| a as isize).collect();
        let outs = if g.nodes.len().is_multiple_of(2) {
            no_grad(|| vmap(f, &in_axes, &outs_axes)(&args))
        } else {
            vmap(f, &in_axes, &outs_axes)(&args)
        };
        Tensor::realize_all(&outs.iter().collect::<Vec<_>>())?;
        (0..batch)
            .map(|j| {
                outs.iter()
                    .zip(&out_axes)
                    .zip(&g.outputs)
                    .map(|((o, &a), &node)| read(&o.narrow(a as isize, j, 1).squeeze(a as isize), g.nodes[node].dt))
                    .collect()
            })
            .collect()
    };
    let got = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| with_default_device(device, run))) {
        Ok(Ok(got)) => got,
        Ok(Err(e)) if e.to_string().contains("read the values") => return VmapVerdict::Unsupported(e.to_string()),
        Ok(Err(e)) => return VmapVerdict::Mismatch(format!("failed: {e}")),
        Err(p) => return VmapVerdict::Mismatch(format!("panicked: {}", panic_text(p))),
    };
    for (j, (want, got)) in refs.iter().zip(&got).enumerate() {
        let outs: Vec<&Arr> = g.outputs.iter().map(|&o| &want[o]).collect();
        if let Some(m) = first_mismatch(&outs, got) {
            return VmapVerdict::Mismatch(format!(
                "batch {batch} element {j} (in_axes {axes:?}, out_axes {out_axes:?}): {m}"
            ));
        }
    }
    VmapVerdict::Ok
}
