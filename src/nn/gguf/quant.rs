//! GGML tensor types and their dequantization as lazy tensor ops.
//!
//! A quantized GGUF tensor stays in memory as its raw blocks (a `[blocks, block_bytes]` U8
//! buffer). Dequantization is an elementwise expression over those bytes (shifts, masks, an
//! f16 scale rebuilt from two bytes), so it fuses into whatever kernel reads the weight: a
//! matmul loads the packed bytes, never an f32 copy. `.realize()` gives the f32 values.
//!
//! The block layouts are ggml's (the facts are the format; the expressions are ours). Each
//! formula multiplies in the same order as the reference dequantizer of the `gguf` Python
//! package, so values agree to the last bit.

use crate::tensor::Tensor;
use crate::uop::DType;

/// A GGML tensor type, with its id in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum GgmlType {
    F32,
    F16,
    BF16,
    F64,
    I8,
    I16,
    I32,
    I64,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q2_K,
    Q3_K,
    Q4_K,
    Q5_K,
    Q6_K,
}

impl GgmlType {
    /// The type with file id `id`, or the name of a known type ferrograd cannot read.
    pub fn from_id(id: u32) -> std::result::Result<GgmlType, String> {
        use GgmlType::*;
        Ok(match id {
            0 => F32,
            1 => F16,
            2 => Q4_0,
            3 => Q4_1,
            6 => Q5_0,
            7 => Q5_1,
            8 => Q8_0,
            10 => Q2_K,
            11 => Q3_K,
            12 => Q4_K,
            13 => Q5_K,
            14 => Q6_K,
            24 => I8,
            25 => I16,
            26 => I32,
            27 => I64,
            28 => F64,
            30 => BF16,
            9 => return Err("Q8_1".into()),
            15 => return Err("Q8_K".into()),
            16..=23 | 29 => return Err(format!("IQ-family type {id}")),
            34 | 35 => return Err(format!("ternary type {id} (TQ1_0/TQ2_0)")),
            39 => return Err("MXFP4".into()),
            _ => return Err(format!("unknown type id {id}")),
        })
    }

    /// (elements per block, bytes per block).
    pub fn block(self) -> (usize, usize) {
        use GgmlType::*;
        match self {
            F32 | I32 => (1, 4),
            F16 | BF16 | I16 => (1, 2),
            F64 | I64 => (1, 8),
            I8 => (1, 1),
            Q4_0 => (32, 18),
            Q4_1 => (32, 20),
            Q5_0 => (32, 22),
            Q5_1 => (32, 24),
            Q8_0 => (32, 34),
            Q2_K => (256, 84),
            Q3_K => (256, 110),
            Q4_K => (256, 144),
            Q5_K => (256, 176),
            Q6_K => (256, 210),
        }
    }

    /// The dtype a plain (unquantized) type is stored as; `None` for block-quantized types.
    pub fn plain_dtype(self) -> Option<DType> {
        use GgmlType::*;
        Some(match self {
            F32 => DType::F32,
            F16 => DType::F16,
            BF16 => DType::BF16,
            F64 => DType::F64,
            I8 => DType::I8,
            I16 => DType::I16,
            I32 => DType::I32,
            I64 => DType::I64,
            _ => return None,
        })
    }
}

/// Dequantizes `raw`, a `[blocks, block_bytes]` U8 tensor of type `ty`, to a lazy f32
/// `[blocks, block_elements]` tensor.
pub(crate) fn dequantize(raw: &Tensor, ty: GgmlType) -> Tensor {
    let b = Blocks { raw: raw.clone(), n: raw.shape()[0] };
    use GgmlType::*;
    match ty {
        Q8_0 => b.f16(0).mul(b.bytes(2, 34).bitcast(DType::I8).cast(DType::F32)),
        Q4_0 => b.f16(0).mul(b.nibbles(2, 18).sub(8).cast(DType::F32)),
        Q4_1 => b.f16(0).mul(b.nibbles(4, 20).cast(DType::F32)).add(b.f16(2)),
        Q5_0 => b.f16(0).mul(b.nibbles(6, 22).bitor(b.high_bits(2)).sub(16).cast(DType::F32)),
        Q5_1 => b.f16(0).mul(b.nibbles(8, 24).bitor(b.high_bits(4)).cast(DType::F32)).add(b.f16(2)),
        Q2_K => q2_k(&b),
        Q3_K => q3_k(&b),
        Q4_K => k_quant_4_5(&b, None),
        Q5_K => k_quant_4_5(&b, Some(16)),
        Q6_K => q6_k(&b),
        plain => panic!("dequantize: {plain:?} is not a block-quantized type"),
    }
}

/// The raw blocks of one tensor, with helpers that read fields at byte offsets of every block.
struct Blocks {
    raw: Tensor,
    n: usize,
}

impl Blocks {
    /// Bytes `start..end` of each block as I32, `[n, end - start]`.
    fn ints(&self, start: usize, end: usize) -> Tensor {
        self.bytes(start, end).cast(DType::I32)
    }

    /// Bytes `start..end` of each block as U8.
    fn bytes(&self, start: usize, end: usize) -> Tensor {
        self.raw.shrink(&[(0, self.n), (start, end)])
    }

    /// The little-endian f16 at byte `at` of each block, as f32 `[n, 1]`.
    fn f16(&self, at: usize) -> Tensor {
        let lo = self.bytes(at, at + 1).cast(DType::U16);
        let hi = self.bytes(at + 1, at + 2).cast(DType::U16);
        lo.bitor(hi.shl(8)).bitcast(DType::F16).cast(DType::F32)
    }

    /// The 4-bit values packed in bytes `start..end` (`k` bytes): the low nibbles of all bytes,
    /// then the high nibbles, as I32 `[n, 2k]`.
    fn nibbles(&self, start: usize, end: usize) -> Tensor {
        let k = end - start;
        split_bits(&self.ints(start, end).unsqueeze(1), 2, 4, 15).reshape([self.n, 2 * k])
    }

    /// Bit `i` of the little-endian u32 at byte `at`, moved to bit 4, for `i` in 0..32: the fifth
    /// bit of each of a 32-element block's values (Q5_0, Q5_1), I32 `[n, 32]`.
    fn high_bits(&self, at: usize) -> Tensor {
        // Unsigned, so that the top byte shifts in without signed overflow.
        let byte = |i: usize| self.bytes(at + i, at + i + 1).cast(DType::U32).shl(8 * i as u32);
        let word = byte(0).bitor(byte(1)).bitor(byte(2)).bitor(byte(3)).unsqueeze(1);
        split_bits(&word, 32, 1, 1).reshape([self.n, 32]).cast(DType::I32).shl(4)
    }
}

/// `(x >> (width * i)) & mask` for `i` in `0..count`, inserted as a new axis before `x`'s last
/// (`x` is `[.., 1, k]`, the result `[.., count, k]`). The shift amount comes from an index,
/// so the kernel computes it instead of loading it.
fn split_bits(x: &Tensor, count: usize, width: i64, mask: i64) -> Tensor {
    let mut shape = x.shape();
    let rank = shape.len();
    assert_eq!(shape[rank - 2], 1, "split_bits: needs a unit axis before the last, got {shape:?}");
    let mut amount_shape = vec![1; rank];
    amount_shape[rank - 2] = count;
    let amount = Tensor::iota(count, DType::I32, &x.device()).mul(width).cast(x.dtype()).reshape(amount_shape);
    shape[rank - 2] = count;
    x.expand(shape.clone()).shr(amount.expand(shape)).bitand(mask)
}

/// The eight 6-bit (scale, min) pairs packed in 12 bytes at byte 4 of a Q4_K/Q5_K block, as
/// I32 `[n, 8, 1]` each.
fn k_scales_mins(b: &Blocks) -> (Tensor, Tensor) {
    let s = |i: usize| b.ints(4 + i, 8 + i);
    let (first, second, third) = (s(0), s(4), s(8));
    let scales = Tensor::cat(&[&first.bitand(63), &third.bitand(15).bitor(first.shr(6).shl(4))], 1);
    let mins = Tensor::cat(&[&second.bitand(63), &third.shr(4).bitor(second.shr(6).shl(4))], 1);
    (scales.unsqueeze(2), mins.unsqueeze(2))
}

/// Q4_K (144-byte blocks) and Q5_K (176-byte blocks, whose 32 bytes of fifth bits start at
/// `high_bits_at`): 8 sub-blocks of 32, `y = d * scale * q - dmin * min`.
fn k_quant_4_5(b: &Blocks, high_bits_at: Option<usize>) -> Tensor {
    let n = b.n;
    let qs_at = high_bits_at.map_or(16, |h| h + 32);
    // Byte j of 32-byte chunk c holds sub-block 2c (low nibble) and 2c + 1 (high nibble).
    let chunks = b.ints(qs_at, qs_at + 128).reshape([n, 4, 1, 32]);
    let mut q = split_bits(&chunks, 2, 4, 15).reshape([n, 8, 32]);
    if let Some(h) = high_bits_at {
        // Bit s of byte j is the fifth bit of element j of sub-block s.
        let high = split_bits(&b.ints(h, h + 32).reshape([n, 1, 32]), 8, 1, 1);
        q = q.bitor(high.shl(4));
    }
    let (scales, mins) = k_scales_mins(b);
    let d = b.f16(0).unsqueeze(2).mul(scales.cast(DType::F32));
    let dm = b.f16(2).unsqueeze(2).mul(mins.cast(DType::F32));
    d.mul(q.cast(DType::F32)).sub(dm).reshape([n, 256])
}

/// Q6_K (210-byte blocks): low 4 bits in 128 bytes, high 2 bits in 64, 16 signed 8-bit scales,
/// then d; `y = d * scale * (q - 32)`.
fn q6_k(b: &Blocks) -> Tensor {
    let n = b.n;
    // Element (half h, group g, l) of 0..2 × 0..4 × 0..32: its low nibble is in byte
    // 64h + 32(g % 2) + l (the high nibble when g >= 2), its high bits are bits 2g..2g+2 of
    // byte 32h + l.
    let low = split_bits(&b.ints(0, 128).reshape([n * 2, 1, 64]), 2, 4, 15).reshape([n, 2, 4, 32]);
    let high = split_bits(&b.ints(128, 192).reshape([n * 2, 1, 32]), 4, 2, 3).reshape([n, 2, 4, 32]);
    let q = low.bitor(high.shl(4)).sub(32).reshape([n, 16, 16]);
    let scales = b.bytes(192, 208).bitcast(DType::I8).cast(DType::F32).reshape([n, 16, 1]);
    let d = b.f16(208).unsqueeze(2).mul(scales);
    d.mul(q.cast(DType::F32)).reshape([n, 256])
}

/// Q2_K (84-byte blocks): 16 bytes of 4-bit (scale, min) pairs, 64 bytes of 2-bit values, d,
/// dmin; `y = d * scale * q - dmin * min` over 16 sub-blocks of 16.
fn q2_k(b: &Blocks) -> Tensor {
    let n = b.n;
    let sm = b.ints(0, 16).unsqueeze(2);
    let d = b.f16(80).unsqueeze(2).mul(sm.bitand(15).cast(DType::F32));
    let dm = b.f16(82).unsqueeze(2).mul(sm.shr(4).cast(DType::F32));
    // Element (half h, shift s, l) of 0..2 × 0..4 × 0..32 is bits 2s..2s+2 of byte 32h + l.
    let q = split_bits(&b.ints(16, 80).reshape([n * 2, 1, 32]), 4, 2, 3).reshape([n, 16, 16]);
    d.mul(q.cast(DType::F32)).sub(dm).reshape([n, 256])
}

/// Q3_K (110-byte blocks): 32 bytes of high-bit masks, 64 bytes of low 2 bits, 12 bytes of
/// 6-bit signed scales, d; `y = d * (scale - 32) * q` with `q = low - (high bit clear ? 4 : 0)`.
fn q3_k(b: &Blocks) -> Tensor {
    let n = b.n;
    // Scales: 16 6-bit values, low 4 bits from 8 bytes (low nibbles then high nibbles), high 2
    // bits from 4 bytes (2 bits per scale, four groups of four).
    let low4 = split_bits(&b.ints(96, 104).reshape([n, 1, 8]), 2, 4, 15).reshape([n, 16]);
    let high2 = split_bits(&b.ints(104, 108).reshape([n, 1, 4]), 4, 2, 3).reshape([n, 16]);
    let scales = low4.bitor(high2.shl(4)).sub(32).cast(DType::F32).reshape([n, 16, 1]);
    // Element (half h, shift s, l): bits 2s..2s+2 of byte 32h + l of the low bits; its high
    // bit is bit 4h + s of byte l of the mask.
    let low = split_bits(&b.ints(32, 96).reshape([n * 2, 1, 32]), 4, 2, 3).reshape([n, 8, 32]);
    let mask = split_bits(&b.ints(0, 32).reshape([n, 1, 32]), 8, 1, 1);
    let q = low.sub(mask.bitxor(1).shl(2)).reshape([n, 16, 16]);
    let d = b.f16(108).unsqueeze(2).mul(scales);
    d.mul(q.cast(DType::F32)).reshape([n, 256])
}
