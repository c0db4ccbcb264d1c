//! tinygrad's README example: a matmul written as reshape, multiply and sum fuses into one
//! kernel. Run with DEBUG=2 to see the one `***` kernel line, DEBUG=4 for its C source.

use ferrograd::Tensor;

fn main() -> ferrograd::Result<()> {
    let n = 64;
    // Random inputs made on the host, so the only kernel is the matmul.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut rand = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let av: Vec<f32> = (0..n * n).map(|_| rand()).collect();
    let bv: Vec<f32> = (0..n * n).map(|_| rand()).collect();
    let a = Tensor::from_vec(av.clone(), [n, n]);
    let b = Tensor::from_vec(bv.clone(), [n, n]);

    let c = (a.reshape([n, 1, n]) * b.t().reshape([1, n, n])).sum_axis(2);
    let got = c.to_vec::<f32>()?;

    // Reference: a plain f64 loop.
    let mut max_err = 0f64;
    for i in 0..n {
        for j in 0..n {
            let want: f64 = (0..n).map(|k| av[i * n + k] as f64 * bv[k * n + j] as f64).sum();
            max_err = max_err.max((got[i * n + j] as f64 - want).abs());
        }
    }
    println!("max abs error: {max_err:e}");
    Ok(())
}
