//! Shape ops built from movement ops: joining and splitting (`cat`, `stack`, `split`,
//! `chunk`), repeating (`repeat_interleave`, `tile`), padding modes, `roll`, triangles,
//! `unflatten`, `meshgrid`. None of them copies; `cat` is a sum of padded inputs, which
//! fuses into one kernel.

use super::shape_args::resolve_axis;
use super::{IntoShape, Tensor};
use crate::uop::{ConstValue, DType, Dim};

/// How `pad_mode` fills the new elements (PyTorch's `F.pad` modes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode {
    /// A constant value (negative amounts cut instead).
    Constant(f64),
    /// Mirror without repeating the edge: `[1, 2, 3]` padded by 2 → `[3, 2, 1, 2, 3, 2, 1]`.
    Reflect,
    /// Repeat the edge: `[1, 2, 3]` → `[1, 1, 1, 2, 3, 3, 3]`.
    Replicate,
    /// Wrap around: `[1, 2, 3]` → `[2, 3, 1, 2, 3, 1, 2]`.
    Circular,
}

/// Axes of `pairs` with shape `shape`, all kept except `axis`, which is `range`.
fn cut_axis(shape: &[usize], axis: usize, range: (usize, usize)) -> Vec<(usize, usize)> {
    shape.iter().enumerate().map(|(i, &d)| if i == axis { range } else { (0, d) }).collect()
}

impl Tensor {
    /// A 0-d zero of this tensor's dtype and device.
    pub(crate) fn zero_scalar(&self) -> Tensor {
        Tensor::full_on([0usize; 0], ConstValue::Int(0).cast(self.dtype()), self.dtype(), &self.device())
    }

    /// Joins tensors along an existing axis (dtypes promote; 1-D empty tensors are skipped, as
    /// in PyTorch). Each input is padded to the full size and the results are added.
    pub fn cat(tensors: &[&Tensor], dim: isize) -> Tensor {
        assert!(!tensors.is_empty(), "cat: needs at least one tensor");
        let nonempty: Vec<&Tensor> = tensors.iter().copied().filter(|t| t.shape() != [0]).collect();
        let ts: Vec<&Tensor> = if nonempty.is_empty() { vec![tensors[0]] } else { nonempty };
        let first = ts[0].shape();
        assert!(!first.is_empty(), "cat: zero-dimensional tensors cannot be concatenated");
        let axis = resolve_axis("cat", dim, &first);
        let dt = ts.iter().map(|t| t.dtype()).reduce(DType::promote).expect("cat: at least one tensor");
        for t in &ts {
            let s = t.shape();
            let ok = s.len() == first.len() && s.iter().zip(&first).enumerate().all(|(i, (a, b))| i == axis || a == b);
            assert!(
                ok,
                "cat: shapes {:?} do not match except in dim {dim}",
                ts.iter().map(|t| t.shape()).collect::<Vec<_>>()
            );
        }
        let total: usize = ts.iter().map(|t| t.shape()[axis]).sum();
        let mut acc: Option<Tensor> = None;
        let mut start = 0;
        for t in &ts {
            let d = t.shape()[axis];
            let pads: Vec<(usize, usize)> =
                (0..first.len()).map(|i| if i == axis { (start, total - start - d) } else { (0, 0) }).collect();
            let p = t.cast(dt).pad(&pads);
            start += d;
            acc = Some(match acc {
                None => p,
                Some(a) if dt.is_bool() => a.bitor(&p),
                Some(a) => a + p,
            });
        }
        acc.expect("cat: at least one tensor")
    }

    /// Joins tensors of one shape along a new axis `dim`.
    pub fn stack(tensors: &[&Tensor], dim: isize) -> Tensor {
        assert!(!tensors.is_empty(), "stack: needs at least one tensor");
        let s = tensors[0].shape();
        for t in tensors {
            assert_eq!(t.shape(), s, "stack: all tensors need one shape, got {:?} and {:?}", s, t.shape());
        }
        let u: Vec<Tensor> = tensors.iter().map(|t| t.unsqueeze(dim)).collect();
        let n = s.len() as isize + 1;
        Tensor::cat(&u.iter().collect::<Vec<_>>(), if dim < 0 { dim + n } else { dim })
    }

    /// Pieces of `size` along `dim` (the last may be smaller), as `torch.split(x, size, dim)`.
    pub fn split(&self, size: usize, dim: isize) -> Vec<Tensor> {
        let shape = self.shape();
        let axis = resolve_axis("split", dim, &shape);
        let d = shape[axis];
        assert!(size > 0 || d == 0, "split: size 0 for a non-empty dim {dim} of shape {shape:?}");
        if d == 0 {
            return vec![self.clone()];
        }
        let sizes: Vec<usize> = (0..d).step_by(size).map(|s| size.min(d - s)).collect();
        self.split_sizes(&sizes, dim)
    }

    /// Pieces of the given sizes along `dim` (they must add up to its size).
    pub fn split_sizes(&self, sizes: &[usize], dim: isize) -> Vec<Tensor> {
        let shape = self.shape();
        let axis = resolve_axis("split", dim, &shape);
        let total: usize = sizes.iter().sum();
        assert_eq!(total, shape[axis], "split: sizes {sizes:?} do not add up to dim {dim} of shape {shape:?}");
        let mut start = 0;
        sizes
            .iter()
            .map(|&s| {
                let t = self.shrink(&cut_axis(&shape, axis, (start, start + s)));
                start += s;
                t
            })
            .collect()
    }

    /// At most `chunks` pieces of equal size (`ceil(d / chunks)`, the last smaller), as
    /// `torch.chunk`.
    pub fn chunk(&self, chunks: usize, dim: isize) -> Vec<Tensor> {
        assert!(chunks > 0, "chunk: number of chunks must be positive");
        let shape = self.shape();
        let axis = resolve_axis("chunk", dim, &shape);
        let d = shape[axis];
        if d == 0 {
            return vec![self.clone(); chunks];
        }
        self.split(d.div_ceil(chunks), dim)
    }

    /// Repeats each element `repeats` times along `dim` (all elements, flattened, for `None`).
    pub fn repeat_interleave(&self, repeats: usize, dim: Option<isize>) -> Tensor {
        let (x, dim) = match dim {
            Some(d) => (self.clone(), d),
            None => (self.flatten(), 0),
        };
        if x.is_symbolic() {
            let shape = x.sym_shape();
            let axis = resolve_axis("repeat_interleave", dim, &x.layout_shape());
            let mut wide = shape.clone();
            wide.insert(axis + 1, Dim::Const(repeats));
            let mut out = shape.clone();
            out[axis] = &out[axis] * repeats;
            return x.unsqueeze(axis as isize + 1).expand_to_dims(&wide).reshape_dims(&out);
        }
        let shape = x.shape();
        let axis = resolve_axis("repeat_interleave", dim, &shape);
        let mut wide: Vec<usize> = shape.clone();
        wide.insert(axis + 1, repeats);
        let mut out = shape.clone();
        out[axis] *= repeats;
        x.unsqueeze(axis as isize + 1).expand(wide).reshape(out)
    }

    /// The tensor repeated `reps[i]` times along axis `i` (missing leading reps are 1), as
    /// `torch.tile`.
    pub fn tile(&self, reps: &[usize]) -> Tensor {
        let n = self.ndim();
        let full: Vec<usize> = if reps.len() < n {
            std::iter::repeat_n(1, n - reps.len()).chain(reps.iter().copied()).collect()
        } else {
            reps.to_vec()
        };
        self.repeat(&full)
    }

    /// Pads the last `pads.len()` axes (pairs in axis order, not PyTorch's reversed flat
    /// list) in `mode`.
    pub fn pad_mode(&self, pads: &[(isize, isize)], mode: PadMode) -> Tensor {
        let shape = self.shape();
        assert!(pads.len() <= shape.len(), "pad: {} pairs for shape {shape:?}", pads.len());
        let lead = shape.len() - pads.len();
        if let PadMode::Constant(v) = mode {
            let all: Vec<(isize, isize)> = std::iter::repeat_n((0, 0), lead).chain(pads.iter().copied()).collect();
            return self.pad_constant(&all, v);
        }
        // Negative amounts crop. As PyTorch: reflection and replication are about the edges of
        // the uncropped input (pad, then crop); circular padding wraps the cropped one (crop,
        // then pad).
        let crop_first = matches!(mode, PadMode::Circular);
        let crops: Vec<(usize, usize)> = (0..shape.len())
            .map(|i| {
                if i < lead {
                    (0, 0)
                } else {
                    ((-pads[i - lead].0).max(0) as usize, (-pads[i - lead].1).max(0) as usize)
                }
            })
            .collect();
        let crop = |x: &Tensor| {
            let s = x.shape();
            let ranges: Vec<(usize, usize)> = s
                .iter()
                .zip(&crops)
                .map(|(&d, &(lo, hi))| {
                    assert!(lo + hi <= d, "pad: negative padding {pads:?} removes more than shape {shape:?} has");
                    (lo, d - hi)
                })
                .collect();
            x.shrink(&ranges)
        };
        let mut x = if crop_first { crop(self) } else { self.clone() };
        let shape = x.shape();
        for (i, &(b, a)) in pads.iter().enumerate() {
            let axis = lead + i;
            let n = shape[axis];
            let (b, a) = (b.max(0) as usize, a.max(0) as usize);
            if b == 0 && a == 0 {
                continue;
            }
            let xs = x.shape();
            let part = |r: (usize, usize)| x.shrink(&cut_axis(&xs, axis, r));
            let (left, right) = match mode {
                PadMode::Reflect => {
                    assert!(b < n && a < n, "pad: reflect padding {pads:?} must be smaller than the dims of {shape:?}");
                    (part((1, b + 1)).flip(axis as isize), part((n - 1 - a, n - 1)).flip(axis as isize))
                }
                PadMode::Replicate => {
                    assert!(n > 0, "pad: replicate padding of an empty axis in {shape:?}");
                    let mut lb = xs.clone();
                    lb[axis] = b;
                    let mut la = xs.clone();
                    la[axis] = a;
                    (part((0, 1)).expand(lb), part((n - 1, n)).expand(la))
                }
                PadMode::Circular => {
                    assert!(b <= n && a <= n, "pad: circular padding {pads:?} must not exceed the dims of {shape:?}");
                    (part((n - b, n)), part((0, a)))
                }
                PadMode::Constant(_) => unreachable!("handled above"),
            };
            x = Tensor::cat(&[&left, &x, &right], axis as isize);
        }
        if crop_first {
            x
        } else {
            crop(&x)
        }
    }

    /// Shifts elements along `dims` by `shifts` (wrapping), as `torch.roll`; with no dims the
    /// flattened tensor is rolled. A roll is a cut of the axis repeated twice.
    pub fn roll(&self, shifts: &[isize], dims: &[isize]) -> Tensor {
        if dims.is_empty() {
            assert_eq!(shifts.len(), 1, "roll: {} shifts without dims", shifts.len());
            return self.flatten().roll(shifts, &[0]).reshape(self.shape());
        }
        assert_eq!(shifts.len(), dims.len(), "roll: {} shifts for {} dims", shifts.len(), dims.len());
        let shape = self.shape();
        let mut x = self.clone();
        for (&s, &dim) in shifts.iter().zip(dims) {
            let axis = resolve_axis("roll", dim, &shape);
            let n = shape[axis] as isize;
            if n == 0 {
                continue;
            }
            let s = s.rem_euclid(n) as usize;
            if s == 0 {
                continue;
            }
            let mut reps = vec![1; shape.len()];
            reps[axis] = 2;
            let n = n as usize;
            x = x.repeat(&reps).shrink(&cut_axis(&shape, axis, (n - s, 2 * n - s)).to_vec());
        }
        x
    }

    /// Keeps elements with `col - row <= diagonal` of the last two axes, zeroing the rest.
    pub fn tril(&self, diagonal: isize) -> Tensor {
        self.triangle("tril", diagonal, false)
    }

    /// Keeps elements with `col - row >= diagonal` of the last two axes, zeroing the rest.
    pub fn triu(&self, diagonal: isize) -> Tensor {
        self.triangle("triu", diagonal, true)
    }

    fn triangle(&self, op: &str, diagonal: isize, upper: bool) -> Tensor {
        let shape = self.shape();
        assert!(shape.len() >= 2, "{op}: needs at least 2 dims, shape is {shape:?}");
        let (r, c) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let dev = self.device();
        let row = Tensor::iota(r, DType::I32, &dev).reshape([r, 1]);
        let col = Tensor::iota(c, DType::I32, &dev).reshape([1, c]);
        let diff = col - row;
        let d = diagonal.clamp(-(r as isize) - 1, c as isize + 1) as i32;
        let keep = if upper { diff.ge(d) } else { diff.le(d) };
        keep.where_(self, self.zero_scalar())
    }

    /// Splits axis `dim` into `sizes` (one may be -1), as `torch.unflatten`.
    pub fn unflatten(&self, dim: isize, sizes: impl IntoShape) -> Tensor {
        let shape = self.shape();
        let axis = resolve_axis("unflatten", dim, &shape);
        let sizes = sizes.into_dims();
        let known: isize = sizes.iter().filter(|&&s| s != -1).product();
        let d = shape[axis] as isize;
        let resolved: Vec<usize> = sizes
            .iter()
            .map(|&s| {
                if s != -1 {
                    s as usize
                } else {
                    assert!(
                        known > 0 && d % known == 0,
                        "unflatten: cannot split dim {dim} ({d}) of {shape:?} into {sizes:?}"
                    );
                    (d / known) as usize
                }
            })
            .collect();
        assert_eq!(
            resolved.iter().product::<usize>(),
            shape[axis],
            "unflatten: sizes {sizes:?} do not multiply to dim {dim} of shape {shape:?}"
        );
        let new: Vec<usize> = shape[..axis].iter().chain(&resolved).chain(&shape[axis + 1..]).copied().collect();
        self.reshape(new)
    }

    /// Coordinate grids from 1-D tensors, as `torch.meshgrid`: `indexing` is `"ij"` (output
    /// shape `(n0, n1, ...)`) or `"xy"` (the first two axes swapped).
    pub fn meshgrid(tensors: &[&Tensor], indexing: &str) -> Vec<Tensor> {
        assert!(indexing == "ij" || indexing == "xy", "meshgrid: indexing must be \"ij\" or \"xy\", got {indexing:?}");
        for t in tensors {
            assert!(t.ndim() <= 1, "meshgrid: expects 0-D or 1-D tensors, got shape {:?}", t.shape());
        }
        let sizes: Vec<usize> = tensors.iter().map(|t| t.numel()).collect();
        // Axis each input varies along.
        let axis_of = |i: usize| -> usize {
            match (indexing, i) {
                ("xy", 0) if tensors.len() > 1 => 1,
                ("xy", 1) => 0,
                _ => i,
            }
        };
        let mut out_shape: Vec<usize> = vec![0; tensors.len()];
        for (i, &s) in sizes.iter().enumerate() {
            out_shape[axis_of(i)] = s;
        }
        tensors
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut sh = vec![1; tensors.len()];
                sh[axis_of(i)] = sizes[i];
                t.reshape(sh).expand(out_shape.clone())
            })
            .collect()
    }
}
