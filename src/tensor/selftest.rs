//! The compiler self-test: before a device whose compiler can be wrong (the CPU's C compiler,
//! an OpenCL or CUDA driver) runs its first kernel in a process, a few canary kernels — among
//! them the ones gcc 12.2's loop vectorizer once got wrong — run on it with the heuristic's
//! opts and with none, and must give exactly what the interpreter gives (their inputs are chosen
//! so every result is exact). The outcome is remembered per compiler identity (compiler,
//! version, flags, CPU) in the cache folder, so each compiler is checked once. A compiler that
//! fails is an `Error::Compile` naming it and saying what to do.

use super::Tensor;
use crate::codegen::{get_program, try_program, ProgramSpec};
use crate::error::{Error, Result};
use crate::helpers::{cache_dir, debug_level, stable_hash_hex};
use crate::runtime::{get_device, Backend, DeviceMemory};
use crate::schedule::{create_schedule, ItemKind};
use crate::uop::DType;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Bump when the canaries change, so every compiler is checked again.
const CANARY_VERSION: &str = "canaries-v1";

/// Exact test data: multiples of 1/16 from a formula.
fn data(n: usize, salt: usize) -> Vec<f32> {
    (0..n).map(|i| (((i * 7 + salt * 13) % 23) as f32 - 11.0) / 16.0).collect()
}

/// The canary graphs, built on the current default device.
fn canaries() -> Vec<(&'static str, Tensor)> {
    let mut out = Vec::new();
    for n in [2usize, 3, 5, 7] {
        let x = Tensor::from_vec(data(2 * n, n), [n, 2]);
        out.push(("row pad", x.pad(&[(1, 2), (0, 0)])));
        out.push(("row pad", x.pad(&[(2, 1), (0, 0)])));
    }
    out.push(("cumsum then sum", Tensor::from_vec(data(30, 1), [5, 6]).cumsum(0).sum_axis(0)));
    out.push(("cumsum then sum", Tensor::from_vec(data(28, 2), [7, 4]).cumsum(1).sum_axis(1)));
    out.push(("flipped sum", Tensor::from_vec(data(15, 3), [5, 3]).flip(1).sum()));
    let x = Tensor::from_vec(data(63, 4), [9, 7]);
    out.push(("permuted padded cumsum", x.permute([1, 0]).reshape([63]).pad(&[(2, 2)]).cumsum(0)));
    let (a, b) = (Tensor::from_vec(data(32 * 32, 5), [32, 32]), Tensor::from_vec(data(32 * 48, 6), [32, 48]));
    out.push(("matmul", a.matmul(&b)));
    let mut m = data(336, 7);
    m[100] = f32::NAN;
    out.push(("max with a NaN", Tensor::from_vec(m, [1, 336]).max_axis(1)));
    let specials = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 3e9, -3e9, 2.5, -2.5, 1e-40];
    out.push(("saturating cast", Tensor::from_vec(specials.clone(), [8]).cast(DType::I32).cast(DType::F32)));
    out.push(("f16 rounding", Tensor::from_vec(specials, [8]).cast(DType::F16).cast(DType::F32)));
    let ints = Tensor::from_vec(vec![i32::MAX, i32::MIN, 65536, -7, 3, 46341], [6]);
    out.push(("wrapping ints", (&ints * &ints + 1i64).cast(DType::F32)));
    out
}

/// Runs the kernels of `t` (on `dev`) with the heuristic's opts or none; the output's bytes.
fn run(t: &Tensor, dev: &dyn Backend, no_opts: bool) -> Result<Vec<u8>> {
    let sched = create_schedule(&[t.uop()]);
    let specs: Vec<Arc<ProgramSpec>> = sched
        .items
        .iter()
        .filter(|i| i.kind == ItemKind::Kernel)
        .map(|i| {
            Arc::new(if no_opts {
                try_program(&i.ast, dev.renderer(), &[]).expect("no opts always apply")
            } else {
                get_program(&i.ast, dev.renderer(), None)
            })
        })
        .collect();
    let progs = dev.compile(&specs)?;
    let mut progs = progs.into_iter();
    for item in &sched.items {
        match item.kind {
            ItemKind::Kernel => {
                let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory()).collect::<Result<_>>()?;
                progs.next().expect("a program per kernel").launch(&mems, &[], false)?;
            }
            ItemKind::Copy => {
                let data = item.bufs[1].to_bytes()?;
                item.bufs[0].copy_in(&data)?;
            }
        }
    }
    dev.synchronize()?;
    sched.outputs[0].to_bytes()
}

/// The first element where two outputs differ, as text (NaNs equal, bits otherwise).
fn first_difference(want: &[u8], got: &[u8], dt: DType) -> Option<String> {
    let n = dt.itemsize();
    want.chunks(n).zip(got.chunks(n)).enumerate().find_map(|(i, (w, g))| {
        let same = w == g || (dt == DType::F32 && f32_of(w).is_nan() && f32_of(g).is_nan());
        (!same).then(|| format!("element {i} is {}, the interpreter gives {}", value(g, dt), value(w, dt)))
    })
}

fn f32_of(b: &[u8]) -> f32 {
    f32::from_le_bytes(b.try_into().expect("4 bytes"))
}

fn value(b: &[u8], dt: DType) -> String {
    if dt == DType::F32 {
        format!("{}", f32_of(b))
    } else {
        format!("{b:?}")
    }
}

/// Runs every canary on `dev` with the heuristic's opts and with none; the first wrong result.
fn run_canaries(device: &str, dev: &dyn Backend) -> Result<std::result::Result<(), String>> {
    let interp = get_device("INTERP")?;
    let on_device = super::with_default_device(device, canaries);
    let reference = super::with_default_device("INTERP", canaries);
    for ((name, t), (_, r)) in on_device.iter().zip(&reference) {
        let want = run(r, interp.as_ref(), true)?;
        for no_opts in [false, true] {
            let got = run(t, dev, no_opts)?;
            if let Some(diff) = first_difference(&want, &got, t.dtype()) {
                let opts = if no_opts { "without opts" } else { "with the heuristic's opts" };
                return Ok(Err(format!("canary `{name}` {opts}: {diff}")));
            }
        }
    }
    Ok(Ok(()))
}

/// Runs the canaries on `device` (against the interpreter) if its compiler has not passed them,
/// walking down the compiler's ladder of safer flags until a rung passes; the rung that passed
/// is remembered per compiler identity (at rung 0) in the cache folder.
fn check(device: &str) -> Result<()> {
    let dev = get_device(device)?;
    dev.set_compiler_rung(0);
    let Some(identity) = dev.compiler_identity() else { return Ok(()) };
    let key = stable_hash_hex(&[identity.as_bytes(), CANARY_VERSION.as_bytes()]);
    let marker = cache_dir().join("selftest").join(format!("{key}.rung"));
    let rungs = dev.compiler_rungs();
    let remembered = std::fs::read_to_string(&marker).ok().and_then(|t| t.lines().next()?.trim().parse::<usize>().ok());
    if let Some(rung) = remembered.filter(|&r| r < rungs) {
        dev.set_compiler_rung(rung);
        if debug_level() >= 1 && rung > 0 {
            let chosen = dev.compiler_identity().unwrap_or_default();
            eprintln!("{device}: compiling with `{chosen}`: rung {rung}, chosen by an earlier self-test ({marker:?})");
        }
        return Ok(());
    }
    let mut failures: Vec<String> = Vec::new();
    for rung in 0..rungs {
        dev.set_compiler_rung(rung);
        let flags = dev.compiler_identity().unwrap_or_default();
        let outcome = match run_canaries(device, dev.as_ref()) {
            Ok(outcome) => outcome,
            // A compiler that cannot run at all is that error, not a rung's failure.
            Err(e) if rung == 0 => return Err(e),
            Err(e) => Err(format!("it failed to compile a canary: {e}")),
        };
        match outcome {
            Ok(()) => {
                if let Some(dir) = marker.parent() {
                    let _ = std::fs::create_dir_all(dir);
                    let _ = std::fs::write(&marker, format!("{rung}\n{flags}\n"));
                }
                if debug_level() >= 1 {
                    let why = if failures.is_empty() {
                        "its canaries match the interpreter".to_string()
                    } else {
                        format!("the rungs before it computed wrong results:\n  {}", failures.join("\n  "))
                    };
                    eprintln!("{device}: compiler self-test chose rung {rung}, `{flags}`: {why}");
                }
                return Ok(());
            }
            Err(what) => failures.push(format!("rung {rung} (`{flags}`): {what}")),
        }
    }
    dev.set_compiler_rung(0);
    Err(Error::Compile {
        device: device.to_string(),
        kernel: "self-test canaries".to_string(),
        message: format!(
            "{identity} computes a wrong result for a correct kernel with every flag set ferrograd tries:\n  {}\n\
             Its optimizer miscompiles ferrograd's kernels; use another compiler (set CC=clang, or another gcc \
             version) and report this compiler version to ferrograd",
            failures.join("\n  ")
        ),
    })
}

/// Makes sure `device`'s compiler passed the self-test in this process (checking it the first
/// time; later calls return the remembered outcome).
pub(crate) fn ensure(device: &str) -> Result<()> {
    static DONE: OnceLock<Mutex<HashMap<String, std::result::Result<(), String>>>> = OnceLock::new();
    let done = DONE.get_or_init(|| Mutex::new(HashMap::new()));
    // Held while checking: another thread waits for the outcome instead of checking again.
    let mut map = done.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = map.get(device) {
        return r.clone().map_err(|message| Error::Compile {
            device: device.to_string(),
            kernel: "self-test".into(),
            message,
        });
    }
    let result = check(device);
    let remembered = match &result {
        Ok(()) => Ok(()),
        Err(Error::Compile { message, .. }) => Err(message.clone()),
        // A missing compiler or device: not remembered, the error is the first compile's anyway.
        Err(_) => return result,
    };
    map.insert(device.to_string(), remembered);
    result
}
