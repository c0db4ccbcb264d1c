#include <metal_stdlib>
using namespace metal;
#define FG_FN static inline
#define FG_F2U as_type<uint>
#define FG_U2F as_type<float>
#define FG_RINT rint
/* f16 and bf16 are stored as 16-bit integers and computed in float. */
FG_FN float __h2f(unsigned short h) {
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
FG_FN float __bf2f(unsigned short b) { return FG_U2F((unsigned int)b << 16); }
FG_FN unsigned short __f2bf(float f) {
  unsigned int u = FG_F2U(f);
  unsigned int nan = (u >> 16) | 0x40u, rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (unsigned short)((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}
#define FG_SAT(T, LO, HI) FG_FN T __sat_##T(float x) { return isnan(x) ? (T)0 : x <= (float)(LO) ? (T)(LO) : x >= (float)(HI) ? (T)(HI) : (T)x; }
FG_SAT(char, -128, 127)
FG_SAT(uchar, 0, 255)
FG_SAT(short, -32768, 32767)
FG_SAT(ushort, 0, 65535)
FG_SAT(int, (-2147483647-1), 2147483647)
FG_SAT(uint, 0, 4294967295u)
FG_SAT(long, (-9223372036854775807l-1), 9223372036854775807l)
FG_SAT(ulong, 0, 18446744073709551615ul)
