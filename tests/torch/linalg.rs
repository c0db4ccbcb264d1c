//! Linear algebra; fixture made by `scripts/torch_fixtures/cases_linalg.py` (same order).

use super::CaseFn;
use ferrograd::Tensor;

fn qr_flat(a: &Tensor) -> Tensor {
    let (q, r) = a.qr();
    Tensor::cat(&[&q.flatten(), &r.flatten()], 0)
}

fn svd_flat(a: &Tensor) -> Tensor {
    let (u, s, v) = a.svd();
    Tensor::cat(&[&s.flatten(), &u.abs().flatten(), &v.abs().flatten()], 0)
}

fn ein(f: &'static str, x: &[Tensor]) -> Tensor {
    Tensor::einsum(f, &x.iter().collect::<Vec<_>>())
}

pub fn cases() -> Vec<(&'static str, CaseFn)> {
    vec![
        // ---------------------------------------------------------------- matmul
        ("matmul_2d", |x| x[0].matmul(&x[1])),
        ("matmul_vec_mat", |x| x[0].matmul(&x[1])),
        ("matmul_mat_vec", |x| x[0].matmul(&x[1])),
        ("matmul_vec_vec", |x| x[0].matmul(&x[1])),
        ("matmul_batched", |x| x[0].matmul(&x[1])),
        ("matmul_broadcast_batch", |x| x[0].matmul(&x[1])),
        ("matmul_vec_batched", |x| x[0].matmul(&x[1])),
        ("matmul_batched_vec", |x| x[0].matmul(&x[1])),
        ("matmul_size1", |x| x[0].matmul(&x[1])),
        ("matmul_outer_k1", |x| x[0].matmul(&x[1])),
        ("matmul_empty_k", |x| x[0].matmul(&x[1])),
        ("matmul_empty_n", |x| x[0].matmul(&x[1])),
        ("matmul_transposed", |x| x[0].t().matmul(&x[1].t())),
        ("matmul_permuted_batch", |x| x[0].permute([1, 0, 2]).matmul(&x[1].permute([1, 0, 2]))),
        ("matmul_int", |x| x[0].matmul(&x[1])),
        ("matmul_f64", |x| x[0].matmul(&x[1])),
        ("matmul_chain", |x| x[0].matmul(&x[1]).matmul(&x[2])),
        ("dot", |x| x[0].dot(&x[1])),
        ("dot_len1", |x| x[0].dot(&x[1])),
        // ---------------------------------------------------------------- linear
        ("linear", |x| x[0].linear(&x[1], Some(&x[2]))),
        ("linear_no_bias", |x| x[0].linear(&x[1], None)),
        ("linear_batched", |x| x[0].linear(&x[1], Some(&x[2]))),
        ("linear_vec_input", |x| x[0].linear(&x[1], Some(&x[2]))),
        ("linear_vec_weight", |x| x[0].linear(&x[1], None)),
        ("linear_relu", |x| x[0].linear(&x[1], Some(&x[2])).relu()),
        // ---------------------------------------------------------------- einsum
        ("einsum_matmul", |x| ein("ij,jk->ik", x)),
        ("einsum_bmm", |x| ein("bij,bjk->bik", x)),
        ("einsum_inner", |x| ein("i,i->", x)),
        ("einsum_transpose", |x| ein("ij->ji", x)),
        ("einsum_diag", |x| ein("ii->i", x)),
        ("einsum_trace", |x| ein("ii->", x)),
        ("einsum_outer", |x| ein("i,j->ij", x)),
        ("einsum_implicit_matmul", |x| ein("ij,jk", x)),
        ("einsum_implicit_transpose", |x| ein("ba", x)),
        ("einsum_sum_all", |x| ein("ij->", x)),
        ("einsum_sum_axis", |x| ein("ij->j", x)),
        ("einsum_three_chain", |x| ein("ij,jk,kl->il", x)),
        ("einsum_ellipsis", |x| ein("...ij,...jk->...ik", x)),
        ("einsum_ellipsis_transpose", |x| ein("...ij->...ji", x)),
        ("einsum_batch_diag", |x| ein("bii->bi", x)),
        ("einsum_hadamard", |x| ein("ij,ij->ij", x)),
        ("einsum_bilinear", |x| ein("bn,anm,bm->ba", x)),
        ("einsum_broadcast_size1", |x| ein("ij,ij->ij", x)),
        ("einsum_spaces", |x| ein("ij, j -> i", x)),
        ("einsum_diag_times_vec", |x| ein("ii,i->i", x)),
        ("einsum_permute_3d", |x| ein("abc->cab", x)),
        // ---------------------------------------------------------------- diagonal
        ("diagonal_2d", |x| x[0].diagonal(0, 1)),
        ("diagonal_3d", |x| x[0].diagonal(0, 2)),
        // ---------------------------------------------------------------- qr
        ("qr_square", |x| qr_flat(&x[0])),
        ("qr_tall", |x| qr_flat(&x[0])),
        ("qr_wide", |x| qr_flat(&x[0])),
        ("qr_batched", |x| qr_flat(&x[0])),
        ("qr_f64", |x| qr_flat(&x[0])),
        ("qr_upper_triangular", |x| qr_flat(&x[0])),
        // ---------------------------------------------------------------- svd
        ("svd_values", |x| x[0].svd().1),
        ("svd_factors", |x| svd_flat(&x[0])),
        ("svd_wide", |x| svd_flat(&x[0])),
        ("svd_batched", |x| svd_flat(&x[0])),
        ("svd_f64", |x| svd_flat(&x[0])),
        ("svd_reconstruct", |x| {
            let (u, s, v) = x[0].svd();
            u.mul(s.unsqueeze(-2)).matmul(&v.t())
        }),
    ]
}
