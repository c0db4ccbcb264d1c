//! Ops whose output shape depends on the input's values, so the values are read to the host:
//! NonZero, Unique and NonMaxSuppression.

use crate::error::Result;
use crate::onnx::node::{one, Node, Outs};
use crate::tensor::{Idx, Tensor};
use crate::uop::DType;

pub(super) fn run(node: &Node) -> Option<Result<Outs>> {
    let r = match node.op() {
        "NonZero" => (|| one(Ok(node.input(0)?.nonzero()?.cast(DType::I64).t())))(),
        "Unique" => unique(node),
        "NonMaxSuppression" => non_max_suppression(node),
        _ => return None,
    };
    Some(r)
}

/// Unique elements (no `axis`: of the flattened input) or unique slices along `axis`, sorted
/// (rows compared lexicographically, as NumPy) or in order of first occurrence; with the index
/// of each one's first occurrence, each input position's unique index, and the counts.
fn unique(node: &Node) -> Result<Outs> {
    let x = node.input(0)?;
    let (x, axis) = match node.attr("axis").and_then(|a| a.i) {
        Some(a) => (x.clone(), node.axis(a, x.ndim())?),
        None => (x.reshape([x.numel()]), 0),
    };
    let n = x.shape()[axis];
    let rows: Vec<Vec<f64>> = {
        let front = x.transpose(0, axis as isize).contiguous();
        let values = front.to_f64_vec()?;
        let width = values.len().checked_div(n).unwrap_or(0);
        (0..n).map(|i| values[i * width..(i + 1) * width].to_vec()).collect()
    };
    let by_value = |a: &usize, b: &usize| {
        rows[*a]
            .iter()
            .zip(&rows[*b])
            .map(|(p, q)| p.total_cmp(q))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|a, b| by_value(a, b).then(a.cmp(b)));
    // Groups of equal rows: their first occurrence (the smallest index, first in each group).
    let mut firsts: Vec<usize> = Vec::new();
    let mut group_of = vec![0usize; n];
    let mut counts: Vec<i64> = Vec::new();
    for (k, &i) in order.iter().enumerate() {
        if k == 0 || by_value(&order[k - 1], &i).is_ne() {
            firsts.push(i);
            counts.push(0);
        }
        group_of[i] = firsts.len() - 1;
        *counts.last_mut().expect("a group was started") += 1;
    }
    let mut rank: Vec<usize> = (0..firsts.len()).collect();
    if node.int("sorted", 1)? == 0 {
        rank.sort_by_key(|&g| firsts[g]);
    }
    // position[g]: where group g lands in the output.
    let mut position = vec![0usize; rank.len()];
    for (p, &g) in rank.iter().enumerate() {
        position[g] = p;
    }
    let indices: Vec<i64> = rank.iter().map(|&g| firsts[g] as i64).collect();
    let inverse: Vec<i64> = group_of.iter().map(|&g| position[g] as i64).collect();
    let counts: Vec<i64> = rank.iter().map(|&g| counts[g]).collect();
    let dev = node.device;
    let mut ix = vec![Idx::slice(None, None, 1); axis];
    ix.push(Idx::T(Tensor::from_slice_on(&indices, [indices.len()], dev)));
    Ok(vec![
        Some(x.index(&ix)),
        Some(Tensor::from_slice_on(&indices, [indices.len()], dev)),
        Some(Tensor::from_slice_on(&inverse, [inverse.len()], dev)),
        Some(Tensor::from_slice_on(&counts, [counts.len()], dev)),
    ])
}

/// A box as (x_min, x_max, y_min, y_max) from corners `[y1, x1, y2, x2]` in any order
/// (`center_point_box` 0) or `[x_center, y_center, width, height]` (1).
fn extent(b: &[f64], center: bool) -> [f64; 4] {
    if center {
        [b[0] - b[2] / 2.0, b[0] + b[2] / 2.0, b[1] - b[3] / 2.0, b[1] + b[3] / 2.0]
    } else {
        [b[1].min(b[3]), b[1].max(b[3]), b[0].min(b[2]), b[0].max(b[2])]
    }
}

/// Whether two boxes overlap by more than `threshold` (intersection over union).
fn overlaps(a: [f64; 4], b: [f64; 4], threshold: f64) -> bool {
    let (x0, x1) = (a[0].max(b[0]), a[1].min(b[1]));
    let (y0, y1) = (a[2].max(b[2]), a[3].min(b[3]));
    if x1 <= x0 || y1 <= y0 {
        return false;
    }
    let inter = (x1 - x0) * (y1 - y0);
    let (area_a, area_b) = ((a[1] - a[0]) * (a[3] - a[2]), (b[1] - b[0]) * (b[3] - b[2]));
    let union = area_a + area_b - inter;
    if area_a <= 0.0 || area_b <= 0.0 || union <= 0.0 {
        return false;
    }
    inter / union > threshold
}

/// Greedy non-maximum suppression per batch and class: boxes by descending score (the lower
/// index first among equal scores), above the score threshold, each kept unless it overlaps a
/// kept one by more than the IoU threshold, at most `max_output_boxes_per_class` per class.
/// Output: `(selected, 3)` rows of (batch, class, box).
fn non_max_suppression(node: &Node) -> Result<Outs> {
    let (boxes, scores) = (node.input(0)?, node.input(1)?);
    let (bs, ss) = (boxes.shape(), scores.shape());
    if bs.len() != 3 || bs[2] != 4 || ss.len() != 3 || ss[0] != bs[0] || ss[2] != bs[1] {
        return Err(node.error(format!("boxes {bs:?} and scores {ss:?} do not fit")));
    }
    let max_out = node.input_ints(2)?.and_then(|v| v.first().copied()).unwrap_or(0).max(0) as usize;
    let iou = node.input_f64s(3)?.and_then(|v| v.first().copied()).unwrap_or(0.0);
    let min_score = node.input_f64s(4)?.and_then(|v| v.first().copied());
    let center = node.int("center_point_box", 0)? != 0;
    let (b, s) = (boxes.to_f64_vec()?, scores.to_f64_vec()?);
    let (batches, classes, n) = (ss[0], ss[1], ss[2]);
    let mut selected: Vec<i64> = Vec::new();
    for batch in 0..batches {
        let extents: Vec<[f64; 4]> = (0..n).map(|i| extent(&b[(batch * n + i) * 4..][..4], center)).collect();
        for class in 0..classes {
            let score = &s[(batch * classes + class) * n..][..n];
            let mut order: Vec<usize> = (0..n).filter(|&i| min_score.is_none_or(|t| score[i] > t)).collect();
            order.sort_by(|&i, &j| score[j].total_cmp(&score[i]).then(i.cmp(&j)));
            let mut kept: Vec<usize> = Vec::new();
            for i in order {
                if kept.len() >= max_out {
                    break;
                }
                if kept.iter().all(|&k| !overlaps(extents[i], extents[k], iou)) {
                    kept.push(i);
                    selected.extend([batch as i64, class as i64, i as i64]);
                }
            }
        }
    }
    one(Ok(Tensor::from_slice_on(&selected, [selected.len() / 3, 3], node.device)))
}
