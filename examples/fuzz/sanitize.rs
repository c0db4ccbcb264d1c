//! `--sanitize`: CPU kernels compiled with UBSan and ASan (`SANITIZE=1`), so undefined
//! behaviour in the generated C or a read or write outside a buffer aborts the run with the
//! sanitizer's report instead of passing unnoticed.
//!
//! A shared object built with ASan needs the ASan runtime to be the first library of the
//! process, so the fuzzer restarts itself with the runtime of the CPU device's compiler in
//! `LD_PRELOAD` (gcc's `libasan.so`, clang's `libclang_rt.asan-<arch>.so`).

use ferrograd::runtime::cpu::{CCompiler, CcFamily};
use std::process::Command;

/// Set in the restarted process.
const CHILD: &str = "FERROGRAD_FUZZ_SANITIZED";

/// The ASan runtime of `cc`, as a path that exists.
fn asan_runtime(cc: &CCompiler) -> Result<String, String> {
    let lib = match cc.family {
        CcFamily::Gcc => "libasan.so".to_string(),
        CcFamily::Clang => format!("libclang_rt.asan-{}.so", std::env::consts::ARCH),
        CcFamily::Other => return Err(format!("`{}` is neither gcc nor clang: it has no sanitizers we know", cc.cc)),
    };
    let words = shell_words::split(&cc.cc).map_err(|e| format!("CC=`{}`: {e}", cc.cc))?;
    let out = Command::new(&words[0])
        .args(&words[1..])
        .arg(format!("-print-file-name={lib}"))
        .output()
        .map_err(|e| format!("could not run `{}`: {e}", cc.cc))?;
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if std::path::Path::new(&path).is_absolute() && std::path::Path::new(&path).exists() {
        Ok(path)
    } else {
        Err(format!(
            "`{}` does not know where its {lib} is (install its sanitizer runtime, e.g. libasan8 or libclang-rt-dev)",
            cc.cc
        ))
    }
}

/// In the first process: restarts the fuzzer with the sanitizer runtime preloaded and exits
/// with its status. In the restarted process: returns.
pub fn restart_sanitized() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    let cc = CCompiler::from_env();
    let runtime = asan_runtime(&cc).unwrap_or_else(|e| {
        eprintln!("fuzz: --sanitize: {e}");
        std::process::exit(2);
    });
    eprintln!("fuzz: --sanitize: CPU kernels built by `{}` with UBSan and ASan, {runtime} preloaded", cc.cc);
    let status = Command::new(std::env::current_exe().expect("the fuzzer's path"))
        .args(std::env::args().skip(1))
        .env(CHILD, "1")
        .env("SANITIZE", "1")
        .env("LD_PRELOAD", runtime)
        // Rust's runtime and the kernel cache keep allocations for the process's life on
        // purpose: leaks are not what this run looks for. Any other report ends the run.
        .env("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1:abort_on_error=0")
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        .status()
        .expect("the fuzzer restarts");
    std::process::exit(status.code().unwrap_or(1));
}
