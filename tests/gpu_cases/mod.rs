//! Graphs shared by the GPU code generation tests (CUDA, AMD): a representative set of kernels (elementwise, reduce,
//! matmul, conv and pooling, softmax, 16-bit floats, integers, random numbers, gathers, and a
//! training step of a small net with Adam). Each case builds its tensors on the current default
//! device (see `with_default_device`) from fixed data, so two devices see identical inputs.
#![allow(dead_code)]

use ferrograd::nn::optim::{adam, Optimizer};
use ferrograd::tensor::{train, with_default_device, AttentionOpts, ConvOpts, PoolOpts, Reduction};
use ferrograd::{DType, Dim, Tensor, Variable};

pub struct Case {
    pub name: &'static str,
    pub build: fn() -> Vec<Tensor>,
}

/// Fixed pseudo-random f32 data in [lo, hi) (xorshift64*).
pub fn data(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            let u = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32;
            lo + (hi - lo) * u
        })
        .collect()
}

fn t(seed: u64, shape: &[usize]) -> Tensor {
    Tensor::from_slice(&data(seed, shape.iter().product(), -2.0, 2.0)).reshape(shape.to_vec())
}

fn ints(seed: u64, n: usize, lo: i32, hi: i32) -> Tensor {
    let v: Vec<i32> = data(seed, n, 0.0, 1.0).iter().map(|u| lo + (u * (hi - lo) as f32) as i32).collect();
    Tensor::from_slice(&v)
}

pub fn cases() -> Vec<Case> {
    vec![
        Case {
            // Symbolic shapes: attention over `pos + 1` keys of a cache (grouped heads), and a
            // row at a symbolic offset; the kernels take `pos` as an argument.
            name: "symbolic",
            build: || {
                let pos = Variable::new("pos", 0, 15);
                let (kc, vc, q) = (t(40, &[1, 2, 16, 8]), t(41, &[1, 2, 16, 8]), t(42, &[1, 4, 1, 8]));
                let c = |d: usize| (Dim::Const(0), Dim::Const(d));
                let window = [c(1), c(2), (Dim::Const(0), pos.bind(9) + 1usize), c(8)];
                let (k, v) = (kc.shrink_dims(&window), vc.shrink_dims(&window));
                let att = q.scaled_dot_product_attention(&k, &v, &AttentionOpts::default().gqa());
                vec![att, kc.narrow(2, pos.bind(9), 1).sum_axis(3)]
            },
        },
        Case {
            name: "elementwise",
            build: || {
                let (a, b, c) = (t(1, &[64, 33]), t(2, &[64, 33]), t(3, &[33]));
                vec![
                    ((&a * &b + &c).relu() * 2.0),
                    a.exp(),
                    (a.abs() + 0.1).log(),
                    a.sin(),
                    a.abs().sqrt(),
                    a.sigmoid(),
                    a.lt(&b).where_(&a, &b),
                    a.tanh(),
                    a.gelu(),
                    a.div(b.abs().add(0.5)),
                ]
            },
        },
        Case {
            name: "reduce",
            build: || {
                let x = t(4, &[37, 129]);
                vec![x.sum_axis(1), x.max_axis(0), x.mean(), t(5, &[1 << 16]).sum(), x.cumsum(1), x.argmax_axis(1)]
            },
        },
        Case {
            name: "matmul",
            build: || vec![t(6, &[65, 48]).matmul(&t(7, &[48, 33])), t(8, &[4, 16, 8]).matmul(&t(9, &[4, 8, 12]))],
        },
        Case {
            name: "conv",
            build: || {
                let x = t(10, &[2, 3, 9, 9]);
                let y = x.conv2d(&t(11, &[5, 3, 3, 3]), Some(&t(12, &[5])), &ConvOpts::default().padding(1));
                vec![y.clone(), y.max_pool2d(2, &PoolOpts::default()), x.avg_pool2d(3, &PoolOpts::default())]
            },
        },
        Case {
            name: "softmax",
            build: || {
                let x = t(13, &[16, 100]) * 4.0;
                vec![x.softmax(1), x.log_softmax(-1)]
            },
        },
        Case {
            name: "half",
            build: || {
                let (a, b) = (t(14, &[300]), t(15, &[300]));
                let h = a.cast(DType::F16) * b.cast(DType::F16) + 1.0;
                vec![h.cast(DType::F32), (a * 1000.0).cast(DType::BF16).cast(DType::F32), h.sum().cast(DType::F32)]
            },
        },
        Case {
            name: "integers",
            build: || {
                let (a, b) = (ints(16, 200, -1000, 1000), ints(17, 200, 1, 50));
                vec![
                    (&a + &b).mul(3),
                    a.div_trunc(&b),
                    a.remainder(&b),
                    a.shl(2),
                    a.bitand(&b),
                    a.bitxor(&b),
                    a.cast(DType::F32) * 0.5,
                    a.cast(DType::I64).mul(4_000_000i64),
                ]
            },
        },
        Case {
            name: "random",
            build: || {
                Tensor::manual_seed(7);
                vec![Tensor::rand([1000]), Tensor::randn([257]), Tensor::randint([100], 0, 10)]
            },
        },
        Case {
            name: "gather",
            build: || {
                let x = t(18, &[10, 20]);
                let idx = ints(19, 30, 0, 20).reshape([10, 3]);
                vec![x.gather(1, &idx), ints(20, 12, 0, 5).one_hot(5)]
            },
        },
        Case {
            name: "train_step",
            build: || {
                // A small conv net: conv, relu, pool, linear, cross-entropy, backward, Adam.
                let w1 = t(21, &[4, 1, 3, 3]).mul(0.5).contiguous().realize().expect("w1").requires_grad();
                let w2 = t(22, &[16, 10]).mul(0.2).contiguous().realize().expect("w2").requires_grad();
                let x = t(23, &[8, 1, 6, 6]);
                let y = ints(24, 8, 0, 10);
                let mut opt = adam(vec![w1.clone(), w2.clone()], 1e-2);
                train(|| {
                    let h = x.conv2d(&w1, None, &ConvOpts::default()).relu().max_pool2d(2, &PoolOpts::default());
                    let logits = h.reshape([8, 16]).matmul(&w2);
                    let loss = logits.sparse_categorical_crossentropy(&y, -1, 0.0, Reduction::Mean);
                    loss.backward();
                    let mut outs = vec![loss];
                    outs.extend(opt.schedule_step());
                    outs
                })
            },
        },
    ]
}

/// The case's outputs on `device`, each as f64 values.
pub fn run_case(case: &Case, device: &str) -> Vec<Vec<f64>> {
    with_default_device(device, || {
        let outs = (case.build)();
        Tensor::realize_all(&outs.iter().collect::<Vec<_>>()).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        outs.iter()
            .map(|o| {
                let v = o.cast(DType::F64).to_vec::<f64>();
                v.unwrap_or_else(|e| panic!("{} on {device}: {e}", case.name))
            })
            .collect()
    })
}

/// Runs every case on both devices and compares elementwise (NaN equals NaN).
pub fn compare_devices(dev: &str, oracle: &str) {
    for case in cases() {
        let (got, want) = (run_case(&case, dev), run_case(&case, oracle));
        assert_eq!(got.len(), want.len());
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g.len(), w.len(), "{} output {k}: lengths differ", case.name);
            for (i, (x, y)) in g.iter().zip(w).enumerate() {
                let ok = (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-5 + 1e-3 * y.abs();
                assert!(ok, "{} output {k} element {i}: {dev} gives {x}, {oracle} gives {y}", case.name);
            }
        }
        eprintln!("{}: {dev} matches {oracle}", case.name);
    }
}
