//! ONNX's own backend tests on ferrograd: every test folder (`model.onnx` and
//! `test_data_set_N/{input,output}_K.pb`, as `scripts/onnx_node_data.py` writes ONNX's node tests
//! and as the `onnx` package ships its model tests) is loaded, run on the default device and
//! compared with the expected outputs: same count, shape, dtype, and values within the case's
//! rtol/atol (`data.json`, default 1e-3 and 1e-7, NaN equal to NaN).
//!
//! ```text
//! python3 scripts/onnx_node_data.py /tmp/onnx-tests
//! cargo run --release --features onnx --example onnx_node_tests -- /tmp/onnx-tests/node [--min-passed N] [--filter S]
//! ```
//! One line per test, then `onnx node tests: P passed, F failed, U unsupported`; with
//! `--min-passed N` the exit status is 1 when fewer than N pass; `--jobs N` runs N processes,
//! each on a share of the tests.

use ferrograd::error::Error;
use ferrograd::onnx::{load_tensor, OnnxModel};
use ferrograd::Tensor;
use std::path::{Path, PathBuf};

enum Verdict {
    Passed,
    Failed(String),
    Unsupported(String),
}

fn tolerances(dir: &Path) -> (f64, f64) {
    let text = std::fs::read_to_string(dir.join("data.json")).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    (v["rtol"].as_f64().unwrap_or(1e-3), v["atol"].as_f64().unwrap_or(1e-7))
}

fn compare(k: usize, got: &Tensor, want: &Tensor, rtol: f64, atol: f64) -> Result<(), String> {
    if got.shape() != want.shape() || got.dtype() != want.dtype() {
        return Err(format!(
            "output {k}: {:?}{:?} where {:?}{:?} was expected",
            got.dtype(),
            got.shape(),
            want.dtype(),
            want.shape()
        ));
    }
    let (g, w) = (got.to_f64_vec().map_err(|e| e.to_string())?, want.to_f64_vec().map_err(|e| e.to_string())?);
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let close = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
        if !close {
            return Err(format!("output {k}[{i}] is {a}, expected {b}"));
        }
    }
    Ok(())
}

fn run_test(dir: &Path) -> Result<Verdict, Error> {
    let (rtol, atol) = tolerances(dir);
    let model = OnnxModel::load(dir.join("model.onnx"))?;
    let mut sets: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("test_data_set_")))
        .collect();
    sets.sort();
    for set in sets {
        let count = |prefix: &str| (0..).take_while(|k| set.join(format!("{prefix}_{k}.pb")).exists()).count();
        let mut inputs = Vec::new();
        for k in 0..count("input") {
            let name = model.inputs().get(k).cloned().unwrap_or_default();
            inputs.push((name, load_tensor(set.join(format!("input_{k}.pb")))?));
        }
        let outs = model.run(inputs)?;
        for k in 0..count("output") {
            let want = load_tensor(set.join(format!("output_{k}.pb")))?;
            let got = model.outputs().get(k).and_then(|n| outs.get(n));
            let Some(got) = got else { return Ok(Verdict::Failed(format!("output {k} is missing"))) };
            if let Err(m) = compare(k, got, &want, rtol, atol) {
                return Ok(Verdict::Failed(m));
            }
        }
    }
    Ok(Verdict::Passed)
}

fn test_dirs(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for root in roots {
        if root.join("model.onnx").exists() {
            dirs.push(root.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(root)
            .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("model.onnx").exists())
            .collect();
        found.sort();
        dirs.extend(found);
    }
    dirs
}

/// Runs the tests of `dirs` whose position is `shard.0` modulo `shard.1` and prints one line
/// each; returns (passed, failed, unsupported).
fn run_shard(dirs: &[PathBuf], filter: &str, shard: (usize, usize)) -> (usize, usize, usize) {
    // Panics inside a test are reported on its line; the default hook would print each twice.
    std::panic::set_hook(Box::new(|_| {}));
    let (mut passed, mut failed, mut unsupported) = (0, 0, 0);
    for (i, dir) in dirs.iter().enumerate() {
        let name = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if !name.contains(filter) || i % shard.1 != shard.0 {
            continue;
        }
        let verdict = match std::panic::catch_unwind(|| run_test(dir)) {
            Ok(Ok(v)) => v,
            Ok(Err(Error::Unsupported(m))) => Verdict::Unsupported(m),
            Ok(Err(e)) => Verdict::Failed(e.to_string()),
            Err(p) => Verdict::Failed(format!(
                "panic: {}",
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
        };
        let one_line = |m: &str| m.lines().next().unwrap_or("").chars().take(200).collect::<String>();
        match verdict {
            Verdict::Passed => {
                passed += 1;
                println!("passed      {name}");
            }
            Verdict::Failed(m) => {
                failed += 1;
                println!("failed      {name}  ({})", one_line(&m));
            }
            Verdict::Unsupported(m) => {
                unsupported += 1;
                println!("unsupported {name}  ({})", one_line(&m));
            }
        }
    }
    (passed, failed, unsupported)
}

/// Runs `jobs` copies of this program, each on one shard, and sums their counts (kernel
/// compilation is the bottleneck, one compiler process per copy).
fn run_jobs(args: &[String], jobs: usize) -> (usize, usize, usize) {
    let exe = std::env::current_exe().expect("the path of this program");
    let children: Vec<_> = (0..jobs)
        .map(|k| {
            std::process::Command::new(&exe)
                .args(args)
                .args(["--shard", &format!("{k}/{jobs}")])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("starting a shard")
        })
        .collect();
    let mut total = (0, 0, 0);
    for child in children {
        let out = child.wait_with_output().expect("a shard's output");
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            match line.strip_prefix("onnx node tests: ") {
                Some(counts) => {
                    let n: Vec<usize> = counts.split(", ").filter_map(|c| c.split(' ').next()?.parse().ok()).collect();
                    total = (total.0 + n[0], total.1 + n[1], total.2 + n[2]);
                }
                None => println!("{line}"),
            }
        }
    }
    total
}

fn main() {
    let mut roots = Vec::new();
    let (mut min_passed, mut filter, mut jobs, mut shard) = (0usize, String::new(), 1usize, (0usize, 1usize));
    let mut passthrough = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--min-passed" => min_passed = args.next().and_then(|v| v.parse().ok()).expect("--min-passed N"),
            "--filter" => {
                filter = args.next().expect("--filter TEXT");
                passthrough.extend(["--filter".to_string(), filter.clone()]);
            }
            "--jobs" => jobs = args.next().and_then(|v| v.parse().ok()).expect("--jobs N"),
            "--shard" => {
                let v = args.next().expect("--shard K/N");
                let (k, n) =
                    v.split_once('/').and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?))).expect("--shard K/N");
                shard = (k, n);
            }
            _ => {
                passthrough.push(a.clone());
                roots.push(PathBuf::from(a));
            }
        }
    }
    if roots.is_empty() {
        eprintln!(
            "usage: onnx_node_tests DIR... [--min-passed N] [--filter TEXT] [--jobs N]  (scripts/onnx_node_data.py writes DIR)"
        );
        std::process::exit(2);
    }
    let (passed, failed, unsupported) =
        if jobs > 1 { run_jobs(&passthrough, jobs) } else { run_shard(&test_dirs(&roots), &filter, shard) };
    println!("onnx node tests: {passed} passed, {failed} failed, {unsupported} unsupported");
    if passed < min_passed {
        eprintln!("fewer than the baseline's {min_passed} tests pass");
        std::process::exit(1);
    }
}
