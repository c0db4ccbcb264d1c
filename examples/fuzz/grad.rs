//! `--grad`: the smooth float32 part of each random graph (elementwise functions without kinks
//! or poles, movement ops, sums, cumsum, matmul, convolution, softmax, norms, attention),
//! computed in float64, as a function of its inputs. For a random cotangent `u` and direction
//! `t`, the VJP's `<Jᵀu, t>` and the JVP's `<u, Jt>` (`ferrograd::func`) must both equal the
//! central difference of `<u, f(x + εt)>`.

use super::graph::{Bin, Dt, Fun, Fun2, Graph, Node, NormKind, Op, Red, Rng, Un};
use super::reference::input_data;
use super::run::{build_with, panic_text};
use ferrograd::func::{jvp, vjp};
use ferrograd::tensor::with_default_device;
use ferrograd::Tensor;

pub enum GradVerdict {
    Ok,
    /// No smooth part, or values that are not finite.
    Skipped,
    Mismatch(String),
}

fn smooth(op: &Op) -> bool {
    match op {
        Op::Input { special, .. } => !special,
        Op::Unary(u) => matches!(u, Un::Neg | Un::Exp | Un::Sin | Un::Square | Un::Sigmoid),
        Op::Binary(b) | Op::Scalar(b, _) => matches!(b, Bin::Add | Bin::Sub | Bin::Mul),
        Op::Reduce(r, _, _) => *r == Red::Sum,
        Op::Func(f) => matches!(f, Fun::Atan | Fun::Tanh | Fun::Sinh | Fun::Asinh),
        Op::Func2(f) => *f == Fun2::Logaddexp,
        Op::Norm(k) => matches!(k, NormKind::Layer | NormKind::Rms),
        Op::Reshape(_)
        | Op::Permute(_)
        | Op::Pad(_)
        | Op::Shrink(_)
        | Op::SymPad(_)
        | Op::SymShrink(_)
        | Op::Flip(_)
        | Op::Expand(_)
        | Op::Cumsum(_)
        | Op::Matmul
        | Op::Conv2d { .. }
        | Op::Contiguous
        | Op::Softmax { .. }
        | Op::Unfold { .. }
        | Op::Diagonal(_)
        | Op::Diag(_)
        | Op::Attention { .. } => true,
        _ => false,
    }
}

/// The largest smooth float32 subgraph: nodes that are smooth and read only such nodes; its
/// outputs are those no kept node reads. `None` when it computes nothing.
fn smooth_part(g: &Graph) -> Option<Graph> {
    let mut new_index: Vec<Option<usize>> = vec![None; g.nodes.len()];
    let mut nodes: Vec<Node> = Vec::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let srcs: Option<Vec<usize>> = n.src.iter().map(|&s| new_index[s]).collect();
        if let (Some(src), true, true) = (srcs, n.dt == Dt::F32, smooth(&n.op)) {
            new_index[i] = Some(nodes.len());
            nodes.push(Node { src, ..n.clone() });
        }
    }
    let read: Vec<bool> = (0..nodes.len()).map(|i| nodes.iter().any(|n| n.src.contains(&i))).collect();
    let outputs: Vec<usize> =
        (0..nodes.len()).filter(|&i| !read[i] && !matches!(nodes[i].op, Op::Input { .. })).collect();
    (!outputs.is_empty()).then_some(Graph { nodes, outputs })
}

fn dot(a: &[Tensor], b: &[Tensor]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x * y).sum().item::<f64>().expect("a float64 sum")).sum()
}

/// Checks graph `g` (seed `seed`) on `device`.
pub fn check(g: &Graph, seed: u64, device: &str) -> GradVerdict {
    let Some(part) = smooth_part(g) else { return GradVerdict::Skipped };
    let mut rng = Rng::new(seed ^ 0x6ead_0001);
    let inputs: Vec<&Node> = part.nodes.iter().filter(|n| matches!(n.op, Op::Input { .. })).collect();
    let random = |rng: &mut Rng, shape: &[usize]| {
        let n: usize = shape.iter().product();
        let v: Vec<f64> = (0..n).map(|_| rng.below(2001) as f64 / 1000.0 - 1.0).collect();
        Tensor::from_vec(v, shape.to_vec())
    };
    let run = || -> Result<GradVerdict, String> {
        let xs: Vec<Tensor> = inputs
            .iter()
            .map(|n| Tensor::from_vec(input_data(n).iter().map(|e| e.v).collect::<Vec<f64>>(), n.shape.clone()))
            .collect();
        let f = |a: &[Tensor]| {
            let mut next = a.iter();
            build_with(&part, &mut |_| next.next().expect("one tensor per input").clone(), true)
        };
        let outs = f(&xs);
        for o in &outs {
            let v = o.to_vec::<f64>().map_err(|e| e.to_string())?;
            if v.iter().any(|x| !x.is_finite() || x.abs() > 1e6) {
                return Ok(GradVerdict::Skipped);
            }
        }
        let us: Vec<Tensor> = outs.iter().map(|o| random(&mut rng, &o.shape())).collect();
        let ts: Vec<Tensor> = xs.iter().map(|x| random(&mut rng, &x.shape())).collect();
        let (_, pull) = vjp(f, &xs);
        let reverse = dot(&pull(&us), &ts);
        let forward = dot(&us, &jvp(f, &xs, &ts).1);
        let eps = 1e-6;
        let at = |s: f64| {
            let moved: Vec<Tensor> = xs.iter().zip(&ts).map(|(x, t)| x + t * s).collect();
            dot(&us, &f(&moved))
        };
        let fd = (at(eps) - at(-eps)) / (2.0 * eps);
        let tol = 1e-5 * (1.0 + fd.abs());
        if !fd.is_finite() {
            return Ok(GradVerdict::Skipped);
        }
        if (reverse - fd).abs() > tol || (forward - fd).abs() > tol {
            return Ok(GradVerdict::Mismatch(format!(
                "<Jᵀu, t> = {reverse}, <u, Jt> = {forward}, central difference {fd} (graph of {} nodes)",
                part.nodes.len()
            )));
        }
        Ok(GradVerdict::Ok)
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| with_default_device(device, run))) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => GradVerdict::Mismatch(format!("failed: {e}")),
        Err(p) => GradVerdict::Mismatch(format!("panicked: {}", panic_text(p))),
    }
}
