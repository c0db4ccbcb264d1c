//! The kernel survey: runs the kernels of a fixed set of workloads, each at two sizes (a cliff
//! often sits at a threshold), and prints every kernel above 1e8 FLOP or 1e7 bytes with its
//! opts, time, and its speed as a fraction of this machine's limit measured in the same run:
//! the FMA peak for compute-bound kernels, the STREAM triad for memory-bound ones (a kernel is
//! compute-bound when its FLOPs per byte exceed the machine's peak over its bandwidth). Worst
//! first; the last line is `survey: worst compute kernel x% of peak, worst memory kernel y% of
//! STREAM`. Each kernel's time is its best of `RUNS` runs. A benchmark, not a test: nothing is
//! asserted.
//!
//! `cargo run --release --example survey` (`SURVEY=mnist,conv,matmul,transformer` picks
//! workloads; `TOP=n` prints only the n worst kernels).

use ferrograd::engine::{record_kernels, KernelRun};
use ferrograd::nn::optim::adam;
use ferrograd::nn::{get_parameters, LayerNorm, Linear};
use ferrograd::tensor::{AttentionOpts, ConvOpts};
use ferrograd::{Result, Tensor};

#[path = "shared/limits.rs"]
mod limits;
#[path = "shared/mnist_model.rs"]
mod mnist_model;

/// A workload: a name, and a closure that builds its graphs and realizes them once.
type Workload = (String, Box<dyn FnMut() -> Result<()>>);

/// A workload's input, realized first: a lazy random tensor would be generated again inside
/// every kernel that reads it.
fn input(t: Tensor) -> Tensor {
    t.realize().expect("the survey's inputs realize")
}

fn mnist(out: &mut Vec<Workload>) {
    for bs in [128usize, 512] {
        let model = mnist_model::Model::new();
        let mut opt = adam(get_parameters(&model), 0.001);
        let x = input(Tensor::rand([bs, 1, 28, 28]));
        let y = input(Tensor::randint([bs], 0, 10));
        out.push((
            format!("mnist train step, batch {bs}"),
            Box::new(move || {
                let outs = model.train_step(&mut opt, &x, &y);
                Tensor::realize_all(&outs.iter().collect::<Vec<_>>())
            }),
        ));
    }
    for n in [1000usize, 10000] {
        let model = mnist_model::Model::new();
        let x = input(Tensor::rand([n, 1, 28, 28]));
        out.push((
            format!("mnist test evaluation, {n} images"),
            Box::new(move || model.forward(&x).argmax_axis(1).realize().map(|_| ())),
        ));
    }
}

fn conv(out: &mut Vec<Workload>) {
    for batch in [16usize, 64] {
        let x = input(Tensor::randn([batch, 32, 28, 28]));
        let w = input(Tensor::randn([64, 32, 3, 3]));
        out.push((
            format!("conv2d {batch}x32x28x28 * 64x32x3x3"),
            Box::new(move || x.conv2d(&w, None, &ConvOpts::default()).realize().map(|_| ())),
        ));
    }
}

fn matmul(out: &mut Vec<Workload>) {
    for n in [256usize, 512, 1024, 2048] {
        let a = input(Tensor::randn([n, n]));
        let b = input(Tensor::randn([n, n]));
        out.push((format!("matmul {n}^3"), Box::new(move || a.matmul(&b).realize().map(|_| ()))));
    }
    for n in [512usize, 1024] {
        let a = input(Tensor::randn([n, n]));
        let w = input(Tensor::randn([n, n]));
        out.push((format!("matmul {n}^3, x @ w.T"), Box::new(move || a.matmul(&w.t()).realize().map(|_| ()))));
    }
}

/// One BERT encoder layer at all-MiniLM-L6-v2's shapes (hidden 384, 12 heads, intermediate
/// 1536): `nn::Linear` layers (weights stored `[out, in]`), attention, softmax, exact GELU,
/// post-norm LayerNorms.
struct EncoderLayer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    norm1: LayerNorm,
    up: Linear,
    down: Linear,
    norm2: LayerNorm,
}

const HIDDEN: usize = 384;
const HEADS: usize = 12;

impl EncoderLayer {
    fn new() -> EncoderLayer {
        EncoderLayer {
            q: Linear::new(HIDDEN, HIDDEN, true),
            k: Linear::new(HIDDEN, HIDDEN, true),
            v: Linear::new(HIDDEN, HIDDEN, true),
            o: Linear::new(HIDDEN, HIDDEN, true),
            norm1: LayerNorm::new(vec![HIDDEN]),
            up: Linear::new(HIDDEN, 4 * HIDDEN, true),
            down: Linear::new(4 * HIDDEN, HIDDEN, true),
            norm2: LayerNorm::new(vec![HIDDEN]),
        }
    }

    fn forward(&self, x: &Tensor) -> Tensor {
        let (b, t) = (x.shape()[0], x.shape()[1]);
        let heads = |y: Tensor| y.reshape([b, t, HEADS, HIDDEN / HEADS]).permute([0, 2, 1, 3]);
        let (q, k, v) = (heads(self.q.forward(x)), heads(self.k.forward(x)), heads(self.v.forward(x)));
        let attn = q.scaled_dot_product_attention(&k, &v, &AttentionOpts::default());
        let attn = attn.permute([0, 2, 1, 3]).reshape([b, t, HIDDEN]);
        let x = self.norm1.forward(&(x + self.o.forward(&attn)));
        let ff = self.down.forward(&self.up.forward(&x).gelu());
        self.norm2.forward(&(&x + ff))
    }
}

fn transformer(out: &mut Vec<Workload>) {
    for (batch, tokens) in [(8usize, 60usize), (32, 64)] {
        let layer = EncoderLayer::new();
        let x = input(Tensor::randn([batch, tokens, HIDDEN]));
        out.push((
            format!("MiniLM encoder layer, batch {batch}x{tokens}"),
            Box::new(move || layer.forward(&x).realize().map(|_| ())),
        ));
    }
}

/// Runs of each workload after the one that compiles; each kernel's fastest is reported.
const RUNS: usize = 3;

fn main() -> Result<()> {
    let chosen = std::env::var("SURVEY").unwrap_or_else(|_| "mnist,conv,matmul,transformer".into());
    let top: usize = std::env::var("TOP").ok().and_then(|s| s.parse().ok()).unwrap_or(usize::MAX);
    let mut workloads: Vec<Workload> = Vec::new();
    for w in chosen.split(',') {
        match w.trim() {
            "mnist" => mnist(&mut workloads),
            "conv" => conv(&mut workloads),
            "matmul" => matmul(&mut workloads),
            "transformer" => transformer(&mut workloads),
            other => panic!("survey: unknown workload `{other}` (mnist, conv, matmul, transformer)"),
        }
    }
    let peak = limits::fma_peak()?;
    let (_, triad) = limits::stream(1 << 25, 5);
    println!("machine: FMA peak {peak:.1} GFLOP/s, STREAM triad {triad:.1} GB/s (all cores, measured now)");
    // (fraction of the limit, compute-bound, workload, the run)
    let mut rows: Vec<(f64, bool, String, KernelRun)> = Vec::new();
    for (name, run) in workloads.iter_mut() {
        // The first run compiles. Then each kernel's best of RUNS runs: this machine is shared,
        // and one slow run says little.
        run()?;
        let (result, mut runs) = record_kernels(&mut *run);
        result?;
        for _ in 1..RUNS {
            let (result, again) = record_kernels(&mut *run);
            result?;
            if again.len() == runs.len() && again.iter().zip(&runs).all(|(a, b)| a.name == b.name) {
                for (best, r) in runs.iter_mut().zip(again) {
                    best.seconds = best.seconds.min(r.seconds);
                }
            }
        }
        let total: f64 = runs.iter().map(|r| r.seconds).sum();
        println!("{name}: {} kernels, {:.1} ms", runs.len(), total * 1e3);
        for r in runs.into_iter().filter(|r| r.flops as f64 >= 1e8 || r.bytes as f64 >= 1e7) {
            let compute = r.flops as f64 / r.bytes.max(1) as f64 > peak / triad;
            let fraction = if compute {
                r.flops as f64 / r.seconds / 1e9 / peak
            } else {
                r.bytes as f64 / r.seconds / 1e9 / triad
            };
            rows.push((fraction, compute, name.clone(), r));
        }
    }
    rows.sort_by(|a, b| a.0.total_cmp(&b.0));
    println!(
        "\n{:>7}  {:<7} {:>9} {:>9} {:>8}  {:<38} {:<40} opts",
        "limit", "bound", "GFLOP/s", "GB/s", "ms", "kernel", "workload"
    );
    for (fraction, compute, workload, r) in rows.iter().take(top) {
        println!(
            "{:>6.1}%  {:<7} {:>9.1} {:>9.1} {:>8.2}  {:<38} {:<40} {}",
            fraction * 100.0,
            if *compute { "compute" } else { "memory" },
            r.flops as f64 / r.seconds / 1e9,
            r.bytes as f64 / r.seconds / 1e9,
            r.seconds * 1e3,
            r.name,
            workload,
            r.opts
        );
    }
    let worst = |compute: bool| rows.iter().find(|r| r.1 == compute).map_or(f64::NAN, |r| r.0 * 100.0);
    println!(
        "survey: worst compute kernel {:.1}% of peak, worst memory kernel {:.1}% of STREAM",
        worst(true),
        worst(false)
    );
    Ok(())
}
