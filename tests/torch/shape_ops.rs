//! Shape ops; fixture made by `scripts/torch_fixtures/cases_shape_ops.py` (same order).

use super::CaseFn;
use ferrograd::tensor::PadMode;
use ferrograd::Tensor;

/// Every piece scaled by its position, joined again (as `weighted` in the case file).
fn weighted(pieces: Vec<Tensor>, dim: isize) -> Tensor {
    let scaled: Vec<Tensor> = pieces.iter().enumerate().map(|(i, p)| p * (i as f64 + 1.0)).collect();
    Tensor::cat(&scaled.iter().collect::<Vec<_>>(), dim)
}

fn refs(x: &[Tensor]) -> Vec<&Tensor> {
    x.iter().collect()
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- cat / stack
        ("cat_dim0", |x| Tensor::cat(&refs(x), 0)),
        ("cat_dim1", |x| Tensor::cat(&refs(x), 1)),
        ("cat_neg_dim", |x| Tensor::cat(&refs(x), -1)),
        ("cat_three", |x| Tensor::cat(&refs(x), 0)),
        ("cat_with_empty", |x| Tensor::cat(&refs(x), 0)),
        ("cat_legacy_empty_1d", |x| Tensor::cat(&refs(x), 1)),
        ("cat_self", |x| Tensor::cat(&[&x[0], &(&x[0] * 2.0)], 0)),
        ("cat_noncontig", |x| Tensor::cat(&[&x[0].t(), &x[1]], 1)),
        ("cat_promote_int_float", |x| Tensor::cat(&refs(x), 0)),
        ("cat_bool", |x| Tensor::cat(&refs(x), 0)),
        ("cat_1d", |x| Tensor::cat(&refs(x), 0)),
        ("stack_dim0", |x| Tensor::stack(&refs(x), 0)),
        ("stack_dim_last", |x| Tensor::stack(&refs(x), -1)),
        ("stack_middle", |x| Tensor::stack(&refs(x), 1)),
        ("stack_0d", |x| Tensor::stack(&refs(x), 0)),
        // ---------------------------------------------------------------- split / chunk
        ("split_size", |x| weighted(x[0].split(2, 1), 1)),
        ("split_sizes", |x| weighted(x[0].split_sizes(&[1, 3, 2], 0), 0)),
        ("split_larger_than_dim", |x| weighted(x[0].split(5, 0), 0)),
        ("chunk_3_of_7", |x| weighted(x[0].chunk(3, 0), 0)),
        ("chunk_uneven_fewer", |x| {
            let c = x[0].chunk(4, 1);
            Tensor::stack(&c.iter().collect::<Vec<_>>(), 0)
        }),
        ("chunk_second_piece", |x| x[0].chunk(2, -1)[1].clone()),
        // ---------------------------------------------------------------- repeat / tile
        ("repeat_2d", |x| x[0].repeat(&[2, 3])),
        ("repeat_new_dims", |x| x[0].repeat(&[2, 1, 2])),
        ("repeat_ones", |x| x[0].repeat(&[3, 1])),
        ("repeat_1d", |x| x[0].repeat(&[4])),
        ("repeat_interleave_dim1", |x| x[0].repeat_interleave(2, Some(1))),
        ("repeat_interleave_dim0", |x| x[0].repeat_interleave(3, Some(0))),
        ("repeat_interleave_flat", |x| x[0].repeat_interleave(2, None)),
        ("tile_short_reps", |x| x[0].tile(&[2])),
        ("tile_long_reps", |x| x[0].tile(&[2, 1, 2])),
        // ---------------------------------------------------------------- pad modes
        ("pad_constant_value", |x| x[0].pad_mode(&[(0, 1), (1, 2)], PadMode::Constant(1.5))),
        ("pad_constant_zero", |x| x[0].pad_mode(&[(2, 1)], PadMode::Constant(0.0))),
        ("pad_constant_negative", |x| x[0].pad_mode(&[(1, -2), (-1, 2)], PadMode::Constant(-1.0))),
        ("pad_reflect_1d", |x| x[0].pad_mode(&[(2, 3)], PadMode::Reflect)),
        ("pad_reflect_2d", |x| x[0].pad_mode(&[(3, 1), (1, 2)], PadMode::Reflect)),
        ("pad_replicate_2d", |x| x[0].pad_mode(&[(0, 2), (2, 1)], PadMode::Replicate)),
        ("pad_replicate_1d", |x| x[0].pad_mode(&[(3, 0)], PadMode::Replicate)),
        ("pad_circular_2d", |x| x[0].pad_mode(&[(2, 1), (1, 2)], PadMode::Circular)),
        ("pad_circular_full", |x| x[0].pad_mode(&[(3, 3)], PadMode::Circular)),
        ("pad_int_constant", |x| x[0].pad_mode(&[(1, 1)], PadMode::Constant(7.0))),
        // ---------------------------------------------------------------- roll
        ("roll_dim0", |x| x[0].roll(&[2], &[0])),
        ("roll_negative", |x| x[0].roll(&[-1], &[1])),
        ("roll_two_dims", |x| x[0].roll(&[1, -3], &[0, 1])),
        ("roll_flat", |x| x[0].roll(&[5], &[])),
        ("roll_more_than_size", |x| x[0].roll(&[9], &[0])),
        ("roll_zero", |x| x[0].roll(&[3], &[0])),
        // ---------------------------------------------------------------- tril / triu
        ("tril", |x| x[0].tril(0)),
        ("triu", |x| x[0].triu(0)),
        ("tril_neg_diag", |x| x[0].tril(-1)),
        ("triu_diag2", |x| x[0].triu(2)),
        ("triu_big_diag", |x| x[0].triu(5)),
        ("tril_batched", |x| x[0].tril(1)),
        ("triu_int", |x| x[0].triu(0)),
        // ---------------------------------------------------------------- unflatten / meshgrid / misc
        ("unflatten", |x| x[0].unflatten(1, [3, 4])),
        ("unflatten_infer", |x| x[0].unflatten(0, [-1, 2])),
        ("meshgrid_ij", |x| stack_grid(x, "ij")),
        ("meshgrid_xy", |x| stack_grid(x, "xy")),
        ("meshgrid_xy_three", |x| stack_grid(x, "xy")),
        ("meshgrid_products", |x| {
            let g = Tensor::meshgrid(&refs(x), "ij");
            &g[0] * &g[1]
        }),
        ("cat_after_pad_reflect", |x| Tensor::cat(&[&x[0].pad_mode(&[(1, 1)], PadMode::Reflect), &x[1]], 1)),
    ]
}

fn stack_grid(x: &[Tensor], indexing: &str) -> Tensor {
    let g = Tensor::meshgrid(&refs(x), indexing);
    Tensor::stack(&g.iter().collect::<Vec<_>>(), 0)
}
