//! The CUDA device (feature `cuda`). Without an NVIDIA driver, opening it must give a clear
//! error, never a panic or an abort. With one, every case of the shared set must match the
//! interpreter (the oracle), out-of-memory must be an error, and launches must report a time.
#![cfg(feature = "cuda")]

mod gpu_cases;

use ferrograd::codegen::get_program;
use ferrograd::runtime::cuda::{cuda_renderer, driver_available, nvrtc_available};
use ferrograd::runtime::get_device;
use ferrograd::schedule::create_schedule;
use ferrograd::tensor::with_default_device;
use ferrograd::{Device, Error, Tensor};

/// The CUDA device, or `None` (with a note) on a machine where it cannot open.
fn cuda() -> Option<Device> {
    match Device::new("CUDA") {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipping the GPU part: {e}");
            None
        }
    }
}

#[test]
fn opening_cuda_without_a_driver_is_a_clear_error() {
    // NV is the same driver with kernels written as PTX.
    for name in ["CUDA", "cuda:0", "CUDA:1", "NV", "nv:1"] {
        match get_device(name) {
            Ok(d) => assert!(driver_available(), "{name} opened as {} without a driver", d.name()),
            Err(Error::DeviceUnavailable { device, reason }) => {
                assert!(device.to_uppercase().starts_with(&name[..2].to_uppercase()), "{name}: {device}");
                if !driver_available() {
                    assert!(reason.contains("libcuda.so.1") && reason.contains("LD_LIBRARY_PATH"), "{reason}");
                }
            }
            Err(e) => panic!("{name}: expected DeviceUnavailable, got {e:?}"),
        }
    }
    // `Device::new` reports the same, and the CPU stays usable afterwards.
    if !driver_available() {
        let msg = Device::new("CUDA").expect_err("no driver, yet CUDA opened").to_string();
        assert!(msg.contains("CUDA") && msg.contains("not available") && msg.contains("DEV=CPU"), "{msg}");
    }
    let y = with_default_device("CPU", || (Tensor::from_slice(&[1.0f32, 2.0]) * 2.0).to_vec::<f32>());
    assert_eq!(y.unwrap(), vec![2.0, 4.0]);
}

/// `DEV=CUDA` in a child process (the default device is chosen once per process).
#[test]
fn dev_cuda_selects_cuda_or_says_why() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "dev_env_child", "--nocapture", "--test-threads=1"])
        .env("DEV", "CUDA")
        .env("FERROGRAD_DEV_CHILD", "1")
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("CHILD-OK"), "{text}");
}

/// Builds a stand-in `libcuda.so.1` from C `src` into a fresh folder (None without a C compiler).
fn fake_driver(tag: &str, src: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("ferrograd-fake-cuda-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    std::fs::write(dir.join("stub.c"), src).ok()?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let ok = std::process::Command::new(cc)
        .args(["-shared", "-fPIC", "-o"])
        .arg(dir.join("libcuda.so.1"))
        .arg(dir.join("stub.c"))
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(dir)
}

/// Runs `dev_env_child` with `DEV=CUDA` and the fake driver first on the library path; returns
/// its output.
fn child_with_driver(dir: &std::path::Path) -> String {
    let path = std::env::var("LD_LIBRARY_PATH").unwrap_or_default();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "dev_env_child", "--nocapture", "--test-threads=1"])
        .env("DEV", "CUDA")
        .env("FERROGRAD_DEV_CHILD", "1")
        .env("LD_LIBRARY_PATH", format!("{}:{path}", dir.display()))
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(dir);
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("CHILD-OK error"), "{text}");
    text
}

/// A driver library on a machine without a GPU: cuInit fails, and opening says so.
#[test]
fn a_driver_without_a_gpu_is_an_error_not_a_panic() {
    if driver_available() {
        return;
    }
    let src = r#"
        int cuInit(unsigned int flags) { (void)flags; return 100; }
        int cuGetErrorString(int e, const char** s) { (void)e; *s = "no CUDA-capable device is detected"; return 0; }
        int cuGetErrorName(int e, const char** s) { (void)e; *s = "CUDA_ERROR_NO_DEVICE"; return 0; }
    "#;
    let Some(dir) = fake_driver("nodev", src) else { return eprintln!("skipped: no C compiler") };
    let text = child_with_driver(&dir);
    let want = if nvrtc_available() { "cuInit failed" } else { "libnvrtc" };
    assert!(text.contains(want), "{text}");
}

/// A driver library missing a function cudarc needs: cudarc panics inside; opening must still
/// return an error.
#[test]
fn an_incomplete_driver_is_an_error_not_a_panic() {
    if driver_available() {
        return;
    }
    let Some(dir) = fake_driver("partial", "int cuInit(unsigned int flags) { (void)flags; return 0; }\n") else {
        return eprintln!("skipped: no C compiler");
    };
    let text = child_with_driver(&dir);
    let want = if nvrtc_available() { "incomplete or too old (Missing symbol cuDeviceGetCount" } else { "libnvrtc" };
    assert!(text.contains(want), "{text}");
}

#[test]
fn dev_env_child() {
    if std::env::var_os("FERROGRAD_DEV_CHILD").is_none() {
        return;
    }
    match Device::try_default() {
        Ok(d) => {
            assert_eq!(d.name(), "CUDA");
            println!("CHILD-OK default {d}");
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(msg.contains("CUDA") && msg.contains("not available"), "{msg}");
            println!("CHILD-OK error {msg}");
        }
    }
}

#[test]
fn cuda_source_is_a_global_kernel_indexed_by_thread() {
    let renderer = cuda_renderer("CUDA");
    let (a, b) = with_default_device("CPU", || (Tensor::from_slice(&[1.0f32; 64]), Tensor::from_slice(&[2.0f32; 64])));
    let sched = create_schedule(&[(&a * &b + 1.0).exp().uop()]);
    let spec = get_program(&sched.items[0].ast, &renderer, None);
    let src = &spec.src;
    assert!(src.contains(&format!("extern \"C\" __global__ void {}(", spec.name)), "{src}");
    assert!(src.contains("float* __restrict__ data0") && src.contains("const float* __restrict__ data1"), "{src}");
    assert!(!src.contains("core_id") && !src.contains("#include") && !src.contains(" restrict "), "{src}");
    assert!(src.contains("(blockIdx.x*blockDim.x+threadIdx.x)"), "the launch model did not reach the source:\n{src}");
    let local = spec.local_size.expect("a GPU kernel has a local size");
    assert_eq!(spec.global_size[0] % local[0], 0, "{:?} {:?}", spec.global_size, local);
}

#[test]
fn cuda_matches_the_interpreter() {
    if cuda().is_none() {
        return;
    }
    gpu_cases::compare_devices("CUDA", "INTERP");
}

/// The comparison harness itself, on devices every machine has (so it is checked in CI).
#[test]
fn cpu_matches_the_interpreter_on_the_cuda_cases() {
    gpu_cases::compare_devices("CPU", "INTERP");
}

#[test]
fn cuda_out_of_memory_is_an_error() {
    if cuda().is_none() {
        return;
    }
    let dev = get_device("CUDA").unwrap();
    match dev.alloc(1 << 50) {
        Err(Error::OutOfMemory { bytes, .. }) => assert_eq!(bytes, 1 << 50),
        Err(e) => panic!("expected OutOfMemory, got {e:?}"),
        Ok(_) => panic!("allocated a petabyte"),
    }
    // The device still works afterwards.
    let y = with_default_device("CUDA", || (Tensor::from_slice(&[1.0f32, 2.0, 3.0]) + 1.0).to_vec::<f32>());
    assert_eq!(y.unwrap(), vec![2.0, 3.0, 4.0]);
}

#[test]
fn cuda_launch_reports_time_and_bad_source_is_a_compile_error() {
    if cuda().is_none() {
        return;
    }
    let dev = get_device("CUDA").unwrap();
    let (a, b) = with_default_device("CUDA", || {
        let a = Tensor::from_slice(&vec![1.0f32; 1 << 20]).realize().unwrap();
        (a, Tensor::from_slice(&vec![2.0f32; 1 << 20]).realize().unwrap())
    });
    let sched = create_schedule(&[(&a + &b).uop()]);
    let item = &sched.items[0];
    let spec = std::sync::Arc::new(get_program(&item.ast, dev.renderer(), None));
    let prog = dev.compile(std::slice::from_ref(&spec)).unwrap().remove(0);
    let mems: Vec<_> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    let secs = prog.launch(&mems, &[], true).unwrap();
    assert!(secs > 0.0 && secs < 1.0, "{secs}");
    let mut bad = (*spec).clone();
    bad.src = spec.src.replace("__global__", "__global__ this is not CUDA");
    match dev.compile(&[std::sync::Arc::new(bad)]) {
        Err(Error::Compile { message, .. }) => assert!(message.contains("error"), "{message}"),
        Err(e) => panic!("expected a compile error, got {e:?}"),
        Ok(_) => panic!("NVRTC accepted garbage"),
    }
}

#[test]
fn cuda_index_is_64_bit_past_2_pow_31_items() {
    let renderer = cuda_renderer("CUDA");
    let y = with_default_device("CPU", || (Tensor::arange((1 << 31) + 1000) % 251).cast(ferrograd::DType::U8));
    let sched = create_schedule(&[y.uop()]);
    let spec = get_program(&sched.items[0].ast, &renderer, None);
    assert!(spec.src.contains("long long iidx0 = ((long long)blockIdx.x*blockDim.x+threadIdx.x)"), "{}", spec.src);
    assert!(spec.global_size[0] > 1 << 31);
}
