//! `--multi`: each random graph runs with its inputs spread over two or three devices of the
//! fuzzed kind (`CPU`, `CPU:1`, `CPU:2`): each input sharded along a random axis that splits
//! evenly, or replicated, and the constants the graph makes replicated too; the outputs are
//! gathered and compared with the f64 reference of the same graph. The lowering to per-device
//! graphs (`schedule/multi.rs`: slices, allreduces, gathers) is what this exercises.

use super::first_mismatch;
use super::graph::{Graph, Op, Rng};
use super::reference::{evaluate, input_data, Arr};
use super::run::{build_with, input_tensor, panic_text};
use super::vmap::read;
use ferrograd::tensor::with_default_device;
use ferrograd::Tensor;

/// What spreading one graph gave.
pub enum MultiVerdict {
    Ok,
    Mismatch(String),
    /// The graph uses symbolic shapes, which spread tensors do not support yet (a clear panic).
    Unsupported(String),
}

/// Runs graph `g` (seed `seed`) spread over 2 or 3 devices named after `device`.
pub fn check(g: &Graph, seed: u64, device: &str) -> MultiVerdict {
    let mut rng = Rng::new(seed ^ 0x5a4d_0c1e);
    let parts = 2 + rng.below(2);
    let devices: Vec<String> =
        (0..parts).map(|i| if i == 0 { device.to_string() } else { format!("{device}:{i}") }).collect();
    let Ok(want) = std::panic::catch_unwind(|| evaluate(g)) else {
        return MultiVerdict::Ok; // the reference's own limits; the plain fuzzer reports those
    };
    let inputs: Vec<&super::graph::Node> = g.nodes.iter().filter(|n| matches!(n.op, Op::Input { .. })).collect();
    // Per input: an axis that splits evenly (three in four), else replicated.
    let axes: Vec<Option<usize>> = inputs
        .iter()
        .map(|n| {
            let even: Vec<usize> = (0..n.shape.len()).filter(|&a| n.shape[a] % parts == 0 && n.shape[a] > 0).collect();
            (!even.is_empty() && !rng.chance(25)).then(|| even[rng.below(even.len())])
        })
        .collect();
    let run = || -> ferrograd::Result<Vec<Vec<super::run::Got>>> {
        let mut k = 0;
        let outs = build_with(
            g,
            &mut |n| {
                let t =
                    input_tensor(&input_data(n), &n.shape, n.dt, device).shard(&devices, axes[k].map(|a| a as isize));
                k += 1;
                t
            },
            false,
        );
        Tensor::realize_all(&outs.iter().collect::<Vec<_>>())?;
        outs.iter().zip(&g.outputs).map(|(o, &node)| read(o, g.nodes[node].dt)).collect()
    };
    let label = devices.join(",");
    let got = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| with_default_device(&label, run))) {
        Ok(Ok(got)) => got,
        Ok(Err(e)) => return MultiVerdict::Mismatch(format!("failed: {e}")),
        Err(p) => {
            let text = panic_text(p);
            if text.contains("symbolic shapes on tensors spread over devices") {
                return MultiVerdict::Unsupported(text);
            }
            return MultiVerdict::Mismatch(format!("panicked: {text}"));
        }
    };
    let outs: Vec<&Arr> = g.outputs.iter().map(|&o| &want[o]).collect();
    match first_mismatch(&outs, &got) {
        Some(m) => MultiVerdict::Mismatch(format!("over {devices:?} (input axes {axes:?}): {m}")),
        None => MultiVerdict::Ok,
    }
}
