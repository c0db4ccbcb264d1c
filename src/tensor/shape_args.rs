//! Argument conversions: shapes (`[2, 3]`, `vec![2, -1]`) and axes (`1`, `-1`, `[0, 2]`,
//! `()` for all axes).

/// An integer that can be a dimension or an axis.
pub trait Dim: Copy {
    fn to_isize(self) -> isize;
}
macro_rules! dim {
    ($($t:ty),*) => {$(impl Dim for $t { fn to_isize(self) -> isize { self as isize } })*};
}
dim!(i32, i64, isize, usize, u32);

/// A shape; `-1` (where allowed) means "infer this dimension".
pub trait IntoShape {
    fn into_dims(self) -> Vec<isize>;
}
impl<T: Dim, const N: usize> IntoShape for [T; N] {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|d| d.to_isize()).collect()
    }
}
impl<T: Dim> IntoShape for Vec<T> {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|d| d.to_isize()).collect()
    }
}
impl<T: Dim> IntoShape for &[T] {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|d| d.to_isize()).collect()
    }
}
impl<T: Dim> IntoShape for &Vec<T> {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|d| d.to_isize()).collect()
    }
}
impl<T: Dim, const N: usize> IntoShape for &[T; N] {
    fn into_dims(self) -> Vec<isize> {
        self.iter().map(|d| d.to_isize()).collect()
    }
}

/// Axes of an op; `None` means all axes.
pub trait IntoAxes {
    fn into_axes(self) -> Option<Vec<isize>>;
}
impl IntoAxes for () {
    fn into_axes(self) -> Option<Vec<isize>> {
        None
    }
}
impl<T: Dim> IntoAxes for T {
    fn into_axes(self) -> Option<Vec<isize>> {
        Some(vec![self.to_isize()])
    }
}
impl<T: Dim, const N: usize> IntoAxes for [T; N] {
    fn into_axes(self) -> Option<Vec<isize>> {
        Some(self.into_dims())
    }
}
impl<T: Dim> IntoAxes for Vec<T> {
    fn into_axes(self) -> Option<Vec<isize>> {
        Some(self.into_dims())
    }
}
impl<T: Dim> IntoAxes for &[T] {
    fn into_axes(self) -> Option<Vec<isize>> {
        Some(self.into_dims())
    }
}

/// `None`: all axes; `Some(axes)`: those (axes chosen at run time, as PyTorch's `dim=None`).
impl<A: IntoAxes> IntoAxes for Option<A> {
    fn into_axes(self) -> Option<Vec<isize>> {
        self.and_then(IntoAxes::into_axes)
    }
}

/// Resolves a possibly negative axis against `ndim`; panics naming the op and shape.
pub(crate) fn resolve_axis(op: &str, axis: isize, shape: &[usize]) -> usize {
    let n = shape.len() as isize;
    let a = if axis < 0 { axis + n } else { axis };
    if a < 0 || a >= n.max(0) {
        panic!("{op}: axis {axis} out of range for shape {shape:?} ({n} dims)");
    }
    a as usize
}

/// Resolves a list of axes (`None` = all), sorted and without duplicates. A 0-d tensor takes
/// axis 0 or -1 as PyTorch does (as if it had one axis of size 1): nothing to reduce.
pub(crate) fn resolve_axes(op: &str, axes: Option<Vec<isize>>, shape: &[usize]) -> Vec<usize> {
    let mut out: Vec<usize> = match axes {
        None => (0..shape.len()).collect(),
        Some(a) if shape.is_empty() => {
            for &x in &a {
                assert!(x == 0 || x == -1, "{op}: axis {x} out of range for a 0-d tensor (it takes 0 or -1)");
            }
            Vec::new()
        }
        Some(a) => a.into_iter().map(|x| resolve_axis(op, x, shape)).collect(),
    };
    out.sort_unstable();
    out.dedup();
    out
}
