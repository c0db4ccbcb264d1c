//! Regression tests for what the differential fuzzer (`examples/fuzz`) and the issue that asked
//! for it found: each case once gave a wrong value, invalid C or a crash on some device. Values
//! are checked against references computed here in plain Rust, on CPU and INTERP.

mod common;
use common::for_each_device;
use ferrograd::codegen::opts::parse_opts;
use ferrograd::codegen::try_program;
use ferrograd::runtime::{get_device, DeviceMemory};
use ferrograd::schedule::create_schedule;
use ferrograd::{DType, Tensor};
use std::sync::Arc;

fn f32s(t: &Tensor) -> Vec<f32> {
    t.to_vec::<f32>().expect("realize")
}

/// Inputs whose sums are exact in f32 (multiples of 1/16), from a simple formula.
fn data(n: usize, salt: usize) -> Vec<f32> {
    (0..n).map(|i| (((i * 7 + salt * 13) % 23) as f32 - 11.0) / 16.0).collect()
}

#[test]
fn row_pads_keep_every_row() {
    // gcc 12.2's loop vectorizer at -O3 zeroed the middle row (19 of 196 small `[n, 2]` pads).
    for_each_device(|dev| {
        for n in 1..=7usize {
            for (before, after) in [(1, 2), (2, 1), (0, 3), (3, 0), (1, 1)] {
                let x = data(n * 2, n);
                let got = f32s(&Tensor::from_vec(x.clone(), [n, 2]).pad(&[(before, after), (0, 0)]));
                let mut want = vec![0.0f32; (n + before + after) * 2];
                want[before * 2..(before + n) * 2].copy_from_slice(&x);
                assert_eq!(got, want, "[{n}, 2].pad(({before}, {after})) on {dev}");
            }
        }
    });
}

#[test]
fn cumsum_then_sum_is_exact() {
    // `x[5, 6].cumsum(0).sum_axis(0)`: miscompiled by the same loop vectorizer.
    for_each_device(|dev| {
        for (rows, cols, axis) in [(5usize, 6usize, 0isize), (7, 4, 1), (3, 9, 0)] {
            let x = data(rows * cols, rows + cols);
            let t = Tensor::from_vec(x.clone(), [rows, cols]).cumsum(axis).sum_axis(axis);
            let got = f32s(&t);
            let want: Vec<f32> = if axis == 0 {
                (0..cols).map(|c| (0..rows).map(|r| (rows - r) as f32 * x[r * cols + c]).sum()).collect()
            } else {
                (0..rows).map(|r| (0..cols).map(|c| (cols - c) as f32 * x[r * cols + c]).sum()).collect()
            };
            assert_eq!(got, want, "[{rows}, {cols}].cumsum({axis}).sum_axis({axis}) on {dev}");
        }
    });
}

/// Runs the one kernel of `t` on `dev` with exactly `opts`, returning the first f32 of its output.
fn run_with_opts(t: &Tensor, dev: &str, opts: &str) -> f32 {
    run_with_opts_all(t, dev, opts)[0]
}

/// Runs the one kernel of `t` on `dev` with exactly `opts`, returning its f32 output.
fn run_with_opts_all(t: &Tensor, dev: &str, opts: &str) -> Vec<f32> {
    let d = get_device(dev).unwrap();
    let sched = create_schedule(&[t.uop()]);
    assert_eq!(sched.items.len(), 1, "one kernel");
    let item = &sched.items[0];
    let spec = Arc::new(try_program(&item.ast, d.renderer(), &parse_opts(opts).unwrap()).unwrap());
    let prog = d.compile(&[spec]).unwrap().remove(0);
    let mems: Vec<&DeviceMemory> = item.bufs.iter().map(|b| b.memory().unwrap()).collect();
    prog.launch(&mems, &[], false).unwrap();
    item.bufs[0].to_bytes().unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

#[test]
fn flipped_sum_without_opts_is_exact() {
    // With NOOPT=1, `x[5, 3].flip(1).sum()` was wrong; here the kernel is built without opts.
    let x = data(15, 3);
    let want: f32 = x.iter().sum();
    for_each_device(|dev| {
        let t = Tensor::from_vec(x.clone(), [5, 3]).flip(1).sum();
        assert_eq!(run_with_opts(&t, dev, ""), want, "flip(1).sum() without opts on {dev}");
    });
}

#[test]
fn fused_cumsum_pad_graph_compiles() {
    // Rendered a vector temporary declared inside a loop and used after it (`vec30` undeclared).
    for_each_device(|dev| {
        let x = data(40, 1);
        let y = data(20, 2);
        let t = (Tensor::from_vec(x.clone(), [5, 4, 2]).cumsum(1) - Tensor::from_vec(y.clone(), [5, 4, 1]))
            .sum_axis([2])
            .pad(&[(1, 2), (0, 0)]);
        let got = f32s(&t);
        let mut want = vec![0.0f32; 8 * 4];
        for b in 0..5 {
            for i in 0..4 {
                let mut s = 0.0f32;
                for k in 0..2 {
                    let cum: f32 = (0..=i).map(|j| x[(b * 4 + j) * 2 + k]).sum();
                    s += cum - y[b * 4 + i];
                }
                want[(b + 1) * 4 + i] = s;
            }
        }
        assert_eq!(got, want, "(cumsum - y).sum().pad() on {dev}");
    });
}

#[test]
fn subtracting_a_negative_constant_is_valid_c() {
    // `val0--1.25f` was the C decrement operator.
    for_each_device(|dev| {
        let x = Tensor::from_vec(vec![1.5f32], [0usize; 0]);
        assert_eq!(f32s(&x.sub(-1.25)), vec![2.75], "0-d x - (-1.25) on {dev}");
        let h = Tensor::from_vec(vec![half::f16::from_f32(0.5); 6], [2, 3, 1, 1]).sub(-4.0);
        assert_eq!(h.cast(DType::F32).to_vec::<f32>().unwrap(), vec![4.5; 6], "f16 x - (-4) on {dev}");
        let i = Tensor::from_vec(vec![3i32, -7], [2]).sub(-5i64);
        assert_eq!(i.to_vec::<i32>().unwrap(), vec![8, -2], "int x - (-5) on {dev}");
    });
}

#[test]
fn a_fully_unrolled_512_sum_compiles() {
    // UNROLL 16, 8 and 4 of one 512-element axis: the sum was one expression nested 512 deep
    // (clang stops at 256 brackets).
    let x = data(512, 5);
    let want: f32 = x.iter().sum();
    for_each_device(|dev| {
        let t = Tensor::from_vec(x.clone(), [512, 1]).sum_keepdim([0]);
        assert_eq!(run_with_opts(&t, dev, "R0:16 R0:8 R0:4"), want, "unrolled sum on {dev}");
    });
}

#[test]
fn long_bf16_cumsum_rounds_each_prefix_once() {
    // Past 512 elements cumsum works in blocks; in bf16 the block totals were rounded to bf16
    // before being added (-15.625 instead of -15.5625). 16-bit floats now accumulate in f32.
    for_each_device(|dev| {
        let x: Vec<half::bf16> = data(1024, 9).iter().map(|&v| half::bf16::from_f32(v)).collect();
        let got = Tensor::from_vec(x.clone(), [1024]).cumsum(0).cast(DType::F32).to_vec::<f32>().unwrap();
        let mut acc = 0.0f32;
        for (i, v) in x.iter().enumerate() {
            acc += v.to_f32();
            assert_eq!(got[i], half::bf16::from_f32(acc).to_f32(), "bf16 cumsum element {i} on {dev}");
        }
    });
}

#[test]
fn bool_cumsum_counts_in_int64() {
    for_each_device(|dev| {
        let t = Tensor::from_vec(vec![true, false, true, true], [4]).cumsum(0);
        assert_eq!(t.dtype(), DType::I64);
        assert_eq!(t.to_vec::<i64>().unwrap(), vec![1, 1, 2, 3], "bool cumsum on {dev}");
    });
}

#[test]
fn long_cumsum_elements_depend_only_on_their_prefix() {
    // Past 512 elements the block prefix was "running sum minus the block's total": a NaN or
    // infinity anywhere in a block reached every element before it (`log(x).cumsum(0)`).
    for_each_device(|dev| {
        let mut x = data(1024, 4);
        x[300] = f32::NAN;
        x[700] = f32::INFINITY;
        x[900] = f32::NEG_INFINITY;
        let got = f32s(&Tensor::from_vec(x.clone(), [1024]).cumsum(0));
        let mut acc = 0.0f32;
        for (i, v) in x.iter().enumerate() {
            acc += v;
            let ok = if acc.is_nan() { got[i].is_nan() } else { got[i] == acc };
            assert!(ok, "cumsum element {i}: got {}, want {acc} on {dev}", got[i]);
        }
    });
}

#[test]
fn a_loop_bound_used_only_by_an_inner_loop_is_defined_first() {
    // Upcasting the only output axis left two nested reduce loops at the top level; the inner
    // loop's bound (a constant nothing else used) was emitted after the outer loop had opened,
    // and linearizing panicked ("CONST used before emitted").
    let x = data(28, 6);
    let rows: Vec<f32> = (5..7).map(|r| x[r * 4..r * 4 + 3].iter().cloned().fold(f32::INFINITY, f32::min)).collect();
    // pad(1, 0) on rows and (1, 2) on the one column: each output row's max over [0, v, 0, 0].
    let want = vec![0.0, rows[0].max(0.0), rows[1].max(0.0)];
    for_each_device(|dev| {
        let t = Tensor::from_vec(x.clone(), [7, 4]).shrink(&[(5, 7), (0, 3)]).min_keepdim([1]);
        let t = t.pad(&[(1, 0), (1, 2)]).max_axis([1]);
        assert_eq!(run_with_opts_all(&t, dev, "U0:3"), want, "upcast max of mins on {dev}");
    });
}

#[test]
fn abs_of_negative_zero_is_positive_zero() {
    // A k=1 matmul of a negative and a zero gives -0; `abs` kept its sign, so its reciprocal was
    // -inf (fuzzer seed 0x6b4e29).
    for_each_device(|dev| {
        let a = Tensor::from_vec(vec![-2.0f32, 3.0], [2, 1]);
        let b = Tensor::from_vec(vec![0.0f32, -1.5], [1, 2]);
        let r = a.matmul(&b).abs().reciprocal().to_vec::<f32>().unwrap();
        assert_eq!(r, vec![f32::INFINITY, 1.0 / 3.0, f32::INFINITY, 1.0 / 4.5], "1/|a@b| on {dev}");
        let z = Tensor::from_vec(vec![-0.0f32, 0.0, f32::NAN, -1.0], [4]).abs().to_vec::<f32>().unwrap();
        assert!(z[0].to_bits() == 0 && z[1].to_bits() == 0, "abs(±0) = +0 on {dev}: {z:?}");
        assert!(z[2].is_nan() && z[3] == 1.0, "abs(NaN) = NaN, abs(-1) = 1 on {dev}: {z:?}");
    });
}

#[test]
fn float_sums_start_from_positive_zero() {
    // PyTorch's sums start from +0.0, so a sum of -0.0s is +0.0 (`torch.tensor([[-0.]]).sum(1)`
    // is `[0.]`). A sum over a size-1 axis was elided to the element itself and kept -0.0, while
    // longer sums gave +0.0; the fuzzer's reference started from -0.0 (seed 0x6c7f98).
    for_each_device(|dev| {
        let bits = |t: &Tensor| f32s(t).iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let x = Tensor::from_vec(vec![-0.0f32, -0.0, 1.5, -0.0], [4]);
        assert_eq!(bits(&x.cumsum(0)), bits(&Tensor::from_vec(vec![0.0f32, 0.0, 1.5, 1.5], [4])), "cumsum on {dev}");
        let long = Tensor::from_vec(vec![-0.0f32; 1100], [1100]).cumsum(0);
        assert!(bits(&long).iter().all(|&b| b == 0), "blocked cumsum of -0.0s on {dev}");
        let bf = Tensor::from_vec(vec![-0.25f32, -0.5], [2]).cast(DType::BF16).trunc().cumsum(0).reciprocal();
        assert_eq!(f32s(&bf.cast(DType::F32)), vec![f32::INFINITY; 2], "1/cumsum(trunc) bf16 on {dev}");
        let col = Tensor::from_vec(vec![-0.0f32; 2], [2, 1]);
        assert_eq!(bits(&col.sum_axis([1])), vec![0, 0], "sums over a size-1 axis on {dev}");
        assert_eq!(bits(&col.reciprocal().sum_axis([1])), bits(&Tensor::from_vec(vec![f32::NEG_INFINITY; 2], [2])));
        let m = Tensor::from_vec(vec![-0.0f32; 6], [2, 3]);
        assert_eq!(bits(&m.sum_axis([1])), vec![0, 0], "row sums on {dev}");
        assert_eq!(bits(&m.sum().reshape([1])), vec![0], "total on {dev}");
        let empty = Tensor::from_vec(Vec::<f32>::new(), [0]).sum().reshape([1]);
        assert_eq!(bits(&empty), vec![0], "empty sum on {dev}");
        // Products keep the sign: prod([-0.0]) is -0.0.
        let p = Tensor::from_vec(vec![-0.0f32], [1]).prod().reshape([1]);
        assert_eq!(bits(&p), vec![(-0.0f32).to_bits()], "prod on {dev}");
    });
}

#[test]
fn padded_gather_gates_its_index_load() {
    // PADTO on a gather's output axis gated the gathered load but kept an ungated copy of the
    // index load inside its address: a vector read of the index buffer past its end (ASan in the
    // fuzzer, `--seed 5000035` with random opts `U0:8 P1:8 V3:8 U2:5`; the interpreter reports
    // it as out of bounds; the vector axis is not needed, and CL has none).
    for_each_device(|dev| {
        let x = data(120, 5);
        let idx: Vec<i64> = (0..120).map(|i| 7 - (i / 15) as i64).collect();
        let xt = Tensor::from_vec(x.clone(), [8, 1, 3, 5]).realize().unwrap();
        let it = Tensor::from_vec(idx.clone(), [8, 1, 3, 5]).realize().unwrap();
        let got = run_with_opts_all(&xt.gather(0, &it), dev, "U0:8 P1:8 U2:5");
        let want: Vec<f32> = (0..120).map(|i| x[idx[i] as usize * 15 + i % 15]).collect();
        assert_eq!(got, want, "x.gather(0, idx) with PADTO on {dev}");
    });
}
