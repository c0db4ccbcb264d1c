//! The AMD device (feature `hip`). Without ROCm or an AMD GPU, opening it must give a clear
//! error, never a panic or an abort. With one, every case of the shared set must match the
//! interpreter (the oracle), out-of-memory must be an error, and launches must report a time.
#![cfg(feature = "hip")]

mod gpu_cases;

use ferrograd::codegen::get_program;
use ferrograd::runtime::get_device;
use ferrograd::runtime::hip::hip_renderer;
use ferrograd::schedule::create_schedule;
use ferrograd::tensor::with_default_device;
use ferrograd::{Device, Error, Tensor};

/// The AMD device, or `None` (with a note) on a machine where it cannot open.
fn amd() -> Option<Device> {
    match Device::new("AMD") {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipping the GPU part: {e}");
            None
        }
    }
}

#[test]
fn opening_amd_without_a_gpu_is_a_clear_error() {
    let has_gpu = amd().is_some();
    for name in ["AMD", "amd:0", "AMD:7", "AMD:x"] {
        match get_device(name) {
            Ok(d) => assert!(has_gpu && !name.ends_with('7') && !name.ends_with('x'), "{name} opened as {}", d.name()),
            Err(Error::DeviceUnavailable { device, reason }) => {
                assert!(device.starts_with("AMD"), "{device}");
                // What is missing, and what to do: install ROCm, or use another device.
                let helpful = reason.contains("libamdhip64")
                    || reason.contains("hiprtc")
                    || reason.contains("rocminfo")
                    || reason.contains("AMD GPU(s)")
                    || reason.contains("not a device number");
                assert!(helpful, "{name}: {reason}");
            }
            Err(e) => panic!("{name}: expected DeviceUnavailable, got {e:?}"),
        }
    }
    // The CPU stays usable afterwards.
    let y = with_default_device("CPU", || (Tensor::from_slice(&[1.0f32, 2.0]) * 2.0).to_vec::<f32>()).unwrap();
    assert_eq!(y, vec![2.0, 4.0]);
}

#[test]
fn hip_source_is_a_kernel_for_1024_threads() {
    let renderer = hip_renderer("AMD");
    let (a, b) = with_default_device("CPU", || (Tensor::ones([4096]), Tensor::ones([4096])));
    let sched = create_schedule(&[(&a + &b).sum().uop()]);
    let spec = get_program(&sched.items.last().unwrap().ast, &renderer, None);
    let src = &spec.src;
    assert!(src.contains(&format!("extern \"C\" __global__ __launch_bounds__(1024) void {}(", spec.name)), "{src}");
    assert!(src.contains("__restrict__") && !src.contains("#include"), "{src}");
}

#[test]
fn amd_matches_the_interpreter() {
    if amd().is_none() {
        return;
    }
    gpu_cases::compare_devices("AMD", "INTERP");
}

#[test]
fn amd_out_of_memory_is_an_error_and_launches_are_timed() {
    if amd().is_none() {
        return;
    }
    let dev = get_device("AMD").unwrap();
    match dev.alloc(1 << 50) {
        Err(Error::OutOfMemory { bytes, .. }) => assert_eq!(bytes, 1 << 50),
        Err(e) => panic!("expected OutOfMemory, got {e:?}"),
        Ok(_) => panic!("allocated a petabyte"),
    }
    let (a, b) = with_default_device("AMD", || {
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
    bad.src = spec.src.replace("__global__", "__global__ this is not HIP");
    match dev.compile(&[std::sync::Arc::new(bad)]) {
        Err(Error::Compile { message, .. }) => assert!(message.contains("error"), "{message}"),
        Err(e) => panic!("expected a compile error, got {e:?}"),
        Ok(_) => panic!("hiprtc accepted garbage"),
    }
}
