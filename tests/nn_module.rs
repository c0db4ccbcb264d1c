//! Parameters are discovered by name through #[derive(Module)].

use ferrograd::nn::{get_parameters, state_dict, Module};
use ferrograd::Tensor;

#[derive(Module)]
struct Block {
    weight: Tensor,
    bias: Option<Tensor>,
    #[module(skip)]
    _note: &'static str,
}

#[derive(Module)]
struct Net {
    layers: Vec<Block>,
    head: Block,
    running: Tensor,
    scale: f32,
}

#[test]
fn names_follow_the_struct_layout() {
    let blk = |b: bool| Block {
        weight: Tensor::ones([2, 2]).requires_grad(),
        bias: b.then(|| Tensor::zeros([2]).requires_grad()),
        _note: "",
    };
    let net = Net { layers: vec![blk(true), blk(false)], head: blk(true), running: Tensor::zeros([2]), scale: 1.0 };
    let names: Vec<String> = state_dict(&net).into_keys().collect();
    assert_eq!(
        names,
        vec!["head.bias", "head.weight", "layers.0.bias", "layers.0.weight", "layers.1.weight", "running"]
    );
    // `running` does not require grad: not a parameter.
    assert_eq!(get_parameters(&net).len(), 5);
}
