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
