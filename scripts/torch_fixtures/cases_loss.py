"""Losses with torch.nn.functional's numerics and gradients: cross entropy (class indices or
probabilities, label smoothing, ignore_index, class weights, every reduction, extra spatial
axes, a single sample), nll_loss, tinygrad's sparse_categorical_crossentropy (classes last),
binary cross entropy on probabilities and on logits (stable at extreme logits, pos_weight),
MSE and L1 (gradient 0 at equal values), and one_hot.

Integer targets are drawn as floor(uniform(low, high)). The Rust closures are in
tests/torch/loss.rs, in the same order.
"""

import torch
import torch.nn.functional as F

from case import Case

TGT = dict(dtypes=["float32", "int64"], low=[-3.0, 0], high=[3.0, 5])
W5 = [0.5, 1.0, 2.0, 0.1, 1.5]


def scce(x, y, ignore_index=-1, label_smoothing=0.0, reduction="mean"):
    """tinygrad's sparse_categorical_crossentropy (classes on the last axis) in PyTorch terms."""
    return F.cross_entropy(x.movedim(-1, 1) if x.ndim > 1 else x, y, ignore_index=ignore_index,
                           label_smoothing=label_smoothing, reduction=reduction)


CASES = [
    # ---------------------------------------------------------------- cross entropy
    Case("cross_entropy", [(4, 5), (4,)], lambda x, y: F.cross_entropy(x, y), **TGT),
    Case("cross_entropy_sum", [(4, 5), (4,)], lambda x, y: F.cross_entropy(x, y, reduction="sum"), **TGT),
    Case("cross_entropy_none", [(4, 5), (4,)], lambda x, y: F.cross_entropy(x, y, reduction="none"), **TGT),
    Case("cross_entropy_smoothing", [(4, 5), (4,)], lambda x, y: F.cross_entropy(x, y, label_smoothing=0.1),
         **TGT),
    Case("cross_entropy_smoothing_none", [(4, 5), (4,)],
         lambda x, y: F.cross_entropy(x, y, label_smoothing=0.25, reduction="none"), **TGT),
    Case("cross_entropy_ignore", [(6, 5), (6,)], lambda x, y: F.cross_entropy(x, y),
         dtypes=["float32", "int64"], vals=[None, [1, -100, 4, 0, -100, 2]]),
    Case("cross_entropy_ignore_custom_smoothing", [(6, 5), (6,)],
         lambda x, y: F.cross_entropy(x, y, ignore_index=2, label_smoothing=0.2),
         dtypes=["float32", "int64"], vals=[None, [1, 2, 4, 0, 2, 3]]),
    Case("cross_entropy_all_ignored", [(2, 3), (2,)], lambda x, y: F.cross_entropy(x, y),
         dtypes=["float32", "int64"], vals=[None, [-100, -100]]),
    Case("cross_entropy_weight", [(4, 5), (4,)], lambda x, y: F.cross_entropy(x, y, weight=torch.tensor(W5)),
         **TGT),
    Case("cross_entropy_weight_smoothing_ignore", [(6, 5), (6,)],
         lambda x, y: F.cross_entropy(x, y, weight=torch.tensor(W5), label_smoothing=0.3, ignore_index=0),
         dtypes=["float32", "int64"], vals=[None, [1, 0, 4, 3, 2, 0]]),
    Case("cross_entropy_spatial", [(2, 4, 3, 2), (2, 3, 2)], lambda x, y: F.cross_entropy(x, y),
         dtypes=["float32", "int64"], low=[-3.0, 0], high=[3.0, 4]),
    Case("cross_entropy_spatial_none", [(2, 3, 5), (2, 5)], lambda x, y: F.cross_entropy(x, y, reduction="none"),
         dtypes=["float32", "int64"], low=[-3.0, 0], high=[3.0, 3]),
    Case("cross_entropy_single_sample", [(5,), ()], lambda x, y: F.cross_entropy(x, y), **TGT),
    Case("cross_entropy_int32_targets", [(4, 5), (4,)], lambda x, y: F.cross_entropy(x, y.long()),
         dtypes=["float32", "int32"], low=[-3.0, 0], high=[3.0, 5]),
    Case("cross_entropy_large_logits", [(2, 3), (2,)], lambda x, y: F.cross_entropy(x, y),
         dtypes=["float32", "int64"], vals=[[[1000.0, -1000.0, 0.0], [-500.0, -500.0, 500.0]], [1, 2]]),
    Case("cross_entropy_probs", [(4, 5), (4, 5)], lambda x, p: F.cross_entropy(x, p.softmax(-1)),
         low=[-3.0, -2.0], high=[3.0, 2.0]),
    Case("cross_entropy_probs_smoothing_sum", [(4, 5), (4, 5)],
         lambda x, p: F.cross_entropy(x, p.softmax(-1), label_smoothing=0.1, reduction="sum")),
    Case("cross_entropy_probs_weight", [(3, 5), (3, 5)],
         lambda x, p: F.cross_entropy(x, p.softmax(-1), weight=torch.tensor(W5))),
    Case("cross_entropy_transposed_logits", [(5, 4), (4,)], lambda x, y: F.cross_entropy(x.t(), y),
         dtypes=["float32", "int64"], low=[-3.0, 0], high=[3.0, 5]),
    # ---------------------------------------------------------------- nll / sparse cce
    Case("nll_loss", [(4, 5), (4,)], lambda x, y: F.nll_loss(x.log_softmax(1), y), **TGT),
    Case("nll_loss_weight_sum", [(4, 5), (4,)],
         lambda x, y: F.nll_loss(x, y, weight=torch.tensor(W5), reduction="sum"), **TGT),
    Case("nll_loss_ignore_none", [(4, 5), (4,)], lambda x, y: F.nll_loss(x, y, ignore_index=3, reduction="none"),
         dtypes=["float32", "int64"], vals=[None, [3, 1, 3, 0]]),
    Case("sparse_categorical_crossentropy", [(4, 5), (4,)], lambda x, y: scce(x, y), **TGT),
    Case("sparse_categorical_crossentropy_ignore_smoothing", [(2, 3, 5), (2, 3)],
         lambda x, y: scce(x, y, ignore_index=-1, label_smoothing=0.1), dtypes=["float32", "int64"],
         vals=[None, [[1, -1, 4], [0, 2, -1]]]),
    Case("sparse_categorical_crossentropy_sum", [(3, 4), (3,)], lambda x, y: scce(x, y, reduction="sum"),
         dtypes=["float32", "int64"], low=[-3.0, 0], high=[3.0, 4]),
    # ---------------------------------------------------------------- binary cross entropy
    Case("binary_crossentropy", [(3, 4), (3, 4)], lambda p, y: F.binary_cross_entropy(p, y), low=[0.05, 0.0],
         high=[0.95, 1.0]),
    Case("binary_crossentropy_hard_targets_sum", [(6,), (6,)],
         lambda p, y: F.binary_cross_entropy(p, y, reduction="sum"),
         vals=[[0.1, 0.9, 0.5, 0.999, 0.001, 0.3], [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]]),
    Case("binary_crossentropy_none", [(2, 3), (2, 3)], lambda p, y: F.binary_cross_entropy(p, y, reduction="none"),
         low=[0.05, 0.0], high=[0.95, 1.0]),
    Case("binary_crossentropy_logits", [(3, 4), (3, 4)], lambda x, y: F.binary_cross_entropy_with_logits(x, y),
         low=[-4.0, 0.0], high=[4.0, 1.0]),
    Case("binary_crossentropy_logits_extreme", [(7,), (7,)],
         lambda x, y: F.binary_cross_entropy_with_logits(x, y, reduction="none"),
         vals=[[-100.0, 100.0, 0.0, 0.0, -30.0, 30.0, 1e4], [1.0, 0.0, 1.0, 0.0, 0.5, 0.5, 1.0]]),
    Case("binary_crossentropy_logits_pos_weight", [(4, 3), (4, 3), (3,)],
         lambda x, y, w: F.binary_cross_entropy_with_logits(x, y, pos_weight=w.detach(), reduction="sum"),
         low=[-4.0, 0.0, 0.5], high=[4.0, 1.0, 3.0]),
    # ---------------------------------------------------------------- regression
    Case("mse_loss", [(3, 4), (3, 4)], lambda x, y: F.mse_loss(x, y)),
    Case("mse_loss_sum_broadcast_none", [(3, 4), (3, 4)],
         lambda x, y: F.mse_loss(x, y, reduction="sum") + F.mse_loss(x, y, reduction="none").mean(0).sum()),
    Case("l1_loss", [(3, 4), (3, 4)], lambda x, y: F.l1_loss(x, y)),
    Case("l1_loss_ties", [(5,), (5,)], lambda x, y: F.l1_loss(x, y, reduction="sum"),
         vals=[[1.0, 2.0, -1.0, 0.0, 3.0], [1.0, 1.0, -1.0, 0.0, 4.0]]),
    Case("mse_loss_0d", [(), ()], lambda x, y: F.mse_loss(x, y)),
    Case("l1_loss_empty", [(0, 3), (0, 3)], lambda x, y: F.l1_loss(x, y, reduction="sum")),
    # ---------------------------------------------------------------- one_hot
    Case("one_hot", [(5,)], lambda y: F.one_hot(y, 4), dtype="int64", low=0, high=4),
    Case("one_hot_2d_int32", [(2, 3)], lambda y: F.one_hot(y.long(), 6), dtype="int32", low=0, high=6),
]
