use ferrograd::tensor::ConvOpts;
use ferrograd::Tensor;
fn main() {
    let x = Tensor::randn([64, 32, 28, 28]).realize().unwrap();
    let w = Tensor::randn([64, 32, 3, 3]).realize().unwrap();
    for _ in 0..3 {
        let t = std::time::Instant::now();
        x.conv2d(&w, None, &ConvOpts::default()).realize().unwrap();
        let dt = t.elapsed().as_secs_f64();
        println!("{:.1} GFLOP/s", 2.0 * 64.0 * 64.0 * 26.0 * 26.0 * 32.0 * 9.0 / dt / 1e9);
    }
}
