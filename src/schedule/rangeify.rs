//! Rangeify: turn the tensor graph under one materialized node into a kernel AST. Movement
//! ops never copy: they become arithmetic on the loop indices (then simplified symbolically).
//! PAD becomes a validity condition that gates loads; REDUCE_AXIS opens new reduce ranges.

use crate::runtime::{buffer_of, Buffer};
use crate::uop::dim::{dim_pairs, strip_binds};
use crate::uop::{Arg, AxisType, ConstValue, DType, Dim, FxHashMap, Ops, UOp};
use std::sync::Arc;

pub(crate) struct Rangeify<'a> {
    /// Materialized nodes (other kernels' outputs) and their buffers.
    realized: &'a FxHashMap<UOp, Arc<Buffer>>,
    /// Buffers this kernel uses, in DEFINE_GLOBAL order (output first).
    pub bufs: Vec<Arc<Buffer>>,
    /// Graph nodes whose memory this kernel reads (materialized nodes and BUFFER leaves).
    pub reads: Vec<UOp>,
    memo: FxHashMap<(UOp, Vec<UOp>, UOp), UOp>,
    next_range: u32,
    idx_dt: DType,
    /// Values of the variables bound in this kernel's graph (BINDs stripped from its AST).
    pub var_vals: Vec<(Arc<str>, i64)>,
}

/// Index dtype for a graph: i32 unless some tensor has more elements than i32 can count.
pub(crate) fn index_dtype(max_numel: usize) -> DType {
    if max_numel < i32::MAX as usize {
        DType::I32
    } else {
        DType::I64
    }
}

/// Maps an index over `new` (a reshape's output shape) to an index over `old` (its input).
/// Size-1 axes are dropped, and axes are grouped where the running products agree, so only
/// axes that really merge or split get div/mod arithmetic.
pub(crate) fn reshape_index(old: &[usize], new: &[usize], idx: &[UOp], dt: DType) -> Vec<UOp> {
    let zero = UOp::int(dt, 0);
    let mut out = vec![zero; old.len()];
    if old.contains(&0) || new.contains(&0) {
        // No element exists: the index is never used.
        return out;
    }
    let nn: Vec<usize> = (0..new.len()).filter(|&i| new[i] != 1).collect();
    let on: Vec<usize> = (0..old.len()).filter(|&i| old[i] != 1).collect();
    let (mut i, mut j) = (0, 0);
    while i < nn.len() && j < on.len() {
        let (gi, gj) = (i, j);
        let (mut pn, mut po) = (new[nn[i]], old[on[j]]);
        i += 1;
        j += 1;
        while pn != po {
            if pn < po {
                pn *= new[nn[i]];
                i += 1;
            } else {
                po *= old[on[j]];
                j += 1;
            }
        }
        if i - gi == 1 && j - gj == 1 {
            out[on[gj]] = idx[nn[gi]].clone();
            continue;
        }
        let mut flat = UOp::int(dt, 0);
        for k in gi..i {
            let stride: usize = nn[k + 1..i].iter().map(|&a| new[a]).product();
            flat = &flat + &(&idx[nn[k]] * stride as i64);
        }
        for k in gj..j {
            let stride: usize = on[k + 1..j].iter().map(|&a| old[a]).product();
            let mut v = if stride > 1 { &flat / stride as i64 } else { flat.clone() };
            if k != gj {
                v = &v % old[on[k]] as i64;
            }
            out[on[k]] = v;
        }
    }
    out
}

/// Row-major linear index of `idx` in `shape`.
pub(crate) fn linear_index(shape: &[usize], idx: &[UOp], dt: DType) -> UOp {
    let mut acc = UOp::int(dt, 0);
    let mut stride = 1i64;
    for (d, i) in shape.iter().zip(idx).rev() {
        if *d != 1 {
            acc = &acc + &(i * stride);
        }
        stride *= *d as i64;
    }
    acc
}

impl<'a> Rangeify<'a> {
    pub(crate) fn new(realized: &'a FxHashMap<UOp, Arc<Buffer>>, out: Arc<Buffer>, idx_dt: DType) -> Self {
        Rangeify {
            realized,
            bufs: vec![out],
            reads: Vec::new(),
            memo: FxHashMap::default(),
            next_range: 0,
            idx_dt,
            var_vals: Vec::new(),
        }
    }

    fn buffer_param(&mut self, b: &Arc<Buffer>) -> UOp {
        let k = match self.bufs.iter().position(|x| Arc::ptr_eq(x, b)) {
            Some(k) => k,
            None => {
                self.bufs.push(b.clone());
                self.bufs.len() - 1
            }
        };
        UOp::new(Ops::DEFINE_GLOBAL, crate::uop::BufferObj::dtype(&**b).ptr(), vec![], Arg::Int(k as i64))
    }

    fn load(&mut self, b: &Arc<Buffer>, index: UOp, gate: &UOp) -> UOp {
        let dt = crate::uop::BufferObj::dtype(&**b);
        let param = self.buffer_param(b);
        let mut src = vec![param, index];
        if gate.const_value() != Some(ConstValue::Bool(true)) {
            src.push(gate.clone());
        }
        let addr = UOp::new(Ops::INDEX, dt, src, Arg::None);
        UOp::new(Ops::LOAD, dt, vec![addr], Arg::None)
    }

    /// The kernel AST storing `root` (computed from its sources) into buffer 0.
    pub(crate) fn kernel(&mut self, root: &UOp) -> UOp {
        // A symbolic shape is stored in the layout of its largest value; its loops run to the
        // symbolic lengths. An assign into a window (`Tensor::assign_window`) loops over the
        // window only and stores at the window's place in the buffer.
        let shape = root.shape().to_vec();
        let dt = self.idx_dt;
        let window = (root.op() == Ops::ASSIGN).then(|| root.src().get(2)).flatten();
        let looped = window.unwrap_or(root).sym_shape();
        let idx: Vec<UOp> = looped
            .iter()
            .enumerate()
            .map(|(i, d)| match d {
                Dim::Const(1) => UOp::int(dt, 0),
                Dim::Const(s) => UOp::range(UOp::int(dt, *s as i64), i as u32, AxisType::Global),
                Dim::Sym(_) => UOp::range(self.dim_index(d), i as u32, AxisType::Global),
            })
            .collect();
        self.next_range = shape.len() as u32;
        let value = if matches!(root.op(), Ops::CONTIGUOUS | Ops::ASSIGN) {
            // The stored value is the source (which may itself be materialized already).
            self.value(&root.src()[if root.op() == Ops::ASSIGN { 1 } else { 0 }], &idx, &UOp::bool(true))
        } else {
            self.compute(root, &idx, &UOp::bool(true))
        };
        let stored_at = match window {
            Some(w) => {
                // The window is of the target as it was before (an earlier assign not yet
                // run, perhaps): that write comes first.
                if self.realized.contains_key(&w.src()[0]) && !self.reads.contains(&w.src()[0]) {
                    self.reads.push(w.src()[0].clone());
                }
                let begins: Vec<Dim> = dim_pairs(w.arg()).into_iter().map(|(b, _)| b).collect();
                idx.iter()
                    .zip(&begins)
                    .map(|(i, b)| if *b == Dim::Const(0) { i.clone() } else { i + &self.dim_index(b) })
                    .collect()
            }
            None => idx,
        };
        let out = self.buffer_param(&self.bufs[0].clone());
        let addr = UOp::new(Ops::INDEX, root.dtype(), vec![out, linear_index(&shape, &stored_at, dt)], Arg::None);
        let store = UOp::new(Ops::STORE, DType::VOID, vec![addr, value], Arg::None);
        UOp::new(Ops::SINK, DType::VOID, vec![store], Arg::None)
    }

    /// The scalar value of node `n` at index `idx`, reading memory only where `gate` holds.
    fn value(&mut self, n: &UOp, idx: &[UOp], gate: &UOp) -> UOp {
        if let Some(b) = self.realized.get(n) {
            let b = b.clone();
            if !self.reads.contains(n) {
                self.reads.push(n.clone());
            }
            let index = linear_index(n.shape(), idx, self.idx_dt);
            return self.load(&b, index, gate);
        }
        self.compute(n, idx, gate)
    }

    /// A dimension as kernel index math: its BINDs stripped into `var_vals`.
    fn dim_index(&mut self, d: &Dim) -> UOp {
        strip_binds(&d.uop(), &mut self.var_vals).cast(self.idx_dt)
    }

    /// SHRINK or PAD with symbolic offsets: the index shifts by a variable amount, and a PAD's
    /// validity gate compares against variable bounds (its lengths are numbers).
    fn symbolic_window(&mut self, n: &UOp, idx: &[UOp], gate: &UOp) -> UOp {
        let pairs = dim_pairs(n.arg());
        let ss = n.src()[0].sym_shape();
        if n.op() == Ops::SHRINK {
            let new_idx: Vec<UOp> = idx.iter().zip(&pairs).map(|(i, (b, _))| i + &self.dim_index(b)).collect();
            return self.value(&n.src()[0], &new_idx, gate);
        }
        let mut valid = UOp::bool(true);
        let mut new_idx = Vec::with_capacity(idx.len());
        for ((i, (b, _)), s) in idx.iter().zip(&pairs).zip(&ss) {
            let (b, s) = (self.dim_index(b), self.dim_index(s));
            // b <= i < b + s
            valid = valid.and(&(&b - 1).lt(i)).and(&i.lt(&(&b + &s)));
            new_idx.push(i - &b);
        }
        let inner_gate =
            if gate.const_value() == Some(ConstValue::Bool(true)) { valid.clone() } else { gate.and(&valid) };
        let v = self.value(&n.src()[0], &new_idx, &inner_gate);
        valid.where_(&v, &UOp::cnst(n.dtype(), ConstValue::Int(0)))
    }

    /// The source index of a reshape between shapes with symbolic lengths. Each symbolic length
    /// must map to itself (axes of length 1 come and go, and the numbers between symbolic
    /// lengths regroup as in `reshape_index`); merging a symbolic axis with others panics.
    fn symbolic_reshape_index(&mut self, old: &[Dim], new: &[Dim], idx: &[UOp]) -> Vec<UOp> {
        let dt = self.idx_dt;
        let mut out = vec![UOp::int(dt, 0); old.len()];
        let on: Vec<usize> = (0..old.len()).filter(|&i| old[i] != Dim::Const(1)).collect();
        let nn: Vec<usize> = (0..new.len()).filter(|&i| new[i] != Dim::Const(1)).collect();
        // Segments of numbers between symbolic lengths, matched in order.
        let split = |axes: &[usize], dims: &[Dim]| -> Vec<Vec<usize>> {
            let mut segs = vec![Vec::new()];
            for &a in axes {
                if dims[a].as_const().is_none() {
                    segs.push(vec![a]);
                    segs.push(Vec::new());
                } else {
                    segs.last_mut().expect("a segment").push(a);
                }
            }
            segs
        };
        let (os, ns) = (split(&on, old), split(&nn, new));
        let fail = || panic!("reshape: {old:?} to {new:?} merges or splits a symbolic length with other axes");
        if os.len() != ns.len() {
            fail();
        }
        for (o, n) in os.iter().zip(&ns) {
            let is_sym = |seg: &[usize], dims: &[Dim]| seg.len() == 1 && dims[seg[0]].as_const().is_none();
            if is_sym(o, old) || is_sym(n, new) {
                if !(is_sym(o, old) && is_sym(n, new) && old[o[0]] == new[n[0]]) {
                    fail();
                }
                out[o[0]] = idx[n[0]].clone();
                continue;
            }
            let oc: Vec<usize> = o.iter().map(|&a| old[a].max()).collect();
            let nc: Vec<usize> = n.iter().map(|&a| new[a].max()).collect();
            let sub_idx: Vec<UOp> = n.iter().map(|&a| idx[a].clone()).collect();
            for (k, v) in o.iter().zip(reshape_index(&oc, &nc, &sub_idx, dt)) {
                out[*k] = v;
            }
        }
        out
    }

    fn compute(&mut self, n: &UOp, idx: &[UOp], gate: &UOp) -> UOp {
        let key = (n.clone(), idx.to_vec(), gate.clone());
        if let Some(v) = self.memo.get(&key) {
            return v.clone();
        }
        let v = self.compute_uncached(n, idx, gate);
        self.memo.insert(key, v.clone());
        v
    }

    fn compute_uncached(&mut self, n: &UOp, idx: &[UOp], gate: &UOp) -> UOp {
        let dt = self.idx_dt;
        let src_shape = || n.src()[0].shape().to_vec();
        match n.op() {
            Ops::BUFFER => {
                if !self.reads.contains(n) {
                    self.reads.push(n.clone());
                }
                let b = buffer_of(n.buffer().expect("BUFFER without buffer"));
                self.load(&b, idx[0].clone(), gate)
            }
            Ops::ASSIGN => {
                // An assign scheduled by an earlier realize: its value is in the target buffer.
                let b = super::realized::existing_buffer(n).expect("rangeify: ASSIGN not scheduled");
                if !self.reads.contains(n) {
                    self.reads.push(n.clone());
                }
                let index = linear_index(n.shape(), idx, self.idx_dt);
                self.load(&b, index, gate)
            }
            Ops::CONST => UOp::cnst(n.dtype(), n.const_value().expect("CONST without value")),
            Ops::IOTA => idx[0].cast(n.dtype()),
            Ops::CONTIGUOUS | Ops::DETACH => self.value(&n.src()[0], idx, gate),
            Ops::CAST | Ops::BITCAST => {
                let s = self.value(&n.src()[0], idx, gate);
                UOp::new(n.op(), n.dtype(), vec![s], Arg::None)
            }
            op if op.is_alu() => {
                let src: Vec<UOp> = n.src().iter().map(|s| self.value(s, idx, gate)).collect();
                UOp::new(op, n.dtype(), src, Arg::None)
            }
            Ops::RESHAPE if n.has_symbolic_shape() || n.src()[0].has_symbolic_shape() => {
                let new_idx = self.symbolic_reshape_index(&n.src()[0].sym_shape(), &n.sym_shape(), idx);
                self.value(&n.src()[0], &new_idx, gate)
            }
            Ops::RESHAPE => {
                let new_idx = reshape_index(&src_shape(), n.shape(), idx, dt);
                self.value(&n.src()[0], &new_idx, gate)
            }
            Ops::PERMUTE => {
                let Arg::Axes(order) = n.arg() else { unreachable!() };
                let mut new_idx = vec![UOp::int(dt, 0); order.len()];
                for (i, &o) in order.iter().enumerate() {
                    new_idx[o] = idx[i].clone();
                }
                self.value(&n.src()[0], &new_idx, gate)
            }
            Ops::EXPAND => {
                let ss = n.src()[0].sym_shape();
                let new_idx: Vec<UOp> = idx
                    .iter()
                    .zip(&ss)
                    .map(|(i, s)| if *s == Dim::Const(1) { UOp::int(dt, 0) } else { i.clone() })
                    .collect();
                self.value(&n.src()[0], &new_idx, gate)
            }
            Ops::SHRINK | Ops::PAD if matches!(n.arg(), Arg::DimPairs(_)) || n.src()[0].has_symbolic_shape() => {
                self.symbolic_window(n, idx, gate)
            }
            Ops::SHRINK => {
                let Arg::Pairs(p) = n.arg() else { unreachable!() };
                let new_idx: Vec<UOp> =
                    idx.iter().zip(p).map(|(i, (b, _))| if *b == 0 { i.clone() } else { i + *b as i64 }).collect();
                self.value(&n.src()[0], &new_idx, gate)
            }
            Ops::FLIP => {
                let Arg::Axes(axes) = n.arg() else { unreachable!() };
                let ss = n.src()[0].sym_shape();
                let mut new_idx = idx.to_vec();
                for &a in axes {
                    let last = match &ss[a] {
                        Dim::Const(s) => UOp::int(dt, *s as i64 - 1),
                        d => &self.dim_index(d) - 1,
                    };
                    new_idx[a] = &last - &idx[a];
                }
                self.value(&n.src()[0], &new_idx, gate)
            }
            Ops::PAD => {
                let Arg::Pairs(p) = n.arg() else { unreachable!() };
                let ss = src_shape();
                let mut valid = UOp::bool(true);
                let mut new_idx = Vec::with_capacity(idx.len());
                for ((i, (b, _)), &s) in idx.iter().zip(p).zip(&ss) {
                    if *b == 0 && i.vmax() < s as i64 {
                        new_idx.push(i.clone());
                        continue;
                    }
                    let shifted = if *b == 0 { i.clone() } else { i - *b as i64 };
                    // b <= i < b + s, written as two `<` comparisons.
                    let lo = UOp::int(dt, *b as i64 - 1).lt(i);
                    let hi = i.lt(&UOp::int(dt, (*b + s) as i64));
                    valid = valid.and(&lo).and(&hi);
                    new_idx.push(shifted);
                }
                let inner_gate =
                    if gate.const_value() == Some(ConstValue::Bool(true)) { valid.clone() } else { gate.and(&valid) };
                let v = self.value(&n.src()[0], &new_idx, &inner_gate);
                valid.where_(&v, &UOp::cnst(n.dtype(), ConstValue::Int(0)))
            }
            Ops::REDUCE_AXIS => {
                let Arg::Reduce(op, axes) = n.arg() else { unreachable!() };
                let ss = src_shape();
                let sym = n.src()[0].sym_shape();
                if axes.iter().any(|&a| ss[a] == 0) {
                    // A reduce over nothing is its identity.
                    return UOp::cnst(n.dtype(), op.reduce_identity(n.dtype()));
                }
                let mut new_idx = idx.to_vec();
                let mut ranges = Vec::new();
                for &a in axes {
                    if sym[a] == Dim::Const(1) {
                        new_idx[a] = UOp::int(dt, 0);
                        continue;
                    }
                    let end = match &sym[a] {
                        Dim::Const(s) => UOp::int(dt, *s as i64),
                        d => self.dim_index(d),
                    };
                    let r = UOp::range(end, self.next_range, AxisType::Reduce);
                    self.next_range += 1;
                    new_idx[a] = r.clone();
                    ranges.push(r);
                }
                let v = self.value(&n.src()[0], &new_idx, gate);
                if ranges.is_empty() {
                    // A float sum starts from +0.0 (as in PyTorch), so even a sum of one -0.0
                    // is +0.0; `x + 0.0` keeps that (the simplifier folds only `x + -0.0`).
                    if *op == Ops::ADD && n.dtype().is_float() {
                        return &v + &UOp::cnst(n.dtype(), ConstValue::Float(0.0));
                    }
                    return v;
                }
                let mut src = vec![v];
                src.extend(ranges);
                UOp::new(Ops::REDUCE, n.dtype(), src, Arg::Op(*op))
            }
            op => panic!("rangeify: {op:?} cannot appear inside a kernel"),
        }
    }
}
