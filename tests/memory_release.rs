//! The host buffer cache gives memory back: after a large workload is dropped, the allocations
//! it kept for reuse are released once a few realizes go by without reusing them, so the
//! process's resident memory falls back instead of staying at its peak. (One test in its own
//! process: resident memory is per process.)

use ferrograd::Tensor;

/// Resident memory of this process in MiB (Linux).
fn rss_mib() -> f64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: f64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096.0 / (1024.0 * 1024.0)
}

#[test]
fn resident_memory_falls_after_a_large_workload_is_dropped() {
    if !std::path::Path::new("/proc/self/statm").exists() {
        return; // not Linux: no cheap way to read resident memory
    }
    // Host buffers: the CPU device's.
    ferrograd::tensor::with_default_device("CPU", workload_then_drop);
}

fn workload_then_drop() {
    let small = || Tensor::from_vec(vec![1.0f32, 2.0], [2]).add(1.0).realize().unwrap();
    small();
    let before = rss_mib();
    {
        // 32 buffers of 8 MiB and their intermediates: 256+ MiB at the peak.
        let xs: Vec<Tensor> =
            (0..32).map(|i| (Tensor::ones([2048, 1024]) * (i as f64 + 1.0)).realize().unwrap()).collect();
        let ys: Vec<Tensor> = xs.iter().map(|x| (x * 2.0 + 1.0).realize().unwrap()).collect();
        let total: f32 = ys.iter().map(|y| y.sum().item::<f32>().unwrap()).sum();
        assert!(total > 0.0);
        let peak = rss_mib();
        assert!(peak > before + 200.0, "the workload should be resident: {before:.0} -> {peak:.0} MiB");
    }
    // Dropped: the cache holds the buffers for a few more realizes, then gives them back.
    for _ in 0..6 {
        small();
    }
    let after = rss_mib();
    assert!(
        after < before + 48.0,
        "resident memory stayed up after the workload was dropped: {before:.0} MiB before, {after:.0} MiB after"
    );
}
