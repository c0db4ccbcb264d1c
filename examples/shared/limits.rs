//! The machine's limits, measured in the run that compares against them: STREAM-style memory
//! bandwidth with every core, and the FMA peak. Shared by `bench` and `survey`.

use ferrograd::runtime::cpu::CCompiler;
use std::time::Instant;

/// The fastest of `reps` runs of `f`, after one warm-up run (which compiles), in seconds.
pub fn best_of(reps: usize, mut f: impl FnMut()) -> f64 {
    f(); // warm up (compiles)
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::MAX, f64::min)
}

/// STREAM-style copy and triad over `n` f32 with one thread per core (GB/s counts bytes read
/// plus written).
pub fn stream(n: usize, reps: usize) -> (f64, f64) {
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
pub fn fma_peak() -> ferrograd::Result<f64> {
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
