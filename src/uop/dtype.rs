//! Data types: scalar kinds, vector/pointer wrappers used by kernels, and NumPy/tinygrad-style
//! promotion.

use std::fmt;

/// The scalar kind of a value.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Scalar {
    Void,
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
}

/// A data type. Tensors only ever hold scalar dtypes (`count == 1`, `ptr == false`); kernels
/// also use vectors (`count > 1`, from UPCAST) and pointers (`DEFINE_GLOBAL`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DType {
    pub scalar: Scalar,
    pub count: u8,
    pub ptr: bool,
}

const fn s(scalar: Scalar) -> DType {
    DType { scalar, count: 1, ptr: false }
}

impl DType {
    pub const VOID: DType = s(Scalar::Void);
    pub const BOOL: DType = s(Scalar::Bool);
    pub const I8: DType = s(Scalar::I8);
    pub const I16: DType = s(Scalar::I16);
    pub const I32: DType = s(Scalar::I32);
    pub const I64: DType = s(Scalar::I64);
    pub const U8: DType = s(Scalar::U8);
    pub const U16: DType = s(Scalar::U16);
    pub const U32: DType = s(Scalar::U32);
    pub const U64: DType = s(Scalar::U64);
    pub const F16: DType = s(Scalar::F16);
    pub const BF16: DType = s(Scalar::BF16);
    pub const F32: DType = s(Scalar::F32);
    pub const F64: DType = s(Scalar::F64);

    /// Every scalar dtype a tensor can hold, in a fixed order.
    pub const ALL: [DType; 13] = [
        DType::BOOL,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// The same scalar type as a pointer (a kernel buffer argument).
    pub fn ptr(self) -> DType {
        DType { ptr: true, count: 1, ..self }
    }
    /// The same scalar type as a vector of `count` lanes.
    pub fn vec(self, count: u8) -> DType {
        DType { count, ..self }
    }
    /// The scalar (one-lane, non-pointer) type.
    pub fn base(self) -> DType {
        s(self.scalar)
    }
    pub fn is_scalar(self) -> bool {
        self.count == 1 && !self.ptr
    }
    pub fn is_float(self) -> bool {
        matches!(self.scalar, Scalar::F16 | Scalar::BF16 | Scalar::F32 | Scalar::F64)
    }
    pub fn is_int(self) -> bool {
        self.is_signed() || self.is_unsigned()
    }
    pub fn is_signed(self) -> bool {
        matches!(self.scalar, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }
    pub fn is_unsigned(self) -> bool {
        matches!(self.scalar, Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64)
    }
    pub fn is_bool(self) -> bool {
        self.scalar == Scalar::Bool
    }
    /// Size of one lane in bytes.
    pub fn itemsize(self) -> usize {
        match self.scalar {
            Scalar::Void => 0,
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::U64 | Scalar::F64 => 8,
        }
    }
    /// Bits of an integer type (bool counts as 1).
    pub fn bits(self) -> u32 {
        if self.is_bool() {
            1
        } else {
            self.itemsize() as u32 * 8
        }
    }
    /// Smallest and largest value an integer (or bool) dtype holds.
    pub fn int_range(self) -> (i128, i128) {
        match self.scalar {
            Scalar::Bool => (0, 1),
            Scalar::I8 => (i8::MIN as i128, i8::MAX as i128),
            Scalar::I16 => (i16::MIN as i128, i16::MAX as i128),
            Scalar::I32 => (i32::MIN as i128, i32::MAX as i128),
            Scalar::I64 => (i64::MIN as i128, i64::MAX as i128),
            Scalar::U8 => (0, u8::MAX as i128),
            Scalar::U16 => (0, u16::MAX as i128),
            Scalar::U32 => (0, u32::MAX as i128),
            Scalar::U64 => (0, u64::MAX as i128),
            _ => (i64::MIN as i128, i64::MAX as i128),
        }
    }
    /// Short lowercase name, as tinygrad and NumPy spell it (`float32`, `int64`, ...).
    pub fn name(self) -> &'static str {
        match self.scalar {
            Scalar::Void => "void",
            Scalar::Bool => "bool",
            Scalar::I8 => "int8",
            Scalar::I16 => "int16",
            Scalar::I32 => "int32",
            Scalar::I64 => "int64",
            Scalar::U8 => "uint8",
            Scalar::U16 => "uint16",
            Scalar::U32 => "uint32",
            Scalar::U64 => "uint64",
            Scalar::F16 => "float16",
            Scalar::BF16 => "bfloat16",
            Scalar::F32 => "float32",
            Scalar::F64 => "float64",
        }
    }

    /// The direct parents of a dtype in the promotion lattice (tinygrad's `promo_lattice`).
    fn parents(self) -> &'static [DType] {
        match self.scalar {
            Scalar::Bool => &[DType::I8, DType::U8],
            Scalar::I8 => &[DType::I16],
            Scalar::I16 => &[DType::I32],
            Scalar::I32 => &[DType::I64],
            Scalar::I64 => &[DType::F16],
            Scalar::U8 => &[DType::I16, DType::U16],
            Scalar::U16 => &[DType::I32, DType::U32],
            Scalar::U32 => &[DType::I64, DType::U64],
            Scalar::U64 => &[DType::F16],
            Scalar::F16 => &[DType::F32],
            Scalar::BF16 => &[DType::F32],
            Scalar::F32 => &[DType::F64],
            _ => &[],
        }
    }

    /// All dtypes this one promotes to, itself included.
    fn ancestors(self) -> Vec<DType> {
        let mut out = vec![self];
        let mut i = 0;
        while i < out.len() {
            for p in out[i].parents() {
                if !out.contains(p) {
                    out.push(*p);
                }
            }
            i += 1;
        }
        out
    }

    /// The smallest dtype both promote to (NumPy/tinygrad rules: `int32 + float16 = float16`,
    /// `uint8 + int8 = int16`, `float16 + bfloat16 = float32`).
    pub fn promote(a: DType, b: DType) -> DType {
        if a == b {
            return a;
        }
        let (aa, bb) = (a.base().ancestors(), b.base().ancestors());
        let common: Vec<DType> = aa.iter().copied().filter(|d| bb.contains(d)).collect();
        // The least element: the one that every other common ancestor is an ancestor of.
        common
            .iter()
            .copied()
            .find(|c| {
                let anc = c.ancestors();
                common.iter().all(|o| anc.contains(o))
            })
            .unwrap_or(DType::F64)
    }

    /// The dtype of a float result computed from this one (ints and bools become float32).
    pub fn to_float(self) -> DType {
        if self.is_float() {
            self
        } else {
            DType::F32
        }
    }
}

impl fmt::Debug for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())?;
        if self.count > 1 {
            write!(f, "x{}", self.count)?;
        }
        if self.ptr {
            write!(f, "*")?;
        }
        Ok(())
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// A Rust scalar type that can be moved in and out of tensors.
pub trait Element: Copy + Send + Sync + 'static + fmt::Debug {
    const DTYPE: DType;
    fn to_const(self) -> ConstValue;
    fn from_const(c: ConstValue) -> Self;
    /// Little-endian bytes of a slice of values (the layout of a device buffer).
    fn to_bytes(data: &[Self]) -> Vec<u8>;
    /// Values from little-endian bytes (`bytes.len()` is a multiple of the item size).
    fn from_bytes(bytes: &[u8]) -> Vec<Self>;
}

macro_rules! element {
    ($t:ty, $dt:expr, $variant:ident, $conv:expr, $back:expr) => {
        impl Element for $t {
            const DTYPE: DType = $dt;
            fn to_const(self) -> ConstValue {
                #[allow(clippy::redundant_closure_call)]
                ConstValue::$variant(($conv)(self))
            }
            fn from_const(c: ConstValue) -> Self {
                #[allow(clippy::redundant_closure_call)]
                ($back)(c)
            }
            fn to_bytes(data: &[Self]) -> Vec<u8> {
                data.iter().flat_map(|x| x.to_le_bytes()).collect()
            }
            fn from_bytes(bytes: &[u8]) -> Vec<Self> {
                bytes
                    .chunks_exact(std::mem::size_of::<Self>())
                    .map(|c| <$t>::from_le_bytes(c.try_into().expect("chunk of item size")))
                    .collect()
            }
        }
    };
}
impl Element for bool {
    const DTYPE: DType = DType::BOOL;
    fn to_const(self) -> ConstValue {
        ConstValue::Bool(self)
    }
    fn from_const(c: ConstValue) -> Self {
        c.as_bool()
    }
    fn to_bytes(data: &[Self]) -> Vec<u8> {
        data.iter().map(|&b| b as u8).collect()
    }
    fn from_bytes(bytes: &[u8]) -> Vec<Self> {
        bytes.iter().map(|&b| b != 0).collect()
    }
}
element!(i8, DType::I8, Int, |x| x as i64, |c: ConstValue| c.as_i64() as i8);
element!(i16, DType::I16, Int, |x| x as i64, |c: ConstValue| c.as_i64() as i16);
element!(i32, DType::I32, Int, |x| x as i64, |c: ConstValue| c.as_i64() as i32);
element!(i64, DType::I64, Int, |x| x, |c: ConstValue| c.as_i64());
element!(u8, DType::U8, Int, |x| x as i64, |c: ConstValue| c.as_i64() as u8);
element!(u16, DType::U16, Int, |x| x as i64, |c: ConstValue| c.as_i64() as u16);
element!(u32, DType::U32, Int, |x| x as i64, |c: ConstValue| c.as_i64() as u32);
element!(u64, DType::U64, Int, |x| x as i64, |c: ConstValue| c.as_i64() as u64);
element!(f32, DType::F32, Float, |x| x as f64, |c: ConstValue| c.as_f64() as f32);
element!(f64, DType::F64, Float, |x| x, |c: ConstValue| c.as_f64());
element!(half::f16, DType::F16, Float, |x: half::f16| x.to_f64(), |c: ConstValue| {
    half::f16::from_f32(c.as_f64() as f32)
});
element!(half::bf16, DType::BF16, Float, |x: half::bf16| x.to_f64(), |c: ConstValue| {
    half::bf16::from_f32(c.as_f64() as f32)
});

/// Decodes element `i` of a little-endian buffer of `dtype` into a constant.
pub fn decode_element(bytes: &[u8], dtype: DType, i: usize) -> ConstValue {
    let n = dtype.itemsize();
    let b = &bytes[i * n..(i + 1) * n];
    let mut w = [0u8; 8];
    w[..n].copy_from_slice(b);
    let raw = u64::from_le_bytes(w);
    match dtype.scalar {
        Scalar::Bool => ConstValue::Bool(raw != 0),
        Scalar::F16 => ConstValue::Float(half::f16::from_bits(raw as u16).to_f64()),
        Scalar::BF16 => ConstValue::Float(half::bf16::from_bits(raw as u16).to_f64()),
        Scalar::F32 => ConstValue::Float(f32::from_bits(raw as u32) as f64),
        Scalar::F64 => ConstValue::Float(f64::from_bits(raw)),
        Scalar::I8 => ConstValue::Int(raw as u8 as i8 as i64),
        Scalar::I16 => ConstValue::Int(raw as u16 as i16 as i64),
        Scalar::I32 => ConstValue::Int(raw as u32 as i32 as i64),
        _ => ConstValue::Int(raw as i64),
    }
}

/// A constant value. Integers of every width are held as `i64` (u64 as its bit pattern), floats
/// as `f64` (already rounded to their dtype by whoever made them).
#[derive(Clone, Copy, Debug)]
pub enum ConstValue {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl PartialEq for ConstValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ConstValue::Bool(a), ConstValue::Bool(b)) => a == b,
            (ConstValue::Int(a), ConstValue::Int(b)) => a == b,
            // Bitwise so that NaN == NaN and 0.0 != -0.0: interning must not merge them.
            (ConstValue::Float(a), ConstValue::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}
impl Eq for ConstValue {}
impl std::hash::Hash for ConstValue {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            ConstValue::Bool(b) => (0u8, *b).hash(state),
            ConstValue::Int(i) => (1u8, *i).hash(state),
            ConstValue::Float(f) => (2u8, f.to_bits()).hash(state),
        }
    }
}

impl ConstValue {
    pub fn as_f64(self) -> f64 {
        match self {
            ConstValue::Bool(b) => b as i64 as f64,
            ConstValue::Int(i) => i as f64,
            ConstValue::Float(f) => f,
        }
    }
    pub fn as_i64(self) -> i64 {
        match self {
            ConstValue::Bool(b) => b as i64,
            ConstValue::Int(i) => i,
            ConstValue::Float(f) => f as i64,
        }
    }
    pub fn as_bool(self) -> bool {
        match self {
            ConstValue::Bool(b) => b,
            ConstValue::Int(i) => i != 0,
            ConstValue::Float(f) => f != 0.0,
        }
    }
    /// This value converted to `dtype` with C cast semantics (floats truncate toward zero,
    /// integers wrap, floats round to the dtype's precision).
    pub fn cast(self, dtype: DType) -> ConstValue {
        let dt = dtype.base();
        if dt.is_bool() {
            return ConstValue::Bool(self.as_bool());
        }
        if dt.is_float() {
            let v = match self {
                ConstValue::Int(i) if dt == DType::F64 || dt == DType::F32 => {
                    // u64 values are stored as their bit pattern; no way to know here, so
                    // callers casting from u64 go through `cast_from`.
                    i as f64
                }
                _ => self.as_f64(),
            };
            return ConstValue::Float(round_float(v, dt));
        }
        match self {
            // Truncate, saturate at the target's range, NaN to 0: Rust's `as`, which every
            // device follows.
            ConstValue::Float(f) => ConstValue::Int(match dt.scalar {
                Scalar::I8 => f as i8 as i64,
                Scalar::U8 => f as u8 as i64,
                Scalar::I16 => f as i16 as i64,
                Scalar::U16 => f as u16 as i64,
                Scalar::I32 => f as i32 as i64,
                Scalar::U32 => f as u32 as i64,
                Scalar::U64 => f as u64 as i64,
                _ => f as i64,
            }),
            other => ConstValue::Int(wrap_int(other.as_i64(), dt)),
        }
    }
    /// Like [`ConstValue::cast`] but knowing the source dtype (needed for u64 → float).
    pub fn cast_from(self, from: DType, to: DType) -> ConstValue {
        if from.base() == DType::U64 && to.is_float() {
            if let ConstValue::Int(i) = self {
                return ConstValue::Float(round_float(i as u64 as f64, to));
            }
        }
        self.cast(to)
    }
}

/// Round an f64 to the precision of a float dtype; 16-bit floats round through f32, as the C
/// renderers and PyTorch convert.
pub fn round_float(v: f64, dt: DType) -> f64 {
    match dt.scalar {
        Scalar::F16 => half::f16::from_f32(v as f32).to_f64(),
        Scalar::BF16 => half::bf16::from_f32(v as f32).to_f64(),
        Scalar::F32 => v as f32 as f64,
        _ => v,
    }
}

/// Wrap an integer to the width of an integer dtype (two's complement), returned as i64
/// (u64 keeps its bit pattern).
pub fn wrap_int(i: i64, dt: DType) -> i64 {
    match dt.scalar {
        Scalar::Bool => (i != 0) as i64,
        Scalar::I8 => i as i8 as i64,
        Scalar::I16 => i as i16 as i64,
        Scalar::I32 => i as i32 as i64,
        Scalar::U8 => i as u8 as i64,
        Scalar::U16 => i as u16 as i64,
        Scalar::U32 => i as u32 as i64,
        _ => i,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_follows_numpy_lattice() {
        assert_eq!(DType::promote(DType::I32, DType::F16), DType::F16);
        assert_eq!(DType::promote(DType::U8, DType::I8), DType::I16);
        assert_eq!(DType::promote(DType::F16, DType::BF16), DType::F32);
        assert_eq!(DType::promote(DType::BOOL, DType::F32), DType::F32);
        assert_eq!(DType::promote(DType::U32, DType::I32), DType::I64);
        assert_eq!(DType::promote(DType::BOOL, DType::U8), DType::U8);
        assert_eq!(DType::promote(DType::F32, DType::F64), DType::F64);
        assert_eq!(DType::promote(DType::I64, DType::U64), DType::F16);
    }

    #[test]
    fn const_cast_wraps_and_truncates() {
        assert_eq!(ConstValue::Int(300).cast(DType::U8), ConstValue::Int(44));
        assert_eq!(ConstValue::Float(-2.7).cast(DType::I32), ConstValue::Int(-2));
        assert_eq!(ConstValue::Float(0.1).cast(DType::F32), ConstValue::Float(0.1f32 as f64));
    }
}
