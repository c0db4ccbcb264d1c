//! VIZ's demo: two training steps of a small MLP (Linear, GELU, LayerNorm, Linear, cross
//! entropy, Adam) on random data. `VIZ=1 cargo run --release --example viz` serves the page at
//! exit: the tensor graph of each realize drawn with its kernels, and every kernel's passes,
//! rewrite rules, opts and source. `VIZ=json VIZ_OUT=log.json` writes the same data as JSON.

use ferrograd::nn::optim::{adam, Optimizer};
use ferrograd::nn::{get_parameters, LayerNorm, Linear, Module};
use ferrograd::{DType, Tensor};

#[derive(Module)]
struct Mlp {
    l1: Linear,
    norm: LayerNorm,
    l2: Linear,
}

fn main() -> ferrograd::Result<()> {
    Tensor::manual_seed(0);
    let model = Mlp { l1: Linear::new(32, 64, true), norm: LayerNorm::new(vec![64]), l2: Linear::new(64, 10, true) };
    let mut opt = adam(get_parameters(&model), 0.01);
    let x = Tensor::randn([128, 32]).realize()?;
    let y = Tensor::randint([128], 0, 10).cast(DType::I32).realize()?;
    for step in 0..2 {
        let outs = ferrograd::tensor::train(|| {
            opt.zero_grad();
            let h = model.norm.forward(&model.l1.forward(&x).gelu());
            let loss = model.l2.forward(&h).sparse_categorical_crossentropy(&y, -1, 0.0, Default::default());
            loss.backward();
            let mut outs = vec![loss];
            outs.extend(opt.schedule_step());
            outs
        });
        Tensor::realize_all(&outs.iter().collect::<Vec<_>>())?;
        println!("step {step}: loss {:.4}", outs[0].item::<f32>()?);
    }
    if std::env::var("VIZ").is_err() {
        println!("run with VIZ=1 to see the compiler's work in a browser");
    }
    Ok(())
}
