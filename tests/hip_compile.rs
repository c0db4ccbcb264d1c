//! hiprtc accepts the HIP C++ the real code generator writes (no GPU needed, only ROCm's hiprtc):
//! every kernel of the shared case set (elementwise, reduce, matmul, conv, softmax, half,
//! integers, random, gather, a training step with Adam), with the heuristic opts and without,
//! compiles to an AMD GPU code object for an RDNA 2 (gfx1030) and a CDNA 2 (gfx90a) GPU: an
//! amdgcn-amd-amdhsa ELF for that architecture holding the kernel and its descriptor. Skips with
//! a message when hiprtc is not found; CI installs Debian's ROCm packages (scripts/hip_check.sh).
//! `SHOW_HIP=1` prints each source.
#![cfg(feature = "hip")]

mod gpu_cases;

use ferrograd::codegen::get_program;
use ferrograd::runtime::hip::{hip_renderer, hiprtc_available, hiprtc_compile, hiprtc_version};
use ferrograd::schedule::{create_schedule, ItemKind};
use ferrograd::tensor::with_default_device;
use std::collections::HashSet;

/// Architectures compiled for, with the `EF_AMDGPU_MACH` value their code objects carry: RDNA 2
/// (RX 6000) and CDNA 2 (MI200). Newer ones (gfx1100, gfx942) need a newer ROCm than Debian 12's
/// 5.2, whose hiprtc crashes on architectures it has no device libraries for.
const ARCHS: &[(&str, u32)] = &[("gfx1030", 0x36), ("gfx90a", 0x3f)];

fn skip() -> bool {
    if hiprtc_available() {
        return false;
    }
    eprintln!("SKIPPED: hiprtc not found. Run scripts/hip_check.sh, or install ROCm (Debian: libamdhip64-dev)");
    if std::env::var_os("FERROGRAD_REQUIRE_HIPRTC").is_some() {
        panic!("FERROGRAD_REQUIRE_HIPRTC is set but hiprtc was not found");
    }
    true
}

/// Checks that `code` is an AMDGPU HSA code object for the machine `mach` defining `kernel`
/// (the function and its `.kd` kernel descriptor).
fn check_code_object(code: &[u8], mach: u32, kernel: &str) -> Result<(), String> {
    let u16_at = |o: usize| u16::from_le_bytes([code[o], code[o + 1]]);
    if code.len() < 64 || !code.starts_with(b"\x7fELF\x02\x01") {
        return Err("not a 64-bit little-endian ELF".into());
    }
    let (osabi, machine, flags) = (code[7], u16_at(18), u32::from_le_bytes(code[48..52].try_into().unwrap()));
    if osabi != 64 || machine != 224 {
        return Err(format!("OS ABI {osabi} and machine {machine}, not AMDGPU HSA (64) and EM_AMDGPU (224)"));
    }
    if flags & 0xff != mach {
        return Err(format!("EF_AMDGPU_MACH {:#x}, expected {mach:#x}", flags & 0xff));
    }
    let has = |s: &str| {
        code.windows(s.len() + 2).any(|w| w[0] == 0 && &w[1..=s.len()] == s.as_bytes() && w[s.len() + 1] == 0)
    };
    if !has(kernel) || !has(&format!("{kernel}.kd")) {
        return Err(format!("no symbols `{kernel}` and `{kernel}.kd`"));
    }
    Ok(())
}

#[test]
fn hiprtc_compiles_every_generated_kernel() {
    if skip() {
        return;
    }
    let (major, minor) = hiprtc_version().expect("hiprtc version");
    eprintln!("hiprtc {major}.{minor}");
    let renderer = hip_renderer("AMD");
    let mut seen: HashSet<String> = HashSet::new();
    let mut specs = Vec::new();
    for case in gpu_cases::cases() {
        // The graphs are built and scheduled on the CPU; only the rendering targets AMD.
        let items = with_default_device("CPU", || {
            let outs = (case.build)();
            create_schedule(&outs.iter().map(|t| t.uop()).collect::<Vec<_>>()).items
        });
        for item in items.iter().filter(|i| i.kind == ItemKind::Kernel) {
            for opts in [None, Some(&[][..])] {
                let spec = get_program(&item.ast, &renderer, opts);
                if seen.insert(spec.src.clone()) {
                    if std::env::var_os("SHOW_HIP").is_some() {
                        eprintln!("// {} {:?} local {:?}\n{}", case.name, spec.global_size, spec.local_size, spec.src);
                    }
                    specs.push((case.name, spec));
                }
            }
        }
        assert!(items.iter().any(|i| i.kind == ItemKind::Kernel), "{}: no kernels scheduled", case.name);
    }
    let mut failures = Vec::new();
    for (case, spec) in &specs {
        for (arch, mach) in ARCHS {
            let result =
                hiprtc_compile(&spec.src, Some(arch)).and_then(|code| check_code_object(&code, *mach, &spec.name));
            if let Err(e) = result {
                failures.push(format!("{case}: kernel {} ({arch}): {e}\nsource:\n{}", spec.name, spec.src));
            }
        }
    }
    let jobs = specs.len() * ARCHS.len();
    assert!(failures.is_empty(), "{} of {} compiles failed:\n{}", failures.len(), jobs, failures.join("\n\n"));
    let grouped =
        specs.iter().filter(|(_, s)| s.src.contains("__shared__") && s.src.contains("__syncthreads()")).count();
    eprintln!(
        "{} distinct kernels compiled for {:?} ({grouped} with GROUP)",
        specs.len(),
        ARCHS.iter().map(|a| a.0).collect::<Vec<_>>()
    );
    assert!(specs.len() >= 20, "only {} kernels", specs.len());
    assert!(specs.iter().any(|(_, s)| s.src.contains("blockIdx.x")), "no kernel used the GPU launch model");
    assert!(grouped > 0, "no kernel split a reduce across a thread block (GROUP)");
}

#[test]
fn hiprtc_errors_carry_the_log() {
    if skip() {
        return;
    }
    let err = hiprtc_compile("extern \"C\" __global__ void k(float* x) { x[0] = undefined_name; }", Some("gfx90a"))
        .expect_err("hiprtc accepted an undefined name");
    assert!(err.contains("undefined_name") && err.contains("--offload-arch=gfx90a"), "{err}");
}
