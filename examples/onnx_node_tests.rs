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
//! `--min-passed N` the exit status is 1 when fewer than N pass.

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

fn main() {
    let mut roots = Vec::new();
    let (mut min_passed, mut filter) = (0usize, String::new());
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--min-passed" => min_passed = args.next().and_then(|v| v.parse().ok()).expect("--min-passed N"),
            "--filter" => filter = args.next().expect("--filter TEXT"),
            _ => roots.push(PathBuf::from(a)),
        }
    }
    if roots.is_empty() {
        eprintln!(
            "usage: onnx_node_tests DIR... [--min-passed N] [--filter TEXT]  (scripts/onnx_node_data.py writes DIR)"
        );
        std::process::exit(2);
    }
    // Panics inside a test are reported on its line; the default hook would print each twice.
    std::panic::set_hook(Box::new(|_| {}));
    let (mut passed, mut failed, mut unsupported) = (0, 0, 0);
    for dir in test_dirs(&roots) {
        let name = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if !name.contains(&filter) {
            continue;
        }
        let verdict = match std::panic::catch_unwind(|| run_test(&dir)) {
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
    println!("onnx node tests: {passed} passed, {failed} failed, {unsupported} unsupported");
    if passed < min_passed {
        eprintln!("fewer than the baseline's {min_passed} tests pass");
        std::process::exit(1);
    }
}
