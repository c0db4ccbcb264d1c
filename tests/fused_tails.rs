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
