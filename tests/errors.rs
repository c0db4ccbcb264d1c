//! Environment errors are returned, not panics, and say what to do.

use ferrograd::codegen::get_program;
use ferrograd::runtime::cpu::{CCompiler, CpuDevice};
use ferrograd::runtime::Backend as _;
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;
use std::process::Command;
use std::sync::Arc;

fn some_kernel(dev: &CpuDevice, salt: f64) -> Arc<ferrograd::codegen::ProgramSpec> {
    let t = (Tensor::from_slice(&[1.0f32, 2.0, 3.0]) + salt).exp();
    let sched = create_schedule(&[t.uop()]);
    Arc::new(get_program(&sched.items[0].ast, dev.renderer(), None))
}

fn temp_cache(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("ferrograd-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn missing_compiler_is_an_error_naming_it_and_the_fix() {
    let dev = CpuDevice::with_compiler(CCompiler::new("/nonexistent/cc")).with_cache_dir(temp_cache("nocc"));
    let spec = some_kernel(&dev, 0.125);
    let err = dev.compile(&[spec]).err().expect("compiling without a compiler must fail").to_string();
    assert!(err.contains("/nonexistent/cc"), "{err}");
    assert!(err.contains("set CC"), "{err}");
}

#[test]
fn compile_errors_carry_the_compiler_log() {
    let dev = CpuDevice::with_compiler(CCompiler::new("cc")).with_cache_dir(temp_cache("bad"));
    let mut spec = (*some_kernel(&dev, 0.25)).clone();
    spec.src.push_str("\nthis is not C;\n");
    let err = dev.compile(&[Arc::new(spec)]).err().expect("bad source must fail").to_string();
    assert!(err.contains("failed"), "{err}");
    assert!(err.contains("error"), "compiler log missing: {err}");
    // Invalid C from the code generator is ferrograd's bug, not the compiler's.
    assert!(err.contains("bug in ferrograd"), "{err}");
}

#[test]
fn compiled_kernels_are_cached_on_disk() {
    use std::os::unix::fs::PermissionsExt;
    let dir = temp_cache("disk");
    std::fs::create_dir_all(&dir).unwrap();
    // A compiler wrapper that counts its compiles (not the `--version` and macro probes).
    let log = dir.join("runs.log");
    let cc = dir.join("countingcc");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *-dM*|--version) ;; *) echo run >> {};; esac\nexec cc \"$@\"\n",
        log.display()
    );
    std::fs::write(&cc, script).unwrap();
    std::fs::set_permissions(&cc, std::fs::Permissions::from_mode(0o755)).unwrap();
    let runs = || std::fs::read_to_string(&log).map(|s| s.lines().count()).unwrap_or(0);
    let cache = dir.join("cache");
    let make = || CpuDevice::with_compiler(CCompiler::new(cc.to_str().unwrap())).with_cache_dir(cache.clone());

    let dev = make();
    let spec = some_kernel(&dev, 0.375);
    dev.compile(std::slice::from_ref(&spec)).expect("compiles");
    assert_eq!(runs(), 1);
    dev.compile(std::slice::from_ref(&spec)).expect("memory cache");
    assert_eq!(runs(), 1, "second compile on the same device ran the compiler");
    // A fresh device (as in a new process) finds the kernel on disk.
    let fresh = make();
    fresh.compile(&[spec]).expect("disk cache");
    assert_eq!(runs(), 1, "a fresh device recompiled instead of loading from disk");
    let _ = std::fs::remove_dir_all(dir);
}

fn example_output(name: &str, envs: &[(&str, &str)]) -> (bool, String) {
    let exe = env!("CARGO");
    let out = Command::new(exe)
        .args(["run", "-q", "--example", name])
        .envs(envs.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr))
}

#[test]
fn unknown_device_lists_the_known_ones() {
    let (ok, out) = example_output("device", &[("DEV", "NOSUCHDEV")]);
    assert!(!ok, "{out}");
    assert!(out.contains("NOSUCHDEV") && out.contains("CPU") && out.contains("INTERP"), "{out}");
    let (ok, out) = example_output("device", &[("DEV", "INTERP")]);
    assert!(ok && out.contains("INTERP"), "{out}");
    // A device that has one instance takes no instance number.
    let (ok, out) = example_output("device", &[("DEV", "INTERP:x")]);
    assert!(!ok && out.contains("one INTERP device"), "{out}");
}

#[test]
fn device_constructor_rejects_unknown_names() {
    let err = ferrograd::Device::new("TPU9000").unwrap_err().to_string();
    assert!(err.contains("TPU9000") && err.contains("known devices"), "{err}");
}
