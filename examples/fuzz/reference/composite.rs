//! The reference of the ops composed of primitives: inverse trig and hyperbolic functions,
//! `atan2`, `logaddexp`, `copysign`, sort and topk values, softmax and log-softmax, unfold,
//! argsort, diagonals and `diag`, the functional norms, scaled-dot-product attention and max
//! pooling with indices, from their mathematical definitions in f64 (std's libm functions).
//!
//! ferrograd computes these with formulas of several roundings each, so the bounds are looser
//! than the primitives': a few dozen units in the last place of the result, widened by the
//! function's conditioning (the spread of `f` over the input's interval, itself widened by a
//! few ulps of the input). They catch kernels that compute something else, not last-bit
//! differences — the fixture suite checks the formulas' accuracy against PyTorch.

use super::{eps, finish, tiny, unravel, Arr, E};
use crate::graph::{Dt, Fun, Fun2, NormKind};

/// How many f32 ulps a composed formula may be off, relative to its result.
const ULPS: f64 = 32.0;

fn fun_f64(f: Fun) -> fn(f64) -> f64 {
    match f {
        Fun::Atan => f64::atan,
        Fun::Asin => f64::asin,
        Fun::Acos => f64::acos,
        Fun::Tan => f64::tan,
        Fun::Sinh => f64::sinh,
        Fun::Cosh => f64::cosh,
        Fun::Tanh => f64::tanh,
        Fun::Asinh => f64::asinh,
        Fun::Acosh => f64::acosh,
        Fun::Atanh => f64::atanh,
        Fun::Expm1 => f64::exp_m1,
        Fun::Log1p => f64::ln_1p,
    }
}

/// `f(x)` with a bound from the spread of `f` over `x`'s interval widened by `ULPS` f32 ulps.
pub fn unary(f: Fun, x: E, dt: Dt) -> E {
    if x.unsure {
        return E::unsure();
    }
    let g = fun_f64(f);
    let v = g(x.v);
    if x.v.is_nan() {
        return E::f(f64::NAN);
    }
    // Periodic: far from 0 the argument reduction decides, and any answer in [-inf, inf] goes.
    if f == Fun::Tan && x.v.abs() > 1e4 {
        return E::unsure();
    }
    if x.v.is_infinite() {
        return if x.e > 0.0 {
            E::unsure()
        } else if v.is_finite() {
            finish(v, ULPS * eps(Dt::F32) * v.abs(), dt, false)
        } else {
            E::f(v)
        };
    }
    let widen = x.e + ULPS * eps(Dt::F32) * x.v.abs() + tiny(Dt::F32);
    let (lo, hi) = (g(x.v - widen), g(x.v + widen));
    // The interval reaches a domain edge or an overflow: the value is not determined.
    if v.is_nan() {
        return if lo.is_nan() && hi.is_nan() { E::f(f64::NAN) } else { E::unsure() };
    }
    if !(lo.is_finite() && hi.is_finite()) {
        return if v.is_infinite() && lo == v && hi == v { E::f(v) } else { E::unsure() };
    }
    let spread = (lo - v).abs().max((hi - v).abs());
    finish(v, spread + ULPS * eps(Dt::F32) * v.abs() + tiny(Dt::F32), dt, false)
}

pub fn binary(f: Fun2, a: E, b: E, dt: Dt) -> E {
    if a.unsure || b.unsure {
        return E::unsure();
    }
    if a.v.is_nan() || b.v.is_nan() {
        // copysign(x, NaN): the sign bit of a NaN is not determined by the reference.
        return if f == Fun2::Copysign { E::unsure() } else { E::f(f64::NAN) };
    }
    match f {
        Fun2::Copysign => {
            // The sign of a zero is not tracked through sums: only nonzero signs decide.
            if b.v == 0.0 || b.v.abs() <= b.e {
                return E::unsure();
            }
            E { v: a.v.abs().copysign(b.v), ..a }
        }
        Fun2::Atan2 | Fun2::Logaddexp => {
            let g = |y: f64, x: f64| if f == Fun2::Atan2 { y.atan2(x) } else { logaddexp(y, x) };
            let v = g(a.v, b.v);
            if a.v.is_infinite() || b.v.is_infinite() {
                return if a.e > 0.0 || b.e > 0.0 {
                    E::unsure()
                } else if v.is_finite() {
                    finish(v, ULPS * eps(Dt::F32) * (v.abs() + 1.0), dt, false)
                } else {
                    E::f(v)
                };
            }
            let wa = a.e + ULPS * eps(Dt::F32) * a.v.abs() + tiny(Dt::F32);
            let wb = b.e + ULPS * eps(Dt::F32) * b.v.abs() + tiny(Dt::F32);
            // atan2 jumps across the negative x axis and is undetermined at the origin.
            if f == Fun2::Atan2 && a.v.abs() <= wa && (b.v < 0.0 || b.v.abs() <= wb) {
                return E::unsure();
            }
            let mut spread: f64 = 0.0;
            for (da, db) in [(-wa, -wb), (-wa, wb), (wa, -wb), (wa, wb)] {
                spread = spread.max((g(a.v + da, b.v + db) - v).abs());
            }
            finish(v, spread + ULPS * eps(Dt::F32) * (v.abs() + 1.0), dt, false)
        }
    }
}

fn logaddexp(a: f64, b: f64) -> f64 {
    if a == b {
        return a + std::f64::consts::LN_2;
    }
    a.max(b) + (-(a - b).abs()).exp().ln_1p()
}

/// The elements of `a` along `axis` through each position of the other axes: for each output
/// lane (an index of `a` with `axis` at 0), the lane's elements in order.
fn lanes(a: &Arr, axis: usize) -> Vec<(Vec<usize>, Vec<E>)> {
    let mut lane_shape = a.shape.clone();
    lane_shape[axis] = 1;
    let count: usize = lane_shape.iter().product();
    (0..count)
        .map(|l| {
            let base = unravel(l, &lane_shape);
            let xs = (0..a.shape[axis])
                .map(|k| {
                    let mut idx = base.clone();
                    idx[axis] = k;
                    a.at(&idx)
                })
                .collect();
            (base, xs)
        })
        .collect()
}

/// Writes lane values back into an array of `shape` (lane `axis` of length `values.len()`).
fn put_lane(out: &mut [E], shape: &[usize], axis: usize, base: &[usize], values: &[E]) {
    let strides = super::strides(shape);
    for (k, v) in values.iter().enumerate() {
        let mut idx = base.to_vec();
        idx[axis] = k;
        out[idx.iter().zip(&strides).map(|(i, s)| i * s).sum::<usize>()] = *v;
    }
}

/// Sorted values (NaN above +inf, as PyTorch orders them), or the `k` largest.
pub fn sort(a: &Arr, axis: usize, descending: bool, k: Option<usize>, shape: &[usize]) -> Arr {
    let mut out = vec![E::unsure(); shape.iter().product()];
    for (base, mut xs) in lanes(a, axis) {
        let values = if xs.iter().any(|x| x.unsure) {
            vec![E::unsure(); xs.len()]
        } else {
            // Sorting is 1-Lipschitz in the largest error: each rank gets the lane's worst bound.
            let e = xs.iter().map(|x| x.e).fold(0.0, f64::max);
            let key = |x: &E| if x.v.is_nan() { f64::INFINITY } else { x.v };
            let nan_last = |x: &E, y: &E| key(x).total_cmp(&key(y)).then(x.v.is_nan().cmp(&y.v.is_nan()));
            xs.sort_by(|x, y| if descending { nan_last(y, x) } else { nan_last(x, y) });
            xs.into_iter().map(|x| if e > 0.0 && x.v.is_infinite() { E::unsure() } else { E { e, ..x } }).collect()
        };
        let n = k.unwrap_or(values.len());
        put_lane(&mut out, shape, axis, &base, &values[..n]);
    }
    Arr { shape: shape.to_vec(), dt: a.dt, data: out }
}

/// Softmax (or log-softmax) along `axis`: `exp(x - max) / sum`, in f64.
pub fn softmax(a: &Arr, axis: usize, log: bool) -> Arr {
    let dt = a.dt;
    let mut out = vec![E::unsure(); a.data.len()];
    for (base, xs) in lanes(a, axis) {
        let n = xs.len() as f64;
        let values: Vec<E> = if xs.iter().any(|x| x.unsure) {
            vec![E::unsure(); xs.len()]
        } else {
            let err = xs.iter().map(|x| x.e).fold(0.0, f64::max);
            let m = xs.iter().map(|x| x.v).fold(f64::NEG_INFINITY, |m, v| {
                if v.is_nan() || m.is_nan() {
                    f64::NAN
                } else {
                    m.max(v)
                }
            });
            let s: f64 = xs.iter().map(|x| (x.v - m).exp()).sum();
            let slack = (8.0 + n) * eps(dt);
            xs.iter()
                .map(|x| {
                    let d = x.v - m;
                    if log {
                        let v = d - s.ln();
                        if !v.is_finite() || err > 0.0 && !m.is_finite() {
                            return if err > 0.0 { E::unsure() } else { E::f(v) };
                        }
                        finish(
                            v,
                            2.0 * err + slack * (v.abs() + n.ln() + 1.0) + (d.abs() + 4.0) * eps(Dt::F32),
                            dt,
                            false,
                        )
                    } else {
                        let v = d.exp() / s;
                        if !v.is_finite() {
                            return if err > 0.0 { E::unsure() } else { E::f(v) };
                        }
                        let e = v * ((2.0 * err).exp_m1() + slack + (d.abs() + 4.0) * eps(Dt::F32)) + tiny(dt);
                        finish(v, e, dt, false)
                    }
                })
                .collect()
        };
        put_lane(&mut out, &a.shape, axis, &base, &values);
    }
    Arr { shape: a.shape.clone(), dt, data: out }
}

/// A functional norm without weight or bias: `(x - mean) / sqrt(var + 1e-5)` over each group
/// of elements (biased variance), or `x / sqrt(mean(x^2) + 1e-6)` for `Rms`.
pub fn norm(a: &Arr, kind: NormKind) -> Arr {
    let dt = a.dt;
    let shape = &a.shape;
    let n = shape.len();
    // The group an element is normalized with, by its index.
    let group_of = |idx: &[usize]| -> Vec<usize> {
        match kind {
            NormKind::Layer | NormKind::Rms => idx[..n - 1].to_vec(),
            NormKind::Instance => idx[..2].to_vec(),
            NormKind::Batch => vec![idx[1]],
            NormKind::Group(g) => vec![idx[0], idx[1] / (shape[1] / g)],
        }
    };
    let mut groups: std::collections::BTreeMap<Vec<usize>, Vec<usize>> = Default::default();
    for i in 0..a.data.len() {
        groups.entry(group_of(&unravel(i, shape))).or_default().push(i);
    }
    let mut out = vec![E::unsure(); a.data.len()];
    for members in groups.values() {
        let xs: Vec<E> = members.iter().map(|&i| a.data[i]).collect();
        let count = xs.len() as f64;
        // Squares of values past 1e15 may overflow f32 in the variance.
        if xs.iter().any(|x| x.unsure || x.v.is_finite() && x.v.abs() > 1e15) {
            continue;
        }
        let err = xs.iter().map(|x| x.e).fold(0.0, f64::max);
        let rms = kind == NormKind::Rms;
        let mean = if rms { 0.0 } else { xs.iter().map(|x| x.v).sum::<f64>() / count };
        let var = xs.iter().map(|x| (x.v - mean).powi(2)).sum::<f64>() / count;
        let sd = (var + if rms { 1e-6 } else { 1e-5 }).sqrt();
        let biggest = xs.iter().map(|x| x.v.abs()).fold(0.0, f64::max);
        for (&i, x) in members.iter().zip(&xs) {
            let v = (x.v - mean) / sd;
            out[i] = if !v.is_finite() {
                if err > 0.0 {
                    E::unsure()
                } else {
                    E::f(v)
                }
            } else {
                let rounding = (16.0 + 2.0 * count) * eps(dt) * (v.abs() + 1.0) * (1.0 + biggest / sd);
                finish(v, err * (2.0 + v.abs()) / sd + rounding, dt, false)
            };
        }
    }
    Arr { shape: shape.clone(), dt, data: out }
}

/// The stable `argsort` along `axis` (NaN above +inf; equal values keep their order), int64.
/// A lane with two values within their bounds of each other is not compared.
pub fn argsort(a: &Arr, axis: usize, descending: bool) -> Arr {
    let mut out = vec![E::unsure(); a.data.len()];
    for (base, xs) in lanes(a, axis) {
        let close = xs.iter().enumerate().any(|(i, x)| {
            x.unsure
                || xs[i + 1..].iter().any(|y| {
                    (x.e > 0.0 || y.e > 0.0)
                        && !(x.v.is_nan() && y.v.is_nan())
                        && (x.v - y.v).abs().partial_cmp(&(x.e + y.e)) != Some(std::cmp::Ordering::Greater)
                })
        });
        if close {
            continue;
        }
        let key = |x: &E| if x.v.is_nan() { (1, 0.0) } else { (0, x.v) };
        let mut order: Vec<usize> = (0..xs.len()).collect();
        order.sort_by(|&i, &j| {
            let (ki, kj) = (key(&xs[i]), key(&xs[j]));
            let by_value = ki.0.cmp(&kj.0).then(ki.1.partial_cmp(&kj.1).expect("no NaN keys"));
            (if descending { by_value.reverse() } else { by_value }).then(i.cmp(&j))
        });
        let values: Vec<E> = order.iter().map(|&i| E::int(i as i128)).collect();
        put_lane(&mut out, &a.shape, axis, &base, &values);
    }
    Arr { shape: a.shape.clone(), dt: Dt::I64, data: out }
}

/// `diag(offset)` of a vector: zeros with the vector on diagonal `offset`.
pub fn diag(a: &Arr, offset: isize, shape: &[usize]) -> Arr {
    let size: usize = shape.iter().product();
    let data = (0..size)
        .map(|i| {
            let (r, c) = ((i / shape[1]) as isize, (i % shape[1]) as isize);
            if c - r == offset {
                a.data[r.min(c) as usize]
            } else {
                E::f(0.0)
            }
        })
        .collect();
    Arr { shape: shape.to_vec(), dt: a.dt, data }
}

/// `unfold(axis, size, step)`: output `[.., w, .., k]` is input `[.., w * step + k, ..]`.
pub fn unfold(a: &Arr, axis: usize, step: usize, shape: &[usize]) -> Arr {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let idx = unravel(i, shape);
            let (k, mut src) = (idx[idx.len() - 1], idx[..idx.len() - 1].to_vec());
            src[axis] = src[axis] * step + k;
            a.at(&src)
        })
        .collect();
    Arr { shape: shape.to_vec(), dt: a.dt, data }
}

/// The diagonal of the last two axes shifted by `offset` (above the main one when positive).
pub fn diagonal(a: &Arr, offset: isize, shape: &[usize]) -> Arr {
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|i| {
            let idx = unravel(i, shape);
            let (d, lead) = (idx[idx.len() - 1] as isize, &idx[..idx.len() - 1]);
            let (r, c) = if offset >= 0 { (d, d + offset) } else { (d - offset, d) };
            a.at(&lead.iter().copied().chain([r as usize, c as usize]).collect::<Vec<_>>())
        })
        .collect();
    Arr { shape: shape.to_vec(), dt: a.dt, data }
}

/// `softmax(q k^T / sqrt(D)) v` (keys `j > i` weighted 0 when causal), in f64. Rows touching
/// a non-finite or huge value are not compared (the f32 products and sums may overflow where
/// f64's do not), except that a masked key's infinite or NaN value makes NaN.
pub fn attention(q: &Arr, k: &Arr, v: &Arr, causal: bool, shape: &[usize]) -> Arr {
    let dt = q.dt;
    let n = q.shape.len();
    let (d, s) = (q.shape[n - 1], k.shape[n - 2]);
    let scale = 1.0 / (d as f64).sqrt();
    let size: usize = shape.iter().product();
    let sane = |x: &E| !x.unsure && x.v.is_finite() && x.v.abs() < 1e15;
    let data = (0..size)
        .map(|o| {
            let idx = unravel(o, shape);
            let (lead, i, c) = (&idx[..n - 2], idx[n - 2], idx[n - 1]);
            let at = |a: &Arr, r: usize, col: usize| a.at(&lead.iter().copied().chain([r, col]).collect::<Vec<_>>());
            let keys: Vec<usize> = (0..s).filter(|&j| !causal || j <= i).collect();
            // A masked key still meets its value with weight 0: `0 * inf` and `0 * NaN` make the
            // output NaN, as in PyTorch (whose attention is `softmax(..) @ v` too).
            let masked: Vec<E> = (keys.len()..s).map(|j| at(v, j, c)).collect();
            if masked.iter().any(|x| x.unsure) {
                return E::unsure();
            }
            if masked.iter().any(|x| !x.v.is_finite()) {
                return E::f(f64::NAN);
            }
            let qrow: Vec<E> = (0..d).map(|t| at(q, i, t)).collect();
            let krows: Vec<Vec<E>> = keys.iter().map(|&j| (0..d).map(|t| at(k, j, t)).collect()).collect();
            let vcol: Vec<E> = keys.iter().map(|&j| at(v, j, c)).collect();
            if !(qrow.iter().all(sane) && krows.iter().flatten().all(sane) && vcol.iter().all(sane)) {
                return E::unsure();
            }
            // Scores and their bounds (input errors plus the rounding of a length-d dot product).
            let (scores, errs): (Vec<f64>, Vec<f64>) = krows
                .iter()
                .map(|kr| {
                    let dot: f64 = qrow.iter().zip(kr).map(|(a, b)| a.v * b.v).sum();
                    let abs: f64 = qrow.iter().zip(kr).map(|(a, b)| (a.v * b.v).abs()).sum();
                    let err: f64 =
                        qrow.iter().zip(kr).map(|(a, b)| a.v.abs() * b.e + b.v.abs() * a.e + a.e * b.e).sum();
                    (dot * scale, (err + (d as f64 + 2.0) * eps(dt) * abs) * scale)
                })
                .unzip();
            let m = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let total: f64 = scores.iter().map(|x| (x - m).exp()).sum();
            let es = errs.iter().copied().fold(0.0, f64::max);
            let (mut value, mut err, mut abs) = (0.0, 0.0, 0.0);
            for ((sc, vj), _) in scores.iter().zip(&vcol).zip(&keys) {
                let w = (sc - m).exp() / total;
                let ew = w
                    * ((2.0 * es).exp_m1()
                        + (keys.len() as f64 + 8.0) * eps(dt)
                        + ((sc - m).abs() + 4.0) * eps(Dt::F32));
                value += w * vj.v;
                abs += w * vj.v.abs();
                err += ew * (vj.v.abs() + vj.e) + w * vj.e;
            }
            finish(value, err + (keys.len() as f64 + 2.0) * eps(dt) * abs + tiny(dt), dt, false)
        })
        .collect();
    Arr { shape: shape.to_vec(), dt, data }
}

/// `max_pool2d_with_indices` without padding: each window's maximum (NaN wins), or the index
/// of its first maximum in the `H * W` plane, in the window's row-major order.
pub fn max_pool(a: &Arr, kernel: usize, stride: usize, indices: bool, shape: &[usize]) -> Arr {
    let n = a.shape.len();
    let w = a.shape[n - 1];
    let size: usize = shape.iter().product();
    let data = (0..size)
        .map(|o| {
            let idx = unravel(o, shape);
            let (lead, oy, ox) = (&idx[..n - 2], idx[n - 2], idx[n - 1]);
            let taps: Vec<(usize, E)> = (0..kernel * kernel)
                .map(|t| {
                    let (y, x) = (oy * stride + t / kernel, ox * stride + t % kernel);
                    (y * w + x, a.at(&lead.iter().copied().chain([y, x]).collect::<Vec<_>>()))
                })
                .collect();
            if taps.iter().any(|(_, x)| x.unsure) {
                return E::unsure();
            }
            let better = |x: &E, best: &E| !best.v.is_nan() && (x.v.is_nan() || x.v > best.v);
            let (win, best) = taps.iter().skip(1).fold(taps[0], |acc, t| if better(&t.1, &acc.1) { *t } else { acc });
            if !indices {
                let e = taps.iter().map(|(_, x)| x.e).fold(0.0, f64::max);
                return E { e, ..best };
            }
            // Another tap within the bounds of the winner could win on a device: not compared.
            let close = taps.iter().any(|(i, x)| {
                *i != win && (x.e > 0.0 || best.e > 0.0) && !best.v.is_nan() && (x.v - best.v).abs() <= x.e + best.e
            });
            if close {
                E::unsure()
            } else {
                E::int(win as i128)
            }
        })
        .collect();
    Arr { shape: shape.to_vec(), dt: if indices { Dt::I64 } else { a.dt }, data }
}
