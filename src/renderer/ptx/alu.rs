//! Arithmetic, comparisons, casts and bit casts as PTX instructions, with the interpreter's
//! meaning where PTX's differs (see the module comment of `ptx/mod.rs`).

use super::{immediate, mov_type, op_type, Class, Ptx};
use crate::uop::{ConstValue, DType, Ops, Scalar, UOp};

impl Ptx {
    /// The instructions of an ALU, CAST or BITCAST node; returns its register.
    pub(super) fn alu(&mut self, u: &UOp) -> String {
        let dt = u.dtype();
        let s: Vec<String> = u.src().iter().map(|x| self.n(x)).collect();
        match u.op() {
            Ops::CAST => return self.cast(&s[0], u.src()[0].dtype(), dt),
            Ops::BITCAST => return self.bitcast(&s[0], u.src()[0].dtype(), dt),
            _ => {}
        }
        let sdt = u.src()[0].dtype();
        assert!(
            !matches!(sdt.scalar, Scalar::F16 | Scalar::BF16) || u.op() == Ops::WHERE,
            "PTX renderer: {:?} on {sdt:?} (16-bit floats compute in f32 after lowering)",
            u.op()
        );
        if u.op().is_comparison() && !sdt.is_bool() {
            return self.compare(u.op(), sdt, &s);
        }
        if dt.is_bool() {
            return self.bool_op(u.op(), &s);
        }
        let r = self.reg(Class::of(dt));
        let t = op_type(dt);
        let float = dt.is_float();
        // `.rn` on float add/sub/mul: an explicit rounding mode keeps ptxas from fusing them.
        let rn = if float { ".rn" } else { "" };
        match u.op() {
            Ops::ADD => self.line(&format!("add{rn}.{t} {r}, {}, {};", s[0], s[1])),
            Ops::SUB => self.line(&format!("sub{rn}.{t} {r}, {}, {};", s[0], s[1])),
            Ops::MUL if float => self.line(&format!("mul.rn.{t} {r}, {}, {};", s[0], s[1])),
            Ops::MUL => self.line(&format!("mul.lo.{t} {r}, {}, {};", s[0], s[1])),
            // PTX's neg has no unsigned form; two's complement is the same bits.
            Ops::NEG => self.line(&format!("neg.{} {r}, {};", t.replace('u', "s"), s[0])),
            Ops::RECIP => self.line(&format!("rcp.rn.{t} {r}, {};", s[0])),
            Ops::SQRT => self.line(&format!("sqrt.rn.{t} {r}, {};", s[0])),
            Ops::EXP2 => self.line(&format!("ex2.approx.{t} {r}, {};", s[0])),
            Ops::LOG2 => self.line(&format!("lg2.approx.{t} {r}, {};", s[0])),
            Ops::SIN => self.line(&format!("sin.approx.{t} {r}, {};", s[0])),
            Ops::TRUNC => self.line(&format!("cvt.rzi.{t}.{t} {r}, {};", s[0])),
            Ops::FDIV => self.line(&format!("div.rn.{t} {r}, {}, {};", s[0], s[1])),
            Ops::IDIV | Ops::MOD => self.division(u.op(), dt, &r, &s),
            Ops::MAX => {
                // C's `a < b ? b : a`: a NaN in `a` is kept, one in `b` is not.
                let p = self.reg(Class::Pred);
                self.line(&format!("setp.lt.{t} {p}, {}, {};", s[0], s[1]));
                self.line(&format!("selp.{t} {r}, {}, {}, {p};", s[1], s[0]));
            }
            Ops::CMPLT | Ops::CMPNE | Ops::CMPEQ => unreachable!("comparisons give bools"),
            Ops::AND | Ops::OR | Ops::XOR => {
                let op = format!("{:?}", u.op()).to_lowercase();
                self.line(&format!("{op}.b{} {r}, {}, {};", bits(dt), s[0], s[1]));
            }
            Ops::SHL | Ops::SHR => {
                // The amount is masked to the width, as the interpreter does (PTX clamps it).
                let amount = self.reg(Class::B32);
                let a = if bits(dt) == 64 {
                    self.line(&format!("cvt.u32.u64 {amount}, {};", s[1]));
                    amount.clone()
                } else {
                    s[1].clone()
                };
                self.line(&format!("and.b32 {amount}, {a}, {};", dt.bits() - 1));
                let op = if u.op() == Ops::SHL { format!("shl.b{}", bits(dt)) } else { format!("shr.{t}") };
                self.line(&format!("{op} {r}, {}, {amount};", s[0]));
            }
            Ops::WHERE => self.line(&format!("selp.{} {r}, {}, {}, {};", mov_type(dt), s[1], s[2], s[0])),
            Ops::MULACC if float => self.line(&format!("fma.rn.{t} {r}, {}, {}, {};", s[0], s[1], s[2])),
            Ops::MULACC => self.line(&format!("mad.lo.{t} {r}, {}, {}, {};", s[0], s[1], s[2])),
            op => panic!("PTX renderer: no rendering for {op:?}"),
        }
        self.wrap_small(&r, dt);
        r
    }

    /// Bool results: comparisons of numbers, and logic on predicates.
    fn bool_op(&mut self, op: Ops, s: &[String]) -> String {
        let p = self.reg(Class::Pred);
        match op {
            Ops::AND | Ops::MUL => self.line(&format!("and.pred {p}, {}, {};", s[0], s[1])),
            Ops::OR | Ops::ADD | Ops::MAX => self.line(&format!("or.pred {p}, {}, {};", s[0], s[1])),
            Ops::XOR | Ops::CMPNE => self.line(&format!("xor.pred {p}, {}, {};", s[0], s[1])),
            Ops::CMPEQ => {
                self.line(&format!("xor.pred {p}, {}, {};", s[0], s[1]));
                self.line(&format!("not.pred {p}, {p};"));
            }
            // a < b on bools: !a && b.
            Ops::CMPLT => {
                self.line(&format!("not.pred {p}, {};", s[0]));
                self.line(&format!("and.pred {p}, {p}, {};", s[1]));
            }
            Ops::NEG => self.line(&format!("not.pred {p}, {};", s[0])),
            Ops::WHERE => {
                // c ? a : b as (c && a) || (!c && b).
                let q = self.reg(Class::Pred);
                self.line(&format!("and.pred {p}, {}, {};", s[0], s[1]));
                self.line(&format!("not.pred {q}, {};", s[0]));
                self.line(&format!("and.pred {q}, {q}, {};", s[2]));
                self.line(&format!("or.pred {p}, {p}, {q};"));
            }
            op => panic!("PTX renderer: no bool {op:?}"),
        }
        p
    }

    /// A comparison of two numbers (`s` are their registers, `sdt` their dtype).
    fn compare(&mut self, op: Ops, sdt: DType, s: &[String]) -> String {
        let p = self.reg(Class::Pred);
        let t = op_type(sdt);
        let cmp = match op {
            Ops::CMPLT => "lt",
            Ops::CMPEQ => "eq",
            // C's `!=` is true when either side is NaN: the unordered comparison.
            Ops::CMPNE if sdt.is_float() => "neu",
            Ops::CMPNE => "ne",
            _ => unreachable!(),
        };
        self.line(&format!("setp.{cmp}.{t} {p}, {}, {};", s[0], s[1]));
        p
    }

    /// Truncating division and remainder; a zero divisor gives 0 and `MIN / -1` wraps to `MIN`
    /// (`% -1` is 0), as in the interpreter (PTX leaves both undefined).
    fn division(&mut self, op: Ops, dt: DType, r: &str, s: &[String]) {
        let t = op_type(dt);
        let name = if op == Ops::IDIV { "div" } else { "rem" };
        self.line(&format!("{name}.{t} {r}, {}, {};", s[0], s[1]));
        if dt.is_signed() {
            let minus_one = self.reg(Class::Pred);
            self.line(&format!("setp.eq.{t} {minus_one}, {}, -1;", s[1]));
            let on_minus_one = if op == Ops::IDIV {
                let n = self.reg(Class::of(dt));
                self.line(&format!("neg.{t} {n}, {};", s[0]));
                n
            } else {
                "0".into()
            };
            self.line(&format!("selp.{t} {r}, {on_minus_one}, {r}, {minus_one};"));
        }
        let zero = self.reg(Class::Pred);
        self.line(&format!("setp.eq.{t} {zero}, {}, 0;", s[1]));
        self.line(&format!("selp.{t} {r}, 0, {r}, {zero};"));
    }

    /// 8/16-bit integers live in 32-bit registers: sign- or zero-extend the low bits again.
    fn wrap_small(&mut self, r: &str, dt: DType) {
        match dt.scalar {
            Scalar::I8 | Scalar::I16 => {
                let k = 32 - dt.bits();
                self.line(&format!("shl.b32 {r}, {r}, {k};"));
                self.line(&format!("shr.s32 {r}, {r}, {k};"));
            }
            Scalar::U8 | Scalar::U16 => self.line(&format!("and.b32 {r}, {r}, {};", (1u32 << dt.bits()) - 1)),
            _ => {}
        }
    }

    /// A value of `from` converted to `to` with the interpreter's rules.
    fn cast(&mut self, x: &str, from: DType, to: DType) -> String {
        if from == to {
            return x.to_string();
        }
        // 16-bit floats go through f32 on both sides (as the C dialects do).
        if matches!(from.scalar, Scalar::F16 | Scalar::BF16) {
            let f = self.reg(Class::F32);
            if from.scalar == Scalar::F16 {
                self.line(&format!("cvt.f32.f16 {f}, {x};"));
            } else {
                // bf16 bits are the top half of an f32.
                let w = self.reg(Class::B32);
                self.line(&format!("cvt.u32.u16 {w}, {x};"));
                self.line(&format!("shl.b32 {w}, {w}, 16;"));
                self.line(&format!("mov.b32 {f}, {w};"));
            }
            return self.cast(&f, DType::F32, to);
        }
        if matches!(to.scalar, Scalar::F16 | Scalar::BF16) {
            let f = self.cast(x, from, DType::F32);
            let h = self.reg(Class::B16);
            let t = if to.scalar == Scalar::F16 { "f16" } else { "bf16" };
            self.line(&format!("cvt.rn.{t}.f32 {h}, {f};"));
            return h;
        }
        if from.is_bool() {
            let r = self.reg(Class::of(to));
            let one = immediate(ConstValue::Int(1), to);
            let zero = immediate(ConstValue::Int(0), to);
            self.line(&format!("selp.{} {r}, {one}, {zero}, {x};", op_type(to)));
            return r;
        }
        if to.is_bool() {
            let zero = self.reg(Class::of(from));
            self.line(&format!("mov.{} {zero}, {};", mov_type(from), immediate(ConstValue::Int(0), from)));
            return self.compare(Ops::CMPNE, from, &[x.to_string(), zero]);
        }
        let r = self.reg(Class::of(to));
        let (ft, tt) = (op_type(from), op_type(to));
        match (from.is_float(), to.is_float()) {
            (true, true) if to.bits() < from.bits() => self.line(&format!("cvt.rn.{tt}.{ft} {r}, {x};")),
            (true, true) => self.line(&format!("cvt.{tt}.{ft} {r}, {x};")),
            (false, true) => self.line(&format!("cvt.rn.{tt}.{ft} {r}, {x};")),
            (true, false) => {
                // cvt.rzi saturates at the 32/64-bit range with NaN -> 0; 8/16-bit results are
                // clamped further.
                self.line(&format!("cvt.rzi.{tt}.{ft} {r}, {x};"));
                if to.bits() < 32 {
                    let (lo, hi) = to.int_range();
                    self.line(&format!("max.{tt} {r}, {r}, {lo};"));
                    self.line(&format!("min.{tt} {r}, {r}, {hi};"));
                }
            }
            (false, false) => {
                if Class::of(from) == Class::of(to) {
                    self.line(&format!("mov.b{} {r}, {x};", bits(to)));
                } else {
                    // Between 32 and 64 bits: sign- or zero-extend by the source, or truncate.
                    self.line(&format!("cvt.{tt}.{ft} {r}, {x};"));
                }
                self.wrap_small(&r, to);
            }
        }
        r
    }

    /// The bits of `x` (dtype `from`) as dtype `to` of the same size.
    fn bitcast(&mut self, x: &str, from: DType, to: DType) -> String {
        let r = self.reg(Class::of(to));
        match (Class::of(from), Class::of(to)) {
            (a, b) if a == b => self.line(&format!("mov.b{} {r}, {x};", bits(to))),
            (Class::B16, Class::B32) => {
                self.line(&format!("cvt.u32.u16 {r}, {x};"));
                self.wrap_small(&r, to);
            }
            (Class::B32, Class::B16) => self.line(&format!("cvt.u16.u32 {r}, {x};")),
            _ => self.line(&format!("mov.b{} {r}, {x};", bits(to))),
        }
        r
    }
}

/// Register width in bits of a dtype's class (8/16-bit integers use 32-bit registers).
fn bits(dt: DType) -> u32 {
    match Class::of(dt) {
        Class::Pred => 1,
        Class::B16 => 16,
        Class::B32 | Class::F32 => 32,
        Class::B64 | Class::F64 => 64,
    }
}
