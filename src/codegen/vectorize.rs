//! Explicit SIMD vectors: the innermost UPCAST axis of a kernel becomes the lanes of vector
//! values instead of being unrolled into scalars, so the C compiler gets vector loads, vector
//! FMAs and vector accumulators instead of having to rediscover them.
//!
//! Every node that depends on the axis gets one of three forms: the same scalar in every lane
//! (it does not depend on the axis), one vector value, or one scalar per lane. Loads and
//! stores whose address moves by one element per lane (and whose gate is the same in every
//! lane) become vector loads and stores; float arithmetic on vectors stays vector; sum
//! reductions of vectors keep vector accumulators; f32 comparisons give vectors of lane masks
//! that WHERE and MAX use. Everything else (index math, integer comparisons, casts,
//! transcendental functions, other reductions) is computed lane by lane, which is always
//! correct and is what the scalar expansion did anyway.

use super::kernel_ops::{pow2_divisor, reduce_over};
use super::opts::{kernel_ranges, shift_to, VectorChoice};
use super::vector_rules::{
    check_vector_axis, lane_sum_reduce, max_lanes, vector_cast, vector_element, vector_memory_element,
};
use crate::renderer::Target;
use crate::uop::symbolic::simplify;
use crate::uop::{Arg, AxisType, DType, FxHashMap, Ops, Scalar, UOp};

/// How a node looks with the vector axis turned into lanes.
#[derive(Clone)]
enum Lanes {
    /// The same in every lane (the node does not depend on the axis).
    Same(UOp),
    /// One vector value.
    Vector(UOp),
    /// One scalar per lane.
    Each(Vec<UOp>),
}

impl Lanes {
    fn lane(&self, k: usize) -> UOp {
        match self {
            Lanes::Same(n) => n.clone(),
            Lanes::Vector(v) => UOp::new(Ops::GEP, v.dtype().base(), vec![v.clone()], Arg::Int(k as i64)),
            Lanes::Each(l) => l[k].clone(),
        }
    }
    fn vector(&self, w: usize) -> UOp {
        match self {
            Lanes::Vector(v) => v.clone(),
            _ => {
                let lanes: Vec<UOp> = (0..w).map(|k| self.lane(k)).collect();
                UOp::new(Ops::VECTORIZE, lanes[0].dtype().vec(w as u8), lanes, Arg::None)
            }
        }
    }
    fn is_same(&self) -> bool {
        matches!(self, Lanes::Same(_))
    }
}

/// Ops with a vector form: float arithmetic, which C vector extensions (and every backend's
/// vector types) support; and on f32 lanes MAX, comparisons (a vector of lane masks), WHERE
/// and EXP2 (the C prelude's polynomial), so that a tail such as ReLU, tanh, softmax's `exp`
/// or an erf-GELU after a vectorized reduce stays one vector op per vector instead of one
/// scalar op per lane; and casts between 16-bit floats and f32, so that a bf16 weight is
/// loaded and widened a vector at a time.
fn vector_alu(n: &UOp) -> bool {
    let f32_lanes = |d: DType| d.scalar == Scalar::F32;
    match n.op() {
        Ops::ADD | Ops::SUB | Ops::MUL | Ops::FDIV | Ops::NEG | Ops::MULACC => {
            n.dtype().is_float() && vector_element(n.dtype())
        }
        Ops::MAX | Ops::WHERE | Ops::EXP2 => f32_lanes(n.dtype()),
        Ops::CMPLT | Ops::CMPNE | Ops::CMPEQ => f32_lanes(n.src()[0].dtype()),
        Ops::CAST => vector_cast(n.src()[0].dtype(), n.dtype()),
        _ => false,
    }
}

/// The vector axis of an optimized kernel and the kernel with it in place, as `choice` (from
/// the VECTOR opt) says: by default the innermost UPCAST axis (the one applied last), narrowed
/// to what one SIMD register holds (the rest of it stays a scalar upcast), or else per-lane
/// sums of an UNROLL axis (`lane_sums`); `None` where the target has no vectors or the axis is
/// shorter than 4 lanes. An explicit choice that does not qualify is an error saying why.
pub fn vector_axis(ast: &UOp, target: &Target, choice: VectorChoice) -> Result<Option<(UOp, UOp)>, String> {
    let VectorChoice::Range { id, lanes } = choice else {
        return Ok(if choice == VectorChoice::Auto { default_vector_axis(ast, target) } else { None });
    };
    let ranges = kernel_ranges(ast);
    let Some(axis) = ranges.iter().find(|r| r.range_arg().0 == id && r.range_size() == lanes) else {
        return Err(format!("a later opt changed the vector axis (range {id} of {lanes} lanes)"));
    };
    check_vector_axis(ast, axis, target)?;
    match axis.range_arg().1 {
        AxisType::Unroll => lane_sums(ast, axis, target).map(Some),
        _ => Ok(Some((ast.clone(), axis.clone()))),
    }
}

fn default_vector_axis(ast: &UOp, target: &Target) -> Option<(UOp, UOp)> {
    if target.simd_bytes == 0 {
        return None;
    }
    let max_lanes = max_lanes(ast, target);
    let Some(axis) = kernel_ranges(ast).into_iter().filter(|r| r.range_arg().1 == AxisType::Upcast).last() else {
        let unroll = kernel_ranges(ast).into_iter().filter(|r| r.range_arg().1 == AxisType::Unroll).last()?;
        let lanes = unroll.range_size();
        if lanes < 4 || lanes & (lanes - 1) != 0 {
            return None;
        }
        return lane_sums(ast, &unroll, target).ok();
    };
    let size = axis.range_size();
    let lanes = pow2_divisor(size, max_lanes);
    if lanes < 4 {
        return None;
    }
    if lanes == size {
        return Some((ast.clone(), axis));
    }
    let split = shift_to(ast, &axis, lanes, AxisType::Upcast, false);
    let inner = kernel_ranges(&split).into_iter().max_by_key(|r| r.range_arg().0)?;
    Some((split, inner))
}

/// Per-lane sums: the UNROLL axis `unroll` of a float sum (see `lane_sum_reduce` for when it
/// qualifies) keeps one partial sum per lane, `REDUCE(value, ranges..., u)` becoming
/// `REDUCE(REDUCE(value, ranges...), u)` with `u` the vector axis (the outer REDUCE adds the
/// lanes up at the end). Returns the kernel and the axis, or why the axis does not qualify.
fn lane_sums(ast: &UOp, unroll: &UOp, target: &Target) -> Result<(UOp, UOp), String> {
    let red = lane_sum_reduce(ast, unroll, target)?;
    let red = &red;
    let (id, _) = unroll.range_arg();
    let axis = UOp::range(unroll.src()[0].clone(), id, AxisType::Upcast);
    let others: Vec<UOp> = red.src()[1..].iter().filter(|r| *r != unroll).cloned().collect();
    let mut swap: FxHashMap<UOp, UOp> = FxHashMap::default();
    swap.insert(unroll.clone(), axis.clone());
    let partial = reduce_over(red, red.src()[0].substitute(&swap), &others);
    let total = red.with_src(vec![partial, axis.clone()]);
    let mut map: FxHashMap<UOp, UOp> = FxHashMap::default();
    map.insert(red.clone(), total);
    Ok((ast.substitute(&map), axis))
}

/// Turns `axis` (an UPCAST range, not yet expanded) into vector lanes.
pub fn vectorize(ast: &UOp, axis: &UOp) -> UOp {
    let w = axis.range_size() as usize;
    let mut memo: FxHashMap<UOp, Lanes> = FxHashMap::default();
    let mut stores: Vec<UOp> = Vec::new();
    for n in ast.toposort() {
        let srcs: Vec<Lanes> = n.src().iter().map(|s| memo[s].clone()).collect();
        if n.op() == Ops::SINK {
            for s in &srcs {
                match s {
                    Lanes::Same(x) | Lanes::Vector(x) => stores.push(x.clone()),
                    Lanes::Each(l) => stores.extend(l.iter().cloned()),
                }
            }
            continue;
        }
        let out = if &n == axis {
            Lanes::Each((0..w).map(|k| UOp::int(n.dtype(), k as i64)).collect())
        } else if srcs.iter().all(Lanes::is_same) {
            // The same in every lane; rebuilt where a source was (a lane sum replacing a REDUCE).
            let src: Vec<UOp> = srcs.iter().map(|s| s.lane(0)).collect();
            Lanes::Same(if src.as_slice() == n.src() { n.clone() } else { n.with_src(src) })
        } else {
            match n.op() {
                Ops::LOAD => load(&n, &srcs[0], w),
                Ops::STORE => store(&n, &srcs[0], &srcs[1], w),
                Ops::REDUCE => reduce(&n, &srcs, w),
                _ if vector_alu(&n) => {
                    let vs: Vec<UOp> = srcs.iter().map(|s| s.vector(w)).collect();
                    Lanes::Vector(UOp::new(n.op(), n.dtype().vec(w as u8), vs, n.arg().clone()))
                }
                _ => per_lane(&n, &srcs, w),
            }
        };
        memo.insert(n, out);
    }
    ast.with_src(stores)
}

/// The node once per lane, from its sources' lanes.
fn per_lane(n: &UOp, srcs: &[Lanes], w: usize) -> Lanes {
    Lanes::Each((0..w).map(|k| n.with_src(srcs.iter().map(|s| s.lane(k)).collect())).collect())
}

/// For an INDEX in per-lane form: lane 0's INDEX when the lanes address consecutive elements
/// with one gate, else `None`.
fn contiguous(index: &Lanes, w: usize) -> Option<UOp> {
    let Lanes::Each(lanes) = index else { return None };
    let first = &lanes[0];
    let gate = first.src().get(2);
    for (k, l) in lanes.iter().enumerate() {
        if l.src().get(2) != gate {
            return None;
        }
        let step = simplify(&(&l.src()[1] - &first.src()[1]));
        if step.as_int() != Some(k as i64) {
            return None;
        }
    }
    debug_assert_eq!(lanes.len(), w);
    Some(first.clone())
}

/// For an INDEX in per-lane form: one INDEX when every lane reads the same address under one
/// gate (a per-row scale inside a vectorized sum), else `None`.
fn same_address(index: &Lanes) -> Option<UOp> {
    let Lanes::Each(lanes) = index else { return None };
    let first = &lanes[0];
    let addr = simplify(&first.src()[1]);
    let same = lanes[1..].iter().all(|l| l.src().get(2) == first.src().get(2) && simplify(&l.src()[1]) == addr);
    same.then(|| {
        let mut src = first.src().to_vec();
        src[1] = addr;
        first.with_src(src)
    })
}

fn load(n: &UOp, index: &Lanes, w: usize) -> Lanes {
    if let Some(one) = same_address(index) {
        return Lanes::Same(n.with_src(vec![one]));
    }
    match contiguous(index, w) {
        Some(first) if vector_memory_element(n.dtype()) => {
            Lanes::Vector(UOp::new(Ops::LOAD, n.dtype().vec(w as u8), vec![first], n.arg().clone()))
        }
        _ => per_lane(n, std::slice::from_ref(index), w),
    }
}

fn store(n: &UOp, index: &Lanes, value: &Lanes, w: usize) -> Lanes {
    let dt = n.src()[1].dtype();
    match contiguous(index, w) {
        Some(first) if vector_memory_element(dt) => Lanes::Same(n.with_src(vec![first, value.vector(w)])),
        _ => per_lane(n, &[index.clone(), value.clone()], w),
    }
}

fn reduce(n: &UOp, srcs: &[Lanes], w: usize) -> Lanes {
    let Arg::Op(op) = n.arg() else { unreachable!("REDUCE without op") };
    // A REDUCE over the vector axis itself (from `reduce_lanes`): add the lanes up.
    if let [_, axis] = n.src() {
        if axis.op() == Ops::RANGE && axis.range_arg().1 == AxisType::Upcast && !srcs[1].is_same() {
            return Lanes::Same(
                (1..w).fold(srcs[0].lane(0), |acc, k| super::kernel_ops::reduce_step(*op, &acc, &srcs[0].lane(k))),
            );
        }
    }
    let ranges: Vec<UOp> = n.src()[1..].to_vec();
    if *op == Ops::ADD && n.dtype().is_float() && vector_element(n.dtype()) {
        let mut src = vec![srcs[0].vector(w)];
        src.extend(ranges);
        return Lanes::Vector(UOp::new(Ops::REDUCE, n.dtype().vec(w as u8), src, n.arg().clone()));
    }
    Lanes::Each((0..w).map(|k| reduce_over(n, srcs[0].lane(k), &ranges)).collect())
}
