//! Reductions and basic linear algebra (matmul/dot); fixture made by
//! `scripts/torch_fixtures/cases_reduce.py` (same order). `max_axis` is PyTorch's `amax`.

use super::CaseFn;
use ferrograd::Tensor;

fn softmax(x: &Tensor, axis: isize) -> Tensor {
    let e = (x - x.max_keepdim(axis)).exp();
    &e / e.sum_keepdim(axis)
}

fn logsumexp(x: &Tensor, axis: isize) -> Tensor {
    let m = x.max_keepdim(axis);
    (x - &m).exp().sum_axis(axis).log() + m.squeeze(axis)
}

fn layernorm(x: &Tensor) -> Tensor {
    let c = x - x.mean_keepdim(1);
    &c / (c.pow(2.0).mean_keepdim(1) + 1e-5).sqrt()
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- sum
        ("sum_all", |x| x[0].sum()),
        ("sum_axis0", |x| x[0].sum_axis(0)),
        ("sum_axis1", |x| x[0].sum_axis(1)),
        ("sum_axis_negative", |x| x[0].sum_axis(-1)),
        ("sum_keepdim", |x| x[0].sum_keepdim(1)),
        ("sum_axes_02", |x| x[0].sum_axis([0, 2])),
        ("sum_axes_keepdim", |x| x[0].sum_keepdim([0, -1])),
        ("sum_0d", |x| x[0].sum()),
        ("sum_size1_axis", |x| x[0].sum_axis(1)),
        ("sum_1elem", |x| x[0].sum_axis(0)),
        ("sum_transposed", |x| x[0].t().sum_axis(1)),
        ("sum_permuted_axes", |x| x[0].permute([2, 0, 1]).sum_axis([1, 2])),
        ("sum_flipped", |x| x[0].flip(1).sum_axis(0) * Tensor::arange_f(0.0, 4.0, 1.0)),
        ("sum_expanded", |x| x[0].expand([3, 5]).sum_axis(0)),
        ("sum_padded", |x| x[0].pad(&[(0, 0), (1, 2)]).sum_axis(1)),
        ("sum_empty_axis", |x| x[0].sum_axis(0)),
        ("sum_empty_all", |x| x[0].sum()),
        ("sum_empty_inner_axis", |x| x[0].sum_axis(-1)),
        ("sum_long_axis", |x| x[0].sum_axis(1)),
        ("sum_int", |x| x[0].sum_axis(1)),
        ("sum_int8_widens", |x| x[0].sum_axis(1)),
        ("sum_uint8_widens", |x| x[0].sum()),
        ("sum_bool", |x| x[0].sum_axis(0)),
        ("sum_int64", |x| x[0].sum()),
        ("sum_f16", |x| x[0].sum_axis(1)),
        ("sum_f64", |x| x[0].sum_axis(0)),
        // ---------------------------------------------------------------- max (amax)
        ("max_all", |x| x[0].max()),
        ("max_axis0", |x| x[0].max_axis(0)),
        ("max_axis_negative", |x| x[0].max_axis(-1)),
        ("max_keepdim", |x| x[0].max_keepdim(1)),
        ("max_axes", |x| x[0].max_axis([0, 2])),
        ("max_ties", |x| x[0].max_axis(1)),
        ("max_ties_all", |x| x[0].max()),
        ("max_transposed", |x| x[0].t().max_axis(1)),
        ("max_negative_values", |x| x[0].max_axis(1)),
        ("max_with_inf", |x| x[0].max_axis(1)),
        ("max_0d", |x| x[0].max()),
        ("max_int", |x| x[0].max_axis(0)),
        ("max_uint8", |x| x[0].max_axis(1)),
        ("max_bool", |x| x[0].max_axis(1)),
        // ---------------------------------------------------------------- min (amin)
        ("min_all", |x| x[0].min()),
        ("min_axis1", |x| x[0].min_axis(1)),
        ("min_keepdim_negative", |x| x[0].min_keepdim(-2)),
        ("min_axes", |x| x[0].min_axis([1, 2])),
        ("min_ties", |x| x[0].min_axis(1)),
        ("min_flipped", |x| x[0].flip(0).min_axis(0) * Tensor::arange_f(1.0, 5.0, 1.0)),
        ("min_int", |x| x[0].min_axis(1)),
        ("min_uint8", |x| x[0].min_axis(0)),
        ("min_int8_extremes", |x| x[0].min()),
        ("min_int32_extremes", |x| x[0].min()),
        ("min_bool", |x| x[0].min_axis(1)),
        // ---------------------------------------------------------------- mean
        ("mean_all", |x| x[0].mean()),
        ("mean_axis0", |x| x[0].mean_axis(0)),
        ("mean_keepdim", |x| x[0].mean_keepdim(-1)),
        ("mean_axes", |x| x[0].mean_axis([0, 2])),
        ("mean_permuted", |x| x[0].permute([1, 2, 0]).mean_axis(1)),
        ("mean_int", |x| x[0].mean_axis(1)),
        ("mean_empty", |x| x[0].mean_axis(0)),
        // ---------------------------------------------------------------- prod
        ("prod_all", |x| x[0].prod()),
        ("prod_axis1", |x| x[0].prod_axis(1)),
        ("prod_keepdim", |x| x[0].prod_keepdim(0)),
        ("prod_with_zero", |x| x[0].prod_axis(1)),
        ("prod_int", |x| x[0].prod_axis(1)),
        ("prod_transposed", |x| x[0].t().prod_axis(1)),
        // ---------------------------------------------------------------- edge values, 4-D, larger shapes
        ("max_with_nan", |x| x[0].max_axis(1)),
        ("min_with_nan", |x| x[0].min_axis(1)),
        ("sum_with_inf_nan", |x| x[0].sum_axis(1)),
        ("prod_negatives", |x| x[0].prod_axis(1)),
        ("prod_0d", |x| x[0].prod()),
        ("prod_empty_axis", |x| x[0].prod_axis(0)),
        ("max_size1_axis", |x| x[0].max_axis(1)),
        ("max_int64_large", |x| x[0].max()),
        ("min_int64_large", |x| x[0].min()),
        ("min_uint8_extremes", |x| x[0].min()),
        ("sum_uint8_keepdim", |x| x[0].sum_keepdim(1)),
        ("sum_bool_all", |x| x[0].sum()),
        ("sum_4d_middle_axes", |x| x[0].sum_axis([1, 2])),
        ("max_4d_outer_axes", |x| x[0].max_keepdim([0, 3])),
        ("mean_4d_negative_axes", |x| x[0].mean_axis([-1, -3])),
        ("sum_expanded_permuted", |x| x[0].expand([3, 4]).t().sum_axis(0)),
        ("mean_f16", |x| x[0].mean_axis(1)),
        ("max_bf16", |x| x[0].max_axis(0)),
        ("sum_large", |x| x[0].sum_axis(1)),
        ("sum_large_axis0", |x| x[0].sum_axis(0)),
        ("max_large", |x| x[0].max_axis(1)),
        ("sum_large_transposed", |x| x[0].t().sum_axis(0) * x[0].sum_axis(0).mean()),
        // ---------------------------------------------------------------- composites
        ("softmax", |x| softmax(&x[0], 1)),
        ("logsumexp", |x| logsumexp(&x[0], 1)),
        ("variance", |x| (&x[0] - x[0].mean_keepdim(0)).square().mean_axis(0)),
        ("layernorm_like", |x| layernorm(&x[0])),
        ("sum_of_max", |x| x[0].max_axis(2).sum_axis(0)),
        ("reduce_then_broadcast", |x| &x[0] * x[0].sum_axis(0) - x[0].max_keepdim(1)),
        ("two_reductions_same_input", |x| x[0].sum_axis(0) + x[0].max_axis(0) * x[0].min_axis(0)),
        // ---------------------------------------------------------------- linalg_basic: matmul / dot
        ("matmul_2d", |x| x[0].matmul(&x[1])),
        ("matmul_square", |x| x[0].matmul(&x[1])),
        ("matmul_outer_k1", |x| x[0].matmul(&x[1])),
        ("matmul_inner_1x1", |x| x[0].matmul(&x[1])),
        ("matmul_vec_mat", |x| x[0].matmul(&x[1])),
        ("matmul_mat_vec", |x| x[0].matmul(&x[1])),
        ("dot_vec_vec", |x| x[0].dot(&x[1])),
        ("matmul_batched", |x| x[0].matmul(&x[1])),
        ("matmul_broadcast_rhs", |x| x[0].matmul(&x[1])),
        ("matmul_broadcast_lhs", |x| x[0].matmul(&x[1])),
        ("matmul_broadcast_batches", |x| x[0].matmul(&x[1])),
        ("matmul_batched_vec", |x| x[0].matmul(&x[1])),
        ("matmul_transposed_inputs", |x| x[0].t().matmul(&x[1].t())),
        ("matmul_empty_k", |x| x[0].matmul(&x[1])),
        ("matmul_chain", |x| x[0].matmul(&x[1]).relu().matmul(&x[2])),
        ("matmul_int", |x| x[0].matmul(&x[1])),
        ("matmul_f16", |x| x[0].matmul(&x[1])),
        ("matmul_f64", |x| x[0].matmul(&x[1])),
        ("matmul_large", |x| x[0].matmul(&x[1])),
        ("matmul_long_k", |x| x[0].matmul(&x[1])),
        ("matmul_4d_broadcast_transposed", |x| x[0].transpose(-1, -2).matmul(&x[1].transpose(-1, -2))),
        ("linear_layer", |x| x[0].matmul(&x[1].t()) + &x[2]),
    ]
}
