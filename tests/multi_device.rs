//! Several devices in one process: numbered CPU devices (`CPU:1`, each with worker threads of
//! its own) computing what `CPU` computes, and copies between them.

use ferrograd::{Device, Tensor};

fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("should panic");
    err.downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_numbered_cpu_device_computes_what_cpu_computes() {
    let dev = Device::new("cpu:1").unwrap();
    assert_eq!(dev.name(), "CPU:1");
    // Large enough to be split over the worker threads.
    let n = 1 << 16;
    let host: Vec<f32> = (0..n).map(|i| (i % 97) as f32 * 0.25 - 3.0).collect();
    let on_cpu = Tensor::from_slice(&host).reshape([256, 256]);
    let on_cpu1 = on_cpu.to("CPU:1");
    assert_eq!(on_cpu1.device(), "CPU:1");
    let f = |t: &Tensor| (t.matmul(&t.t()).relu() + 1.0).sum_axis(1);
    let want = f(&on_cpu).to_vec::<f32>().unwrap();
    let got = f(&on_cpu1);
    assert_eq!(got.device(), "CPU:1");
    assert_eq!(got.to_vec::<f32>().unwrap(), want, "CPU:1 runs the same kernels");
    // CPU:1 → CPU:2 → CPU, and an op that mixes a copy with a tensor already there.
    let back = (got.to("CPU:2").to("CPU") - Tensor::from_slice(&want)).abs().max().to_vec::<f32>().unwrap();
    assert_eq!(back, vec![0.0]);
}

#[test]
fn mixing_devices_without_a_copy_panics_naming_both() {
    let a = Tensor::from_slice(&[1.0f32, 2.0]);
    let b = Tensor::from_slice(&[1.0f32, 2.0]).to("CPU:1");
    let msg = panic_message(|| drop(&a + &b));
    assert!(msg.contains("CPU") && msg.contains("CPU:1") && msg.contains(".to(device)"), "{msg}");
}
