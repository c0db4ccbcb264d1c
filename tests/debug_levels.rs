//! What the DEBUG levels print: 3 the opts (in the syntax `OPTS=` parses), 4 the source, 6 the
//! kernel after every named codegen pass, in order. Each level runs in a child process (the
//! test binary calls itself) on the NULL device, so nothing is compiled.

use ferrograd::codegen::opts::parse_opts;
use ferrograd::codegen::passes::{LOWERING, PREPARE};
use std::process::Command;

const CASE: &str = "FERROGRAD_DEBUG_CASE";

fn child() {
    use ferrograd::tensor::with_default_device;
    use ferrograd::Tensor;
    with_default_device("NULL", || {
        let a = Tensor::full([64, 64], 2.0);
        let b = Tensor::full([64, 64], 3.0);
        let c = Tensor::full([64, 64], -1.0);
        ((&a * &b + &c).relu() * 2.0).sum().realize().unwrap();
    });
}

fn run(level: &str) -> String {
    let exe = std::env::current_exe().expect("test binary");
    let out = Command::new(exe)
        .args(["--exact", "debug_levels_print_what_they_promise", "--nocapture", "--test-threads", "1"])
        .env(CASE, "1")
        .env("DEBUG", level)
        .output()
        .expect("child runs");
    assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn debug_levels_print_what_they_promise() {
    if std::env::var_os(CASE).is_some() {
        return child();
    }
    let one = run("1");
    assert!(one.contains("scheduled ") && one.contains("new kernels ready in"), "DEBUG=1:\n{one}");
    let three = run("3");
    let opts_line = three.lines().find(|l| l.contains(": opts ")).unwrap_or_else(|| panic!("no opts line:\n{three}"));
    let text = opts_line.split(": opts ").nth(1).unwrap();
    assert!(parse_opts(text).is_ok(), "DEBUG=3 opts `{text}` do not parse as OPTS");
    assert!(!three.contains("--- after"), "DEBUG=3 shows no passes");

    let four = run("4");
    assert!(four.contains("void "), "DEBUG=4 shows the C source:\n{four}");

    let six = run("6");
    let shown: Vec<&str> = six.lines().filter_map(|l| l.strip_prefix("--- after ")?.strip_suffix(':')).collect();
    let passes: Vec<&str> = PREPARE.iter().map(|p| p.0).chain(LOWERING.iter().map(|p| p.0)).collect();
    // Every kernel build shows the passes in order (prepare may run more than once per kernel).
    let mut rest = shown.as_slice();
    for p in LOWERING.iter().map(|p| p.0) {
        let at = rest.iter().position(|s| *s == p).unwrap_or_else(|| panic!("pass {p} not shown; shown {shown:?}"));
        rest = &rest[at + 1..];
    }
    assert!(shown.iter().all(|s| passes.contains(s)), "unknown pass names in {shown:?}");
    assert!(six.contains("STORE") && six.contains("RANGE"), "the kernel IR is printed");
}
