//! In-place assignment: values land in the tensor's own buffer; readers of the old values in
//! the same realize see the old values.

use ferrograd::Tensor;
mod common;
use common::for_each_device;

#[test]
fn assign_updates_the_buffer_in_place() {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0]).realize().unwrap();
    let before = ferrograd::schedule::existing_buffer(&x.uop()).unwrap();
    x.assign(&x * 10.0 + 1.0).realize().unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![11.0, 21.0, 31.0]);
    let after = ferrograd::schedule::existing_buffer(&x.uop()).unwrap();
    assert!(std::sync::Arc::ptr_eq(&before, &after), "assign allocated a new buffer");
}

#[test]
fn readers_of_the_old_value_run_before_the_assign() {
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0]).realize().unwrap();
    let y = &x * 2.0;
    let x2 = x.clone();
    x2.assign(&x + 100.0);
    Tensor::realize_all(&[&x2, &y]).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![101.0, 102.0, 103.0]);
}

/// The same with a copy between devices scheduled first: the schedule's bookkeeping of what each
/// item reads and writes once counted only kernels, so after a copy it checked the assign's
/// target against the wrong item and ran the reader after the assign.
#[test]
fn readers_of_the_old_value_run_before_the_assign_after_a_copy() {
    let z = Tensor::from_slice(&[7.0f32, 8.0, 9.0]).to("INTERP").realize().unwrap();
    let x = Tensor::from_slice(&[1.0f32, 2.0, 3.0]).to("CPU").realize().unwrap();
    let y = &x * 2.0;
    let copied = z.to("CPU");
    let x2 = x.clone();
    x2.assign(&x + 100.0);
    Tensor::realize_all(&[&copied, &x2, &y]).unwrap();
    assert_eq!(y.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0]);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![101.0, 102.0, 103.0]);
    assert_eq!(copied.to_vec::<f32>().unwrap(), vec![7.0, 8.0, 9.0]);
}

#[test]
fn assign_reading_other_indices_of_its_target_uses_a_copy() {
    let x = Tensor::from_slice(&[1i32, 2, 3, 4, 5]).realize().unwrap();
    x.assign(x.flip(0)).realize().unwrap();
    assert_eq!(x.to_vec::<i32>().unwrap(), vec![5, 4, 3, 2, 1]);
}

#[test]
fn assign_to_an_unrealized_tensor_replaces_it() {
    let x = Tensor::zeros([2]);
    x.assign(Tensor::ones([2]) * 3.0);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![3.0, 3.0]);
}

// ---------------------------------------------------------------- assigning through views

#[test]
fn assigning_to_a_slice_writes_into_the_tensor() {
    // `x.shrink(..).assign(..)` used to change only the slice handle.
    for_each_device(|dev| {
        let x = Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), [3, 4]).realize().unwrap();
        let row = x.shrink(&[(1, 2), (0, 4)]);
        row.assign(Tensor::full([1, 4], -1.0));
        let want: Vec<f32> = (0..12).map(|i| if (4..8).contains(&i) { -1.0 } else { i as f32 }).collect();
        assert_eq!(x.to_vec::<f32>().unwrap(), want, "the base sees the write on {dev}");
        assert_eq!(row.to_vec::<f32>().unwrap(), vec![-1.0; 4], "the slice too on {dev}");
    });
}

#[test]
fn assigning_through_transposes_flips_and_reshapes() {
    for_each_device(|dev| {
        let x = Tensor::zeros([2, 3]).contiguous().realize().unwrap();
        // A column of the transpose, flipped: x[0, 2], x[1, 2] get 5, 7 in reverse order.
        let view = x.t().shrink(&[(2, 3), (0, 2)]).flip(1);
        view.assign(Tensor::from_vec(vec![7.0f32, 5.0], [1, 2]));
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 5.0, 0.0, 0.0, 7.0], "on {dev}");
        let flat = x.reshape([6]).shrink(&[(0, 2)]);
        flat.assign(Tensor::from_vec(vec![1.0f32, 2.0], [2]));
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 5.0, 0.0, 0.0, 7.0], "on {dev}");
    });
}

#[test]
fn two_slice_assigns_before_a_realize_both_land() {
    for_each_device(|dev| {
        let x = Tensor::zeros([4]).contiguous().realize().unwrap();
        x.shrink(&[(0, 1)]).assign(Tensor::full([1], 3.0));
        x.shrink(&[(3, 4)]).assign(Tensor::full([1], 4.0));
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![3.0, 0.0, 0.0, 4.0], "on {dev}");
    });
}

#[test]
#[should_panic(expected = "cannot write through a EXPAND view")]
fn assigning_to_a_broadcast_view_panics() {
    let x = Tensor::zeros([1, 3]).contiguous().realize().unwrap();
    x.expand([2, 3]).assign(Tensor::ones([2, 3]));
}

#[test]
fn assigning_to_a_slice_inside_no_grad_writes_into_the_tensor() {
    // Views made inside no_grad are detached; the write must still reach the tensor (it once
    // made the slice stand for the value and left the tensor unchanged).
    for_each_device(|_| {
        let x = Tensor::zeros([2, 4]).contiguous().realize().unwrap();
        ferrograd::tensor::no_grad(|| {
            x.shrink(&[(1, 2), (1, 3)]).assign(Tensor::from_slice(&[5.0f32, 6.0]).reshape([1, 2]));
            x.transpose(0, 1).shrink(&[(3, 4), (0, 1)]).assign(7.0);
        });
        assert_eq!(x.to_vec::<f32>().unwrap(), vec![0.0, 0.0, 0.0, 7.0, 0.0, 5.0, 6.0, 0.0]);
    });
}

/// `assign_window` writes a window of a realized tensor in place, lazily, looping over the
/// window only; windows at a bound variable's position reuse one kernel.
#[test]
fn assign_window_writes_only_the_window_in_place() {
    use ferrograd::{Dim, Ops, Variable};
    let c = |v: usize| Dim::Const(v);
    for_each_device(|dev| {
        let x = Tensor::from_vec((0..24).map(|i| i as f32).collect::<Vec<_>>(), [4, 6]).realize().unwrap();
        let other = Tensor::from_uop(x.uop());
        let block = Tensor::from_vec(vec![-1.0f32, -2.0, -3.0, -4.0, -5.0, -6.0], [2, 3]);
        x.assign_window(&[(c(1), c(3)), (c(2), c(5))], &block);
        // One kernel, looping over the window's 6 elements (not the tensor's 24).
        let items = ferrograd::schedule::preview_schedule(&[x.uop()]).items;
        assert_eq!(items.len(), 1, "{dev}: one kernel");
        let ranges = items[0].ast.toposort().into_iter().filter(|n| n.op() == Ops::RANGE);
        assert_eq!(ranges.map(|r| r.range_size()).product::<i64>(), 6, "{dev}: the kernel's loops");
        let mut want: Vec<f32> = (0..24).map(|i| i as f32).collect();
        for (k, (r, col)) in [(1, 2), (1, 3), (1, 4), (2, 2), (2, 3), (2, 4)].into_iter().enumerate() {
            want[r * 6 + col] = -(k as f32 + 1.0);
        }
        assert_eq!(x.to_vec::<f32>().unwrap(), want, "{dev}: x");
        assert_eq!(other.to_vec::<f32>().unwrap(), want, "{dev}: another handle on the buffer");

        // Two pending windows that overlap: the later write wins; a broadcast scalar value.
        x.assign_window(&[(c(0), c(4)), (c(0), c(1))], 7.0);
        x.assign_window(&[(c(2), c(3)), (c(0), c(6))], x.shrink(&[(0, 1), (0, 6)]) * 2.0);
        for r in 0..4 {
            want[r * 6] = 7.0;
        }
        let row0: Vec<f32> = want[0..6].to_vec();
        for (col, v) in row0.iter().enumerate() {
            want[2 * 6 + col] = v * 2.0;
        }
        assert_eq!(x.to_vec::<f32>().unwrap(), want, "{dev}: two pending windows");

        // At a variable position: one compiled kernel for every row.
        let pos = Variable::new("row", 0, 3);
        let mut built_after_first = None;
        for p in [3usize, 0, 2] {
            let at = pos.bind(p as i64);
            let row = Tensor::from_vec(vec![100.0 + p as f32; 6], [1, 6]);
            x.assign_window(&[(at.clone(), &at + 1), (c(0), c(6))], &row);
            x.realize().unwrap();
            for col in 0..6 {
                want[p * 6 + col] = 100.0 + p as f32;
            }
            assert_eq!(x.to_vec::<f32>().unwrap(), want, "{dev}: row {p}");
            let built = ferrograd::engine::kernels_built_on_this_thread();
            assert_eq!(*built_after_first.get_or_insert(built), built, "{dev}: row {p} compiled a new kernel");
        }
    });
}
