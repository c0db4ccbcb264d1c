//! A reduce kernel with an elementwise tail fused after it (tanh or an erf-GELU after a matmul,
//! BatchNorm, ReLU and a pooling max after a convolution) keeps the layout and register tile
//! the plain reduce gets: the tail is vectorized (f32 comparisons, WHERE and MAX have vector
//! forms), and a program over the size budget shrinks its tile instead of losing it.

use ferrograd::codegen::get_program;
use ferrograd::nn::{BatchNorm, Conv2d};
use ferrograd::runtime::get_device;
use ferrograd::schedule::create_schedule;
use ferrograd::tensor::PoolOpts;
use ferrograd::Tensor;

/// Name and opts of every reduce kernel the heuristic builds for `t` on the CPU.
fn reduce_kernels(t: &Tensor) -> Vec<(String, String)> {
    let dev = get_device("CPU").expect("the CPU device");
    create_schedule(&[t.uop()])
        .items
        .iter()
        .map(|item| get_program(&item.ast, dev.renderer(), None))
        .filter(|spec| spec.name.starts_with('r'))
        .map(|spec| (spec.name, spec.opts))
        .collect()
}

fn upcasts(opts: &str) -> usize {
    opts.split_whitespace().filter(|o| o.starts_with('U')).count()
}

#[test]
fn a_matmul_keeps_its_opts_whatever_tail_is_fused() {
    let x = Tensor::randn([2048, 384]);
    let w = Tensor::randn([1536, 384]);
    let b = Tensor::randn([1536]);
    let y = || x.matmul(&w.t()) + &b;
    let graphs =
        [("plain (realized before a GELU)", y()), ("exp", y().exp()), ("tanh", y().tanh()), ("gelu", y().gelu())];
    let opts: Vec<(&str, Vec<(String, String)>)> = graphs.iter().map(|(n, t)| (*n, reduce_kernels(t))).collect();
    let (_, plain) = &opts[0];
    assert_eq!(plain.len(), 1, "one matmul kernel: {plain:?}");
    assert!(upcasts(&plain[0].1) >= 2, "the plain matmul has a register tile: {plain:?}");
    for (name, kernels) in &opts[1..] {
        assert_eq!(kernels.len(), 1, "{name}: {kernels:?}");
        assert_eq!(kernels[0].1, plain[0].1, "{name} fused after the matmul changed its opts");
    }
}

#[test]
fn a_convolution_with_batchnorm_relu_and_pooling_keeps_a_register_tile_at_any_batch() {
    let conv = Conv2d::new(32, 32, 5);
    let bn = BatchNorm::new(32);
    for batch in [1000, 10000] {
        let x = Tensor::randn([batch, 32, 24, 24]);
        let y = bn.forward(&conv.forward(&x).relu()).max_pool2d(2, &PoolOpts::default());
        for (name, opts) in reduce_kernels(&y) {
            assert!(upcasts(&opts) >= 2, "batch {batch}: {name} has no register tile: {opts}");
        }
    }
}

/// FLOPs of the one kernel of `t` (every kernel of its schedule, summed), as DEBUG=2 reports them.
fn flops(t: &Tensor) -> u64 {
    let dev = get_device("CPU").expect("the CPU device");
    create_schedule(&[t.uop()]).items.iter().map(|item| get_program(&item.ast, dev.renderer(), None).flops).sum()
}

#[test]
fn flop_counts_match_hand_counts_with_fused_tails() {
    use ferrograd::tensor::ConvOpts;
    // A matmul: one multiply and one add per term.
    let (m, k, n) = (64usize, 48usize, 80usize);
    let a = Tensor::randn([m, k]).realize().unwrap();
    let b = Tensor::randn([k, n]).realize().unwrap();
    assert_eq!(flops(&a.matmul(&b)), (2 * m * k * n) as u64, "matmul");
    // Its bias and tanh run once per output, not once per term.
    let bias = Tensor::randn([n]).realize().unwrap();
    let with_tail = flops(&(a.matmul(&b) + &bias).relu());
    assert_eq!(with_tail, (2 * m * k * n + 2 * m * n) as u64, "matmul + bias + relu (one add, one select per output)");

    // A convolution: 2 * N * Cout * Ho * Wo * Cin * K * K.
    let (batch, cin, cout, hw, kk) = (2usize, 3usize, 4usize, 8usize, 3usize);
    let x = Tensor::randn([batch, cin, hw, hw]).realize().unwrap();
    let w = Tensor::randn([cout, cin, kk, kk]).realize().unwrap();
    let conv = x.conv2d(&w, None, &ConvOpts::default());
    let outs = batch * cout * (hw - kk + 1) * (hw - kk + 1);
    let conv_flops = (2 * outs * cin * kk * kk) as u64;
    assert_eq!(flops(&conv), conv_flops, "conv2d");
    // Then ReLU and a 2x2 max-pool fused after it: one select per conv output, one max per
    // window element.
    let pooled = conv.relu().max_pool2d(2, &PoolOpts::default());
    assert_eq!(flops(&pooled), conv_flops + 2 * outs as u64, "conv2d + relu + max_pool2d");
}

/// Attention's output, divided by each head's softmax sum as the output projection reads it (a
/// decode step): the matrix-vector product keeps its per-lane partial sums, with the head's sum
/// loaded once per step for every lane (it used to fall back to a scalar sum, 4-6x slower).
#[test]
fn a_matrix_vector_product_with_a_per_group_scale_on_its_input_stays_vectorized() {
    let dev = get_device("CPU").expect("the CPU device");
    if dev.renderer().target().simd_bytes < 16 {
        return; // no SIMD vectors on this machine
    }
    let (heads, dim) = (8, 64);
    let v: Vec<f32> = (0..heads * dim).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
    let s: Vec<f32> = (0..heads).map(|h| 1.0 + h as f32).collect();
    let w: Vec<f32> = (0..96 * heads * dim).map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0).collect();
    let attn = Tensor::from_vec(v.clone(), [heads, 1, dim]).div(Tensor::from_vec(s.clone(), [heads, 1, 1]));
    let wt = Tensor::from_vec(w.clone(), [96, heads * dim]).realize().unwrap();
    let y = attn.reshape([1, heads * dim]).matmul(&wt.t());
    let items = create_schedule(&[y.uop()]).items;
    let srcs: Vec<String> = items.iter().map(|i| get_program(&i.ast, dev.renderer(), None).src).collect();
    assert_eq!(srcs.len(), 1, "the division fuses into the product");
    let vector_acc = srcs[0].lines().any(|l| l.trim_start().starts_with("vfloat") && l.trim_end().ends_with(" acc0;"));
    assert!(vector_acc, "no vector accumulator:\n{}", srcs[0]);
    let got: Vec<f32> = y.to_vec().unwrap();
    for (o, g) in got.iter().enumerate() {
        let want: f64 = (0..heads * dim).map(|k| v[k] as f64 / s[k / dim] as f64 * w[o * heads * dim + k] as f64).sum();
        assert!((*g as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()), "output {o}: {g} (want {want})");
    }
}
