//! The on-disk kernel cache survives damage and the loaded kernels stay bounded: a truncated or
//! garbage shared object in the cache is replaced (it used to SIGBUS every later process in
//! `dlopen`), and a process that sees many shapes keeps a bounded number of libraries mapped.
//! One test per concern, each with its own cache folder; the bounded-libraries test is the only
//! one touching the engine's global cache.

use ferrograd::codegen::get_program;
use ferrograd::runtime::cpu::CpuDevice;
use ferrograd::runtime::{Backend, DeviceMemory};
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;
use std::path::PathBuf;
use std::sync::Arc;

fn temp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ferrograd-cache-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Compiles and runs `(x + salt) * 3` on a CPU device using `dir` as its cache.
fn run_on(dir: &std::path::Path, salt: f32) -> Vec<f32> {
    let dev = CpuDevice::new().with_cache_dir(dir.to_path_buf());
    let t = (Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], [4]) + salt) * 3.0;
    let sched = create_schedule(&[t.uop()]);
    let item = &sched.items[0];
    let spec = Arc::new(get_program(&item.ast, dev.renderer(), None));
    let prog = dev.compile(&[spec]).expect("compiles or loads");
    let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    prog[0].launch(&mems, &[], false).unwrap();
    item.bufs[0].to_bytes().unwrap().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn entries(dir: &std::path::Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "so")).collect()
        })
        .unwrap_or_default()
}

#[test]
fn truncated_and_garbage_cache_entries_are_replaced() {
    let dir = temp("corrupt");
    let want = vec![4.5f32, 7.5, 10.5, 13.5];
    assert_eq!(run_on(&dir, 0.5), want);
    let files = entries(&dir);
    assert!(!files.is_empty(), "the kernel was stored in the cache");
    for (k, damage) in
        [|b: &[u8]| b[..b.len() / 3].to_vec(), |_: &[u8]| b"not an ELF file".to_vec(), |b: &[u8]| b[..64].to_vec()]
            .iter()
            .enumerate()
    {
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            std::fs::write(f, damage(&bytes)).unwrap();
        }
        // A fresh device (as a new process would) must not load the damaged file.
        assert_eq!(run_on(&dir, 0.5), want, "damage {k}");
        for f in entries(&dir) {
            let len = std::fs::metadata(&f).unwrap().len();
            assert!(len > 1000, "damage {k}: {f:?} was not replaced ({len} bytes)");
        }
    }
    // No temporary files are left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("tmp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let _ = std::fs::remove_dir_all(dir);
}

/// Shared objects from `dir` mapped into this process.
fn mapped_libraries(dir: &std::path::Path) -> usize {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut libs: Vec<&str> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.starts_with(dir.to_str().unwrap()))
        .collect();
    libs.sort_unstable();
    libs.dedup();
    libs.len()
}

#[test]
fn many_shapes_keep_a_bounded_number_of_libraries_loaded() {
    // Through the engine, as a user's realizes go: it keeps 16 compiled kernels here (1024 by
    // default), and a library is unloaded once no kept kernel is from it.
    ferrograd::engine::set_program_cache_capacity(16);
    let dir = ferrograd::helpers::cache_dir().join("cpu");
    let mut peak = 0;
    for n in 1..=80usize {
        let t = Tensor::from_vec(vec![1.0f32; n], [n]) * 2.0;
        assert_eq!(t.to_vec::<f32>().unwrap(), vec![2.0; n]);
        peak = peak.max(mapped_libraries(&dir));
    }
    assert!(peak <= 18, "{peak} kernel libraries mapped at once with 16 kernels kept");
}
