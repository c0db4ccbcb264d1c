//! `set_index` (`x[idx] = value`) writes into the realized tensor's own buffer: every handle
//! on that buffer sees the new values, and the write is one fused kernel.

use ferrograd::schedule::kernel_count;
use ferrograd::{idx, Tensor};

mod common;
use common::for_each_device;

#[test]
fn set_index_updates_the_buffer_in_place_for_every_handle() {
    for_each_device(|dev| {
        let x = Tensor::from_vec((0..12).map(|i| i as f32).collect::<Vec<_>>(), [3, 4]).realize().unwrap();
        // Another handle on the same buffer, and a lazy view of it, made before the write.
        let other = Tensor::from_uop(x.uop());
        let row = x.index(&idx![2]);
        x.set_index(&idx![1..3, ..;2], 100.0);
        assert_eq!(kernel_count(&[x.uop()]), 1, "{dev}: the write is one kernel");
        x.realize().unwrap();
        let want: Vec<f32> = vec![0., 1., 2., 3., 100., 5., 100., 7., 100., 9., 100., 11.];
        assert_eq!(x.to_vec::<f32>().unwrap(), want, "{dev}: x");
        assert_eq!(other.to_vec::<f32>().unwrap(), want, "{dev}: another handle on the buffer");
        assert_eq!(row.to_vec::<f32>().unwrap(), vec![100., 9., 100., 11.], "{dev}: a view made before the write");
    });
}

#[test]
fn set_index_with_a_tensor_value_negative_step_and_tensor_index() {
    for_each_device(|dev| {
        let x = Tensor::from_vec(vec![0i32; 10], [2, 5]).realize().unwrap();
        x.set_index(&idx![.., ..;-2], Tensor::from_vec(vec![1i32, 2, 3], [3]));
        x.realize().unwrap();
        assert_eq!(x.to_vec::<i32>().unwrap(), vec![3, 0, 2, 0, 1, 3, 0, 2, 0, 1], "{dev}: negative step");
        let i = Tensor::from_vec(vec![4i64, 1], [2]);
        x.set_index(&idx![1, &i], -7);
        x.realize().unwrap();
        assert_eq!(x.to_vec::<i32>().unwrap(), vec![3, 0, 2, 0, 1, 3, -7, 2, 0, -7], "{dev}: tensor index");
    });
}

#[test]
fn set_index_on_a_lazy_tensor_just_changes_its_value() {
    let x = Tensor::arange(6).reshape([2, 3]);
    x.set_index(&idx![0, 1..], 9);
    assert_eq!(x.to_vec::<i32>().unwrap(), vec![0, 9, 9, 3, 4, 5]);
}
