//! The PTX renderer's output is valid PTX: every kernel of the shared case set (elementwise,
//! reduce, matmul, conv, softmax, half, integers, random, gather, a training step with Adam),
//! with the heuristic opts and without, rendered for sm_80 and for sm_90, is assembled by NVIDIA's
//! `ptxas` into a CUBIN holding the kernel. ptxas needs no GPU; CI takes it from the
//! `nvidia-cuda-nvcc-cu12` wheel (scripts/ptxas_check.sh), `PTXAS` names it, and without it the
//! test skips with a message. `SHOW_PTX=1` prints each kernel.
//!
//! The interpreter's semantics are the reference, and where PTX's differ from C's the renderer
//! writes them out; the cases below check each of those rules' instructions appear: float
//! add/mul with `.rn` (never fused), division guarded against 0 and -1, masked shift amounts,
//! unordered `!=` on floats, saturating `cvt.rzi` float→int.

mod gpu_cases;

use ferrograd::codegen::get_program;
use ferrograd::renderer::ptx::{ptx_renderer, ptx_unsupported};
use ferrograd::schedule::{create_schedule, ItemKind};
use ferrograd::tensor::with_default_device;
use ferrograd::{DType, Tensor};
use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;

fn ptxas() -> Option<PathBuf> {
    let path = std::env::var_os("PTXAS").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("ptxas"));
    if Command::new(&path).arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Some(path);
    }
    eprintln!("SKIPPED: ptxas not found. Run scripts/ptxas_check.sh, or set PTXAS to a ptxas binary");
    if std::env::var_os("FERROGRAD_REQUIRE_PTXAS").is_some() {
        panic!("FERROGRAD_REQUIRE_PTXAS is set but ptxas was not found");
    }
    None
}

/// Assembles `src` for `arch`; the error is ptxas's message.
fn assemble(ptxas: &PathBuf, src: &str, arch: &str, dir: &std::path::Path, tag: usize) -> Result<Vec<u8>, String> {
    let (ptx, cubin) = (dir.join(format!("k{tag}.ptx")), dir.join(format!("k{tag}.cubin")));
    std::fs::write(&ptx, src).map_err(|e| e.to_string())?;
    let out = Command::new(ptxas)
        .arg(format!("-arch={arch}"))
        .arg(&ptx)
        .arg("-o")
        .arg(&cubin)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    std::fs::read(&cubin).map_err(|e| e.to_string())
}

#[test]
fn ptxas_assembles_every_generated_kernel() {
    let Some(ptxas) = ptxas() else { return };
    let dir = std::env::temp_dir().join(format!("ferrograd-ptx-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut seen: HashSet<String> = HashSet::new();
    let (mut kernels, mut unsupported, mut grouped) = (0, 0, 0);
    let mut all = String::new();
    // f64 transcendentals, which PTX has not: lowered to f64 arithmetic for this renderer.
    let f64_case = gpu_cases::Case {
        name: "f64_transcendentals",
        build: || {
            let x = Tensor::from_vec((0..64).map(|k| k as f64 * 0.77 - 20.0).collect::<Vec<f64>>(), [64]);
            vec![x.exp2(), x.log2(), x.sin()]
        },
    };
    for case in gpu_cases::cases().into_iter().chain([f64_case]) {
        let items = with_default_device("CPU", || {
            let outs = (case.build)();
            create_schedule(&outs.iter().map(|t| t.uop()).collect::<Vec<_>>()).items
        });
        assert!(items.iter().any(|i| i.kind == ItemKind::Kernel), "{}: no kernels scheduled", case.name);
        for item in items.iter().filter(|i| i.kind == ItemKind::Kernel) {
            for opts in [None, Some(&[][..])] {
                for arch in ["sm_80", "sm_90"] {
                    let spec = get_program(&item.ast, &ptx_renderer("NV", arch), opts);
                    if !seen.insert(spec.src.clone()) {
                        continue;
                    }
                    if let Some(why) = ptx_unsupported(&spec.uops) {
                        eprintln!("{}: {} not assembled: {why}", case.name, spec.name);
                        unsupported += 1;
                        continue;
                    }
                    if std::env::var_os("SHOW_PTX").is_some() {
                        eprintln!("// {} {:?} local {:?}\n{}", case.name, spec.global_size, spec.local_size, spec.src);
                    }
                    let cubin = assemble(&ptxas, &spec.src, arch, &dir, kernels).unwrap_or_else(|e| {
                        panic!(
                            "{}: kernel {} ({arch}) rejected by ptxas:\n{e}\nsource:\n{}",
                            case.name, spec.name, spec.src
                        )
                    });
                    assert!(cubin.starts_with(b"\x7fELF"), "{}: {} gave no CUBIN", case.name, spec.name);
                    assert!(
                        cubin.windows(spec.name.len()).any(|w| w == spec.name.as_bytes()),
                        "{}: no {}",
                        case.name,
                        spec.name
                    );
                    if spec.src.contains("bar.sync") {
                        grouped += 1;
                    }
                    all.push_str(&spec.src);
                    kernels += 1;
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{kernels} kernels assembled by ptxas ({grouped} with GROUP), {unsupported} not renderable as PTX");
    assert!(kernels >= 40, "only {kernels} kernels");
    assert!(grouped > 0, "no kernel split a reduce across a thread block (GROUP)");
    assert_eq!(unsupported, 0, "the representative set has kernels PTX cannot express");
    for rule in ["add.rn.f32", "mul.rn.f32", "setp.neu.f32", "%ctaid.x", "ld.param.u64"] {
        assert!(all.contains(rule), "no kernel of the set contains `{rule}`");
    }
}

#[test]
fn the_interpreters_rules_are_written_out() {
    // Integer division by a tensor (a zero divisor gives 0, MIN / -1 wraps), a shift by a
    // tensor (the amount is masked), and NaN-aware `!=`.
    let renderer = ptx_renderer("NV", "sm_80");
    let src = |t: Tensor| {
        let sched = create_schedule(&[t.uop()]);
        get_program(&sched.items.last().unwrap().ast, &renderer, None).src
    };
    let (a, b) = with_default_device("CPU", || (Tensor::from_slice(&[7i32, -8]), Tensor::from_slice(&[0i32, -1])));
    let div = src(a.div_trunc(&b));
    assert!(div.contains("div.s32") && div.contains("setp.eq.s32") && div.contains(", -1;"), "{div}");
    let shl = src(with_default_device("CPU", || a.shl(&b)));
    assert!(shl.contains("and.b32") && shl.contains("shl.b32"), "{shl}");
    let ne = src(with_default_device("CPU", || a.cast(DType::F32).ne(b.cast(DType::F32))));
    assert!(ne.contains("setp.neu.f32"), "{ne}");
    // Float to int truncates toward zero.
    let x = with_default_device("CPU", || Tensor::from_slice(&[1.5f32, -2.5]));
    let cast = src(x.cast(DType::I32));
    assert!(cast.contains("cvt.rzi.s32.f32"), "{cast}");
}
