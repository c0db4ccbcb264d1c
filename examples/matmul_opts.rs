//! Times one N x N f32 matmul kernel with the heuristic opts or an explicit list, to explore
//! what the code generator can do: `N=1024 OPTS=T0:2,U0:8,U1:32,R2:4 cargo run --release
//! --example matmul_opts` (T=THREAD, U=UPCAST, R=UNROLL, S=Split, P=PADTO, L=LOCAL, G/GT=GROUP/GROUPTOP;
//! `axis:amount`, axes numbered
//! as in DEBUG=3 after the previous opts). `SRC=1` prints the generated C; `TRANSPOSED=1` times
//! `a @ b.T` instead (the right operand stored `[out, in]`, as `nn::Linear` keeps its weight).

use ferrograd::codegen::get_program;
use ferrograd::codegen::opts::{parse_opts, Opt};
use ferrograd::runtime::{get_device, DeviceMemory};
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;
use std::sync::Arc;
fn main() {
    let n: usize = std::env::var("N").ok().and_then(|s| s.parse().ok()).unwrap_or(256);
    let a = Tensor::randn([n, n]).realize().unwrap();
    let b = Tensor::randn([n, n]).realize().unwrap();
    let c = if std::env::var("TRANSPOSED").is_ok() { a.matmul(&b.t()) } else { a.matmul(&b) };
    let sched = create_schedule(&[c.uop()]);
    // The matmul is the last kernel (a large right operand is packed into panels first).
    let item = sched.items.last().expect("a kernel");
    let dev = get_device("CPU").unwrap();
    let opts: Option<Vec<Opt>> =
        std::env::var("OPTS").ok().map(|s| parse_opts(&s).unwrap_or_else(|e| panic!("OPTS: {e}")));
    let spec = get_program(&item.ast, dev.renderer(), opts.as_deref());
    println!("{} {}", spec.name, spec.opts);
    if std::env::var("SRC").is_ok() {
        println!("{}", spec.src);
    }
    let prog = dev.compile(&[Arc::new(spec)]).unwrap().remove(0);
    let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    let mut best = f64::MAX;
    for _ in 0..5 {
        best = best.min(prog.launch(&mems, &[], true).unwrap());
    }
    println!("{:.1} GFLOP/s", 2.0 * (n * n * n) as f64 / best / 1e9);
}
