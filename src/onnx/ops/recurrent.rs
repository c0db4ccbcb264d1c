//! Recurrent operators, unrolled over time with lazy tensor ops: RNN, GRU and LSTM (forward,
//! reverse or bidirectional, batch-first layout, initial states, LSTM peepholes) and
//! LinearAttention (the linear, gated, delta and gated-delta state updates).

use crate::error::Result;
use crate::onnx::node::{Node, Outs};
use crate::tensor::Tensor;
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "RNN" => recurrent(node, Cell::Rnn),
        "GRU" => recurrent(node, Cell::Gru),
        "LSTM" => recurrent(node, Cell::Lstm),
        "LinearAttention" => linear_attention(node),
        _ => return None,
    };
    Some(r)
}

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Rnn,
    Gru,
    Lstm,
}

impl Cell {
    /// Gates per step (rows of W per hidden unit) and the default activations.
    fn gates(self) -> usize {
        match self {
            Cell::Rnn => 1,
            Cell::Gru => 3,
            Cell::Lstm => 4,
        }
    }
    fn default_activations(self) -> &'static [&'static str] {
        match self {
            Cell::Rnn => &["Tanh"],
            Cell::Gru => &["Sigmoid", "Tanh"],
            Cell::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

fn activation(node: &Node, name: &str) -> Result<fn(&Tensor) -> Tensor> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "sigmoid" => Tensor::sigmoid,
        "tanh" => Tensor::tanh,
        "relu" => Tensor::relu,
        "softsign" => Tensor::softsign,
        _ => return Err(node.unsupported(format!("activation {name}"))),
    })
}

/// The weights of one direction: `(W, R, Wb + Rb split per gate, peepholes)`.
struct Weights {
    w: Tensor,
    r: Tensor,
    /// `(Wb, Rb)`, each `(gates * hidden,)`.
    b: Option<(Tensor, Tensor)>,
    p: Option<Tensor>,
}

fn recurrent(node: &Node, cell: Cell) -> Result<Outs> {
    let (mut x, w_all, r_all) = (node.input(0)?.clone(), node.input(1)?, node.input(2)?);
    let batch_first = node.int("layout", 0)? != 0;
    if batch_first {
        x = x.transpose(0, 1);
    }
    if node.opt(4).is_some() {
        let lens = node.input_ints(4)?.unwrap_or_default();
        if lens.iter().any(|&l| l != x.shape()[0] as i64) {
            return Err(node.unsupported("sequence_lens shorter than the sequence"));
        }
    }
    if node.attr("clip").is_some() {
        return Err(node.unsupported("clip"));
    }
    if cell == Cell::Lstm && node.int("input_forget", 0)? != 0 {
        return Err(node.unsupported("input_forget=1"));
    }
    let hidden = node.int("hidden_size", 0)? as usize;
    let hidden = if hidden == 0 { r_all.shape()[2] } else { hidden };
    let direction = node.string("direction", "forward")?;
    let dirs = if direction == "bidirectional" { 2 } else { 1 };
    let names: Vec<String> = match node.attr("activations") {
        Some(a) => a.strings.iter().map(|s| String::from_utf8_lossy(s).into_owned()).collect(),
        None => cell
            .default_activations()
            .iter()
            .cycle()
            .take(cell.default_activations().len() * dirs)
            .map(|s| s.to_string())
            .collect(),
    };
    let per_dir = cell.default_activations().len();
    let (seq, batch) = (x.shape()[0], x.shape()[1]);
    let gates = cell.gates();
    let initial = |i: usize, d: usize| -> Option<Tensor> { node.opt(i).map(|t| t.narrow(0, d, 1).squeeze(0)) };
    let (mut ys, mut hs, mut cs) = (Vec::new(), Vec::new(), Vec::new());
    for d in 0..dirs {
        let f: Vec<fn(&Tensor) -> Tensor> =
            names.iter().skip(d * per_dir).take(per_dir).map(|n| activation(node, n)).collect::<Result<_>>()?;
        if f.len() != per_dir {
            return Err(node.error(format!("activations {names:?} do not give {per_dir} per direction")));
        }
        let wt = Weights {
            w: w_all.narrow(0, d, 1).squeeze(0),
            r: r_all.narrow(0, d, 1).squeeze(0),
            b: node.opt(3).map(|b| {
                let b = b.narrow(0, d, 1).squeeze(0);
                (b.narrow(0, 0, gates * hidden), b.narrow(0, gates * hidden, gates * hidden))
            }),
            p: node.opt(7).map(|p| p.narrow(0, d, 1).squeeze(0)),
        };
        let zeros = || Tensor::zeros_dtype([batch, hidden], x.dtype());
        let mut h = initial(5, d).unwrap_or_else(zeros);
        let mut c = initial(6, d).unwrap_or_else(zeros);
        let reverse = direction == "reverse" || d == 1;
        let mut outs = vec![None; seq];
        // The input projections of every step at once: (seq, batch, gates * hidden).
        let mut xw = x.matmul(&wt.w.t());
        if let Some((wb, rb)) = &wt.b {
            xw = xw.add(wb.add(rb));
        }
        for step in 0..seq {
            let t = if reverse { seq - 1 - step } else { step };
            let xt = xw.narrow(0, t, 1).squeeze(0);
            let gate = |g: &Tensor, i: usize| g.narrow(1, i * hidden, hidden);
            match cell {
                Cell::Rnn => h = f[0](&xt.add(h.matmul(&wt.r.t()))),
                Cell::Gru => {
                    // Gate order z, r, h; the recurrent bias of h stays inside the reset product
                    // when linear_before_reset is set.
                    let rz = wt.r.narrow(0, 0, 2 * hidden);
                    let rh = wt.r.narrow(0, 2 * hidden, hidden);
                    let hr = h.matmul(&rz.t());
                    let z = f[0](&gate(&xt, 0).add(gate(&hr, 0)));
                    let r = f[0](&gate(&xt, 1).add(gate(&hr, 1)));
                    let rbh = wt.b.as_ref().map(|(_, rb)| rb.narrow(0, 2 * hidden, hidden));
                    let candidate = if node.int("linear_before_reset", 0)? != 0 {
                        let mut hh = h.matmul(&rh.t());
                        if let Some(rbh) = &rbh {
                            hh = hh.add(rbh);
                        }
                        // xw already holds Rbh: take it out again.
                        let xh = match &rbh {
                            Some(rbh) => gate(&xt, 2).sub(rbh),
                            None => gate(&xt, 2),
                        };
                        f[1](&xh.add(r.mul(hh)))
                    } else {
                        f[1](&gate(&xt, 2).add(r.mul(&h).matmul(&rh.t())))
                    };
                    h = z.neg().add(1.0).mul(candidate).add(z.mul(&h));
                }
                Cell::Lstm => {
                    // Gate order i, o, f, c; peepholes (i, o, f) read the cell state.
                    let g = xt.add(h.matmul(&wt.r.t()));
                    let peep = |k: usize| wt.p.as_ref().map(|p| p.narrow(0, k * hidden, hidden));
                    let with_peep = |pre: Tensor, k: usize, state: &Tensor| match peep(k) {
                        Some(p) => pre.add(p.mul(state)),
                        None => pre,
                    };
                    let i = f[0](&with_peep(gate(&g, 0), 0, &c));
                    let fg = f[0](&with_peep(gate(&g, 2), 2, &c));
                    let cand = f[1](&gate(&g, 3));
                    c = fg.mul(&c).add(i.mul(cand));
                    let o = f[0](&with_peep(gate(&g, 1), 1, &c));
                    h = o.mul(f[2](&c));
                }
            }
            // Realized every step so the graph of a long sequence does not grow with it.
            h = h.contiguous();
            outs[t] = Some(h.clone());
        }
        let steps: Vec<Tensor> = outs.into_iter().map(|o| o.expect("every step ran")).collect();
        ys.push(Tensor::stack(&steps.iter().collect::<Vec<_>>(), 0));
        hs.push(h);
        cs.push(c);
    }
    // Y: (seq, dirs, batch, hidden); Y_h, Y_c: (dirs, batch, hidden). Batch first when asked.
    let mut y = Tensor::stack(&ys.iter().collect::<Vec<_>>(), 1);
    let mut yh = Tensor::stack(&hs.iter().collect::<Vec<_>>(), 0);
    let mut yc = Tensor::stack(&cs.iter().collect::<Vec<_>>(), 0);
    if batch_first {
        y = y.permute([2, 0, 1, 3]);
        yh = yh.transpose(0, 1);
        yc = yc.transpose(0, 1);
    }
    Ok(vec![Some(y), Some(yh), Some(yc)])
}

/// `(B, T, H * D)` → `(B, H, T, D)`.
fn heads(x: &Tensor, h: usize) -> Tensor {
    let s = x.shape();
    x.reshape([s[0], s[1], h, s[2] / h]).permute([0, 2, 1, 3])
}

fn linear_attention(node: &Node) -> Result<Outs> {
    let (q, k, v) = (node.input(0)?, node.input(1)?, node.input(2)?);
    let rule = node.string("update_rule", "gated_delta")?;
    let (gating, delta) = match rule.as_str() {
        "linear" => (false, false),
        "gated" => (true, false),
        "delta" => (false, true),
        "gated_delta" => (true, true),
        r => return Err(node.error(format!("update_rule {r:?}"))),
    };
    let (qh, kvh) = (node.int("q_num_heads", 0)?, node.int("kv_num_heads", 0)?);
    if qh <= 0 || kvh <= 0 || qh % kvh != 0 {
        return Err(node.error(format!("q_num_heads {qh} must be a positive multiple of kv_num_heads {kvh}")));
    }
    let (qh, kvh) = (qh as usize, kvh as usize);
    let (b, t) = (q.shape()[0], q.shape()[1]);
    let dk = q.shape()[2] / qh;
    let dv = v.shape()[2] / kvh;
    let f32 = |x: &Tensor| x.cast(DType::F32);
    let (q4, k4, v4) = (f32(&heads(q, qh)), f32(&heads(k, kvh)), f32(&heads(v, kvh)));
    let decay = match node.opt(4) {
        Some(g) if g.shape()[2] == kvh => Some(f32(&g.reshape([b, t, kvh, 1]).permute([0, 2, 1, 3]))),
        Some(g) => Some(f32(&heads(g, kvh))),
        None if gating => return Err(node.error(format!("update_rule {rule} needs decay"))),
        None => None,
    };
    let beta = match node.opt(5) {
        Some(bt) => Some(f32(&bt.reshape([b, t, bt.shape()[2], 1]).permute([0, 2, 1, 3]))),
        None if delta => return Err(node.error(format!("update_rule {rule} needs beta"))),
        None => None,
    };
    let state_dtype = node.opt(3).map_or(q.dtype(), |s| s.dtype());
    let mut state = match node.opt(3) {
        Some(s) => f32(s),
        None => Tensor::zeros_dtype([b, kvh, dk, dv], DType::F32),
    };
    let scale = match node.float("scale", 0.0)? {
        0.0 => 1.0 / (dk as f64).sqrt(),
        s => s,
    };
    let group = qh / kvh;
    let mut outs = Vec::with_capacity(t);
    for i in 0..t {
        let at = |x: &Tensor| x.narrow(2, i, 1).squeeze(2);
        let (qt, kt, mut vt) = (at(&q4), at(&k4), at(&v4));
        if let Some(g) = &decay {
            state = state.mul(at(g).exp().unsqueeze(-1));
        }
        if let Some(bt) = &beta {
            let retrieved = kt.unsqueeze(-2).matmul(&state).squeeze(-2);
            vt = at(bt).mul(vt.sub(retrieved));
        }
        state = state.add(kt.unsqueeze(-1).mul(vt.unsqueeze(-2))).contiguous();
        let read = if group == 1 { state.clone() } else { state.repeat_interleave(group, Some(1)) };
        outs.push(qt.unsqueeze(-2).matmul(&read).squeeze(-2).mul(scale));
    }
    let y = Tensor::stack(&outs.iter().collect::<Vec<_>>(), 2).permute([0, 2, 1, 3]).reshape([b, t, qh * dv]);
    Ok(vec![Some(y.cast(q.dtype())), Some(state.cast(state_dtype))])
}
