//! Lane types: the Rust type standing for each scalar dtype, how its values sit in a `u64`
//! slot, and its arithmetic with C semantics.

/// A scalar widened without loss, the midpoint of every conversion (CAST, constants, vars).
#[derive(Clone, Copy)]
pub(super) enum Wide {
    Int(i128),
    Float(f64),
}

/// A Rust type standing for one scalar dtype, and how its values sit in a `u64` slot.
///
/// `from_slot` reads only the low bits that belong to the type, so any slot (or raw bytes read
/// from memory, zero-extended) decodes; `to_slot` writes the canonical form, which is what lets
/// loop bounds and indices of any integer dtype be read as `slot as i64`.
pub(super) trait Lane: Copy + PartialOrd + 'static {
    fn from_slot(b: u64) -> Self;
    fn to_slot(self) -> u64;
    fn widen(self) -> Wide;
    /// C conversion: floats to ints truncate (NaN → 0, out of range saturates like `as`),
    /// ints wrap, anything to bool is `!= 0`, floats round to this precision.
    fn narrow(w: Wide) -> Self;
}

/// Arithmetic of both ints (wrapping) and floats (rounded to the dtype).
pub(super) trait Arith: Lane {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn neg(self) -> Self;
    /// `self * b + c`; floats round once (a fused multiply-add, like C's `fma`).
    fn mul_add(self, b: Self, c: Self) -> Self {
        self.mul(b).add(c)
    }
}

/// Integer-only ops, total (division by zero gives 0, shift amounts are masked).
pub(super) trait Int: Arith {
    fn idiv(self, o: Self) -> Self;
    fn rem(self, o: Self) -> Self;
    fn shl(self, o: Self) -> Self;
    fn shr(self, o: Self) -> Self;
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
}

/// Float-only ops.
pub(super) trait Float: Arith {
    fn fdiv(self, o: Self) -> Self;
    fn recip(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn sin(self) -> Self;
    fn trunc(self) -> Self;
}

macro_rules! int_lanes {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn from_slot(b: u64) -> Self {
                b as $t
            }
            fn to_slot(self) -> u64 {
                // Sign-extends signed types, zero-extends unsigned ones.
                self as i64 as u64
            }
            fn widen(self) -> Wide {
                Wide::Int(self as i128)
            }
            fn narrow(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) => f as $t,
                }
            }
        }
        impl Arith for $t {
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
        }
        impl Int for $t {
            fn idiv(self, o: Self) -> Self {
                if o == 0 { 0 } else { self.wrapping_div(o) }
            }
            fn rem(self, o: Self) -> Self {
                if o == 0 { 0 } else { self.wrapping_rem(o) }
            }
            fn shl(self, o: Self) -> Self {
                self.wrapping_shl(o as u32)
            }
            fn shr(self, o: Self) -> Self {
                // `>>` is arithmetic on signed Rust types and logical on unsigned ones.
                self.wrapping_shr(o as u32)
            }
            fn and(self, o: Self) -> Self {
                self & o
            }
            fn or(self, o: Self) -> Self {
                self | o
            }
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
        }
    )*};
}
int_lanes!(i8, i16, i32, i64, u8, u16, u32, u64);

impl Lane for bool {
    fn from_slot(b: u64) -> Self {
        b as u8 != 0
    }
    fn to_slot(self) -> u64 {
        self as u64
    }
    fn widen(self) -> Wide {
        Wide::Int(self as i128)
    }
    fn narrow(w: Wide) -> Self {
        match w {
            Wide::Int(i) => i != 0,
            Wide::Float(f) => f != 0.0,
        }
    }
}

/// f32 and f64 compute natively, exactly like C `float` / `double` (fused only in MULACC).
macro_rules! native_float_lanes {
    ($($t:ident : $bits:ty),*) => {$(
        impl Lane for $t {
            fn from_slot(b: u64) -> Self {
                $t::from_bits(b as $bits)
            }
            fn to_slot(self) -> u64 {
                $t::to_bits(self) as u64
            }
            fn widen(self) -> Wide {
                Wide::Float(self as f64)
            }
            fn narrow(w: Wide) -> Self {
                match w {
                    Wide::Int(i) => i as $t,
                    Wide::Float(f) => f as $t,
                }
            }
        }
        impl Arith for $t {
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn neg(self) -> Self {
                -self
            }
            fn mul_add(self, b: Self, c: Self) -> Self {
                $t::mul_add(self, b, c)
            }
        }
        impl Float for $t {
            fn fdiv(self, o: Self) -> Self {
                self / o
            }
            fn recip(self) -> Self {
                1.0 / self
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn exp2(self) -> Self {
                $t::exp2(self)
            }
            fn log2(self) -> Self {
                $t::log2(self)
            }
            fn sin(self) -> Self {
                $t::sin(self)
            }
            fn trunc(self) -> Self {
                $t::trunc(self)
            }
        }
    )*};
}
native_float_lanes!(f32: u32, f64: u64);

/// f16 and bf16 compute in f32 and round the result, as the C renderers do without native
/// half arithmetic.
macro_rules! half_lanes {
    ($($t:ty),*) => {$(
        impl Lane for $t {
            fn from_slot(b: u64) -> Self {
                <$t>::from_bits(b as u16)
            }
            fn to_slot(self) -> u64 {
                <$t>::to_bits(self) as u64
            }
            fn widen(self) -> Wide {
                Wide::Float(self.to_f64())
            }
            fn narrow(w: Wide) -> Self {
                // Through f32, as the C renderers and PyTorch convert (and `half`'s own
                // `from_f64` drops the low 32 bits before rounding, so it misrounds f32
                // values just above a tie).
                match w {
                    Wide::Int(i) => <$t>::from_f32(i as f32),
                    Wide::Float(f) => <$t>::from_f32(f as f32),
                }
            }
        }
        impl Arith for $t {
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            fn neg(self) -> Self {
                -self
            }
            fn mul_add(self, b: Self, c: Self) -> Self {
                <$t>::from_f32(self.to_f32().mul_add(b.to_f32(), c.to_f32()))
            }
        }
        impl Float for $t {
            fn fdiv(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            fn recip(self) -> Self {
                <$t>::from_f32(1.0 / self.to_f32())
            }
            fn sqrt(self) -> Self {
                <$t>::from_f32(self.to_f32().sqrt())
            }
            fn exp2(self) -> Self {
                <$t>::from_f32(self.to_f32().exp2())
            }
            fn log2(self) -> Self {
                <$t>::from_f32(self.to_f32().log2())
            }
            fn sin(self) -> Self {
                <$t>::from_f32(self.to_f32().sin())
            }
            fn trunc(self) -> Self {
                <$t>::from_f32(self.to_f32().trunc())
            }
        }
    )*};
}
half_lanes!(half::f16, half::bf16);
