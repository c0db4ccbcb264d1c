//! Programmer errors in matmul, conv, pooling, shape ops and indexing panic at the call with a
//! message naming the op and the shapes involved.

use ferrograd::tensor::{ConvOpts, Idx, PoolOpts};
use ferrograd::{idx, Tensor};

#[test]
#[should_panic(expected = "matmul: shapes [2, 3] and [4, 5] cannot be multiplied")]
fn matmul_names_both_shapes() {
    Tensor::zeros([2, 3]).matmul(&Tensor::zeros([4, 5]));
}

#[test]
#[should_panic(expected = "matmul: batch dims of shapes [2, 3, 4] and [3, 4, 5] cannot be broadcast")]
fn matmul_batch_mismatch_names_both_shapes() {
    Tensor::zeros([2, 3, 4]).matmul(&Tensor::zeros([3, 4, 5]));
}

#[test]
#[should_panic(expected = "dot: needs two 1-D tensors of one size, shapes [3] and [4]")]
fn dot_names_both_shapes() {
    Tensor::zeros([3]).dot(&Tensor::zeros([4]));
}

#[test]
#[should_panic(
    expected = "conv: groups=1, weight of shape [4, 3, 3, 3] expects input with 3 channels, but input [1, 2, 5, 5] has 2"
)]
fn conv_channel_mismatch_names_both_shapes() {
    Tensor::zeros([1, 2, 5, 5]).conv2d(&Tensor::zeros([4, 3, 3, 3]), None, &ConvOpts::default());
}

#[test]
#[should_panic(expected = "larger than the padded input")]
fn conv_kernel_larger_than_input() {
    Tensor::zeros([1, 1, 2, 2]).conv2d(&Tensor::zeros([1, 1, 3, 3]), None, &ConvOpts::default());
}

#[test]
#[should_panic(expected = "max_pool: padding [(2, 2), (2, 2)] should be at most half of the kernel [2, 2]")]
fn pool_padding_too_large() {
    Tensor::zeros([1, 1, 4, 4]).max_pool2d(2, &PoolOpts::default().padding(2));
}

#[test]
#[should_panic(expected = "cat: shapes [[2, 3], [2, 4]] do not match except in dim 0")]
fn cat_shape_mismatch() {
    Tensor::cat(&[&Tensor::zeros([2, 3]), &Tensor::zeros([2, 4])], 0);
}

#[test]
#[should_panic(expected = "einsum: letter 'j' has sizes 3 and 4")]
fn einsum_size_mismatch() {
    Tensor::einsum("ij,jk->ik", &[&Tensor::zeros([2, 3]), &Tensor::zeros([4, 5])]);
}

#[test]
#[should_panic(expected = "index: index 3 is out of bounds for dimension 1 with size 3 (shape [2, 3])")]
fn index_out_of_bounds() {
    Tensor::zeros([2, 3]).index(&idx![.., 3]);
}

#[test]
#[should_panic(expected = "index: too many indices (3) for shape [2, 3]")]
fn too_many_indices() {
    Tensor::zeros([2, 3]).index(&idx![0, 1, 2]);
}

#[test]
#[should_panic(expected = "index: slice step cannot be zero")]
fn zero_step() {
    Tensor::zeros([4]).index(&[Idx::slice(None, None, 0)]);
}

#[test]
#[should_panic(expected = "index: tensor indices must be integers, got bool")]
fn bool_tensor_index_points_to_masked_fill() {
    let m = Tensor::zeros([4]).gt(0.0);
    Tensor::zeros([4]).index(&idx![&m]);
}

#[test]
#[should_panic(expected = "bitwise_and: needs integer or bool tensors, got float32")]
fn bitwise_ops_on_floats_panic_naming_the_op_and_dtype() {
    // Used to reach the C compiler as `float & float`.
    let _ = Tensor::ones([2]).bitand(Tensor::ones([2]));
}
