//! `--sanitize`: CPU kernels compiled with UBSan and ASan (`SANITIZE=1`), so undefined
//! behaviour in the generated C or a read or write outside a buffer aborts the run with the
//! sanitizer's report instead of passing unnoticed.
//!
//! A shared object built with ASan needs the ASan runtime to be the first library of the
//! process, so the fuzzer restarts itself with the runtime of the CPU device's compiler in
//! `LD_PRELOAD` (`CCompiler::asan_runtime`).

use ferrograd::runtime::cpu::CCompiler;
use std::process::Command;

/// Set in the restarted process.
const CHILD: &str = "FERROGRAD_FUZZ_SANITIZED";

/// In the first process: restarts the fuzzer with the sanitizer runtime preloaded and exits
/// with its status. In the restarted process: returns.
pub fn restart_sanitized() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let cc = CCompiler::from_env();
    let runtime = cc.asan_runtime().unwrap_or_else(|e| {
        eprintln!("fuzz: --sanitize: {e}");
        std::process::exit(2);
    });
    eprintln!(
        "fuzz: --sanitize: CPU kernels built by `{}` with UBSan and ASan, {} preloaded",
        cc.cc,
        runtime.display()
    );
    let status = Command::new(std::env::current_exe().expect("the fuzzer's path"))
        .args(std::env::args().skip(1))
        .env(CHILD, "1")
        .env("SANITIZE", "1")
        .env("LD_PRELOAD", runtime)
        // Rust's runtime and the kernel cache keep allocations for the process's life on
        // purpose: leaks are not what this run looks for. Any other report ends the run. No
        // symbolizer: the one ASan starts outlives the aborted run and holds its output pipe
        // open (a CI step waiting on it never ends); the batch line names the graphs instead.
        .env("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1:abort_on_error=0:symbolize=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .status()
        .expect("the fuzzer restarts");
    std::process::exit(status.code().unwrap_or(1));
}

/// Whether this is the restarted, sanitized process.
pub fn is_sanitized_child() -> bool {
    std::env::var_os(CHILD).is_some()
}
