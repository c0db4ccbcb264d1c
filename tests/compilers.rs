//! The CPU device's C compiler: its family comes from what it is (predefined macros), not what
//! it is called; `CC` is split as a shell splits it; a compiler that writes no library, or a
//! full disk, is an error that says so; a compiler that fails the self-test walks down the ladder
//! of safer flags (driven by fake compilers in child processes, each with its own cache folder).

use ferrograd::codegen::get_program;
use ferrograd::runtime::cpu::{CCompiler, CcFamily, CpuDevice, RUNGS};
use ferrograd::runtime::Backend as _;
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ferrograd-cc-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn runs(cmd: &str) -> bool {
    Command::new(cmd).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// What a command really is, decided without the library: the file it resolves to, or the
/// compiler's own `--version` text.
fn real_family(cmd: &str) -> CcFamily {
    let path = Command::new("sh").args(["-c", &format!("readlink -f \"$(command -v {cmd})\"")]).output().unwrap();
    let resolved = String::from_utf8_lossy(&path.stdout).to_lowercase();
    let version = Command::new(cmd).arg("--version").output().unwrap();
    let version = String::from_utf8_lossy(&version.stdout).to_lowercase();
    if resolved.contains("clang") || version.contains("clang") {
        CcFamily::Clang
    } else if resolved.contains("gcc") || version.contains("free software foundation") {
        CcFamily::Gcc
    } else {
        CcFamily::Other
    }
}

fn some_kernel(dev: &CpuDevice, salt: f64) -> Arc<ferrograd::codegen::ProgramSpec> {
    let t = (Tensor::from_slice(&[1.0f32, 2.0, 3.0]) + salt).exp();
    let sched = create_schedule(&[t.uop()]);
    Arc::new(get_program(&sched.items[0].ast, dev.renderer(), None))
}

fn no_vectorizer_flag(family: CcFamily) -> &'static str {
    match family {
        CcFamily::Gcc => "-fno-tree-loop-vectorize",
        CcFamily::Clang => "-fno-vectorize",
        CcFamily::Other => panic!("no flag for other compilers"),
    }
}

#[test]
fn the_family_is_what_the_compiler_is_not_its_name() {
    let dir = temp_dir("family");
    let mut names: Vec<String> = ["cc", "gcc", "clang"].iter().map(|s| s.to_string()).collect();
    // Versioned names (gcc-12, clang-14, ...) that exist here.
    for entry in std::fs::read_dir("/usr/bin").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().to_string();
        let versioned =
            |p: &str| name.strip_prefix(p).is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit()));
        if versioned("gcc-") || versioned("clang-") {
            names.push(name);
        }
    }
    let mut tested = 0;
    for name in names.iter().filter(|n| runs(n)) {
        let want = real_family(name);
        // The name itself, its full path, a wrapper named after neither, and a command line.
        let full = String::from_utf8_lossy(
            &Command::new("sh").args(["-c", &format!("command -v {name}")]).output().unwrap().stdout,
        )
        .trim()
        .to_string();
        let wrapper = script(&dir, &format!("mycompiler-{name}"), &format!("exec {name} \"$@\"\n"));
        let forms =
            [name.clone(), full, wrapper.display().to_string(), format!("env {name}"), format!("{name} -std=gnu11")];
        for form in forms.iter().chain(runs("ccache").then(|| format!("ccache {name}")).iter()) {
            let c = CCompiler::new(form);
            assert_eq!(c.family, want, "`{form}` ({name} is {want:?})");
            assert!(c.flags.iter().any(|f| f == no_vectorizer_flag(want)), "`{form}`: {:?}", c.flags);
            assert!(!c.family_version.is_empty() && !c.family_version.contains('?'), "`{form}`: {}", c.family_version);
            tested += 1;
        }
    }
    assert!(tested >= 10, "only {tested} compiler names tested");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn cc_is_split_as_a_shell_splits_it() {
    let dir = temp_dir("words");
    for cc in ["cc -std=gnu11", "env cc", "'cc'", "cc -DFG_UNUSED='a b'"] {
        let dev = CpuDevice::with_compiler(CCompiler::new(cc)).with_cache_dir(dir.join("cache"));
        let spec = some_kernel(&dev, 0.5 + cc.len() as f64);
        dev.compile(&[spec]).unwrap_or_else(|e| panic!("CC=`{cc}`: {e}"));
    }
    let dev = CpuDevice::with_compiler(CCompiler::new("cc 'unbalanced")).with_cache_dir(dir.join("cache"));
    let err = dev.compile(&[some_kernel(&dev, 0.5)]).err().expect("an unbalanced quote").to_string();
    assert!(err.contains("cc 'unbalanced") && err.contains("not a valid command line"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

/// A fake compiler: answers the probes as `cc`, then runs `body` for compiles.
fn fake(dir: &Path, name: &str, body: &str) -> CpuDevice {
    let probe = "case \"$*\" in *-dM*|*--version*) exec cc \"$@\";; esac\n";
    let cc = script(dir, name, &format!("{probe}{body}"));
    CpuDevice::with_compiler(CCompiler::new(cc.to_str().unwrap())).with_cache_dir(dir.join("cache"))
}

#[test]
fn a_compiler_that_writes_no_library_is_an_error_saying_so() {
    let dir = temp_dir("nolib");
    let dev = fake(&dir, "silentcc", "cat > /dev/null\nexit 0\n");
    let err = dev.compile(&[some_kernel(&dev, 1.5)]).err().expect("no library").to_string();
    assert!(err.contains("silentcc") && err.contains("wrote no shared library"), "{err}");
    assert!(!err.contains("loading") && !err.contains("cache folder"), "blames the cache folder: {err}");
    let body =
        "cat > /dev/null\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && echo 'not ELF' > \"$2\"; shift; done\nexit 0\n";
    let dev = fake(&dir, "garbagecc", body);
    let err = dev.compile(&[some_kernel(&dev, 2.5)]).err().expect("no library").to_string();
    assert!(err.contains("not a shared library"), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_full_disk_says_the_disk_is_full() {
    let dir = temp_dir("full");
    // What gcc prints when the linker cannot write its output.
    let body = "cat > /dev/null\necho '/usr/bin/ld: final link failed: No space left on device' >&2\n\
                echo 'collect2: error: ld returned 1 exit status' >&2\nexit 1\n";
    let dev = fake(&dir, "fullcc", body);
    let err = dev.compile(&[some_kernel(&dev, 3.5)]).err().expect("a full disk").to_string();
    assert!(err.contains("disk is full") && err.contains("FERROGRAD_CACHE"), "{err}");
    assert!(!err.contains("bug in ferrograd"), "blames the code generator: {err}");
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------- the ladder (child processes)

const CASE: &str = "FERROGRAD_LADDER_CASE";

/// A compiler that miscompiles on the flag sets that keep the SLP vectorizer (rung 0 only):
/// kernels' saturating casts are replaced by a constant. Deterministic, and no memory access
/// changes, so the canaries see a wrong value rather than a crash.
const BREAK_RUNG_0: &str = "case \"$*\" in *-fno-tree-slp-vectorize*|*-fno-slp-vectorize*) exec cc \"$@\";; esac\n\
    sed '0,/^static inline void/s//#define __sat_i32(x) 7\\nstatic inline void/' | cc \"$@\"\n";
const BREAK_ALL: &str = "sed '0,/^static inline void/s//#define __sat_i32(x) 7\\nstatic inline void/' | cc \"$@\"\n";

fn child() {
    let x = Tensor::from_vec(vec![2.5f32, -1.5, 3e9, f32::NAN], [4]);
    match x.cast(ferrograd::DType::I32).to_vec::<i32>() {
        Ok(v) => println!("result: ok {v:?}"),
        Err(e) => println!("result: err {}", e.to_string().replace('\n', " | ")),
    }
}

/// Runs this test binary's `test` in a child process with `case` set (so it plays the child's
/// part), kernels cached in `cache` and `envs` on top: the child's output.
fn run_case(test: &str, case: &str, cache: &Path, envs: &[(&str, &std::ffi::OsStr)]) -> std::process::Output {
    Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--nocapture", "--test-threads", "1"])
        .env(case, "1")
        .env("FERROGRAD_CACHE", cache)
        .env("DEV", "CPU")
        .envs(envs.iter().copied())
        .output()
        .unwrap()
}

fn run_child(cc: &Path, cache: &Path) -> (String, String) {
    let envs = [("CC", cc.as_os_str()), ("DEBUG", "1".as_ref())];
    let out = run_case("a_miscompiling_compiler_walks_down_the_ladder", CASE, cache, &envs);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "child failed:\n{stdout}\n{stderr}");
    let result = stdout.lines().find_map(|l| l.split_once("result: ").map(|(_, r)| r.to_string()));
    (result.unwrap_or_else(|| panic!("no result in:\n{stdout}\n{stderr}")), stderr)
}

#[test]
fn a_miscompiling_compiler_walks_down_the_ladder() {
    if std::env::var_os(CASE).is_some() {
        child();
        return;
    }
    assert!(RUNGS.len() >= 3);
    let dir = temp_dir("ladder");
    let probe = "case \"$*\" in *-dM*|*--version*) exec cc \"$@\";; esac\n";
    let cc = script(&dir, "rung0broken", &format!("{probe}{BREAK_RUNG_0}"));
    let cache = dir.join("cache");
    // First process: rung 0 fails its canaries, rung 1 passes and is used.
    let (result, log) = run_child(&cc, &cache);
    assert_eq!(result, "ok [2, -1, 2147483647, 0]", "{log}");
    assert!(log.contains("chose rung 1") && log.contains("rung 0") && log.contains("saturating cast"), "{log}");
    assert!(log.contains("-fno-tree-slp-vectorize") || log.contains("-fno-slp-vectorize"), "{log}");
    // Second process: the choice is remembered, the canaries do not run again.
    let (result, log) = run_child(&cc, &cache);
    assert_eq!(result, "ok [2, -1, 2147483647, 0]", "{log}");
    assert!(log.contains("rung 1, chosen by an earlier self-test"), "{log}");

    // A compiler that fails on every rung: an error naming each rung's failure.
    let cc = script(&dir, "alwaysbroken", &format!("{probe}{BREAK_ALL}"));
    let (result, _) = run_child(&cc, &dir.join("cache2"));
    assert!(result.starts_with("err") && result.contains("wrong result"), "{result}");
    for rung in 0..RUNGS.len() {
        assert!(result.contains(&format!("rung {rung} (")), "rung {rung} missing: {result}");
    }
    assert!(result.contains("-O1") && result.contains("saturating cast"), "{result}");
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------- sanitizers (child processes)

const SAN_CASE: &str = "FERROGRAD_SANITIZE_CASE";

/// Runs `sanitized_kernels_stop_at_undefined_behaviour`'s child with kernels built by `cc`
/// under UBSan and ASan, the runtime preloaded: (exit status ok, output).
fn run_sanitized(cc: &str, cache: &Path) -> Option<(bool, String)> {
    let runtime = CCompiler::new("gcc").asan_runtime().ok()?;
    let envs = [
        ("CC", cc.as_ref()),
        ("SANITIZE", "1".as_ref()),
        ("LD_PRELOAD", runtime.as_os_str()),
        ("ASAN_OPTIONS", "detect_leaks=0:halt_on_error=1".as_ref()),
        ("UBSAN_OPTIONS", "halt_on_error=1".as_ref()),
    ];
    let out = run_case("sanitized_kernels_stop_at_undefined_behaviour", SAN_CASE, cache, &envs);
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    Some((out.status.success(), text))
}

#[test]
fn sanitized_kernels_stop_at_undefined_behaviour() {
    if std::env::var_os(SAN_CASE).is_some() {
        let x = Tensor::from_vec(vec![1.0f32, -2.0, 3.5, 8.0], [2, 2]);
        let v = (x.matmul(&x) + 1.0).relu().sum_axis(1).to_vec::<f32>().expect("realizes");
        println!("values: {v:?}");
        return;
    }
    let dir = temp_dir("sanitize");
    // Clean kernels run under the sanitizers and give the right values.
    let Some((ok, text)) = run_sanitized("gcc", &dir.join("cache")) else {
        eprintln!("skipped: gcc has no ASan runtime here");
        return;
    };
    assert!(ok && text.contains("values: [0.0, 90.5]"), "{text}");
    // A kernel with undefined behaviour (a negative shift, injected by a fake compiler) ends the
    // process with the sanitizer's report.
    let body = "case \"$*\" in *-dM*|*--version*) exec gcc \"$@\";; esac\n\
        sed 's/^\\(void [A-Za-z0-9_]*(void\\*\\* bufs, const long long\\* vals, int core_id) {\\)/\\1 volatile int z_ = -1; volatile int w_ = 1 << z_; (void)w_;/' | gcc \"$@\"\n";
    let cc = script(&dir, "ubcc", body);
    let (ok, text) = run_sanitized(cc.to_str().unwrap(), &dir.join("cache2")).unwrap();
    assert!(!ok && text.contains("runtime error: shift exponent"), "{text}");
    let _ = std::fs::remove_dir_all(dir);
}
