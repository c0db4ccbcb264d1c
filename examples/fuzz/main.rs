//! Differential fuzzer: random graphs of elementwise, broadcast, movement, reduce, cumsum,
//! matmul, convolution and cast ops (f32, f16, bf16, ints, bools; shapes up to 4 axes with sizes
//! such as 1, 2, 3, 7, 336, 1024) run on every device, each with the heuristic's opts, with no
//! opts, with random legal opt lists and with BEAM-style candidates, and are compared with the
//! interpreter and with an f64 reference written for the fuzzer (`reference.rs`).
//!
//! ```text
//! cargo run --release --example fuzz -- --graphs 2000 [--seed 7] [--dev CPU] [--modes default,noopt,random,beam] [--sanitize]
//! ```
//!
//! `--vmap` maps each graph with `ferrograd::func::vmap` over a batch and compares every element
//! with the reference (`vmap.rs`); `--grad` checks the VJP and JVP of each graph's smooth part in
//! float64 against central differences (`grad.rs`); `--multi` runs each graph with its inputs
//! spread over two or three devices and compares the gathered outputs (`multi.rs`).
//!
//! `--sanitize` compiles CPU kernels with UBSan and ASan (see `sanitize.rs`): any report ends the
//! run with a non-zero status.
//!
//! Prints one line per failing graph and device (the seed that replays it, the modes that fail,
//! the first wrong element and the graph minimized), then exactly
//! `fuzz: N graphs, M mismatches, K compile failures`; exits with 1 when M + K > 0. Graph `i`
//! of a run with `--seed S` is graph 0 of `--seed S+i`, so `--graphs 1 --seed S+i` replays it.

mod grad;
mod graph;
mod minimize;
mod multi;
mod reference;
mod run;
mod sanitize;
mod vmap;

use graph::{generate, Graph};
use reference::{evaluate, Arr};
use run::{compile_jobs, prepare_job, run_job, Failure, Got, Job, Mode};
use std::time::Instant;

struct Args {
    graphs: u64,
    seed: u64,
    devices: Vec<String>,
    modes: Vec<String>,
    batch: usize,
    /// Check `vmap` of each graph instead of the opts modes.
    vmap: bool,
    /// Check `vjp`/`jvp` of each graph's smooth part against central differences instead.
    grad: bool,
    /// Run each graph spread over several devices instead.
    multi: bool,
}

fn parse_args() -> Args {
    let mut a = Args {
        graphs: 100,
        seed: 1,
        devices: Vec::new(),
        modes: Vec::new(),
        batch: 24,
        vmap: false,
        grad: false,
        multi: false,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    let value = |i: usize| argv.get(i + 1).cloned().unwrap_or_else(|| panic!("fuzz: {} needs a value", argv[i]));
    while i < argv.len() {
        let num = |s: String| -> u64 {
            let s = s.trim();
            match s.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16),
                None => s.parse(),
            }
            .unwrap_or_else(|_| panic!("fuzz: `{s}` is not a number"))
        };
        match argv[i].as_str() {
            "--graphs" => a.graphs = num(value(i)),
            "--seed" => a.seed = num(value(i)),
            "--dev" => a.devices.extend(value(i).split(',').map(|d| d.trim().to_uppercase())),
            "--modes" => a.modes.extend(value(i).split(',').map(|m| m.trim().to_lowercase())),
            "--batch" => a.batch = num(value(i)) as usize,
            // Handled in `main` before anything else (see `sanitize.rs`).
            "--vmap" => {
                a.vmap = true;
                i += 1;
                continue;
            }
            "--grad" => {
                a.grad = true;
                i += 1;
                continue;
            }
            "--multi" => {
                a.multi = true;
                i += 1;
                continue;
            }
            "--sanitize" => {
                i += 1;
                continue;
            }
            other => panic!(
                "fuzz: unknown argument `{other}` (--graphs N --seed S --dev CPU,CL --modes default,noopt,random,beam --sanitize --vmap --grad --multi)"
            ),
        }
        i += 2;
    }
    if a.devices.is_empty() {
        a.devices.push("CPU".into());
        if ferrograd::runtime::get_device("CL").is_ok() {
            a.devices.push("CL".into());
        }
    }
    if a.modes.is_empty() {
        a.modes = ["default", "noopt", "random", "beam"].iter().map(|s| s.to_string()).collect();
    }
    a
}

fn modes_for(names: &[String], seed: u64) -> Vec<Mode> {
    names
        .iter()
        .map(|m| match m.as_str() {
            "default" => Mode::Default,
            "noopt" => Mode::NoOpt,
            "random" => Mode::Random(seed ^ 0x5eed),
            "beam" => Mode::Beam(seed ^ 0xbea),
            other => panic!("fuzz: unknown mode `{other}` (default, noopt, random, beam)"),
        })
        .collect()
}

/// The first element where `got` is not what the reference allows, described; `None` when all
/// agree. Unsure elements (a comparison or rounding within the error bound of its edge) are
/// not compared.
pub fn first_mismatch(want: &[&Arr], got: &[Vec<Got>]) -> Option<String> {
    for (o, (w, g)) in want.iter().zip(got).enumerate() {
        if w.data.len() != g.len() {
            return Some(format!("output {o} has {} elements, want {}", g.len(), w.data.len()));
        }
        for (k, (e, x)) in w.data.iter().zip(g).enumerate() {
            if e.unsure {
                continue;
            }
            let ok = if w.dt.is_float() {
                if e.v.is_nan() {
                    x.v.is_nan()
                } else if e.v.is_infinite() {
                    x.v == e.v
                } else {
                    (x.v - e.v).abs() <= e.e
                }
            } else {
                x.i == e.i
            };
            if !ok {
                let (have, want) = if w.dt.is_float() {
                    (format!("{:?}", x.v), format!("{:?} (±{:.3e})", e.v, e.e))
                } else {
                    (x.i.to_string(), e.i.to_string())
                };
                return Some(format!("output {o} [{:?} {:?}] element {k}: got {have}, want {want}", w.shape, w.dt));
            }
        }
    }
    None
}

/// What a graph did on one device in one mode.
enum Verdict {
    Ok,
    Mismatch(String),
    CompileFailure(String),
}

fn judge(want: &[&Arr], result: Result<Vec<Vec<Got>>, Failure>) -> Verdict {
    match result {
        Ok(got) => match first_mismatch(want, &got) {
            None => Verdict::Ok,
            Some(m) => Verdict::Mismatch(m),
        },
        Err(Failure::Compile(m)) => Verdict::CompileFailure(m),
        Err(Failure::Run(m)) => Verdict::Mismatch(format!("failed: {m}")),
    }
}

/// The opts of each kernel of a job: `k0 [T0:2 U1:16] k1 []`.
fn opts_text(opts: &[String]) -> String {
    let parts: Vec<String> = opts.iter().enumerate().map(|(k, o)| format!("k{k} [{o}]")).collect();
    parts.join(" ")
}

/// One line of text (first line of a long message).
fn one_line(s: &str) -> String {
    let first = s.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
    let error = s.lines().find(|l| l.contains("error:") || l.contains("panicked")).map(str::trim);
    let joined = match error {
        Some(e) if e != first => format!("{first} {e}"),
        _ => first.to_string(),
    };
    let line = joined.as_str();
    if line.len() > 240 {
        format!("{}…", &line[..240])
    } else {
        line.to_string()
    }
}

fn main() {
    if std::env::args().any(|a| a == "--sanitize") {
        sanitize::restart_sanitized();
    }
    let args = parse_args();
    if args.vmap || args.grad || args.multi {
        fuzz_transforms(&args);
    }
    // Kernels go to a cache of the fuzzer's own (unless the user chose one), wiped as it goes.
    let own_cache = std::env::var_os("FERROGRAD_CACHE").is_none();
    let cache = std::env::temp_dir().join(format!("ferrograd-fuzz-{}", std::process::id()));
    if own_cache {
        std::env::set_var("FERROGRAD_CACHE", &cache);
    }
    // Panics inside ferrograd are caught and reported as failures, not printed twice.
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let (mut mismatches, mut compile_failures) = (0usize, 0usize);
    let mut done = 0u64;
    while done < args.graphs {
        let count = (args.graphs - done).min(args.batch as u64);
        let seeds: Vec<u64> = (done..done + count).map(|i| args.seed.wrapping_add(i)).collect();
        if std::env::var_os("FUZZ_PRINT").is_some() {
            for &s in &seeds {
                eprintln!("fuzz: --seed {s:#x}:\n{}", generate(s).to_rust());
            }
        }
        if sanitize::is_sanitized_child() {
            // A sanitizer report aborts the process: this line says which graphs to replay.
            eprintln!("fuzz: batch --seed {:#x} --graphs {count}", seeds[0]);
        }
        for (seed, verdicts) in run_batch(&seeds, &args) {
            for (dev, fails) in verdicts {
                let (text, compile) = describe(&fails);
                let graph = generate(seed);
                let small = minimize::minimize(&graph, &dev, fails[0].0);
                let kind = if compile { "compile failure" } else { "mismatch" };
                println!(
                    "{kind}: --seed {seed:#x} --dev {dev}: {text} | minimized: {}",
                    small.to_rust().lines().collect::<Vec<_>>().join(" ")
                );
                if compile {
                    compile_failures += 1;
                } else {
                    mismatches += 1;
                }
            }
        }
        let before = done;
        done += count;
        if done / 1000 != before / 1000 {
            eprintln!(
                "fuzz: progress {done}/{} graphs, {mismatches} mismatches, {compile_failures} compile failures, {:.0} s",
                args.graphs,
                start.elapsed().as_secs_f64()
            );
        }
        if own_cache && done.is_multiple_of(240) {
            let _ = std::fs::remove_dir_all(cache.join("cpu"));
        }
    }
    if own_cache {
        let _ = std::fs::remove_dir_all(&cache);
    }
    let secs = start.elapsed().as_secs_f64();
    eprintln!(
        "fuzz: {:.1} s, {:.1} graphs/s on {} in modes {}",
        secs,
        args.graphs as f64 / secs,
        args.devices.join(","),
        args.modes.join(",")
    );
    if std::env::var_os("FUZZ_STATS").is_some() {
        eprintln!("fuzz: random opts drawn by kind: {:?}", run::PICKED.lock().unwrap_or_else(|e| e.into_inner()));
        eprintln!("fuzz: ops in the graphs: {}", op_counts(args.seed, args.graphs));
    }
    println!("fuzz: {} graphs, {mismatches} mismatches, {compile_failures} compile failures", args.graphs);
    std::process::exit(if mismatches + compile_failures > 0 { 1 } else { 0 });
}

/// `--vmap`: maps every graph with `vmap` on every device and compares each batch element with
/// the reference; ends with `fuzz vmap: N graphs, M mismatches, U unsupported`. `--grad`: checks
/// the VJP and JVP of every graph's smooth part against central differences; ends with
/// `fuzz grad: N graphs, M mismatches, S skipped` (graphs with no smooth part). `--multi`: runs
/// every graph spread over devices; ends with `fuzz multi: N graphs, M mismatches, U unsupported`.
fn fuzz_transforms(args: &Args) -> ! {
    std::panic::set_hook(Box::new(|_| {}));
    let start = Instant::now();
    let (mut mismatches, mut others) = (0usize, 0usize);
    let (flag, other) = match (args.vmap, args.multi) {
        (true, _) => ("vmap", "unsupported"),
        (_, true) => ("multi", "unsupported"),
        _ => ("grad", "skipped"),
    };
    for i in 0..args.graphs {
        let seed = args.seed.wrapping_add(i);
        let g = generate(seed);
        for dev in &args.devices {
            let (mismatch, note) = if args.multi {
                match multi::check(&g, seed, dev) {
                    multi::MultiVerdict::Ok => (None, None),
                    multi::MultiVerdict::Unsupported(m) => (None, Some(m)),
                    multi::MultiVerdict::Mismatch(m) => (Some(m), None),
                }
            } else if args.vmap {
                match vmap::check(&g, seed, dev) {
                    vmap::VmapVerdict::Ok => (None, None),
                    vmap::VmapVerdict::Unsupported(m) => (None, Some(m)),
                    vmap::VmapVerdict::Mismatch(m) => (Some(m), None),
                }
            } else {
                match grad::check(&g, seed, dev) {
                    grad::GradVerdict::Ok => (None, None),
                    grad::GradVerdict::Skipped => (None, Some(String::new())),
                    grad::GradVerdict::Mismatch(m) => (Some(m), None),
                }
            };
            if let Some(m) = note {
                others += 1;
                if std::env::var_os("FUZZ_STATS").is_some() && !m.is_empty() {
                    eprintln!("{other}: --{flag} --seed {seed:#x} --dev {dev}: {}", one_line(&m));
                }
            }
            if let Some(m) = mismatch {
                mismatches += 1;
                println!(
                    "mismatch: --{flag} --seed {seed:#x} --dev {dev}: {} | graph: {}",
                    one_line(&m),
                    g.to_rust().lines().collect::<Vec<_>>().join(" ")
                );
            }
        }
    }
    eprintln!(
        "fuzz: {:.1} s for {} graphs under {flag} on {}",
        start.elapsed().as_secs_f64(),
        args.graphs,
        args.devices.join(",")
    );
    println!("fuzz {flag}: {} graphs, {mismatches} mismatches, {others} {other}", args.graphs);
    std::process::exit(if mismatches > 0 { 1 } else { 0 });
}

type Fails = Vec<(Mode, Verdict)>;

/// The failing modes of one graph on one device, as one line of text; and whether they are all
/// compile failures.
fn describe(fails: &Fails) -> (String, bool) {
    let compile = fails.iter().all(|(_, v)| matches!(v, Verdict::CompileFailure(_)));
    let parts: Vec<String> = fails
        .iter()
        .map(|(m, v)| match v {
            Verdict::Mismatch(t) | Verdict::CompileFailure(t) => format!("[{m}] {}", one_line(t)),
            Verdict::Ok => String::new(),
        })
        .collect();
    (parts.join("; "), compile)
}

/// Runs a batch of graphs: per graph, per device, the failing modes. INTERP runs each graph
/// with the heuristic's opts and is checked against the reference like every other device.
fn run_batch(seeds: &[u64], args: &Args) -> Vec<(u64, Vec<(String, Fails)>)> {
    let graphs: Vec<Graph> = seeds.iter().map(|&s| generate(s)).collect();
    let refs: Vec<Option<Vec<Arr>>> = graphs.iter().map(|g| std::panic::catch_unwind(|| evaluate(g)).ok()).collect();
    let mut devices = vec!["INTERP".to_string()];
    devices.extend(args.devices.iter().filter(|d| *d != "INTERP").cloned());
    // jobs[d][g] = per mode, the job or why it could not be prepared.
    let mut results: Vec<(u64, Vec<(String, Fails)>)> = seeds.iter().map(|&s| (s, Vec::new())).collect();
    for dev in &devices {
        let modes_of = |seed: u64| if dev == "INTERP" { vec![Mode::Default] } else { modes_for(&args.modes, seed) };
        let mut jobs: Vec<Vec<(Mode, Result<Job, Failure>)>> = Vec::new();
        for (g, &seed) in graphs.iter().zip(seeds) {
            jobs.push(modes_of(seed).into_iter().map(|m| (m, prepare_job(g, dev, m))).collect());
            if std::env::var_os("FUZZ_PRINT").is_some() {
                for (m, j) in jobs.last().into_iter().flatten() {
                    if let Ok(j) = j {
                        eprintln!("fuzz: --seed {seed:#x} --dev {dev} [{m}] opts {}", opts_text(&j.opts));
                    }
                }
            }
        }
        let ready: Vec<&Job> = jobs.iter().flatten().filter_map(|(_, j)| j.as_ref().ok()).collect();
        let mut compiled = compile_jobs(&ready).into_iter();
        for (gi, per_mode) in jobs.into_iter().enumerate() {
            let Some(want) = &refs[gi] else {
                eprintln!("fuzz: the reference failed on --seed {:#x} (a fuzzer bug)", seeds[gi]);
                continue;
            };
            let outs: Vec<&Arr> = graphs[gi].outputs.iter().map(|&o| &want[o]).collect();
            let mut fails: Fails = Vec::new();
            for (mode, job) in per_mode {
                let opts = job.as_ref().map(|j| opts_text(&j.opts)).unwrap_or_default();
                let result = job.and_then(|j| {
                    let progs = compiled.next().expect("a compile result per job")?;
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_job(&j, &progs)));
                    r.unwrap_or_else(|p| Err(Failure::Run(format!("panicked: {}", run::panic_text(p)))))
                });
                match judge(&outs, result) {
                    Verdict::Ok => {}
                    Verdict::Mismatch(t) => {
                        fails.push((mode, Verdict::Mismatch(format!("{} (opts {opts})", one_line(&t)))))
                    }
                    Verdict::CompileFailure(t) => {
                        fails.push((mode, Verdict::CompileFailure(format!("{} (opts {opts})", one_line(&t)))))
                    }
                }
            }
            if !fails.is_empty() {
                results[gi].1.push((dev.clone(), fails));
            }
        }
    }
    results
}

/// Whether `g` still fails on `dev` in `mode` the way a mismatch does (for the minimizer).
pub fn still_fails(g: &Graph, dev: &str, mode: Mode) -> bool {
    let Ok(want) = std::panic::catch_unwind(|| evaluate(g)) else { return false };
    let outs: Vec<&Arr> = g.outputs.iter().map(|&o| &want[o]).collect();
    let result = std::panic::catch_unwind(|| run::run_one(g, dev, mode))
        .unwrap_or_else(|p| Err(Failure::Run(run::panic_text(p))));
    !matches!(judge(&outs, result), Verdict::Ok)
}

/// How often each kind of op occurs in the run's graphs (`Unary(Exp)`, `Func(Asin)`, `Sort`…).
fn op_counts(seed: u64, graphs: u64) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for i in 0..graphs {
        for n in generate(seed.wrapping_add(i)).nodes {
            let name = format!("{:?}", n.op);
            let kind = match n.op {
                graph::Op::Unary(_) | graph::Op::Func(_) | graph::Op::Func2(_) | graph::Op::Binary(_) => name,
                _ => name.split([' ', '(', '{']).next().unwrap_or("").to_string(),
            };
            *counts.entry(kind).or_default() += 1;
        }
    }
    counts.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
}
