//! The C compiler behind the CPU device: which one, with which flags, and who it is.
//!
//! `CC` chooses the compiler; otherwise clang when it is installed (it compiles our kernels in
//! about half gcc's time), else `cc`. The flags never let the compiler change results or
//! restructure loops on its own:
//! - no FMA contraction (`-ffp-contract=off`; explicit `fmaf` is how kernels fuse), signed
//!   overflow wraps (`-fwrapv`, like the interpreter), no `errno` from math functions;
//! - no loop vectorizer: ferrograd unrolls and vectorizes kernels itself (UPCAST, explicit
//!   vector types), and gcc 12.2's loop vectorizer has miscompiled correct kernels at `-O3`
//!   (gated loads of row pads, cumsum sums, flipped sums gave wrong values). The
//!   straight-line (SLP) vectorizer stays: it packs unrolled scalar lanes.
//!
//! A compiler's identity (its path, version line, flags and the host CPU) names its kernels in
//! the disk cache and its self-test result (see `tensor::selftest`).

use crate::error::{Error, Result};
use crate::helpers::stable_hash_hex;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The compiler family, which decides the spelling of a few flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcFamily {
    Gcc,
    Clang,
    /// Neither answered `--version` as gcc or clang would: only portable flags.
    Other,
}

/// A C compiler and its flags.
#[derive(Clone, Debug)]
pub struct CCompiler {
    pub cc: String,
    pub family: CcFamily,
    pub flags: Vec<String>,
    /// `cc --version`'s first line (empty when it could not be run).
    pub version: String,
}

/// Whether `prog` runs (`prog --version` exits successfully).
fn runs(prog: &str) -> bool {
    Command::new(prog).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

impl CCompiler {
    /// `CC` from the environment; else clang when installed; else `cc`.
    pub fn from_env() -> CCompiler {
        if let Some(cc) = crate::flags::text("CC") {
            return CCompiler::new(cc.trim());
        }
        static DEFAULT: OnceLock<String> = OnceLock::new();
        let cc = DEFAULT.get_or_init(|| if runs("clang") { "clang".into() } else { "cc".into() });
        CCompiler::new(cc)
    }

    pub fn new(cc: &str) -> CCompiler {
        let version = Command::new(cc)
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string())
            .unwrap_or_default();
        let lower = version.to_lowercase();
        let family = if lower.contains("clang") {
            CcFamily::Clang
        } else if lower.contains("gcc") || lower.contains("free software foundation") {
            CcFamily::Gcc
        } else {
            CcFamily::Other
        };
        let mut flags: Vec<&str> = vec![
            "-O2",
            "-march=native",
            "-fPIC",
            "-shared",
            // Results must not depend on the compiler's choices: no FMA contraction, and
            // signed overflow wraps like the interpreter's integer arithmetic.
            "-ffp-contract=off",
            "-fwrapv",
            "-fno-math-errno",
            "-w",
        ];
        // Kernels use vector types as wide as the host's registers; without this, clang (and
        // gcc for some -march) lowers 512-bit vectors as pairs of 256-bit ones.
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512f") && family != CcFamily::Other {
            flags.push("-mprefer-vector-width=512");
        }
        // No loop vectorizer (see the module comment).
        match family {
            CcFamily::Gcc => flags.push("-fno-tree-loop-vectorize"),
            CcFamily::Clang => flags.push("-fno-vectorize"),
            CcFamily::Other => {}
        }
        CCompiler { cc: cc.to_string(), family, flags: flags.iter().map(|s| s.to_string()).collect(), version }
    }

    /// What the compiled code depends on: the compiler, its version and flags, and the host CPU
    /// (`-march=native` code may not run on another processor sharing the cache folder).
    pub fn identity(&self) -> String {
        format!("{} ({}) {} on {}", self.cc, self.version, self.flags.join(" "), host_cpu())
    }

    /// A short stable hash of [`identity`](Self::identity), for file names.
    pub fn identity_hash(&self) -> String {
        stable_hash_hex(&[self.identity().as_bytes()])[..16].to_string()
    }

    /// Compiles C source (from stdin) into the shared object `out`.
    pub fn compile_to(&self, src: &str, out: &Path, kernels: &str) -> Result<()> {
        let fail = |message: String| Error::Compile { device: "CPU".into(), kernel: kernels.to_string(), message };
        let mut child = Command::new(&self.cc)
            .args(&self.flags)
            .args(["-x", "c", "-", "-o"])
            .arg(out)
            .arg("-lm")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| {
                fail(format!(
                    "could not run the C compiler `{}`: {e}. Install clang or gcc (apt-get install clang), \
                     or set CC to the path of a C compiler",
                    self.cc
                ))
            })?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(src.as_bytes()).map_err(|e| fail(format!("writing to `{}` failed: {e}", self.cc)))?;
        }
        let output = child.wait_with_output().map_err(|e| fail(format!("`{}` did not finish: {e}", self.cc)))?;
        if !output.status.success() {
            let log = String::from_utf8_lossy(&output.stderr);
            let mut message = format!(
                "the C compiler `{}` ({}) failed ({}):\n{}\n",
                self.cc,
                self.version,
                output.status,
                log.trim()
            );
            // Source errors are ferrograd's: the compiler passed its self-test, so the C it was
            // given is at fault. A compiler that crashed or could not write is the system's.
            if log.contains("No such file or directory") && log.contains(".h") {
                message.push_str(
                    "The C library headers are missing: install them (apt-get install libc6-dev), or set CC to \
                     a compiler that has them.",
                );
            } else if log.contains("error:") {
                message.push_str(
                    "The generated C is invalid: this is a bug in ferrograd's code generator. Please report it \
                     with the DEBUG=4 output of the failing program.",
                );
            } else {
                message.push_str("Check the compiler installation, or set CC to another C compiler (clang or gcc).");
            }
            if crate::helpers::debug_level() >= 1 {
                message.push_str("\nsource:\n");
                message.push_str(src);
            }
            return Err(fail(message));
        }
        Ok(())
    }
}

/// The host processor: model name and feature flags (as `/proc/cpuinfo` lists them), hashed.
fn host_cpu() -> &'static str {
    static CPU: OnceLock<String> = OnceLock::new();
    CPU.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let field = |name: &str| {
            info.lines()
                .find(|l| l.starts_with(name))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
                .unwrap_or_default()
        };
        let model = field("model name");
        let flags = field("flags");
        format!("{model} [{}]", &stable_hash_hex(&[flags.as_bytes(), std::env::consts::ARCH.as_bytes()])[..12])
    })
}
