//! Fusion of the processing ops, checked by kernel counts: a forward pass and its backward,
//! realized together, schedule to a small number of kernels. Values are checked by the
//! PyTorch suite (tests/torch); here only the schedule is.

use ferrograd::schedule::kernel_count;
use ferrograd::tensor::{ConvOpts, PoolOpts};
use ferrograd::Tensor;

fn param(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let data: Vec<f32> = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 2000) as f32 / 1000.0 - 1.0
        })
        .collect();
    Tensor::from_vec(data, shape).requires_grad()
}

/// Kernels to realize `loss` and the gradients of `params` together.
fn fwd_bwd_kernels(loss: &Tensor, params: &[&Tensor]) -> usize {
    loss.backward();
    let mut outs = vec![loss.uop()];
    outs.extend(params.iter().map(|p| p.grad().expect("parameter has a gradient").uop()));
    kernel_count(&outs)
}

#[test]
fn linear_relu_sum_forward_and_backward_is_at_most_5_kernels() {
    let (x, w, b) = (param(&[4, 8], 1), param(&[8, 3], 2), param(&[3], 3));
    let loss = (x.matmul(&w) + &b).relu().sum();
    let n = fwd_bwd_kernels(&loss, &[&x, &w, &b]);
    println!("relu(x @ w + b).sum() forward + backward: {n} kernels");
    assert!(n <= 5, "relu(x @ w + b).sum() forward + backward took {n} kernels");
}

/// A convolution is one kernel over the input, plus one small copy of the weights into
/// channels-last order (so the convolution's weight loads are contiguous SIMD vectors).
#[test]
fn conv_forward_is_one_kernel_plus_a_weight_reorder() {
    let (x, w) = (param(&[2, 3, 8, 8], 4), param(&[4, 3, 3, 3], 5));
    for opts in [ConvOpts::default(), ConvOpts::default().stride(2), ConvOpts::default().dilation(2).groups(1)] {
        let y = x.conv2d(&w, None, &opts);
        assert_eq!(kernel_count(&[y.uop()]), 2, "conv2d {opts:?}");
    }
    let padded = x.conv2d(&w, None, &ConvOpts::default().padding(1).stride(2));
    assert_eq!(kernel_count(&[padded.uop()]), 2, "padded conv2d");
}

#[test]
fn conv2d_relu_sum_forward_and_backward_is_at_most_8_kernels() {
    let (x, w, b) = (param(&[2, 3, 8, 8], 6), param(&[4, 3, 3, 3], 7), param(&[4], 8));
    let loss = x.conv2d(&w, Some(&b), &ConvOpts::default().padding(1)).relu().sum();
    let n = fwd_bwd_kernels(&loss, &[&x, &w, &b]);
    println!("conv2d(x, w, b).relu().sum() forward + backward: {n} kernels");
    assert!(n <= 8, "conv2d + relu + sum forward + backward took {n} kernels");
}

#[test]
fn pooling_forward_is_one_kernel() {
    let x = param(&[1, 2, 7, 7], 9);
    assert_eq!(kernel_count(&[x.max_pool2d(3, &PoolOpts::default().stride(2).padding(1)).uop()]), 1);
    assert_eq!(kernel_count(&[x.avg_pool2d(2, &PoolOpts::default()).uop()]), 1);
}

#[test]
fn slicing_and_cat_are_one_kernel() {
    let x = param(&[6, 5], 10);
    let y = Tensor::cat(&[&x.index(&ferrograd::idx![1..5;2, ..;-1]), &x.index(&ferrograd::idx![..2])], 0);
    assert_eq!(kernel_count(&[y.uop()]), 1);
}

/// `x @ w.T` packs `w` into panels inside `no_grad` too (its DETACH nodes once hid the
/// pattern, and a model's forward under `no_grad` ran its Linear layers 3-10x slower).
#[test]
fn no_grad_matmuls_are_scheduled_as_outside_it() {
    // On the CPU, whose SIMD matmuls read packed panels.
    ferrograd::tensor::with_default_device("CPU", no_grad_matmuls_on_cpu);
}

fn no_grad_matmuls_on_cpu() {
    let (x, w) = (param(&[32, 256], 11), param(&[512, 256], 12));
    let plain = kernel_count(&[x.matmul(&w.t()).uop()]);
    let detached = ferrograd::tensor::no_grad(|| kernel_count(&[x.matmul(&w.t()).relu().uop()]));
    assert_eq!(plain, 2, "the panel copy and the matmul");
    assert_eq!(detached, plain);
}

/// Two large matmuls meeting in one elementwise op (SwiGLU's `silu(x @ a.T) * (x @ b.T)`) run
/// as two matmul kernels, each with its own register tiles, not one kernel holding both.
#[test]
fn sibling_matmuls_get_kernels_of_their_own() {
    ferrograd::tensor::with_default_device("CPU", sibling_matmuls_on_cpu);
}

fn sibling_matmuls_on_cpu() {
    let (x, a, b) = (param(&[32, 256], 13), param(&[512, 256], 14), param(&[512, 256], 15));
    let y = x.matmul(&a.t()).silu() * x.matmul(&b.t());
    assert_eq!(kernel_count(&[y.uop()]), 4, "two panel copies and two matmuls");
    // Values against an f64 evaluation.
    let (xv, av, bv) = (x.to_vec::<f32>().unwrap(), a.to_vec::<f32>().unwrap(), b.to_vec::<f32>().unwrap());
    let got = y.to_vec::<f32>().unwrap();
    for (i, g) in got.iter().enumerate() {
        let (r, c) = (i / 512, i % 512);
        let dot = |w: &[f32]| (0..256).map(|k| xv[r * 256 + k] as f64 * w[c * 256 + k] as f64).sum::<f64>();
        let (p, q) = (dot(&av), dot(&bv));
        let want = p / (1.0 + (-p).exp()) * q;
        assert!((*g as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()), "[{r}, {c}]: {g} vs {want}");
    }
    // Small ones stay fused: nothing is gained by a second kernel.
    let (xs, as_, bs) = (param(&[2, 16], 16), param(&[32, 16], 17), param(&[32, 16], 18));
    assert_eq!(kernel_count(&[(xs.matmul(&as_.t()).silu() * xs.matmul(&bs.t())).uop()]), 1);
}

/// A matmul read both in place and at shifted columns (RoPE's `x * cos + rotate_half(x) * sin`)
/// is computed once, in a kernel of its own, not once per reading.
#[test]
fn a_reduce_read_at_shifted_indices_is_computed_once() {
    let (x, w) = (param(&[16, 64], 19), param(&[128, 64], 20));
    let q = x.matmul(&w.t());
    let (first, second) = (q.shrink(&[(0, 16), (0, 64)]), q.shrink(&[(0, 16), (64, 128)]));
    let y = &q * 0.5 + Tensor::cat(&[&second.neg(), &first], -1) * 2.0;
    assert_eq!(kernel_count(&[y.uop()]), 2, "the matmul, then the rotation");
    let (xv, wv, got) = (x.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    let qf = |r: usize, c: usize| (0..64).map(|k| xv[r * 64 + k] as f64 * wv[c * 64 + k] as f64).sum::<f64>();
    for (i, g) in got.iter().enumerate() {
        let (r, c) = (i / 128, i % 128);
        let rotated = if c < 64 { -qf(r, c + 64) } else { qf(r, c - 64) };
        let want = qf(r, c) * 0.5 + rotated * 2.0;
        assert!((*g as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()), "[{r}, {c}]: {g} vs {want}");
    }
}

/// Attention's kernels per call: the scores (with the causal or cache mask as index
/// arithmetic, never a materialized mask); the weights `exp(s - max)`, each row's max computed
/// in the same kernel; and the product with the values, the weights' sum accumulated in the
/// same loop and the division at the store — plus on a SIMD CPU one panel copy of the keys for
/// a long prompt. A decode step (one query row) needs no copy.
#[test]
fn attention_is_at_most_3_kernels_plus_the_key_panels() {
    use ferrograd::tensor::AttentionOpts;
    let simd = ferrograd::runtime::get_device("CPU").unwrap().renderer().target().simd_bytes > 0;
    let kv = |t: usize, seed: u64| param(&[1, 8, t, 64], seed).detach().realize().unwrap();
    let (k, v) = (kv(512, 2), kv(512, 3));
    let opts = AttentionOpts { enable_gqa: true, ..AttentionOpts::default() };
    let prompt = param(&[1, 32, 512, 64], 1).detach().realize().unwrap();
    let n = kernel_count(&[prompt.scaled_dot_product_attention(&k, &v, &opts.clone().causal()).uop()]);
    println!("attention, 512-token causal prompt, 32 heads over 8 kv heads: {n} kernels");
    assert!(n <= 3 + usize::from(simd), "a prompt's attention took {n} kernels");
    let step = param(&[1, 32, 1, 64], 4).detach().realize().unwrap();
    let mask = Tensor::arange(512).lt(300).reshape([1, 512]);
    let n = kernel_count(&[step.scaled_dot_product_attention(&k, &v, &opts.mask(&mask)).uop()]);
    println!("attention, one decode step over a 512-slot cache: {n} kernels");
    assert!(n <= 3, "a decode step's attention took {n} kernels");
}

/// A cat of large reductions runs each in a kernel of its own, then the cat: fused under the
/// cat's pad, every reduction's loop would run for every element of the output, padding
/// included (data-parallel training concatenates gradients into buckets: fused, a convolution's
/// weight gradient ran for all 11,738 elements of its bucket, 500 ms instead of 0.2).
#[test]
fn a_cat_of_reductions_reduces_once_per_output_element() {
    let (a, b) = (param(&[64, 256], 11), param(&[256, 32], 12));
    let (c, d) = (param(&[64, 512], 13), param(&[512, 48], 14));
    let (ab, cd) = (a.matmul(&b), c.matmul(&d));
    let y = Tensor::cat(&[&ab.flatten(), &cd.flatten(), &a.sum_axis(1)], 0);
    // The matmuls get kernels of their own; the small sum (16k inputs) stays in the cat's.
    assert_eq!(kernel_count(&[y.uop()]), 3, "two matmuls, then the cat");
    // Without a pad the elementwise work stays in the reduce's kernel.
    assert_eq!(kernel_count(&[(a.sum_axis(1) * 2.0 + 1.0).uop()]), 1);
}

/// Two sums of one kernel that read the same values in as many steps share one loop (the
/// softmax's sum beside attention's product with the values): `x @ v / x.sum(-1)` is one kernel
/// and its value is the f64 one.
#[test]
fn a_broadcast_sum_beside_a_matmul_over_the_same_rows_is_one_kernel() {
    let (x, v) = (param(&[64, 256], 31).exp(), param(&[256, 48], 32));
    let (x, v) = (x.realize().unwrap(), v.realize().unwrap());
    let y = x.matmul(&v).div(x.sum_keepdim(-1));
    assert_eq!(kernel_count(&[y.uop()]), 1, "the product and the sum in one loop");
    let (xv, vv, got) = (x.to_vec::<f32>().unwrap(), v.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    for (i, g) in got.iter().enumerate() {
        let (r, c) = (i / 48, i % 48);
        let sum: f64 = (0..256).map(|k| xv[r * 256 + k] as f64).sum();
        let dot: f64 = (0..256).map(|k| xv[r * 256 + k] as f64 * vv[k * 48 + c] as f64).sum();
        let want = dot / sum;
        assert!((*g as f64 - want).abs() <= 1e-5 * (1.0 + want.abs()), "[{r}, {c}]: {g} vs {want}");
    }
}

/// A row's max read back along the row (softmax's `x - max(x)`) is computed in the kernel that
/// reads the row on a CPU, once per row: `exp(x - max(x))` is one kernel, against f64.
#[test]
fn a_row_max_read_back_along_its_row_is_one_kernel_on_a_cpu() {
    let x = param(&[96, 300], 33).realize().unwrap();
    let y = x.sub(x.max_keepdim(-1)).exp();
    let work_groups = ferrograd::runtime::get_device(&x.device()).unwrap().renderer().target().has_local;
    assert_eq!(kernel_count(&[y.uop()]), if work_groups { 2 } else { 1 }, "the max inside the exp's kernel");
    let (xv, got) = (x.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    for (i, g) in got.iter().enumerate() {
        let row = &xv[i / 300 * 300..][..300];
        let max = row.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v as f64));
        let want = (xv[i] as f64 - max).exp();
        assert!((*g as f64 - want).abs() <= 1e-6, "[{}]: {g} vs {want}", i);
    }
}

/// A padded operand that a reduce reads many times per element is copied padded first on a CPU
/// (`schedule/padded_inputs.rs`), so the convolution's loads of it are not gated: a 5×5
/// convolution with padding 2 takes one kernel more than the same convolution of an input
/// padded beforehand, and its value is the f64 one (checked at a spread of outputs).
#[test]
fn a_padded_convolution_input_is_copied_padded_first_on_a_cpu() {
    let (x, w) = (param(&[8, 16, 24, 24], 41).detach().realize().unwrap(), param(&[32, 16, 5, 5], 42).detach());
    let w = w.realize().unwrap();
    let y = x.conv2d(&w, None, &ConvOpts::default().padding(2));
    let prepadded = x.pad_constant(&[(0, 0), (0, 0), (2, 2), (2, 2)], 0.0).realize().unwrap();
    let plain = prepadded.conv2d(&w, None, &ConvOpts::default());
    let work_groups = ferrograd::runtime::get_device(&x.device()).unwrap().renderer().target().has_local;
    let (n, n_plain) = (kernel_count(&[y.uop()]), kernel_count(&[plain.uop()]));
    assert_eq!(n, n_plain + usize::from(!work_groups), "the padded input copied first ({n} vs {n_plain} kernels)");
    let (xv, wv, got) = (x.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap(), y.to_vec::<f32>().unwrap());
    for i in (0..got.len()).step_by(97) {
        let (b, co, oy, ox) = (i / (32 * 576), i / 576 % 32, i / 24 % 24, i % 24);
        let mut want = 0.0f64;
        for ci in 0..16 {
            for ky in 0..5 {
                for kx in 0..5 {
                    let (iy, ix) = (oy + ky, ox + kx);
                    if (2..26).contains(&iy) && (2..26).contains(&ix) {
                        let xi = ((b * 16 + ci) * 24 + iy - 2) * 24 + ix - 2;
                        want += xv[xi] as f64 * wv[((co * 16 + ci) * 5 + ky) * 5 + kx] as f64;
                    }
                }
            }
        }
        assert!(
            (got[i] as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()),
            "[{b}, {co}, {oy}, {ox}]: {} vs {want}",
            got[i]
        );
    }
}
