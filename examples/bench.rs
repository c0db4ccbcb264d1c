//! Kernel benchmarks on this machine, one line each with its size and unit, plus the machine's
//! limits measured in the same run (STREAM-style copy/triad with all cores, an FMA peak loop),
//! and one training step of the beautiful_mnist model.
//! `bench/peers.sh` runs the same work through NumPy, PyTorch and tinygrad for comparison.
//!
//! `cargo run --release --example bench` (`QUICK=1` for fewer repetitions).

use ferrograd::helpers::getenv_int;
use ferrograd::runtime::cpu::CCompiler;
use ferrograd::tensor::ConvOpts;
use ferrograd::Tensor;
use std::time::Instant;

#[path = "shared/mnist_model.rs"]
mod mnist_model;

/// One beautiful_mnist training step (batch 512, random images, Adam, under TinyJit), in
/// images per second.
fn mnist_train_step(reps: usize) -> ferrograd::Result<f64> {
    use ferrograd::nn::get_parameters;
    use ferrograd::nn::optim::{adam, Optimizer};
    let bs = 512;
    let model = std::rc::Rc::new(mnist_model::Model::new());
    let mut opt = adam(get_parameters(&*model), 0.001);
    let x = Tensor::rand([bs, 1, 28, 28]).realize()?;
    let y = Tensor::randint([bs], 0, 10).realize()?;
    let m = model.clone();
    let mut step = ferrograd::TinyJit::new(move |_: &[Tensor]| {
        ferrograd::tensor::train(|| {
            opt.zero_grad();
            let loss = m.forward(&x).sparse_categorical_crossentropy(&y, -1, 0.0, Default::default());
            loss.backward();
            let mut outs = vec![loss];
            outs.extend(opt.schedule_step());
            outs
        })
    });
    for _ in 0..3 {
        step.call(&[])?[0].realize()?; // plain run, capture, first replay (compiles)
    }
    let t = best_of(reps, || {
        step.call(&[]).expect("train step")[0].item::<f32>().expect("loss");
    });
    Ok(bs as f64 / t)
}

fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm up (compiles)
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

fn line(name: &str, value: f64, unit: &str) {
    println!("{name:<40} {value:>9.1} {unit}");
}

/// STREAM-style copy and triad over `n` f32 with one thread per core (GB/s counts bytes read
/// plus written).
fn stream(n: usize, reps: usize) -> (f64, f64) {
    let cores = std::thread::available_parallelism().map(|c| c.get()).unwrap_or(1);
    let a = vec![1.0f32; n];
    let b = vec![2.0f32; n];
    let mut c = vec![0.0f32; n];
    let chunk = n.div_ceil(cores);
    let copy = best_of(reps, || {
        std::thread::scope(|s| {
            for (dst, src) in c.chunks_mut(chunk).zip(a.chunks(chunk)) {
                s.spawn(move || dst.copy_from_slice(std::hint::black_box(src)));
            }
        })
    });
    let triad = best_of(reps, || {
        std::thread::scope(|s| {
            for ((dst, x), y) in c.chunks_mut(chunk).zip(a.chunks(chunk)).zip(b.chunks(chunk)) {
                s.spawn(move || {
                    for ((d, x), y) in dst.iter_mut().zip(x).zip(y) {
                        *d = x + 3.0 * y;
                    }
                });
            }
        })
    });
    let gb = |bytes: f64, t: f64| bytes / t / 1e9;
    (gb(8.0 * n as f64, copy), gb(12.0 * n as f64, triad))
}

const FMA_SRC: &str = r#"
typedef float v16 __attribute__((vector_size(64)));
float fma_peak(long iters) {
  v16 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0}, a4 = {0}, a5 = {0}, a6 = {0}, a7 = {0};
  v16 a8 = {0}, a9 = {0}, a10 = {0}, a11 = {0}, x = {0}, y = {0};
  for (int i = 0; i < 16; i++) { x[i] = 1.0f + i * 1e-7f; y[i] = 1.0f - i * 1e-7f; }
  for (long i = 0; i < iters; i++) {
    a0 = a0 * x + y; a1 = a1 * x + y; a2 = a2 * x + y; a3 = a3 * x + y; a4 = a4 * x + y; a5 = a5 * x + y;
    a6 = a6 * x + y; a7 = a7 * x + y; a8 = a8 * x + y; a9 = a9 * x + y; a10 = a10 * x + y; a11 = a11 * x + y;
  }
  v16 s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  float r = 0; for (int i = 0; i < 16; i++) r += s[i]; return r;
}
"#;

/// FMA peak of all cores: 12 independent 16-lane FMA chains per core (GFLOP/s, 2 per FMA).
fn fma_peak() -> ferrograd::Result<f64> {
    let mut cc = CCompiler::from_env();
    cc.flags.retain(|f| f != "-ffp-contract=off");
    cc.flags.push("-ffp-contract=fast".into());
    let path = std::env::temp_dir().join(format!("ferrograd-fma-{}.so", std::process::id()));
    cc.compile_to(FMA_SRC, &path, "fma_peak")?;
    // SAFETY: the library is the small C file above, compiled just now; `fma_peak` has exactly
    // this signature and touches no memory but its stack.
    let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| ferrograd::Error::Other(e.to_string()))?;
    let f: libloading::Symbol<unsafe extern "C" fn(i64) -> f32> =
        unsafe { lib.get(b"fma_peak") }.map_err(|e| ferrograd::Error::Other(e.to_string()))?;
    let f = *f;
    let _ = std::fs::remove_file(&path);
    let cores = std::thread::available_parallelism().map(|c| c.get()).unwrap_or(1);
    let iters: i64 = 20_000_000;
    let t = best_of(2, || {
        std::thread::scope(|s| {
            for _ in 0..cores {
                // SAFETY: see above; the function is pure.
                s.spawn(move || std::hint::black_box(unsafe { f(iters) }));
            }
        })
    });
    Ok(cores as f64 * iters as f64 * 12.0 * 16.0 * 2.0 / t / 1e9)
}

fn main() -> ferrograd::Result<()> {
    let quick = getenv_int("QUICK", 0) != 0;
    let reps = if quick { 2 } else { 5 };
    Tensor::manual_seed(0);
    println!("device: {}", ferrograd::Device::try_default()?);
    for n in [256usize, 512, 1024, 2048] {
        let a = Tensor::rand([n, n]).realize()?;
        let b = Tensor::rand([n, n]).realize()?;
        let t = best_of(if n >= 2048 { reps.min(3) } else { reps }, || {
            a.matmul(&b).realize().expect("matmul");
        });
        line(&format!("matmul {n}x{n}x{n} f32"), 2.0 * (n as f64).powi(3) / t / 1e9, "GFLOP/s");
    }
    // `x @ w.T` with `w` stored `[out, in]` (nn::Linear's layout) against the same product with
    // the weight stored `[in, out]`: the goal is the same speed.
    for (rows, inp, out) in [(512usize, 512usize, 512usize), (480, 384, 1536), (1024, 1024, 1024), (4096, 4096, 1024)] {
        let x = Tensor::rand([rows, inp]).realize()?;
        let w = Tensor::rand([out, inp]).realize()?;
        let wt = w.t().contiguous().realize()?;
        let flops = 2.0 * (rows * inp * out) as f64;
        let t_t = best_of(reps, || {
            x.matmul(&w.t()).realize().expect("matmul");
        });
        let t_c = best_of(reps, || {
            x.matmul(&wt).realize().expect("matmul");
        });
        line(&format!("matmul {rows}x{inp} @ ({out}x{inp}).T f32"), flops / t_t / 1e9, "GFLOP/s");
        println!("  ratio to the same matmul with a [in, out] weight: {:.2}", t_c / t_t);
    }
    let x = Tensor::rand([64, 32, 28, 28]).realize()?;
    let w = Tensor::rand([64, 32, 3, 3]).realize()?;
    let t = best_of(reps, || {
        x.conv2d(&w, None, &ConvOpts::default()).realize().expect("conv");
    });
    line("conv2d 64x32x28x28 * 64x32x3x3 f32", 2.0 * 64.0 * 64.0 * 26.0 * 26.0 * 32.0 * 9.0 / t / 1e9, "GFLOP/s");
    let n = 16 << 20;
    let (a, b, c) = (Tensor::rand([n]).realize()?, Tensor::rand([n]).realize()?, Tensor::rand([n]).realize()?);
    let t = best_of(reps, || {
        ((&a * &b + &c).relu() * 2.0).sum().realize().expect("fused");
    });
    line("((a*b+c).relu()*2).sum() 16M f32", 12.0 * n as f64 / t / 1e9, "GB/s");
    line("beautiful_mnist train step, batch 512", mnist_train_step(reps)?, "img/s");
    let (copy, triad) = stream(n, reps);
    line("STREAM copy 16M f32, all cores", copy, "GB/s");
    line("STREAM triad 16M f32, all cores", triad, "GB/s");
    line("FMA peak, all cores", fma_peak()?, "GFLOP/s");
    Ok(())
}
