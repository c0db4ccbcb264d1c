"""Linear algebra: matmul (batched, broadcast, vectors, empty), dot, linear, einsum, diagonal, qr, svd."""

import torch
import torch.nn.functional as F

from case import Case

I32 = ["int32", "int32"]

CASES = [
    # ---------------------------------------------------------------- matmul
    Case("matmul_2d", [(3, 4), (4, 5)], lambda a, b: a @ b),
    Case("matmul_vec_mat", [(4,), (4, 3)], lambda a, b: a @ b),
    Case("matmul_mat_vec", [(3, 4), (4,)], lambda a, b: a @ b),
    Case("matmul_vec_vec", [(5,), (5,)], lambda a, b: a @ b),
    Case("matmul_batched", [(2, 3, 4), (2, 4, 5)], lambda a, b: a @ b),
    Case("matmul_broadcast_batch", [(2, 1, 3, 4), (3, 4, 2)], lambda a, b: a @ b),
    Case("matmul_vec_batched", [(4,), (2, 4, 3)], lambda a, b: a @ b),
    Case("matmul_batched_vec", [(2, 3, 4), (4,)], lambda a, b: a @ b),
    Case("matmul_size1", [(1, 4), (4, 1)], lambda a, b: a @ b),
    Case("matmul_outer_k1", [(3, 1), (1, 2)], lambda a, b: a @ b),
    Case("matmul_empty_k", [(3, 0), (0, 2)], lambda a, b: a @ b),
    Case("matmul_empty_n", [(0, 3), (3, 2)], lambda a, b: a @ b),
    Case("matmul_transposed", [(4, 3), (5, 4)], lambda a, b: a.t() @ b.t()),
    Case("matmul_permuted_batch", [(3, 2, 4), (4, 2, 5)], lambda a, b: a.permute(1, 0, 2) @ b.permute(1, 0, 2)),
    Case("matmul_int", [(3, 4), (4, 2)], lambda a, b: a @ b, dtypes=I32, low=-5, high=5),
    Case("matmul_f64", [(2, 3), (3, 2)], lambda a, b: a @ b, dtype="float64"),
    Case("matmul_chain", [(2, 3), (3, 4), (4, 2)], lambda a, b, c: (a @ b) @ c),
    Case("dot", [(5,), (5,)], lambda a, b: torch.dot(a, b)),
    Case("dot_len1", [(1,), (1,)], lambda a, b: torch.dot(a, b)),
    # ---------------------------------------------------------------- linear
    Case("linear", [(2, 3), (4, 3), (4,)], lambda x, w, b: F.linear(x, w, b)),
    Case("linear_no_bias", [(2, 3), (4, 3)], lambda x, w: F.linear(x, w)),
    Case("linear_batched", [(2, 2, 3), (4, 3), (4,)], lambda x, w, b: F.linear(x, w, b)),
    Case("linear_vec_input", [(3,), (4, 3), (4,)], lambda x, w, b: F.linear(x, w, b)),
    Case("linear_vec_weight", [(2, 3), (3,)], lambda x, w: F.linear(x, w)),
    Case("linear_relu", [(3, 4), (2, 4), (2,)], lambda x, w, b: F.linear(x, w, b).relu()),
    # ---------------------------------------------------------------- einsum
    Case("einsum_matmul", [(3, 4), (4, 2)], lambda a, b: torch.einsum("ij,jk->ik", a, b)),
    Case("einsum_bmm", [(2, 3, 4), (2, 4, 2)], lambda a, b: torch.einsum("bij,bjk->bik", a, b)),
    Case("einsum_inner", [(5,), (5,)], lambda a, b: torch.einsum("i,i->", a, b)),
    Case("einsum_transpose", [(3, 4)], lambda a: torch.einsum("ij->ji", a)),
    Case("einsum_diag", [(4, 4)], lambda a: torch.einsum("ii->i", a)),
    Case("einsum_trace", [(3, 3)], lambda a: torch.einsum("ii->", a)),
    Case("einsum_outer", [(3,), (4,)], lambda a, b: torch.einsum("i,j->ij", a, b)),
    Case("einsum_implicit_matmul", [(3, 4), (4, 2)], lambda a, b: torch.einsum("ij,jk", a, b)),
    Case("einsum_implicit_transpose", [(2, 3)], lambda a: torch.einsum("ba", a)),
    Case("einsum_sum_all", [(3, 4)], lambda a: torch.einsum("ij->", a)),
    Case("einsum_sum_axis", [(3, 4)], lambda a: torch.einsum("ij->j", a)),
    Case("einsum_three_chain", [(2, 3), (3, 4), (4, 2)], lambda a, b, c: torch.einsum("ij,jk,kl->il", a, b, c)),
    Case("einsum_ellipsis", [(2, 3, 4), (2, 4, 2)], lambda a, b: torch.einsum("...ij,...jk->...ik", a, b)),
    Case("einsum_ellipsis_transpose", [(2, 1, 3, 4)], lambda a: torch.einsum("...ij->...ji", a)),
    Case("einsum_batch_diag", [(2, 3, 3)], lambda a: torch.einsum("bii->bi", a)),
    Case("einsum_hadamard", [(3, 4), (3, 4)], lambda a, b: torch.einsum("ij,ij->ij", a, b)),
    Case("einsum_bilinear", [(2, 3), (4, 3, 5), (2, 5)], lambda a, w, b: torch.einsum("bn,anm,bm->ba", a, w, b)),
    Case("einsum_broadcast_size1", [(3, 1), (1, 4)], lambda a, b: torch.einsum("ij,ij->ij", a, b)),
    Case("einsum_spaces", [(2, 3), (3,)], lambda a, b: torch.einsum("ij, j -> i", a, b)),
    Case("einsum_diag_times_vec", [(3, 3), (3,)], lambda a, b: torch.einsum("ii,i->i", a, b)),
    Case("einsum_permute_3d", [(2, 3, 4)], lambda a: torch.einsum("abc->cab", a)),
    # ---------------------------------------------------------------- diagonal
    Case("diagonal_2d", [(3, 3)], lambda a: torch.diagonal(a, 0, 0, 1)),
    Case("diagonal_3d", [(3, 2, 3)], lambda a: torch.diagonal(a, 0, 0, 2)),
    # ---------------------------------------------------------------- qr
    Case("qr_square", [(4, 4)], lambda a: qr_flat(a)),
    Case("qr_tall", [(5, 3)], lambda a: qr_flat(a)),
    Case("qr_wide", [(3, 5)], lambda a: qr_flat(a)),
    Case("qr_batched", [(2, 3, 3)], lambda a: qr_flat(a)),
    Case("qr_f64", [(4, 3)], lambda a: qr_flat(a), dtype="float64"),
    # Values only: where a column is already zero below the diagonal no reflection is made, and
    # the algorithm's gradient there (zero for those entries) is not PyTorch's analytic one.
    Case("qr_upper_triangular", [(3, 3)], lambda a: qr_flat(a), vals=[[2, 1, -1, 0, -3, 2, 0, 0, 1.5]], grad=False),
    # ---------------------------------------------------------------- svd (factors up to sign: |u|, |v|)
    Case("svd_values", [(4, 3)], lambda a: torch.svd(a)[1]),
    Case("svd_factors", [(5, 3)], lambda a: svd_flat(a), grad_atol=1e-3, grad_rtol=1e-2),
    Case("svd_wide", [(3, 5)], lambda a: svd_flat(a), grad_atol=1e-3, grad_rtol=1e-2),
    Case("svd_batched", [(2, 4, 4)], lambda a: svd_flat(a), grad_atol=1e-3, grad_rtol=1e-2),
    Case("svd_f64", [(5, 4)], lambda a: svd_flat(a), dtype="float64"),
    Case("svd_reconstruct", [(4, 4)], lambda a: svd_reconstruct(a)),
]


def qr_flat(a):
    q, r = torch.linalg.qr(a)
    return torch.cat([q.flatten(), r.flatten()])


def svd_flat(a):
    u, s, v = torch.svd(a)
    return torch.cat([s.flatten(), u.abs().flatten(), v.abs().flatten()])


def svd_reconstruct(a):
    u, s, v = torch.svd(a)
    return u @ torch.diag_embed(s) @ v.transpose(-1, -2)
