//! Code size is bounded: the kernels of the row-wise ops every attention and norm layer uses
//! (max, softmax, log-softmax, layernorm over 4096 columns) render to a few tens of KB of C and
//! compile in seconds. The NaN-propagating max once repeated its operand twice per unrolled
//! level (megabytes of C, minutes of gcc for `[1, 1024]`).

use ferrograd::codegen::get_program;
use ferrograd::nn::LayerNorm;
use ferrograd::runtime::cpu::CpuDevice;
use ferrograd::runtime::Backend;
use ferrograd::schedule::create_schedule;
use ferrograd::tensor::with_default_device;
use ferrograd::Tensor;
use std::sync::Arc;

/// Largest source one of these kernels may render to.
const MAX_SOURCE_BYTES: usize = 40_000;

#[test]
fn row_ops_over_4096_columns_render_small_kernels_that_compile_quickly() {
    with_default_device("CPU", || {
        let cpu = get_device_cpu();
        let norm = LayerNorm::new(vec![4096]);
        let mut specs = Vec::new();
        for rows in [1usize, 64] {
            Tensor::manual_seed(rows as u64);
            let x = Tensor::randn([rows, 4096]).realize().unwrap();
            let graphs = [
                ("max_axis", x.max_axis(1)),
                ("softmax", x.softmax(1)),
                ("log_softmax", x.log_softmax(1)),
                ("layernorm", norm.forward(&x)),
            ];
            for (what, g) in graphs {
                for item in create_schedule(&[g.uop()]).items {
                    let spec = get_program(&item.ast, cpu.renderer(), None);
                    let body = spec.src.len();
                    assert!(
                        body <= MAX_SOURCE_BYTES,
                        "{what} over [{rows}, 4096]: kernel {} renders {body} bytes of C (limit {MAX_SOURCE_BYTES})",
                        spec.name
                    );
                    specs.push(Arc::new(spec));
                }
            }
        }
        // A cache of its own, so every kernel really goes through the compiler.
        let dir = std::env::temp_dir().join(format!("ferrograd-code-size-{}", std::process::id()));
        let fresh = CpuDevice::new().with_cache_dir(dir.clone());
        let start = std::time::Instant::now();
        fresh.compile(&specs).expect("compile");
        let secs = start.elapsed().as_secs_f64();
        let _ = std::fs::remove_dir_all(&dir);
        // Generous (a loaded 2-core machine); the bug this guards against took minutes.
        assert!(secs < 30.0, "{} kernels took {secs:.1} s to compile", specs.len());
    });
}

fn get_device_cpu() -> Arc<dyn Backend> {
    ferrograd::runtime::get_device("CPU").unwrap()
}
