//! In-place assignment: values land in the tensor's own buffer; readers of the old values in
//! the same realize see the old values.

use ferrograd::Tensor;

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
