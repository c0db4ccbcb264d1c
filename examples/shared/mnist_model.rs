//! The beautiful_mnist model (tinygrad's examples/beautiful_mnist.py), shared by the
//! `beautiful_mnist` example and the training-step benchmark.

use ferrograd::nn::optim::Optimizer;
use ferrograd::nn::{BatchNorm, Conv2d, Linear, Module};
use ferrograd::tensor::PoolOpts;
use ferrograd::{DType, Tensor};

#[derive(Module)]
pub struct Model {
    l1: Conv2d,
    l2: Conv2d,
    bn1: BatchNorm,
    l3: Conv2d,
    l4: Conv2d,
    bn2: BatchNorm,
    l5: Linear,
}

impl Default for Model {
    fn default() -> Model {
        Model::new()
    }
}

impl Model {
    pub fn new() -> Model {
        Model {
            l1: Conv2d::new(1, 32, 5),
            l2: Conv2d::new(32, 32, 5),
            bn1: BatchNorm::new(32),
            l3: Conv2d::new(32, 64, 3),
            l4: Conv2d::new(64, 64, 3),
            bn2: BatchNorm::new(64),
            l5: Linear::new(576, 10, true),
        }
    }

    pub fn forward(&self, x: &Tensor) -> Tensor {
        let pool = PoolOpts::default();
        let x = self.l1.forward(&x.cast(DType::F32)).relu();
        let x = self.l2.forward(&x).relu();
        let x = self.bn1.forward(&x).max_pool2d(2, &pool);
        let x = self.l3.forward(&x).relu();
        let x = self.l4.forward(&x).relu();
        let x = self.bn2.forward(&x).max_pool2d(2, &pool);
        self.l5.forward(&x.flatten_range(1, -1))
    }

    /// One training step on `x` and labels `y` (in training mode): the loss, then the
    /// optimizer's lazy updates. Realize them together to run the step as one schedule.
    pub fn train_step(&self, opt: &mut impl Optimizer, x: &Tensor, y: &Tensor) -> Vec<Tensor> {
        ferrograd::tensor::train(|| {
            opt.zero_grad();
            let loss = self.forward(x).sparse_categorical_crossentropy(y, -1, 0.0, Default::default());
            loss.backward();
            let mut outs = vec![loss];
            outs.extend(opt.schedule_step());
            outs
        })
    }
}
