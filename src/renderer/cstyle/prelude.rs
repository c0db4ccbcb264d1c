//! Helpers every C-style prelude shares, as macros so each dialect's prelude is one `concat!`.

/// The 16-bit float conversions every C-style dialect shares (f16 and bf16 are stored as
/// 16-bit integers and computed in float), written once over four per-dialect macros: `FG_FN`
/// (function qualifiers), `FG_F2U`/`FG_U2F` (float <-> bits) and `FG_RINT` (round to nearest
/// even). Bit-exact with the `half` crate. Branch-free (every candidate is computed, then
/// selected): a kernel inlines dozens of these, and branches there cost PoCL seconds of codegen.
macro_rules! half_prelude {
    () => {
        concat!(
            "/* f16 and bf16 are stored as 16-bit integers and computed in float. */\n",
            f16_prelude!(),
            bf16_prelude!()
        )
    };
}

/// `__h2f`/`__f2h`: f16 bits to float and back (round to nearest even), in integer arithmetic.
macro_rules! f16_prelude {
    () => {
        r#"FG_FN float __h2f(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  unsigned int sub = s | FG_F2U((float)m * 5.9604644775390625e-8f);
  unsigned int expo = e == 31u ? 0x7f800000u : (e + 112u) << 23;
  unsigned int nrm = s | expo | (m << 13);
  return FG_U2F(e == 0u ? sub : nrm);
}
FG_FN unsigned short __f2h(float f) {
  unsigned int u = FG_F2U(f);
  unsigned int s = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  unsigned int tiny = a < 0x38800000u ? a : 0u;
  unsigned int sub = (unsigned int)FG_RINT(FG_U2F(tiny) * 16777216.0f);
  unsigned int nrm = (a - 0x38000000u + 0x0fffu + ((a >> 13) & 1u)) >> 13;
  unsigned int r = a < 0x38800000u ? sub : nrm;
  r = a >= 0x477ff000u ? 0x7c00u : r;
  r = a > 0x7f800000u ? 0x7e00u : r;
  return (unsigned short)(s | r);
}
"#
    };
}

/// `__bf2f`/`__f2bf`: bf16 bits to float and back (round to nearest even, NaN kept quiet).
macro_rules! bf16_prelude {
    () => {
        r#"FG_FN float __bf2f(unsigned short b) { return FG_U2F((unsigned int)b << 16); }
FG_FN unsigned short __f2bf(float f) {
  unsigned int u = FG_F2U(f);
  unsigned int nan = (u >> 16) | 0x40u, rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (unsigned short)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}
"#
    };
}

/// Float to integer conversions with one defined meaning on every device (the interpreter's,
/// Rust's `as`): truncate toward zero, saturate at the target's range, NaN is 0. A plain C cast
/// is undefined there (x86 gives INT_MIN). OpenCL C has these as `convert_T_sat_rtz`.
macro_rules! saturating_casts_prelude {
    () => {
        r#"#define FG_SAT(T, NAME, LO, HI) FG_FN T NAME(double x) { return x != x ? (T)0 : x <= (double)(LO) ? (T)(LO) : x >= (double)(HI) ? (T)(HI) : (T)x; }
FG_SAT(signed char, __sat_i8, -128, 127)
FG_SAT(unsigned char, __sat_u8, 0, 255)
FG_SAT(short, __sat_i16, -32768, 32767)
FG_SAT(unsigned short, __sat_u16, 0, 65535)
FG_SAT(int, __sat_i32, (-2147483647-1), 2147483647)
FG_SAT(unsigned int, __sat_u32, 0, 4294967295u)
FG_SAT(long long, __sat_i64, (-9223372036854775807ll-1), 9223372036854775807ll)
FG_SAT(unsigned long long, __sat_u64, 0, 18446744073709551615ull)
"#
    };
}

/// f32 `exp2` without a libm call: `2^x = 2^n · 2^f` with `n` the nearest integer (adding and
/// subtracting 1.5·2^23 rounds, and leaves `n` in the low bits) and `|f| <= 1/2`; `2^f` by a
/// degree-6 polynomial (`p(0) = 1`, fitted for least maximum relative error; evaluated in f32 by
/// Horner's rule it is within 1.2 ulp), then `2^n` applied as two powers of two in the normal
/// range, so a result in the subnormal range is rounded once. `x` is clamped to [-160, 130]
/// first (0 and inf beyond); NaN passes through. Unsigned arithmetic on the bits: no undefined
/// behaviour for any input. `FG_EXP2_POLY` serves the vector helpers too (`vector.rs`).
macro_rules! exp2_prelude {
    () => {
        r#"#define FG_EXP2_POLY(f) ((((((0.00015353361959569156f * (f) + 0.0013398875016719103f) * (f) \
  + 0.00961843691766262f) * (f) + 0.055503323674201965f) * (f) + 0.24022647738456726f) * (f) \
  + 0.6931471824645996f) * (f) + 1.0f)
FG_FN float __fg_exp2f(float x) {
  float c = x < -160.0f ? -160.0f : x;
  c = 130.0f < c ? 130.0f : c;
  float big = c + 12582912.0f;
  float p = FG_EXP2_POLY(c - (big - 12582912.0f));
  int n = (int)(FG_F2U(big) - FG_F2U(12582912.0f));
  int n1 = n >> 1, n2 = n - n1;
  float r = p * FG_U2F((unsigned int)(n1 + 127) << 23) * FG_U2F((unsigned int)(n2 + 127) << 23);
  return x != x ? x : r;
}
"#
    };
}

/// The start of every OpenCL C prelude (OpenCL, QCOM). Doubles are an extension in OpenCL C 1.2:
/// enabled where the device has it (a kernel using them fails to build elsewhere, with a message
/// naming `double`). Contraction into FMA is off for the same results as the C device.
macro_rules! opencl_header {
    () => {
        r#"#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#pragma OPENCL FP_CONTRACT OFF
#define FG_FN static inline
#define FG_F2U as_uint
#define FG_U2F as_float
#define FG_RINT rint
"#
    };
}
