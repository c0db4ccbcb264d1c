//! BEAM search picks opts by timing candidates on the device, caches the winner on disk, and a
//! second search of the same kernel uses the cache. (Own test binary: it sets FERROGRAD_CACHE.)
//! Runs on `DEV` (default CPU); on a device with work groups the search includes LOCAL/GROUP.

use ferrograd::engine::beam::beam_search;
use ferrograd::runtime::get_device;
use ferrograd::schedule::create_schedule;
use ferrograd::Tensor;

#[test]
fn beam_finds_opts_caches_them_and_keeps_results() {
    let dir = std::env::temp_dir().join(format!("ferrograd-beam-{}", std::process::id()));
    std::env::set_var("FERROGRAD_CACHE", &dir);
    std::env::set_var("BEAM_VERBOSE", "0");
    let a = Tensor::from_vec((0..64 * 48).map(|i| (i % 7) as f32).collect(), [64, 48]);
    let b = Tensor::from_vec((0..48 * 32).map(|i| (i % 5) as f32 - 2.0).collect(), [48, 32]);
    let c = a.matmul(&b);
    let sched = create_schedule(&[c.uop()]);
    let item = &sched.items[0];
    let dev = get_device(&std::env::var("DEV").unwrap_or_else(|_| "CPU".into())).unwrap();
    let t = std::time::Instant::now();
    let found = beam_search(&item.ast, &item.bufs, &item.var_vals, dev.as_ref(), 2).unwrap().expect("a result");
    let first = t.elapsed();
    assert!(std::fs::read_dir(dir.join("beam")).unwrap().count() == 1, "winner not cached");
    let t = std::time::Instant::now();
    let again = beam_search(&item.ast, &item.bufs, &item.var_vals, dev.as_ref(), 2).unwrap().expect("a cached result");
    assert_eq!(found, again);
    assert!(t.elapsed() < first, "the cached lookup searched again");
    // The chosen opts compute the same matmul.
    let spec = ferrograd::codegen::get_program(&item.ast, dev.renderer(), Some(&found));
    let prog = dev.compile(&[std::sync::Arc::new(spec)]).unwrap().remove(0);
    let mems: Vec<_> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    prog.launch(&mems, &[], false).unwrap();
    dev.synchronize().unwrap();
    let got: Vec<f32> =
        item.bufs[0].to_bytes().unwrap().chunks_exact(4).map(|x| f32::from_le_bytes(x.try_into().unwrap())).collect();
    let want: Vec<f32> = (0..64 * 32)
        .map(|ij| (0..48).map(|k| ((ij / 32 * 48 + k) % 7) as f32 * (((k * 32 + ij % 32) % 5) as f32 - 2.0)).sum())
        .collect();
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(dir);
}
