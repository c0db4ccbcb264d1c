//! Each optimizer's first three steps on a small MLP match PyTorch's parameters to 1e-5
//! (fixture: scripts/optim_fixture.py).

use ferrograd::nn::optim::{adam, adamw, Optimizer, LAMB, SGD};
use ferrograd::Tensor;
use serde_json::Value;

const ORDER: [&str; 4] = ["w1", "b1", "w2", "b2"];

fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

fn run(name: &str) {
    let fx: Value = serde_json::from_str(include_str!("fixtures/optim.json")).unwrap();
    let shape = |k: &str| -> Vec<usize> {
        fx["shapes"][k].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
    };
    let params: Vec<Tensor> =
        ORDER.iter().map(|k| Tensor::from_vec(floats(&fx["init"][*k]), shape(k)).requires_grad()).collect();
    let x = Tensor::from_vec(floats(&fx["x"]), [5, 4]);
    let y = Tensor::from_vec(floats(&fx["y"]), [5, 2]);
    let cfg = &fx["configs"][name];
    let f = |k: &str| cfg.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
    let mut opt: Box<dyn Optimizer> = match cfg["kind"].as_str().unwrap() {
        "sgd" => Box::new(SGD::with(
            params.clone(),
            f("lr"),
            f("momentum"),
            f("weight_decay"),
            cfg.get("nesterov").and_then(|v| v.as_bool()).unwrap_or(false),
        )),
        "adam" => Box::new(adam(params.clone(), f("lr"))),
        "adamw" => Box::new(adamw(params.clone(), f("lr"), f("weight_decay"))),
        _ => Box::new(LAMB::with(params.clone(), f("lr"), 0.9, 0.999, 1e-6, f("weight_decay"), false)),
    };
    for (step, want) in fx["steps"][name].as_array().unwrap().iter().enumerate() {
        opt.zero_grad();
        let h = (x.matmul(&params[0].t()) + &params[1]).relu();
        let loss = (h.matmul(&params[2].t()) + &params[3] - &y).square().mean();
        loss.backward();
        opt.step().unwrap();
        for (k, p) in ORDER.iter().zip(&params) {
            let got = p.to_vec::<f32>().unwrap();
            for (i, (g, w)) in got.iter().zip(floats(&want[*k])).enumerate() {
                assert!((g - w).abs() <= 1e-5, "{name} step {} {k}[{i}]: got {g}, want {w}", step + 1);
            }
        }
    }
}

#[test]
fn sgd() {
    run("sgd");
}
#[test]
fn sgd_momentum() {
    run("sgd_momentum");
}
#[test]
fn sgd_nesterov() {
    run("sgd_nesterov");
}
#[test]
fn sgd_weight_decay() {
    run("sgd_weight_decay");
}
#[test]
fn adam_matches_pytorch() {
    run("adam");
}
#[test]
fn adamw_matches_pytorch() {
    run("adamw");
}
#[test]
fn lamb_matches_reference() {
    run("lamb");
}

#[test]
fn a_training_step_is_one_schedule_and_lr_changes_without_recompiling() {
    let w = Tensor::from_vec(vec![1.0f32, -2.0, 0.5], [3]).requires_grad();
    let mut opt = SGD::new(vec![w.clone()], 0.5);
    for lr in [0.5, 0.25] {
        opt.set_lr(lr).unwrap();
        opt.zero_grad();
        let before = w.to_vec::<f32>().unwrap();
        (w.square().sum()).backward();
        opt.step().unwrap();
        let after = w.to_vec::<f32>().unwrap();
        for (b, a) in before.iter().zip(&after) {
            assert!((a - (b - lr as f32 * 2.0 * b)).abs() < 1e-6);
        }
    }
}
