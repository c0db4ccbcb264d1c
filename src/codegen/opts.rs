//! Optimizations act on a kernel's loop ranges: an `Opt` splits one range into two and gives
//! the inner part a new axis type (UPCAST, UNROLL, THREAD, LOCAL, GROUP); PADTO extends a range
//! to a multiple of an amount, with gated extra iterations.
//!
//! Two opts decide how the lowering passes treat the ranges, without changing them: VECTOR
//! (`V`) names the range that becomes SIMD vector lanes, and FMACHAIN (`F`) sets from how many
//! accumulator lanes unrolled dot products accumulate as one FMA chain. Without them the
//! defaults apply (the innermost UPCAST axis, or per-lane sums of an UNROLL axis, becomes the
//! lanes; `FMA_CHAIN`); see [`LoweringChoices`].
//!
//! LOCAL and GROUP/GROUPTOP need a device with work groups (see `gpu.rs`): LOCAL puts part of
//! an output axis in the work group, GROUP splits a reduce axis across it (GROUP takes the
//! inner part, so neighbouring items read neighbouring elements; GROUPTOP the outer part, so
//! each item reads one contiguous chunk).

use super::kernel_ops::{gate_indexes, split_reduce_ranges};
use super::vector_rules::check_vector_axis;
use crate::renderer::Target;
use crate::uop::{AxisType, FxHashMap, Ops, UOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OptKind {
    Upcast,
    Unroll,
    Thread,
    Local,
    Group,
    GroupTop,
    /// Split a range into an outer and inner loop of the same kind (loop tiling).
    Split,
    /// Pad a range up to a multiple of `amount` (so it splits evenly): the extra iterations
    /// load nothing and store nothing, and add the reduce's identity.
    PadTo,
    /// `V{axis}:{lanes}`: range `axis`, an UPCAST range of `lanes` (output lanes) or an UNROLL
    /// range of `lanes` in a float sum (one partial sum per lane), becomes the vector axis.
    /// `V0:1` keeps the kernel scalar. Changes no range.
    Vector,
    /// `F0:{n}`: unrolled dot products accumulate as one FMA chain in loops with at least `n`
    /// accumulator lanes (`F0:1` always, a large `n` never; default `FMA_CHAIN`). Changes no
    /// range.
    FmaChain,
}

/// What the VECTOR opt asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorChoice {
    /// The default rule (`vectorize::vector_axis`).
    Auto,
    /// No vector lanes.
    Scalar,
    /// The range with this id, of this many lanes.
    Range { id: u32, lanes: i64 },
}

/// The decisions the lowering passes take from the opts (not from the ranges), and the opt
/// that asked for each (for errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoweringChoices {
    pub vector: VectorChoice,
    pub vector_opt: Option<Opt>,
    /// Accumulator lanes from which unrolled dot products accumulate as one FMA chain.
    pub fma_chain_from: usize,
}

impl LoweringChoices {
    /// The defaults: the vector rule, `FMA_CHAIN`.
    pub fn defaults() -> LoweringChoices {
        LoweringChoices {
            vector: VectorChoice::Auto,
            vector_opt: None,
            fma_chain_from: crate::flags::int("FMA_CHAIN") as usize,
        }
    }
}

/// One optimization: split range number `axis` (in id order) by `amount`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Opt {
    pub kind: OptKind,
    pub axis: usize,
    pub amount: i64,
}

/// The ranges opts can address, sorted by id: every range with a constant bound (a symbolic
/// range stays a plain loop, at its place in the nest).
pub fn kernel_ranges(ast: &UOp) -> Vec<UOp> {
    let mut rs: Vec<UOp> =
        ast.toposort().into_iter().filter(|n| n.op() == Ops::RANGE && !n.is_symbolic_range()).collect();
    rs.sort_by_key(|r| r.range_arg().0);
    rs
}

/// Splits `range` (size n) in two. Normally it becomes `rest * amount + new` where `new` has
/// size `amount` and type `kind` (the inner part); with `top` it becomes
/// `new * (n / amount) + rest` (the new part is the outer one, as a THREAD axis wants: each
/// thread gets one contiguous chunk). `rest` keeps the range's id and type. `amount` must
/// divide n.
pub fn shift_to(ast: &UOp, range: &UOp, amount: i64, kind: AxisType, top: bool) -> UOp {
    let n = range.range_size();
    assert!(amount > 0 && n % amount == 0, "shift_to: {amount} does not divide range of {n}");
    let (id, t) = range.range_arg();
    let next_id =
        ast.toposort().iter().filter(|r| r.op() == Ops::RANGE).map(|r| r.range_arg().0).max().unwrap_or(0) + 1;
    let dt = range.dtype();
    let rest = UOp::range(UOp::int(dt, n / amount), id, t);
    let new = UOp::range(UOp::int(dt, amount), next_id, kind);
    let replacement = if top { &(&new * (n / amount)) + &rest } else { &(&rest * amount) + &new };
    let (outer, inner) = if top { (new, rest) } else { (rest, new) };
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    map.insert(range.clone(), replacement);
    // REDUCE sources list their ranges: both parts replace the old one there.
    split_reduce_ranges(&ast.substitute(&map), &outer, &inner, |_, value| value.clone())
}

/// Pads `range` (size n) to the next multiple of `amount`: the range runs to that size, every
/// load and store whose address depends on it is gated by `range < n` (no access outside the
/// buffers, no stores for the extra outputs) and every REDUCE over it adds its identity there.
pub fn pad_to(ast: &UOp, range: &UOp, amount: i64) -> UOp {
    let n = range.range_size();
    let padded = (n + amount - 1) / amount * amount;
    if padded == n {
        return ast.clone();
    }
    let (id, t) = range.range_arg();
    let dt = range.dtype();
    let wide = UOp::range(UOp::int(dt, padded), id, t);
    let valid = wide.lt(&UOp::int(dt, n));
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    map.insert(range.clone(), wide.clone());
    let sub = ast.substitute(&map);
    let gated = gate_indexes(&sub, |index| index.src()[1].toposort().contains(&wide), &valid);
    // Then the REDUCEs over the range, found again above the gated loads.
    let mut reduces: FxHashMap<UOp, UOp> = FxHashMap::default();
    for node in gated.toposort() {
        if node.op() == Ops::REDUCE && node.src()[1..].contains(&wide) {
            let crate::uop::Arg::Op(op) = node.arg() else { unreachable!("REDUCE without op") };
            let identity = UOp::cnst(node.dtype(), op.reduce_identity(node.dtype()));
            let mut src = node.src().to_vec();
            src[0] = valid.where_(&src[0], &identity);
            reduces.insert(node.clone(), node.with_src(src));
        }
    }
    if reduces.is_empty() {
        gated
    } else {
        gated.substitute(&reduces)
    }
}

/// Why an opt cannot be applied to a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptError {
    pub opt: Opt,
    pub reason: String,
}

impl std::fmt::Display for OptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "opt {}: {}", self.opt, self.reason)
    }
}

impl std::error::Error for OptError {}

impl std::fmt::Display for Opt {
    /// The `OPTS=` syntax: `T0:2`, `U1:16`, `R2:4`, `L0:8`, `G1:16`, `GT1:16`, `S0:4`, `P1:32`,
    /// `V3:8`, `F0:1`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}:{}", self.kind.letter(), self.axis, self.amount)
    }
}

impl OptKind {
    /// The letter of this kind in the `OPTS=` syntax.
    pub fn letter(self) -> &'static str {
        match self {
            OptKind::Upcast => "U",
            OptKind::Unroll => "R",
            OptKind::Thread => "T",
            OptKind::Local => "L",
            OptKind::Group => "G",
            OptKind::GroupTop => "GT",
            OptKind::Split => "S",
            OptKind::PadTo => "P",
            OptKind::Vector => "V",
            OptKind::FmaChain => "F",
        }
    }
}

impl std::str::FromStr for Opt {
    type Err = String;
    /// Parses one opt in the `OPTS=` syntax (`U1:16`).
    fn from_str(text: &str) -> Result<Opt, String> {
        let bad =
            || format!("`{text}` is not an opt (KIND AXIS:AMOUNT, e.g. T0:2 U1:16 R2:4; kinds T U R L G GT S P V F)");
        let (head, amount) = text.trim().split_once(':').ok_or_else(bad)?;
        let split = head.find(|c: char| c.is_ascii_digit()).ok_or_else(bad)?;
        let kind = match &head[..split] {
            "U" => OptKind::Upcast,
            "R" => OptKind::Unroll,
            "T" => OptKind::Thread,
            "L" => OptKind::Local,
            "G" => OptKind::Group,
            "GT" => OptKind::GroupTop,
            "S" => OptKind::Split,
            "P" => OptKind::PadTo,
            "V" => OptKind::Vector,
            "F" => OptKind::FmaChain,
            _ => return Err(bad()),
        };
        Ok(Opt { kind, axis: head[split..].parse().map_err(|_| bad())?, amount: amount.parse().map_err(|_| bad())? })
    }
}

/// Parses a list of opts (`T0:2 U0:8 U1:32 R2:4`, commas or spaces between them).
pub fn parse_opts(text: &str) -> Result<Vec<Opt>, String> {
    text.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).map(str::parse).collect()
}

/// Formats opts in the `OPTS=` syntax.
pub fn format_opts(opts: &[Opt]) -> String {
    opts.iter().map(Opt::to_string).collect::<Vec<_>>().join(" ")
}

/// Whether `o` can be applied to a kernel whose ranges (in id order) are `ranges`, on
/// `target`: the one legality check, used by `apply_opt`, the heuristic and BEAM.
pub fn check_opt(ranges: &[UOp], o: &Opt, target: &Target) -> Result<(), OptError> {
    let fail = |reason: String| Err(OptError { opt: *o, reason });
    let Some(r) = ranges.get(o.axis) else {
        return fail(format!("the kernel has {} ranges", ranges.len()));
    };
    let (size, kind) = (r.range_size(), r.range_arg().1);
    if o.amount <= 0 {
        return fail("the amount must be positive".into());
    }
    // A THREAD axis is one index per core: it cannot be split again, and there is one.
    if kind == AxisType::Thread {
        return fail("a THREAD axis cannot be split".into());
    }
    match o.kind {
        OptKind::FmaChain if o.axis != 0 => return fail("FMACHAIN is a kernel-wide choice: write it F0:n".into()),
        OptKind::FmaChain => return Ok(()),
        OptKind::Vector if o.amount == 1 => return Ok(()),
        OptKind::Vector if target.simd_bytes == 0 => {
            return fail(format!("{} has no SIMD vectors (only V0:1 applies)", target.device))
        }
        OptKind::Vector if !matches!(kind, AxisType::Upcast | AxisType::Unroll) => {
            return fail(format!("the vector axis is an UPCAST or UNROLL range, not a {kind:?} axis"))
        }
        OptKind::Vector if size != o.amount => {
            return fail(format!("the vector axis has {size} lanes, not {}", o.amount))
        }
        OptKind::Vector if o.amount & (o.amount - 1) != 0 || o.amount as usize * 4 > target.simd_bytes => {
            return fail(format!(
                "{} lanes: vectors have a power of two lanes, at most {} bytes on {}",
                o.amount, target.simd_bytes, target.device
            ))
        }
        OptKind::Vector => return Ok(()),
        _ => {}
    }
    if o.kind == OptKind::PadTo {
        if !matches!(kind, AxisType::Global | AxisType::Reduce) {
            return fail(format!("PADTO pads an output or reduce loop, not a {kind:?} axis"));
        }
        return Ok(());
    }
    if size % o.amount != 0 {
        return fail(format!("{} does not divide the range of {size}", o.amount));
    }
    let has = |t: AxisType| ranges.iter().any(|x| x.range_arg().1 == t);
    match o.kind {
        OptKind::Thread | OptKind::Upcast | OptKind::Local if kind.is_reduce() => {
            fail(format!("{:?} applies to output axes, not to a reduce axis", o.kind))
        }
        OptKind::Unroll if !kind.is_reduce() => fail("UNROLL applies to reduce axes".into()),
        OptKind::Thread if !target.has_threads => fail(format!("{} has no CPU threads", target.device)),
        OptKind::Thread if has(AxisType::Thread) => fail("the kernel already has a THREAD axis".into()),
        OptKind::Thread if kind != AxisType::Global => {
            fail(format!("THREAD splits an output loop, not a {kind:?} axis"))
        }
        OptKind::Local | OptKind::Group | OptKind::GroupTop if !target.has_local => {
            fail(format!("LOCAL and GROUP need a device with work groups; {} has none", target.device))
        }
        OptKind::Local if kind != AxisType::Global => fail(format!("LOCAL splits an output axis, not a {kind:?} axis")),
        OptKind::Group | OptKind::GroupTop if kind != AxisType::Reduce => {
            fail(format!("GROUP splits a reduce loop, not a {kind:?} axis"))
        }
        OptKind::Group | OptKind::GroupTop if has(AxisType::Group) => {
            fail("the kernel already has a GROUP axis".into())
        }
        OptKind::Local | OptKind::Group | OptKind::GroupTop => {
            let in_group: i64 = ranges
                .iter()
                .filter(|x| matches!(x.range_arg().1, AxisType::Local | AxisType::Group))
                .map(|x| x.range_size())
                .product();
            if (in_group * o.amount) as usize > target.local_max_total.max(1) {
                fail(format!(
                    "a work group of {} items is more than {} allows ({})",
                    in_group * o.amount,
                    target.device,
                    target.local_max_total
                ))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// Applies one opt, or says why it cannot be.
pub fn apply_opt(ast: &UOp, o: &Opt, target: &Target) -> Result<UOp, OptError> {
    let rs = kernel_ranges(ast);
    check_opt(&rs, o, target)?;
    let r = rs[o.axis].clone();
    if o.kind == OptKind::PadTo {
        return Ok(pad_to(ast, &r, o.amount));
    }
    if o.kind == OptKind::Vector && o.amount > 1 {
        check_vector_axis(ast, &r, target).map_err(|reason| OptError { opt: *o, reason })?;
    }
    if matches!(o.kind, OptKind::Vector | OptKind::FmaChain) {
        return Ok(ast.clone());
    }
    let top = matches!(o.kind, OptKind::Thread | OptKind::GroupTop);
    let kind = match o.kind {
        OptKind::Upcast => AxisType::Upcast,
        OptKind::Unroll => AxisType::Unroll,
        OptKind::Thread => AxisType::Thread,
        OptKind::Local => AxisType::Local,
        OptKind::Group | OptKind::GroupTop => AxisType::Group,
        OptKind::Split => r.range_arg().1,
        OptKind::PadTo | OptKind::Vector | OptKind::FmaChain => unreachable!("handled above"),
    };
    Ok(shift_to(ast, &r, o.amount, kind, top))
}

/// Applies opts in order; the first that cannot be applied is the error.
pub fn apply_opts(ast: &UOp, opts: &[Opt], target: &Target) -> Result<UOp, OptError> {
    apply_opts_with_choices(ast, opts, target).map(|(ast, _)| ast)
}

/// Applies opts in order, and collects what the VECTOR and FMACHAIN opts chose (each at most
/// once). Whether the vector axis still qualifies after the later opts is the `vector_axis`
/// pass's check.
pub fn apply_opts_with_choices(ast: &UOp, opts: &[Opt], target: &Target) -> Result<(UOp, LoweringChoices), OptError> {
    let mut choices = LoweringChoices::defaults();
    let (mut vector_set, mut fma_set) = (false, false);
    let mut ast = ast.clone();
    for o in opts {
        let twice = |what: &str| Err(OptError { opt: *o, reason: format!("a kernel has one {what} opt") });
        match o.kind {
            OptKind::Vector if vector_set => return twice("VECTOR"),
            OptKind::FmaChain if fma_set => return twice("FMACHAIN"),
            _ => {}
        }
        ast = apply_opt(&ast, o, target)?;
        match o.kind {
            OptKind::Vector => {
                vector_set = true;
                choices.vector_opt = Some(*o);
                choices.vector = if o.amount == 1 {
                    VectorChoice::Scalar
                } else {
                    VectorChoice::Range { id: kernel_ranges(&ast)[o.axis].range_arg().0, lanes: o.amount }
                };
            }
            OptKind::FmaChain => {
                fma_set = true;
                choices.fma_chain_from = o.amount as usize;
            }
            _ => {}
        }
    }
    Ok((ast, choices))
}

/// Every opt BEAM (and the fuzzer's random lists) may add to `opts` for this kernel (`ast` as `codegen::prepare` leaves
/// it): each is legal (`check_opt`) and keeps register tiles and work groups of a sane size.
pub fn candidate_opts(ast: &UOp, opts: &[Opt], target: &Target) -> Vec<Opt> {
    let Ok(applied) = apply_opts(ast, opts, target) else { return Vec::new() };
    let ranges = kernel_ranges(&applied);
    let product = |kinds: &[AxisType]| -> i64 {
        ranges.iter().filter(|r| kinds.contains(&r.range_arg().1)).map(|r| r.range_size()).product()
    };
    let upcast = product(&[AxisType::Upcast]);
    let threads = if target.has_threads { target.threads as i64 } else { 1 };
    let mut out = Vec::new();
    for (axis, r) in ranges.iter().enumerate() {
        let (size, kind) = (r.range_size(), r.range_arg().1);
        let mut proposals: Vec<Opt> = Vec::new();
        for amount in [2i64, 3, 4, 5, 8, 16] {
            match kind {
                AxisType::Global if upcast * amount <= 128 => {
                    proposals.push(Opt { kind: OptKind::Upcast, axis, amount })
                }
                AxisType::Reduce if amount <= 8 => proposals.push(Opt { kind: OptKind::Unroll, axis, amount }),
                _ => {}
            }
        }
        // PADTO an axis no vector width divides (a convolution's 26 outputs), for an UPCAST after.
        for amount in [8i64, 16, 32] {
            if size > amount && size % amount != 0 {
                proposals.push(Opt { kind: OptKind::PadTo, axis, amount });
            }
        }
        if threads > 1 {
            proposals.push(Opt { kind: OptKind::Thread, axis, amount: threads });
        }
        for amount in [2i64, 4, 8, 16, 32, 64, 128, 256] {
            proposals.push(Opt { kind: OptKind::Local, axis, amount });
            // Partials of a register tile all go to local memory: keep it small.
            if amount >= 8 && upcast * amount <= 1024 {
                proposals.push(Opt { kind: OptKind::Group, axis, amount });
                proposals.push(Opt { kind: OptKind::GroupTop, axis, amount });
            }
        }
        out.extend(proposals.into_iter().filter(|o| size > 1 && check_opt(&ranges, o, target).is_ok()));
    }
    // The lowering choices, once each: another vector axis (or none), and FMA chains where the
    // default threshold would not use them (or not where it would).
    let chose = |k: OptKind| opts.iter().any(|o| o.kind == k);
    if !chose(OptKind::Vector) && !ranges.is_empty() {
        let lanes =
            ranges.iter().enumerate().filter(|(_, r)| matches!(r.range_arg().1, AxisType::Upcast | AxisType::Unroll));
        let mut vector: Vec<Opt> =
            lanes.map(|(axis, r)| Opt { kind: OptKind::Vector, axis, amount: r.range_size() }).collect();
        vector.push(Opt { kind: OptKind::Vector, axis: 0, amount: 1 });
        let qualifies = |o: &Opt| o.amount == 1 || check_vector_axis(&applied, &ranges[o.axis], target).is_ok();
        out.extend(vector.into_iter().filter(|o| check_opt(&ranges, o, target).is_ok() && qualifies(o)));
    }
    let unrolled_sum = ranges.iter().any(|r| r.range_arg().1 == AxisType::Unroll)
        && applied.toposort().iter().any(|n| n.op() == Ops::REDUCE && n.dtype().is_float());
    if !chose(OptKind::FmaChain) && unrolled_sum {
        let default = LoweringChoices::defaults().fma_chain_from as i64;
        let amount = if upcast >= default { 1 << 16 } else { 1 };
        out.push(Opt { kind: OptKind::FmaChain, axis: 0, amount });
    }
    out
}
