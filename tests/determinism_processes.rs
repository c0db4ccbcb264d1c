//! Kernels are the same in every process: a transformer-like block renders byte-identical
//! source in two processes, and the second process, finding every kernel in the disk cache,
//! runs the C compiler zero times.

use ferrograd::codegen::get_program;
use ferrograd::helpers::stable_hash_hex;
use ferrograd::nn::{LayerNorm, Linear};
use ferrograd::runtime::get_device;
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;
use std::process::Command;

const CHILD: &str = "FERROGRAD_DETERMINISM_CHILD";

/// One attention + MLP block over 8 tokens of width 64 (4 heads), with its weights.
fn block() -> Tensor {
    Tensor::manual_seed(7);
    let (t, d, h) = (8usize, 64usize, 4usize);
    let x = Tensor::randn([t, d]).realize().unwrap();
    // Weights realized first, as a loaded model's are.
    let lin = |i: usize, o: usize| {
        let l = Linear::new(i, o, true);
        l.weight.realize().unwrap();
        l.bias.as_ref().map(|b| b.realize().unwrap());
        l
    };
    let (q, k, v, o) = (lin(d, d), lin(d, d), lin(d, d), lin(d, d));
    let (up, down) = (lin(d, 4 * d), lin(4 * d, d));
    let (n1, n2) = (LayerNorm::new(vec![d]), LayerNorm::new(vec![d]));
    let heads = |y: Tensor| y.reshape([t, h, d / h]).permute([1, 0, 2]);
    let a = n1.forward(&x);
    let (qh, kh, vh) = (heads(q.forward(&a)), heads(k.forward(&a)), heads(v.forward(&a)));
    let scores = qh.matmul(&kh.transpose(-1, -2)) * (1.0 / ((d / h) as f64).sqrt());
    let causal = Tensor::ones([t, t]).tril(0).eq(0.0);
    let att = causal.where_(f64::NEG_INFINITY, &scores).softmax(-1).matmul(&vh);
    let x = &x + &o.forward(&att.permute([1, 0, 2]).reshape([t, d]));
    &x + &down.forward(&up.forward(&n2.forward(&x)).gelu())
}

/// In a child process: prints a hash of every kernel's source and how often the compiler ran.
fn child() {
    let out = block();
    let dev = get_device("CPU").unwrap();
    let sched = create_schedule(&[out.uop()]);
    let srcs: Vec<String> = sched.items.iter().map(|i| get_program(&i.ast, dev.renderer(), None).src).collect();
    let joined = srcs.join("\n");
    out.realize().expect("the block runs");
    println!("KERNELS {} SOURCE {}", srcs.len(), stable_hash_hex(&[joined.as_bytes()]));
    println!("COMPILER_RUNS {}", ferrograd::runtime::cpu::compiler_runs());
}

fn run_child(cache: &std::path::Path) -> (String, usize) {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", "kernels_are_identical_across_processes", "--nocapture", "--test-threads", "1"])
        .env(CHILD, "1")
        .env("FERROGRAD_CACHE", cache)
        .env("DEV", "CPU")
        .output()
        .expect("child runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "child failed:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    // The test harness may print the test's name on the same line as our output.
    let after = |key: &str| text.lines().find_map(|l| l.find(key).map(|i| l[i + key.len()..].to_string()));
    let source = after("KERNELS ").expect("KERNELS line");
    let runs = after("COMPILER_RUNS ").expect("COMPILER_RUNS line").trim().parse().unwrap();
    (source, runs)
}

#[test]
fn kernels_are_identical_across_processes() {
    if std::env::var_os(CHILD).is_some() {
        child();
        return;
    }
    let cache = std::env::temp_dir().join(format!("ferrograd-determinism-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let (first, runs_cold) = run_child(&cache);
    let (second, runs_warm) = run_child(&cache);
    let _ = std::fs::remove_dir_all(&cache);
    assert_eq!(first, second, "two processes rendered different kernels for the same block");
    assert!(runs_cold > 0, "the first process found a kernel cache it should not have");
    assert_eq!(runs_warm, 0, "the second process ran the C compiler {runs_warm} times with a warm cache");
}
