//! The C compiler behind the CPU device: which one, with which flags, and who it is.
//!
//! `CC` chooses the compiler and is read as a shell reads it (`CC="ccache gcc"`,
//! `CC="gcc -std=c11"`); otherwise clang when it is installed (it compiles our kernels in about
//! half gcc's time), else `cc`. The family (gcc, clang, other) is what the compiler says it is
//! in its predefined macros (`__clang__`, `__GNUC__`), not what it is called: Debian's `cc` is
//! gcc, `clang-14` and `ccache clang` are clang.
//!
//! The flags never let the compiler change results or restructure loops on its own:
//! - no FMA contraction (`-ffp-contract=off`; explicit `fmaf` is how kernels fuse), signed
//!   overflow wraps (`-fwrapv`, like the interpreter), no `errno` from math functions;
//! - no loop vectorizer: ferrograd unrolls and vectorizes kernels itself (UPCAST, explicit
//!   vector types), and gcc 12.2's loop vectorizer has miscompiled correct kernels (gated loads
//!   of row pads, cumsum sums, flipped sums gave wrong values). The straight-line (SLP)
//!   vectorizer stays: it packs unrolled scalar lanes.
//!
//! Those are rung 0 of a short ladder ([`RUNGS`]): a compiler that fails the self-test
//! (`tensor::selftest`) is tried again without the SLP vectorizer, then at `-O1`, before it is
//! refused. A compiler's identity (its command, version, flags and the host CPU) names its
//! kernels in the disk cache and its self-test result.

use super::disk_cache::is_complete_elf_shared_object;
use crate::error::{Error, Result};
use crate::helpers::stable_hash_hex;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The compiler family, which decides the spelling of a few flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcFamily {
    Gcc,
    Clang,
    /// Defines neither `__clang__` nor `__GNUC__` (or could not be asked): only portable flags.
    Other,
}

/// One rung of the fallback ladder: what it changes.
pub struct Rung {
    /// The optimization level.
    pub opt_level: &'static str,
    /// Whether the SLP (straight-line) vectorizer is off too.
    pub no_slp: bool,
}

/// The flag sets a compiler is tried with, safest last. Rung 0 is the default.
pub const RUNGS: &[Rung] = &[
    // The default: no loop vectorizer.
    Rung { opt_level: "-O2", no_slp: false },
    // No loop or SLP vectorizer.
    Rung { opt_level: "-O2", no_slp: true },
    // -O1 without vectorizers.
    Rung { opt_level: "-O1", no_slp: true },
];

/// A C compiler and its flags.
#[derive(Clone, Debug)]
pub struct CCompiler {
    /// The command as the user wrote it (`CC`), for messages.
    pub cc: String,
    /// The command split into words: the program, then its own arguments.
    words: std::result::Result<Vec<String>, String>,
    pub family: CcFamily,
    /// The family's version from its macros (`12.2.0`), empty when unknown.
    pub family_version: String,
    pub flags: Vec<String>,
    /// `cc --version`'s first line (empty when it could not be run).
    pub version: String,
}

/// A command running the compiler `words`. Under `SANITIZE`, the sanitizer runtime preloaded
/// into this process is not preloaded into the compiler.
fn compiler_command(words: &[String]) -> Command {
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    if crate::flags::int("SANITIZE") != 0 {
        cmd.env_remove("LD_PRELOAD");
    }
    cmd
}

/// Whether `prog` runs (`prog --version` exits successfully).
fn runs(prog: &str) -> bool {
    Command::new(prog).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
}

/// The macros a compiler predefines (`-dM -E` on an empty C input), by name.
fn predefined_macros(words: &[String]) -> HashMap<String, String> {
    let out =
        compiler_command(words).args(["-dM", "-E", "-x", "c", "-"]).stdin(Stdio::null()).stderr(Stdio::null()).output();
    let Ok(out) = out.map(|o| if o.status.success() { o.stdout } else { Vec::new() }) else { return HashMap::new() };
    String::from_utf8_lossy(&out)
        .lines()
        .filter_map(|l| l.strip_prefix("#define "))
        .map(|l| l.split_once(' ').map_or((l.to_string(), String::new()), |(k, v)| (k.to_string(), v.to_string())))
        .collect()
}

/// The family and its version, from the predefined macros.
fn family_of(macros: &HashMap<String, String>) -> (CcFamily, String) {
    let version = |names: [&str; 3]| names.map(|n| macros.get(n).map_or("?", |v| v.as_str())).join(".");
    if macros.contains_key("__clang__") {
        (CcFamily::Clang, version(["__clang_major__", "__clang_minor__", "__clang_patchlevel__"]))
    } else if macros.contains_key("__GNUC__") {
        (CcFamily::Gcc, version(["__GNUC__", "__GNUC_MINOR__", "__GNUC_PATCHLEVEL__"]))
    } else {
        (CcFamily::Other, String::new())
    }
}

/// The flags of `rung` for `family` (`sanitize`: UBSan and ASan, for the fuzzer).
fn flags_for(family: CcFamily, rung: &Rung, sanitize: bool) -> Vec<String> {
    let mut flags: Vec<&str> = vec![
        rung.opt_level,
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
    // No loop vectorizer (see the module comment); lower rungs drop the SLP vectorizer too.
    match family {
        CcFamily::Gcc => {
            flags.extend(["-fno-tree-loop-vectorize"].iter().chain(rung.no_slp.then_some(&"-fno-tree-slp-vectorize")))
        }
        CcFamily::Clang => flags.extend(["-fno-vectorize"].iter().chain(rung.no_slp.then_some(&"-fno-slp-vectorize"))),
        CcFamily::Other => {}
    }
    if sanitize && family != CcFamily::Other {
        // Any undefined behaviour or bad memory access aborts the process with a report. The
        // process must have the sanitizer runtime loaded first (the fuzzer's `--sanitize`
        // restarts itself with it preloaded).
        flags.extend(["-fsanitize=undefined,address", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]);
        if family == CcFamily::Clang {
            flags.push("-shared-libsan");
        }
    }
    flags.iter().map(|s| s.to_string()).collect()
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

    /// The compiler `cc` (a command line, split as a shell splits it) at rung 0.
    pub fn new(cc: &str) -> CCompiler {
        let words = match shell_words::split(cc) {
            Ok(w) if !w.is_empty() => Ok(w),
            Ok(_) => Err("it is empty".to_string()),
            Err(e) => Err(format!("it is not a valid command line ({e})")),
        };
        let (family, family_version, version) = match &words {
            Ok(w) => {
                let (family, family_version) = family_of(&predefined_macros(w));
                let version = compiler_command(w)
                    .arg("--version")
                    .stdin(Stdio::null())
                    .stderr(Stdio::null())
                    .output()
                    .ok()
                    .filter(|o| o.status.success())
                    .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").trim().to_string())
                    .unwrap_or_default();
                (family, family_version, version)
            }
            Err(_) => (CcFamily::Other, String::new(), String::new()),
        };
        let sanitize = crate::flags::int("SANITIZE") != 0;
        let flags = flags_for(family, &RUNGS[0], sanitize);
        CCompiler { cc: cc.to_string(), words, family, family_version, flags, version }
    }

    /// The same compiler with the flags of `rung` (an index into [`RUNGS`]).
    pub fn with_rung(&self, rung: usize) -> CCompiler {
        let sanitize = crate::flags::int("SANITIZE") != 0;
        CCompiler { flags: flags_for(self.family, &RUNGS[rung], sanitize), ..self.clone() }
    }

    /// The ASan runtime library of this compiler (gcc's `libasan.so`, clang's
    /// `libclang_rt.asan-<arch>.so`), which a process must preload to load kernels built with
    /// `SANITIZE=1`; or why there is none.
    pub fn asan_runtime(&self) -> std::result::Result<std::path::PathBuf, String> {
        let lib = match self.family {
            CcFamily::Gcc => "libasan.so".to_string(),
            CcFamily::Clang => format!("libclang_rt.asan-{}.so", std::env::consts::ARCH),
            CcFamily::Other => {
                return Err(format!("`{}` is neither gcc nor clang: it has no sanitizers we know", self.cc))
            }
        };
        let words = self.words.as_ref().map_err(|why| format!("CC=`{}`: {why}", self.cc))?;
        let out = compiler_command(words)
            .arg(format!("-print-file-name={lib}"))
            .output()
            .map_err(|e| format!("could not run `{}`: {e}", self.cc))?;
        let path = std::path::PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if path.is_absolute() && path.exists() {
            Ok(path)
        } else {
            Err(format!("`{}` does not know where its {lib} is (install its sanitizer runtime, e.g. libasan8 or libclang-rt-dev)", self.cc))
        }
    }

    /// What the compiled code depends on: the compiler, its version and flags, and the host CPU
    /// (`-march=native` code may not run on another processor sharing the cache folder).
    pub fn identity(&self) -> String {
        let family = match self.family {
            CcFamily::Gcc => format!("gcc {}", self.family_version),
            CcFamily::Clang => format!("clang {}", self.family_version),
            CcFamily::Other => "not gcc or clang".to_string(),
        };
        format!("{} ({}; {family}) {} on {}", self.cc, self.version, self.flags.join(" "), host_cpu())
    }

    /// A short stable hash of [`identity`](Self::identity), for file names.
    pub fn identity_hash(&self) -> String {
        stable_hash_hex(&[self.identity().as_bytes()])[..16].to_string()
    }

    /// Compiles C source (from stdin) into the shared object `out`.
    pub fn compile_to(&self, src: &str, out: &Path, kernels: &str) -> Result<()> {
        let fail = |message: String| Error::Compile { device: "CPU".into(), kernel: kernels.to_string(), message };
        let words = self.words.as_ref().map_err(|why| {
            fail(format!(
                "CC=`{}` cannot be used: {why}. Set CC to a C compiler command such as `gcc` or `ccache clang`",
                self.cc
            ))
        })?;
        let mut child = compiler_command(words)
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
            // A compiler that stops reading early is judged by its exit status and output below.
            match stdin.write_all(src.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(fail(format!("writing to `{}` failed: {e}", self.cc)));
                }
                _ => {}
            }
        }
        let output = child.wait_with_output().map_err(|e| fail(format!("`{}` did not finish: {e}", self.cc)))?;
        let log = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() {
            return Err(fail(self.failure_message(&output.status, &log, src, out)));
        }
        let written = std::fs::read(out).unwrap_or_default();
        if !is_complete_elf_shared_object(&written) {
            return Err(fail(format!(
                "the C compiler `{}` ({}) exited successfully but {} {out:?}; it does not behave as a C \
                 compiler (a wrapper that drops `-o` or `-shared`?). Set CC to clang or gcc.{}",
                self.cc,
                self.version,
                if written.is_empty() {
                    "wrote no shared library at"
                } else {
                    "wrote something that is not a shared library at"
                },
                if log.trim().is_empty() { String::new() } else { format!("\nIt printed:\n{}", log.trim()) }
            )));
        }
        Ok(())
    }

    /// Why a compiler run failed, with what to do about it.
    fn failure_message(&self, status: &std::process::ExitStatus, log: &str, src: &str, out: &Path) -> String {
        let mut message =
            format!("the C compiler `{}` ({}) failed ({status}):\n{}\n", self.cc, self.version, log.trim());
        // Source errors are ferrograd's: the compiler passed its self-test, so the C it was
        // given is at fault. A compiler that crashed or could not write is the system's.
        if log.contains("No space left on device") || log.contains("Disk quota exceeded") {
            let folder = out.parent().unwrap_or(Path::new("."));
            message.push_str(&format!(
                "The disk is full: the compiler could not write its output. Free space on the disk that holds \
                 the kernel cache folder {folder:?} and the temporary folder {:?}, or set FERROGRAD_CACHE (and \
                 TMPDIR) to a folder on another disk.",
                std::env::temp_dir()
            ));
        } else if log.contains("No such file or directory") && log.contains(".h") {
            message.push_str(
                "The C library headers are missing: install them (apt-get install libc6-dev), or set CC to \
                 a compiler that has them.",
            );
        } else if log.contains("error:") && !log.contains("collect2") && !log.contains("ld returned") {
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
        message
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
