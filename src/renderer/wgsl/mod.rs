//! The WGSL renderer (WebGPU's shading language): the linear program as one compute entry point.
//!
//! Not a `CDialect`: WGSL declares with `let`/`var name: type`, has `select` instead of `?:`,
//! binds buffers as module-scope storage variables and has no pointer casts, so this is a walk
//! of its own over the same linear program (the contract of `codegen/linearize.rs`).
//!
//! Launch contract with the device (`runtime/webgpu`): buffer `i` of the kernel's parameters
//! (DEFINE_GLOBALs in index order) is `@binding(i)`; symbolic variables, when there are any, are
//! an `array<i32>` at the next binding. The work-group size is the override constant `fg_local`
//! and the number of groups `fg_groups`; groups are dispatched over x and y (at most 65,535
//! each), and a group past `fg_groups` returns at once (a uniform branch, so barriers stay
//! valid). Types: see `types.rs`.

mod types;

pub use types::{packed_per_word, wgsl_type};

use crate::renderer::block_text::BlockText;
use crate::renderer::{Renderer, Target};
use crate::uop::{Arg, ConstValue, DType, FxHashMap, Ops, Scalar, SpecialKind, UOp};
use std::fmt::Write;
use types::{wgsl_cast, wgsl_literal, wrap_small, WGSL_F64_PRELUDE, WGSL_PRELUDE};

pub struct WgslRenderer {
    pub target: Target,
}

impl Renderer for WgslRenderer {
    fn target(&self) -> &Target {
        &self.target
    }

    fn render(&self, name: &str, uops: &[UOp]) -> String {
        Walk::new(uops).run(name)
    }
}

/// `v` as a WGSL literal, except an f32 zero, infinity or NaN, which is made at run time from its
/// bits plus `fg_zero`: Mesa's lavapipe folds `x * 0.0` to 0 and `x / 0.0` wrongly even for
/// operations marked exact, where IEEE arithmetic gives NaN for an infinite or zero `x`.
fn opaque_literal(v: ConstValue, dt: DType) -> String {
    match v.as_f64() as f32 {
        f if dt.scalar == Scalar::F32 && (f == 0.0 || !f.is_finite()) => {
            format!("bitcast<f32>({}u + fg_zero)", f.to_bits())
        }
        _ => wgsl_literal(v, dt),
    }
}

/// Why a kernel cannot be rendered for WGSL on a device without the named extensions, or
/// `None`: the first op whose dtype needs `i64`/`u64` (without `int64`) or `f64` (without
/// `f64`), that is an f64 transcendental (32-bit only in SPIR-V), or has no WGSL form (vectors).
pub fn unsupported(uops: &[UOp], int64: bool, f64: bool) -> Option<String> {
    for u in uops {
        let dt = u.dtype();
        let scalar = dt.scalar;
        if dt.count > 1 && !dt.ptr {
            return Some(format!("{:?} of {} lanes: WGSL kernels are rendered without vectors", u.op(), dt.count));
        }
        if matches!(scalar, Scalar::I64 | Scalar::U64) && !int64 {
            return Some(format!(
                "{:?} of dtype {scalar:?}: this adapter lacks 64-bit integers (wgpu's SHADER_INT64)",
                u.op()
            ));
        }
        if scalar == Scalar::F64 && matches!(u.op(), Ops::EXP2 | Ops::LOG2 | Ops::SIN) {
            // SPIR-V's GLSL.std.450 transcendentals are 32-bit only: drivers give garbage.
            return Some(format!("{:?} of dtype f64: Vulkan's transcendental functions are 32-bit only", u.op()));
        }
        if scalar == Scalar::F64 && !f64 {
            return Some(format!("{:?} of dtype f64: this adapter lacks f64 (wgpu's SHADER_F64)", u.op()));
        }
    }
    None
}

/// How many times the text of `u` names its source `i`.
fn text_copies(u: &UOp, i: usize) -> usize {
    match u.op() {
        Ops::MAX => 2,
        Ops::IDIV | Ops::MOD if u.src()[1].as_int().is_none_or(|c| c == 0) => 1 + usize::from(i == 1),
        Ops::CAST if u.src()[0].dtype().is_float() && u.dtype().is_int() => 4,
        _ => 1,
    }
}

struct Walk<'a> {
    uops: &'a [UOp],
    text: BlockText,
    uses: FxHashMap<UOp, usize>,
    /// For an INDEX into packed 8/16-bit memory: (buffer name, element index text, dtype).
    packed: FxHashMap<UOp, (String, String, DType)>,
    /// Buffers declared `array<atomic<u32>>` (packed and written by this kernel).
    atomic: Vec<UOp>,
    /// Module-scope declarations (buffers, work-group arrays).
    module: String,
    counter: usize,
    inline_depth: FxHashMap<UOp, usize>,
}

/// Deepest nesting of inlined expressions before a value gets a name of its own.
const MAX_INLINE_DEPTH: usize = 48;

impl<'a> Walk<'a> {
    fn new(uops: &'a [UOp]) -> Self {
        let mut uses: FxHashMap<UOp, usize> = FxHashMap::default();
        for u in uops {
            for (i, s) in u.src().iter().enumerate() {
                *uses.entry(s.clone()).or_default() += text_copies(u, i);
            }
        }
        let atomic = uops
            .iter()
            .filter(|u| u.op() == Ops::STORE && u.src()[0].op() == Ops::INDEX)
            .map(|u| u.src()[0].src()[0].clone())
            .filter(|b| b.op() == Ops::DEFINE_GLOBAL && packed_per_word(b.dtype()).is_some())
            .collect();
        Walk {
            uops,
            text: BlockText::new(),
            uses,
            packed: FxHashMap::default(),
            atomic,
            module: String::new(),
            counter: 0,
            inline_depth: FxHashMap::default(),
        }
    }

    fn bind(&mut self, u: &UOp, name: String) {
        self.text.bind(u, name);
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        format!("{prefix}{}", self.counter - 1)
    }

    fn line(&mut self, s: &str) {
        self.text.line(s);
    }

    fn n(&self, u: &UOp) -> &str {
        self.text.name(u)
    }

    fn zero(dt: DType) -> String {
        wgsl_literal(ConstValue::Int(0), dt)
    }

    /// The expression of an ALU, CAST or BITCAST node.
    fn alu_expr(&self, u: &UOp) -> String {
        let s: Vec<&str> = u.src().iter().map(|x| self.n(x)).collect();
        let dt = u.dtype();
        let sdt = u.src()[0].dtype();
        let boolean = sdt.is_bool();
        let float = dt.is_float() && !matches!(dt.scalar, Scalar::F16 | Scalar::BF16);
        let expr = match u.op() {
            Ops::NEG if boolean => format!("(!{})", s[0]),
            Ops::NEG => format!("(-{})", s[0]),
            Ops::RECIP => format!("({}/{})", wgsl_literal(ConstValue::Float(1.0), dt), s[0]),
            Ops::SQRT => format!("sqrt({})", s[0]),
            Ops::EXP2 if dt.scalar == Scalar::F32 => format!("fg_exp2({})", s[0]),
            Ops::EXP2 => format!("exp2({})", s[0]),
            Ops::LOG2 if dt.scalar == Scalar::F32 => format!("fg_log2({})", s[0]),
            Ops::LOG2 => format!("log2({})", s[0]),
            Ops::SIN => format!("sin({})", s[0]),
            Ops::TRUNC => format!("trunc({})", s[0]),
            Ops::ADD if boolean => format!("({}|{})", s[0], s[1]),
            Ops::MUL if boolean => format!("({}&{})", s[0], s[1]),
            Ops::ADD => format!("({}+{})", s[0], s[1]),
            Ops::SUB => format!("({}-{})", s[0], s[1]),
            Ops::MUL => format!("({}*{})", s[0], s[1]),
            Ops::FDIV => format!("({}/{})", s[0], s[1]),
            Ops::IDIV | Ops::MOD => {
                let sym = if u.op() == Ops::IDIV { "/" } else { "%" };
                // WGSL defines x/0 (as x) and MIN/-1; the interpreter's x/0 and x%0 are 0.
                match u.src()[1].as_int() {
                    Some(c) if c != 0 => format!("({}{sym}{})", s[0], s[1]),
                    _ => format!("select({a}{sym}{b},{z},{b}=={z})", a = s[0], b = s[1], z = Self::zero(dt)),
                }
            }
            Ops::MAX if boolean => format!("({}|{})", s[0], s[1]),
            Ops::MAX => format!("select({a},{b},{a}<{b})", a = s[0], b = s[1]),
            Ops::CMPLT if boolean => format!("((!{})&{})", s[0], s[1]),
            Ops::CMPLT => format!("({}<{})", s[0], s[1]),
            // Vulkan compilers may fold `x != x` to false (Mesa does); a NaN test reads the bits.
            Ops::CMPNE | Ops::CMPEQ if sdt.is_float() && u.src()[0] == u.src()[1] => {
                let not = if u.op() == Ops::CMPEQ { "!" } else { "" };
                format!("{not}{}({})", if sdt.scalar == Scalar::F64 { "fg_nan64" } else { "fg_nan" }, s[0])
            }
            Ops::CMPNE => format!("({}!={})", s[0], s[1]),
            Ops::CMPEQ => format!("({}=={})", s[0], s[1]),
            Ops::AND => format!("({}&{})", s[0], s[1]),
            Ops::OR => format!("({}|{})", s[0], s[1]),
            Ops::XOR if boolean => format!("({}!={})", s[0], s[1]),
            Ops::XOR => format!("({}^{})", s[0], s[1]),
            Ops::SHL | Ops::SHR => {
                let sym = if u.op() == Ops::SHL { "<<" } else { ">>" };
                // The amount is a u32 in WGSL; the interpreter wraps it to the width.
                let mask = dt.bits() - 1;
                match u.src()[1].as_int() {
                    Some(c) => format!("({}{sym}{}u)", s[0], c as u32 & mask),
                    None => format!("({}{sym}(u32({})&{mask}u))", s[0], s[1]),
                }
            }
            Ops::WHERE => format!("select({},{},{})", s[2], s[1], s[0]),
            Ops::MULACC if float => format!("fma({},{},{})", s[0], s[1], s[2]),
            Ops::MULACC => format!("(({}*{})+{})", s[0], s[1], s[2]),
            Ops::CAST => return wgsl_cast(s[0], sdt, dt),
            Ops::BITCAST => return bitcast(s[0], sdt, dt),
            op => panic!("WGSL renderer: no rendering for {op:?}"),
        };
        if u.op().is_comparison() || !(dt.is_int() && dt.itemsize() < 4) {
            expr
        } else {
            wrap_small(&expr, dt)
        }
    }

    /// Declares buffer parameter `u` (binding `slot`) at module scope.
    fn declare_buffer(&mut self, u: &UOp, slot: usize, written: bool) -> String {
        let i = u.arg_int();
        let nm = format!("data{i}");
        let access = if written { "read_write" } else { "read" };
        let elem = match packed_per_word(u.dtype()) {
            Some(_) if self.atomic.contains(u) => "atomic<u32>".to_string(),
            Some(_) => "u32".to_string(),
            None => wgsl_type(u.dtype().base()).to_string(),
        };
        let _ = writeln!(self.module, "@group(0) @binding({slot}) var<storage, {access}> {nm}: array<{elem}>;");
        nm
    }

    /// The value at a packed INDEX, in register form.
    fn packed_load(&self, buf: &UOp, buf_name: &str, idx: &str, dt: DType) -> String {
        let per = packed_per_word(dt).expect("a packed dtype");
        let bits = 32 / per;
        let word = if self.atomic.contains(buf) {
            format!("atomicLoad(&{buf_name}[u32({idx})/{per}u])")
        } else {
            format!("{buf_name}[u32({idx})/{per}u]")
        };
        let raw = format!("(({word}>>((u32({idx})%{per}u)*{bits}u))&{}u)", (1u64 << bits) - 1);
        match dt.scalar {
            Scalar::Bool => format!("({raw}!=0u)"),
            Scalar::I8 | Scalar::I16 => wrap_small(&format!("i32({raw})"), dt),
            _ => raw,
        }
    }

    /// Statements storing `val` (register form of `dt`) at a packed element: two atomics on
    /// its word (clear the element's bits, then set them), so items writing other elements of
    /// the same word do not race.
    fn packed_store(buf_name: &str, idx: &str, val: &str, dt: DType) -> String {
        let per = packed_per_word(dt).expect("a packed dtype");
        let bits = 32 / per;
        let mask = (1u64 << bits) - 1;
        let v = if dt.is_bool() { format!("select(0u,1u,{val})") } else { format!("(u32({val})&{mask}u)") };
        format!(
            "{{ let w = u32({idx})/{per}u; let sh = (u32({idx})%{per}u)*{bits}u; \
             atomicAnd(&{buf_name}[w], ~({mask}u<<sh)); atomicOr(&{buf_name}[w], {v}<<sh); }}"
        )
    }

    fn run(mut self, name: &str) -> String {
        let written: Vec<UOp> = self
            .uops
            .iter()
            .filter(|u| u.op() == Ops::STORE && u.src()[0].op() == Ops::INDEX)
            .map(|u| u.src()[0].src()[0].clone())
            .collect();
        let mut globals: Vec<UOp> = self.uops.iter().filter(|u| u.op() == Ops::DEFINE_GLOBAL).cloned().collect();
        globals.sort_by_key(|u| u.arg_int());
        globals.dedup();
        for (slot, g) in globals.iter().enumerate() {
            let nm = self.declare_buffer(g, slot, written.contains(g));
            self.bind(g, nm);
        }
        let n_vars = self.uops.iter().filter(|u| u.op() == Ops::DEFINE_VAR).count();
        if n_vars > 0 {
            let _ =
                writeln!(self.module, "@group(0) @binding({}) var<storage, read> fg_vars: array<i32>;", globals.len());
        }
        self.line("let fg_group = wid.x + wid.y * nwg.x;");
        self.line("if (fg_group >= fg_groups) { return; }");
        // A zero the driver's compiler cannot see (the device dispatches one layer of groups).
        self.line("let fg_zero: u32 = nwg.z - 1u;");
        let mut var_k = 0;
        let uops = self.uops;
        for u in uops {
            match u.op() {
                Ops::DEFINE_GLOBAL | Ops::SINK => {}
                Ops::DEFINE_VAR => {
                    let Arg::Var(vname, _, _) = u.arg() else { unreachable!() };
                    let nm = format!("var_{vname}");
                    let t = wgsl_type(u.dtype());
                    self.line(&format!("let {nm}: {t} = {t}(fg_vars[{var_k}]);"));
                    var_k += 1;
                    self.bind(u, nm);
                }
                Ops::CONST => {
                    let c = u.const_value().expect("CONST without value");
                    self.bind(u, opaque_literal(c, u.dtype()));
                }
                Ops::SPECIAL => {
                    let Arg::Special(kind, _) = u.arg() else { unreachable!() };
                    let (nm, text) = match kind {
                        SpecialKind::Group => ("gidx0", "fg_group".to_string()),
                        SpecialKind::Local => ("lidx0", "lid.x".to_string()),
                        SpecialKind::Global => ("idx0", "(fg_group * fg_local + lid.x)".to_string()),
                    };
                    let t = wgsl_type(u.dtype());
                    self.line(&format!("let {nm}: {t} = {t}({text});"));
                    self.bind(u, nm.to_string());
                }
                Ops::DEFINE_LOCAL => {
                    let nm = format!("temp{}", u.arg_int());
                    let size = u.src()[0].as_int().expect("a work-group array of constant size");
                    let _ =
                        writeln!(self.module, "var<workgroup> {nm}: array<{}, {size}>;", wgsl_type(u.dtype().base()));
                    self.bind(u, nm);
                }
                Ops::DEFINE_REG => {
                    let nm = self.fresh("acc");
                    self.line(&format!("var {nm}: {};", wgsl_type(u.dtype())));
                    self.bind(u, nm);
                }
                Ops::RANGE => {
                    let nm = format!("ridx{}", u.range_arg().0);
                    let end = self.n(&u.src()[0]).to_owned();
                    let t = wgsl_type(u.dtype());
                    self.line(&format!("for (var {nm}: {t} = {}; {nm} < {end}; {nm}++) {{", Self::zero(u.dtype())));
                    self.text.open_block();
                    self.bind(u, nm);
                }
                Ops::END | Ops::ENDIF => self.text.close_block(),
                Ops::IF => {
                    let c = self.n(&u.src()[0]).to_owned();
                    self.line(&format!("if ({c}) {{"));
                    self.text.open_block();
                }
                Ops::BARRIER => self.line("workgroupBarrier();"),
                Ops::INDEX => {
                    let (buf, idx) = (&u.src()[0], self.n(&u.src()[1]).to_owned());
                    let bname = self.n(buf).to_owned();
                    if buf.op() == Ops::DEFINE_GLOBAL && packed_per_word(buf.dtype()).is_some() {
                        self.packed.insert(u.clone(), (bname.clone(), idx.clone(), buf.dtype().base()));
                    }
                    self.bind(u, format!("{bname}[{idx}]"));
                }
                Ops::LOAD => self.load(u),
                Ops::STORE => self.store(u),
                op if op.is_alu() || op == Ops::CAST || op == Ops::BITCAST => {
                    let expr = self.alu_expr(u);
                    let depth =
                        1 + u.src().iter().map(|x| self.inline_depth.get(x).copied().unwrap_or(0)).max().unwrap_or(0);
                    if self.uses.get(u).copied().unwrap_or(0) <= 1 && depth <= MAX_INLINE_DEPTH {
                        self.inline_depth.insert(u.clone(), depth);
                        self.bind(u, expr);
                    } else {
                        let nm = self.fresh("alu");
                        self.line(&format!("let {nm}: {} = {expr};", wgsl_type(u.dtype())));
                        self.bind(u, nm);
                    }
                }
                op => panic!("WGSL renderer: unsupported op {op:?}"),
            }
        }
        let mut out = String::from(WGSL_PRELUDE);
        if uops.iter().any(|u| u.dtype().scalar == Scalar::F64) {
            out.push_str(WGSL_F64_PRELUDE);
        }
        out.push_str("override fg_local: u32 = 1u;\noverride fg_groups: u32 = 1u;\n");
        out.push_str(&self.module);
        let _ = writeln!(
            out,
            "@compute @workgroup_size(fg_local)\nfn {name}(@builtin(workgroup_id) wid: vec3<u32>, \
             @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {{"
        );
        out.push_str(&self.text.body);
        out.push_str("}\n");
        out
    }

    fn load(&mut self, u: &UOp) {
        let src = &u.src()[0];
        if src.op() == Ops::DEFINE_REG {
            let nm = self.n(src).to_owned();
            self.bind(u, nm);
            return;
        }
        let dt = u.dtype();
        let value = match self.packed.get(src) {
            Some((b, idx, pdt)) => self.packed_load(&src.src()[0], b, idx, *pdt),
            None => self.n(src).to_owned(),
        };
        let nm = self.fresh("val");
        let t = wgsl_type(dt);
        match src.src().get(2) {
            // A gated load reads nothing where the gate is false.
            Some(gate) => {
                let g = self.n(gate).to_owned();
                self.line(&format!("var {nm}: {t} = {};", Self::zero(dt)));
                self.line(&format!("if ({g}) {{ {nm} = {value}; }}"));
            }
            None => self.line(&format!("let {nm}: {t} = {value};")),
        }
        self.bind(u, nm);
    }

    fn store(&mut self, u: &UOp) {
        let (dst, val) = (&u.src()[0], self.n(&u.src()[1]).to_owned());
        let stmt = match self.packed.get(dst) {
            Some((b, idx, dt)) => Self::packed_store(b, idx, &val, *dt),
            None => format!("{} = {val};", self.n(dst)),
        };
        match dst.src().get(2).filter(|_| dst.op() == Ops::INDEX) {
            Some(gate) => {
                let g = self.n(gate).to_owned();
                self.line(&format!("if ({g}) {{ {stmt} }}"));
            }
            None => self.line(&stmt),
        }
    }
}

/// Reinterprets the bits of `x` (register form of `from`) as `to`.
fn bitcast(x: &str, from: DType, to: DType) -> String {
    let (fw, tw) = (wgsl_type(from), wgsl_type(to));
    if from.itemsize() < 4 {
        // Both are 16- or 8-bit patterns in 32-bit registers: only the sign extension changes.
        let bits = format!("u32({x})");
        return match to.scalar {
            Scalar::I8 | Scalar::I16 => wrap_small(&format!("bitcast<i32>({bits})"), to),
            _ => wrap_small(&bits, to),
        };
    }
    if fw == tw {
        x.to_string()
    } else {
        format!("bitcast<{tw}>({x})")
    }
}
