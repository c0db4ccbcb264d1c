//! The walk over a linear program that prints C-style source.

use super::c::c_type;
use super::dialect::CDialect;
use super::literal::{c_cast, literal};
use super::vector::{vector_name, vector_typedef};
use crate::renderer::block_text::BlockText;
use crate::renderer::{Renderer, Target};
use crate::uop::{Arg, AxisType, ConstValue, DType, FxHashMap, Ops, Scalar, SpecialKind, UOp};
use std::fmt::Write;

pub struct CStyleRenderer {
    pub dialect: CDialect,
    pub target: Target,
}

impl CStyleRenderer {
    pub fn new(dialect: CDialect, target: Target) -> Self {
        CStyleRenderer { dialect, target }
    }
}

/// How many times the C text of `u` mentions its source `i` (`MAX` and a division that must
/// test its divisor name their operands more than once).
fn text_copies(u: &UOp, i: usize) -> usize {
    match u.op() {
        Ops::MAX => 2,
        Ops::IDIV | Ops::MOD if !u.src()[1].as_int().is_some_and(|c| c != 0 && c != -1) => {
            if i == 1 {
                3
            } else {
                2
            }
        }
        _ => 1,
    }
}

impl Renderer for CStyleRenderer {
    fn target(&self) -> &Target {
        &self.target
    }

    fn render(&self, name: &str, uops: &[UOp]) -> String {
        Render::new(&self.dialect, uops).run(name)
    }
}

struct Render<'a> {
    d: &'a CDialect,
    uops: &'a [UOp],
    text: BlockText,
    uses: FxHashMap<UOp, usize>,
    counters: FxHashMap<&'static str, usize>,
    /// Vector types used (element dtype, lanes), for their typedefs.
    vectors: Vec<DType>,
    /// Nesting depth of each inlined expression (named values are 0).
    inline_depth: FxHashMap<UOp, usize>,
}

/// Deepest nesting of inlined expressions before a value gets a variable of its own.
const MAX_INLINE_DEPTH: usize = 48;

impl<'a> Render<'a> {
    fn new(d: &'a CDialect, uops: &'a [UOp]) -> Self {
        // How often each value's text would appear: an expression is inlined only where it
        // appears once, so nested inlining never repeats work or grows the source faster than
        // the program.
        let mut uses: FxHashMap<UOp, usize> = FxHashMap::default();
        for u in uops {
            for (i, s) in u.src().iter().enumerate() {
                *uses.entry(s.clone()).or_default() += text_copies(u, i);
            }
        }
        Render {
            d,
            uops,
            text: BlockText::new(),
            uses,
            counters: FxHashMap::default(),
            vectors: Vec::new(),
            inline_depth: FxHashMap::default(),
        }
    }

    /// Type name of a value dtype: the dialect's scalar name, or a vector typedef (`vfloat16`)
    /// that is declared before the kernel.
    fn ty(&mut self, dt: DType) -> String {
        if dt.count <= 1 || dt.ptr {
            return (self.d.type_name)(dt).to_string();
        }
        if dt.is_bool() {
            // Lane masks are declared with the f32 vectors they select between.
            self.ty(DType::F32.vec(dt.count));
        }
        if !self.vectors.contains(&dt) {
            self.vectors.push(dt);
        }
        vector_name(dt, self.d.type_name)
    }

    /// A literal in this dialect.
    fn lit(&self, v: ConstValue, dt: DType) -> String {
        literal(v, dt, self.d.type_name, self.d.int64_suffixes)
    }

    fn bind(&mut self, u: &UOp, name: String) {
        self.text.bind(u, name);
    }

    fn open_block(&mut self) {
        self.text.open_block();
    }

    fn close_block(&mut self) {
        self.text.close_block();
    }

    fn fresh(&mut self, prefix: &'static str) -> String {
        let c = self.counters.entry(prefix).or_default();
        *c += 1;
        format!("{prefix}{}", *c - 1)
    }

    fn line(&mut self, s: &str) {
        self.text.line(s);
    }

    fn n(&self, u: &UOp) -> &str {
        self.text.name(u)
    }

    /// The expression text of an ALU/cast node from its sources' names.
    fn alu_expr(&self, u: &UOp) -> String {
        let s: Vec<&str> = u.src().iter().map(|x| self.n(x)).collect();
        let dt = u.dtype();
        let sdt = u.src()[0].dtype();
        if self.d.wrap_signed {
            if let Some(e) = self.wrapping_expr(u, &s) {
                return e;
            }
        }
        let expr = match u.op() {
            Ops::NEG if dt.is_bool() => format!("(!{})", s[0]),
            Ops::NEG => format!("(-{})", s[0]),
            Ops::RECIP => format!("({}/{})", self.lit(ConstValue::Float(1.0), dt), s[0]),
            Ops::SQRT => format!("{}({})", (self.d.math_fn)("sqrt", dt), s[0]),
            Ops::EXP2 if dt.count > 1 => format!("__exp2_{}({})", vector_name(dt, self.d.type_name), s[0]),
            Ops::EXP2 => format!("{}({})", (self.d.math_fn)("exp2", dt), s[0]),
            Ops::LOG2 => format!("{}({})", (self.d.math_fn)("log2", dt), s[0]),
            Ops::SIN => format!("{}({})", (self.d.math_fn)("sin", dt), s[0]),
            Ops::TRUNC => format!("{}({})", (self.d.math_fn)("trunc", dt), s[0]),
            Ops::ADD => format!("({}+{})", s[0], s[1]),
            Ops::SUB => format!("({}-{})", s[0], s[1]),
            Ops::MUL => format!("({}*{})", s[0], s[1]),
            Ops::FDIV => format!("({}/{})", s[0], s[1]),
            Ops::IDIV | Ops::MOD => {
                let sym = if u.op() == Ops::IDIV { "/" } else { "%" };
                match u.src()[1].as_int() {
                    // A constant divisor other than 0 and -1 cannot trap.
                    Some(c) if c != 0 && c != -1 => format!("({}{sym}{})", s[0], s[1]),
                    _ => {
                        let on_minus_one = if u.op() == Ops::IDIV { format!("(-{})", s[0]) } else { "0".into() };
                        format!("(({b})==0?0:({b})==-1?{on_minus_one}:({a}{sym}{b}))", a = s[0], b = s[1])
                    }
                }
            }
            Ops::MAX if dt.count > 1 => format!("__max_{}({},{})", vector_name(dt, self.d.type_name), s[0], s[1]),
            Ops::MAX => format!("(({a}<{b})?{b}:{a})", a = s[0], b = s[1]),
            Ops::CMPLT => format!("({}<{})", s[0], s[1]),
            Ops::CMPNE => format!("({}!={})", s[0], s[1]),
            Ops::CMPEQ => format!("({}=={})", s[0], s[1]),
            Ops::AND => format!("({}&{})", s[0], s[1]),
            Ops::OR => format!("({}|{})", s[0], s[1]),
            Ops::XOR => format!("({}^{})", s[0], s[1]),
            Ops::SHL | Ops::SHR => {
                let sym = if u.op() == Ops::SHL { "<<" } else { ">>" };
                match u.src()[1].as_int() {
                    Some(c) if c >= 0 && (c as u32) < dt.bits() => format!("({}{sym}{})", s[0], s[1]),
                    _ => format!("({}{sym}({}&{}))", s[0], s[1], dt.bits() - 1),
                }
            }
            Ops::WHERE if dt.count > 1 => {
                format!("__where_{}({},{},{})", vector_name(dt, self.d.type_name), s[0], s[1], s[2])
            }
            Ops::WHERE => format!("({}?{}:{})", s[0], s[1], s[2]),
            Ops::MULACC if dt.count > 1 => {
                format!("__fma_{}({},{},{})", vector_name(dt, self.d.type_name), s[0], s[1], s[2])
            }
            Ops::MULACC if dt.is_float() => format!("{}({},{},{})", (self.d.math_fn)("fma", dt), s[0], s[1], s[2]),
            Ops::MULACC => format!("(({}*{})+{})", s[0], s[1], s[2]),
            Ops::CAST => return c_cast(s[0], sdt, dt, self.d),
            Ops::BITCAST => return (self.d.bitcast)(s[0], sdt, dt),
            op => panic!("C renderer: no rendering for {op:?}"),
        };
        // C computes small integer types in int; wrap back to the dtype's width.
        if matches!(dt.scalar, Scalar::I8 | Scalar::I16 | Scalar::U8 | Scalar::U16) && !u.op().is_comparison() {
            format!("(({}){expr})", (self.d.type_name)(dt))
        } else {
            expr
        }
    }

    /// Signed 32/64-bit arithmetic that may overflow, computed in the unsigned type of the same
    /// width (which wraps); `None` where range analysis shows it cannot overflow, so index
    /// arithmetic keeps its plain (faster) form.
    fn wrapping_expr(&self, u: &UOp, s: &[&str]) -> Option<String> {
        let dt = u.dtype();
        let unsigned = match dt.scalar {
            Scalar::I32 if dt.is_scalar() => DType::U32,
            Scalar::I64 if dt.is_scalar() => DType::U64,
            _ => return None,
        };
        let (t, ut) = ((self.d.type_name)(dt), (self.d.type_name)(unsigned));
        let iv = |i: usize| {
            let (lo, hi) = u.src()[i].bounds();
            (lo as i128, hi as i128)
        };
        let (lo, hi) = dt.int_range();
        let fits = |(a, b): (i128, i128)| lo <= a && b <= hi;
        let (safe, expr) = match u.op() {
            Ops::ADD => (fits((iv(0).0 + iv(1).0, iv(0).1 + iv(1).1)), format!("({ut}){}+({ut}){}", s[0], s[1])),
            Ops::SUB => (fits((iv(0).0 - iv(1).1, iv(0).1 - iv(1).0)), format!("({ut}){}-({ut}){}", s[0], s[1])),
            Ops::MUL => {
                let (a, b) = (iv(0), iv(1));
                let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
                let range = (*p.iter().min().unwrap_or(&0), *p.iter().max().unwrap_or(&0));
                (fits(range), format!("({ut}){}*({ut}){}", s[0], s[1]))
            }
            Ops::NEG => (fits((-iv(0).1, -iv(0).0)), format!("-({ut}){}", s[0])),
            Ops::SHL => match u.src()[1].as_int() {
                Some(k) if k >= 0 && (k as u32) < dt.bits() => {
                    // Shifting a negative value is undefined too.
                    let a = iv(0);
                    (a.0 >= 0 && fits((a.0 << k, a.1 << k)), format!("({ut}){}<<{}", s[0], s[1]))
                }
                _ => (false, format!("({ut}){}<<({}&{})", s[0], s[1], dt.bits() - 1)),
            },
            _ => return None,
        };
        (!safe).then(|| format!("(({t})({expr}))"))
    }

    fn run(mut self, name: &str) -> String {
        let mut params: Vec<(usize, String)> = Vec::new();
        let mut written: Vec<UOp> = Vec::new();
        for u in self.uops {
            if u.op() == Ops::STORE && u.src()[0].op() == Ops::INDEX {
                written.push(u.src()[0].src()[0].clone());
            }
        }
        let uops = self.uops;
        for u in uops {
            match u.op() {
                Ops::DEFINE_GLOBAL => {
                    let i = u.arg_int() as usize;
                    let nm = format!("data{i}");
                    let konst = if written.contains(u) { "" } else { "const " };
                    // (Metal has no no-alias qualifier.)
                    let restrict =
                        if self.d.restrict.is_empty() { String::new() } else { format!(" {}", self.d.restrict) };
                    let ty = (self.d.type_name)(u.dtype());
                    params.push((i, format!("{}{konst}{ty}*{restrict} {nm}", self.d.buffer_prefix)));
                    self.bind(u, nm);
                }
                Ops::DEFINE_VAR => {
                    let Arg::Var(vname, _, _) = u.arg() else { unreachable!() };
                    params.push((usize::MAX, (self.d.var_param)((self.d.type_name)(u.dtype()), vname)));
                    self.bind(u, vname.to_string());
                }
                Ops::CONST if u.dtype().count > 1 => {
                    let c = u.const_value().expect("CONST without value");
                    let one = if u.dtype().is_bool() {
                        // A lane mask: -1 for true.
                        format!("(-(int){})", self.lit(c, u.dtype().base()))
                    } else {
                        self.lit(c, u.dtype().base())
                    };
                    let t = self.ty(u.dtype());
                    self.bind(u, format!("__bcast_{t}({one})"));
                }
                Ops::CONST => {
                    let c = u.const_value().expect("CONST without value");
                    self.bind(u, self.lit(c, u.dtype()));
                }
                Ops::VECTORIZE => {
                    let t = self.ty(u.dtype());
                    // Bool lanes become lane masks (-1 for true).
                    let lane = |x: &str| if u.dtype().is_bool() { format!("(-(int){x})") } else { x.to_string() };
                    let expr = if u.src().iter().all(|x| x == &u.src()[0]) {
                        format!("__bcast_{t}({})", lane(self.n(&u.src()[0])))
                    } else {
                        let lanes: Vec<String> = u.src().iter().map(|x| lane(self.n(x))).collect();
                        format!("(({t}){{{}}})", lanes.join(","))
                    };
                    let nm = self.fresh("vec");
                    self.line(&format!("{t} {nm} = {expr};"));
                    self.bind(u, nm);
                }
                Ops::GEP => {
                    let text = if u.dtype().is_bool() {
                        format!("({}[{}]!=0)", self.n(&u.src()[0]), u.arg_int())
                    } else {
                        format!("{}[{}]", self.n(&u.src()[0]), u.arg_int())
                    };
                    self.bind(u, text);
                }
                Ops::SPECIAL => {
                    let Arg::Special(kind, dim) = u.arg() else { unreachable!() };
                    let nm = format!(
                        "{}idx{dim}",
                        match kind {
                            SpecialKind::Group => "g",
                            SpecialKind::Local => "l",
                            SpecialKind::Global => "i",
                        }
                    );
                    let wide = u.dtype().bits() > 32;
                    let text = (self.d.special)(*kind, *dim, wide);
                    let ty = (self.d.type_name)(u.dtype());
                    self.line(&format!("{ty} {nm} = {text}; /* {} */", self.n(&u.src()[0]).to_owned()));
                    self.bind(u, nm);
                }
                Ops::DEFINE_LOCAL => {
                    let nm = format!("temp{}", u.arg_int());
                    let size = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("{}{} {nm}[{size}];", self.d.local_prefix, (self.d.type_name)(u.dtype())));
                    self.bind(u, nm);
                }
                Ops::DEFINE_REG => {
                    let nm = self.fresh("acc");
                    let t = self.ty(u.dtype());
                    self.line(&format!("{t} {nm};"));
                    self.bind(u, nm);
                }
                Ops::RANGE if u.range_arg().1 == AxisType::Thread => {
                    // One thread per index value: the launcher passes it as `core_id`.
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("{{ int {nm} = core_id; /* THREAD axis of {end} */"));
                    self.open_block();
                    // The range lets the compiler prove index arithmetic does not wrap (it is
                    // compiled with -fwrapv), so it vectorizes with plain loads, not gathers.
                    self.line(&format!("if ({nm} < 0 || {nm} >= {end}) __builtin_unreachable();"));
                    self.bind(u, nm);
                }
                Ops::RANGE => {
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    let ty = (self.d.type_name)(u.dtype());
                    self.line(&format!("for ({ty} {nm} = 0; {nm} < {end}; {nm}++) {{"));
                    self.open_block();
                    self.bind(u, nm);
                }
                Ops::END | Ops::ENDIF => self.close_block(),
                Ops::IF => {
                    let c = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("if ({c}) {{"));
                    self.open_block();
                }
                Ops::BARRIER => {
                    let b = self.d.barrier;
                    self.line(b);
                }
                Ops::INDEX => {
                    let text = format!("{}[{}]", self.n(&u.src()[0]), self.n(&u.src()[1]));
                    self.bind(u, text);
                }
                Ops::LOAD => {
                    let src = &u.src()[0];
                    if src.op() == Ops::DEFINE_REG {
                        let nm = self.n(src).to_owned();
                        self.bind(u, nm);
                        continue;
                    }
                    let t = self.ty(u.dtype());
                    let mut addr = self.n(src).to_owned();
                    let mut zero = self.lit(ConstValue::Int(0), u.dtype().base());
                    if u.dtype().count > 1 {
                        // Consecutive elements from the scalar index, as one (unaligned) vector.
                        addr = format!("*({t}*)(&{addr})");
                        zero = format!("(({t}){{0}})");
                    }
                    let expr = match src.src().get(2) {
                        Some(gate) => format!("({}?{addr}:{zero})", self.n(gate)),
                        None => addr,
                    };
                    let nm = self.fresh("val");
                    self.line(&format!("{t} {nm} = {expr};"));
                    self.bind(u, nm);
                }
                Ops::STORE => {
                    let (dst, val) = (&u.src()[0], self.n(&u.src()[1]).to_owned());
                    let mut target = self.n(dst).to_owned();
                    let vdt = u.src()[1].dtype();
                    if dst.op() == Ops::INDEX && vdt.count > 1 {
                        target = format!("*({}*)(&{target})", self.ty(vdt));
                    }
                    match dst.src().get(2).filter(|_| dst.op() == Ops::INDEX) {
                        Some(gate) => {
                            let g = self.n(gate).to_owned();
                            self.line(&format!("if ({g}) {target} = {val};"))
                        }
                        None => self.line(&format!("{target} = {val};")),
                    }
                }
                Ops::SINK => {}
                op if op.is_alu() || op == Ops::CAST || op == Ops::BITCAST => {
                    let expr = self.alu_expr(u);
                    // How deeply this expression would nest inlined expressions: compilers
                    // limit bracket nesting (clang: 256), and a long unrolled sum is one chain.
                    let depth =
                        1 + u.src().iter().map(|x| self.inline_depth.get(x).copied().unwrap_or(0)).max().unwrap_or(0);
                    // Vectors always get a variable (a lane is read as `name[k]`).
                    let single_use = self.uses.get(u).copied().unwrap_or(0) <= 1;
                    if single_use && op != Ops::BITCAST && u.dtype().count <= 1 && depth <= MAX_INLINE_DEPTH {
                        self.inline_depth.insert(u.clone(), depth);
                        self.bind(u, expr);
                    } else {
                        let nm = self.fresh("alu");
                        let t = self.ty(u.dtype());
                        self.line(&format!("{t} {nm} = {expr};"));
                        self.bind(u, nm);
                    }
                }
                op => panic!("C renderer: unsupported op {op:?}"),
            }
        }
        params.sort_by_key(|(i, _)| *i);
        let mut out = String::new();
        out.push_str(self.d.prelude);
        for dt in &self.vectors {
            out.push_str(&vector_typedef(*dt, self.d.type_name));
        }
        let mut sig: Vec<String> =
            params.iter().enumerate().map(|(k, (_, p))| format!("{p}{}", (self.d.param_attribute)(k))).collect();
        sig.extend(self.d.builtin_params.iter().map(|p| p.to_string()));
        let inner = if self.d.cpu_entry { format!("{name}_body") } else { name.to_string() };
        if self.d.cpu_entry {
            sig.push("int core_id".into());
        }
        let _ = writeln!(out, "{}void {inner}({}) {{", self.d.kernel_prefix, sig.join(", "));
        out.push_str(&self.text.body);
        out.push_str("}\n");
        if self.d.cpu_entry {
            // Same order as the parameters: buffers by index, then variables in order.
            let mut args: Vec<(usize, String)> = Vec::new();
            for u in uops {
                match u.op() {
                    Ops::DEFINE_GLOBAL => {
                        let i = u.arg_int() as usize;
                        args.push((i, format!("({}*)bufs[{i}]", c_type(u.dtype().base()))));
                    }
                    Ops::DEFINE_VAR => {
                        let k = args.iter().filter(|(i, _)| *i == usize::MAX).count();
                        args.push((usize::MAX, format!("({})vals[{k}]", c_type(u.dtype()))));
                    }
                    _ => {}
                }
            }
            args.sort_by_key(|(i, _)| *i);
            let mut args: Vec<String> = args.into_iter().map(|(_, a)| a).collect();
            args.push("core_id".into());
            let _ = writeln!(
                out,
                "void {name}(void** bufs, const long long* vals, int core_id) {{ (void)bufs; (void)vals; {inner}({}); }}",
                args.join(", ")
            );
        }
        out
    }
}
