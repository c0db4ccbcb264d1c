//! NVRTC accepts the CUDA C the real code generator writes (no GPU needed, only libnvrtc):
//! every kernel of the shared case set (elementwise, reduce, matmul, conv, softmax, half,
//! integers, random, gather, a training step with Adam), with the heuristic opts and without,
//! compiles to PTX holding the kernel's `.entry`, for a Hopper (sm_90) and an Ampere (sm_80)
//! target. Skips with a message when libnvrtc is not found; CI installs it from the
//! `nvidia-cuda-nvrtc-cu12` wheel (see scripts/nvrtc_check.sh). `SHOW_CUDA=1` prints each source.
#![cfg(feature = "cuda")]

mod gpu_cases;

use ferrograd::codegen::get_program;
use ferrograd::runtime::cuda::{cuda_renderer, nvrtc_available, nvrtc_compile, nvrtc_version};
use ferrograd::schedule::{create_schedule, ItemKind};
use ferrograd::tensor::with_default_device;
use std::collections::HashSet;

#[test]
fn nvrtc_compiles_every_generated_kernel() {
    if !nvrtc_available() {
        eprintln!(
            "SKIPPED: libnvrtc not found. Run scripts/nvrtc_check.sh, or `pip install --target DIR \
             nvidia-cuda-nvrtc-cu12` and put DIR/nvidia/cuda_nvrtc/lib on LD_LIBRARY_PATH"
        );
        if std::env::var_os("FERROGRAD_REQUIRE_NVRTC").is_some() {
            panic!("FERROGRAD_REQUIRE_NVRTC is set but libnvrtc was not found");
        }
        return;
    }
    let (major, minor) = nvrtc_version().expect("NVRTC version");
    eprintln!("NVRTC {major}.{minor}");
    let renderer = cuda_renderer("CUDA");
    let mut seen: HashSet<String> = HashSet::new();
    let (mut kernels, mut specials, mut grouped) = (0, 0, 0);
    for case in gpu_cases::cases() {
        // The graphs are built and scheduled on the CPU; only the rendering targets CUDA.
        let items = with_default_device("CPU", || {
            let outs = (case.build)();
            create_schedule(&outs.iter().map(|t| t.uop()).collect::<Vec<_>>()).items
        });
        let mut in_case = 0;
        for item in items.iter().filter(|i| i.kind == ItemKind::Kernel) {
            for opts in [None, Some(&[][..])] {
                let spec = get_program(&item.ast, &renderer, opts);
                if !seen.insert(spec.src.clone()) {
                    continue;
                }
                if std::env::var_os("SHOW_CUDA").is_some() {
                    eprintln!("// {} {:?} local {:?}\n{}", case.name, spec.global_size, spec.local_size, spec.src);
                }
                if spec.src.contains("blockIdx.x") {
                    specials += 1;
                }
                if spec.src.contains("__shared__") && spec.src.contains("__syncthreads()") {
                    grouped += 1;
                }
                for arch in ["sm_90", "sm_80"] {
                    let out = nvrtc_compile(&spec.src, arch).unwrap_or_else(|log| {
                        panic!(
                            "{}: kernel {} ({arch}) rejected by NVRTC:\n{log}\nsource:\n{}",
                            case.name, spec.name, spec.src
                        )
                    });
                    let entry = format!(".entry {}(", spec.name);
                    assert!(out.ptx.contains(&entry), "{}: no `{entry}` in the PTX:\n{}", case.name, out.ptx);
                    assert!(out.ptx.contains(&format!(".target {arch}")), "{}: PTX not for {arch}", case.name);
                    assert!(out.cubin.as_ref().is_some_and(|c| c.starts_with(b"\x7fELF")), "{}: no CUBIN", case.name);
                }
                kernels += 1;
                in_case += 1;
            }
        }
        assert!(in_case > 0, "{}: no kernels scheduled", case.name);
        eprintln!("{}: {in_case} kernels compile", case.name);
    }
    eprintln!("{kernels} distinct kernels compiled with NVRTC ({specials} indexed by thread, {grouped} with GROUP)");
    assert!(kernels >= 20, "only {kernels} kernels");
    assert!(specials > 0, "no kernel used the GPU launch model");
    assert!(grouped > 0, "no kernel split a reduce across a thread block (GROUP)");
}

#[test]
fn nvrtc_errors_carry_the_log() {
    if !nvrtc_available() {
        eprintln!("SKIPPED: libnvrtc not found");
        return;
    }
    let err = nvrtc_compile("extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }", "sm_90")
        .err()
        .expect("NVRTC accepted an undefined name");
    assert!(err.contains("undefined_name"), "{err}");
}
