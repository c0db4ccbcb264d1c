//! Linearizer: a kernel AST (STOREs of values over RANGEs, with REDUCEs) becomes an ordered
//! program with explicit loops and accumulators.
//!
//! Every node is placed in the innermost loop among the ranges it depends on, so loop
//! invariants are hoisted. Output ranges nest in id order; the ranges of a REDUCE nest inside
//! the deepest loop its result depends on. Within one loop, nodes and nested loops are ordered
//! by their dependencies.
//!
//! The program contract (what renderers and the interpreter execute):
//! - `RANGE` opens a loop (index 0..end), `END(range)` closes it;
//! - a REDUCE becomes `DEFINE_REG acc`, `STORE(acc, identity)` before its loops,
//!   `STORE(acc, op(LOAD(acc, innermost range), value))` inside, and `LOAD(acc, END(outermost))`
//!   after them;
//! - everything else (DEFINE_GLOBAL, CONST, INDEX, LOAD, STORE, ALU, CAST) appears once, after
//!   its sources.

use crate::uop::{Arg, AxisType, DType, FxHashMap, FxHashSet, Ops, UOp};

/// Block a node lives in: `None` is the kernel's top level, `Some(range)` the body of that loop.
type Block = Option<UOp>;

struct Linearizer {
    /// Ranges each node depends on (not counting ranges closed by a REDUCE inside it).
    ranges: FxHashMap<UOp, Vec<UOp>>,
    parent: FxHashMap<UOp, Block>,
    depth: FxHashMap<UOp, usize>,
    /// REDUCEs whose loop nest starts / ends with each reduce range. Several REDUCEs share one
    /// loop nest when they have the same ranges (an UPCAST tile: one accumulator each).
    reduce_of_first: FxHashMap<UOp, Vec<UOp>>,
    reduce_of_last: FxHashMap<UOp, Vec<UOp>>,
    block: FxHashMap<UOp, Block>,
    children: FxHashMap<Block, Vec<UOp>>,
    nodes_in: FxHashMap<Block, Vec<UOp>>,
    order: FxHashMap<UOp, usize>,
    /// For each loop, the values defined outside it (in its parent block) that its body uses,
    /// in topological order: the loop must come after them.
    loop_uses: FxHashMap<UOp, Vec<UOp>>,
    // output
    prog: Vec<UOp>,
    emitted: FxHashSet<UOp>,
    map: FxHashMap<UOp, UOp>,
    accs: FxHashMap<UOp, UOp>,
    /// Accumulator lanes sharing a loop (a register tile) from which unrolled dot products
    /// accumulate as one FMA chain (the FMACHAIN opt, default `FMA_CHAIN`: 8 vectors of 16
    /// lanes keep two FMA units with 4-cycle latency busy).
    fma_chain_from: usize,
}

fn union_sorted(into: &mut Vec<UOp>, from: &[UOp]) {
    for r in from {
        if !into.contains(r) {
            into.push(r.clone());
        }
    }
}

impl Linearizer {
    fn deepest(&self, rs: &[UOp]) -> Block {
        rs.iter().max_by_key(|r| self.depth[*r]).cloned()
    }

    fn is_ancestor(&self, anc: &Block, mut b: Block) -> bool {
        loop {
            if &b == anc {
                return true;
            }
            match b {
                None => return false,
                Some(r) => b = self.parent[&r].clone(),
            }
        }
    }

    /// The child of `anc` on the way down to `b` (which must be strictly below `anc`).
    fn child_towards(&self, anc: &Block, b: &Block) -> UOp {
        let mut cur = b.clone().expect("child_towards: block is the root");
        loop {
            let p = self.parent[&cur].clone();
            if &p == anc {
                return cur;
            }
            cur = p.expect("child_towards: not an ancestor");
        }
    }

    fn emit_block(&mut self, b: Block) {
        #[derive(Clone, PartialEq, Eq, Hash)]
        enum Item {
            Node(UOp),
            Loop(UOp),
        }
        let mut items: Vec<Item> = Vec::new();
        let mut nodes = self.nodes_in.get(&b).cloned().unwrap_or_default();
        nodes.sort_by_key(|n| self.order[n]);
        items.extend(nodes.iter().cloned().map(Item::Node));
        let mut kids = self.children.get(&b).cloned().unwrap_or_default();
        kids.sort_by_key(|r| self.order[r]);
        items.extend(kids.iter().cloned().map(Item::Loop));

        // Dependencies between the items of this block (in topological order, so the program
        // is the same in every process).
        let mut deps: FxHashMap<Item, Vec<Item>> = FxHashMap::default();
        for kid in &kids {
            let used = self.loop_uses.get(kid).map(Vec::as_slice).unwrap_or(&[]);
            let entry = deps.entry(Item::Loop(kid.clone())).or_default();
            entry.extend(used.iter().cloned().map(Item::Node));
            // The loop's bound is read where the loop opens.
            let end = &kid.src()[0];
            if end.op() != Ops::RANGE && self.block[end] == b {
                entry.push(Item::Node(end.clone()));
            }
        }
        for n in &nodes {
            let mut d: Vec<Item> = n
                .src()
                .iter()
                .filter(|s| s.op() != Ops::RANGE && self.block[*s] == b)
                .map(|s| Item::Node(s.clone()))
                .collect();
            if n.op() == Ops::REDUCE {
                let first = n.src()[1..].iter().min_by_key(|r| self.depth[*r]).cloned().expect("REDUCE without ranges");
                d.push(Item::Loop(first));
                let v = &n.src()[0];
                if v.op() != Ops::RANGE && self.block[v] == b {
                    d.push(Item::Node(v.clone()));
                }
            }
            deps.entry(Item::Node(n.clone())).or_default().extend(d);
        }

        // Depth-first topological order, following the base order.
        let mut done: FxHashSet<Item> = FxHashSet::default();
        let mut ordered: Vec<Item> = Vec::new();
        for it in &items {
            let mut stack = vec![(it.clone(), false)];
            while let Some((x, expanded)) = stack.pop() {
                if expanded {
                    if done.insert(x.clone()) {
                        ordered.push(x);
                    }
                    continue;
                }
                if done.contains(&x) {
                    continue;
                }
                stack.push((x.clone(), true));
                for d in deps.get(&x).into_iter().flatten().rev() {
                    if !done.contains(d) {
                        stack.push((d.clone(), false));
                    }
                }
            }
        }
        for it in ordered {
            match it {
                Item::Node(n) => self.emit_node(&n),
                Item::Loop(r) => self.emit_loop(&r),
            }
        }
    }

    fn push(&mut self, u: UOp) {
        self.emitted.insert(u.clone());
        self.prog.push(u);
    }

    fn mapped(&self, n: &UOp) -> UOp {
        self.map.get(n).cloned().unwrap_or_else(|| {
            panic!(
                "linearize: {:?} {:?} (block {:?}) used before emitted",
                n.op(),
                n.arg(),
                self.block.get(n).map(|b| b.as_ref().map(|r| r.range_arg()))
            )
        })
    }

    fn emit_node(&mut self, n: &UOp) {
        if n.op() == Ops::REDUCE {
            let top = n.src()[1..].iter().min_by_key(|r| self.depth[*r]).expect("REDUCE without ranges");
            let end = UOp::new(Ops::END, DType::VOID, vec![self.mapped(top)], Arg::None);
            let load = UOp::new(Ops::LOAD, n.dtype(), vec![self.accs[n].clone(), end], Arg::None);
            self.push(load.clone());
            self.map.insert(n.clone(), load);
            return;
        }
        let src: Vec<UOp> = n.src().iter().map(|s| self.mapped(s)).collect();
        let new = if src.iter().zip(n.src()).all(|(a, b)| a == b) { n.clone() } else { n.with_src(src) };
        self.push(new.clone());
        self.map.insert(n.clone(), new);
    }

    fn emit_loop(&mut self, r: &UOp) {
        for red in self.reduce_of_first.get(r).cloned().unwrap_or_default() {
            let id = self.accs.len() as i64;
            let acc = UOp::new(Ops::DEFINE_REG, red.dtype(), vec![], Arg::Int(id));
            let Arg::Op(op) = red.arg() else { panic!("REDUCE without op") };
            let identity = UOp::cnst(red.dtype().base(), op.reduce_identity(red.dtype().base()));
            let init = if red.dtype().count > 1 {
                let lanes = vec![identity; red.dtype().count as usize];
                UOp::new(Ops::VECTORIZE, red.dtype(), lanes, Arg::None)
            } else {
                identity
            };
            self.push(acc.clone());
            if init.op() == Ops::VECTORIZE {
                self.push(init.src()[0].clone());
            }
            self.push(init.clone());
            self.push(UOp::new(Ops::STORE, DType::VOID, vec![acc.clone(), init], Arg::None));
            self.accs.insert(red, acc);
        }
        let rr = r.with_src(vec![self.mapped(&r.src()[0])]);
        self.push(rr.clone());
        self.map.insert(r.clone(), rr.clone());
        self.emit_block(Some(r.clone()));
        let last = self.reduce_of_last.get(r).cloned().unwrap_or_default();
        // Enough accumulators in this loop to hide an FMA chain's latency (see `accumulate`).
        let lanes: usize = last.iter().map(|r| r.dtype().count as usize).sum();
        let reroot = lanes >= self.fma_chain_from;
        for red in last {
            let acc = self.accs[&red].clone();
            let Arg::Op(op) = red.arg() else { unreachable!() };
            let old = UOp::new(Ops::LOAD, red.dtype(), vec![acc.clone(), rr.clone()], Arg::None);
            let v = self.mapped(&red.src()[0]);
            let new = super::kernel_ops::accumulate(*op, &old, &v, reroot);
            self.push(old.clone());
            for n in new.toposort() {
                if n != old && n != v && !self.map.contains_key(&n) && !self.emitted.contains(&n) {
                    self.push(n);
                }
            }
            self.push(UOp::new(Ops::STORE, DType::VOID, vec![acc, new], Arg::None));
        }
        self.push(UOp::new(Ops::END, DType::VOID, vec![rr], Arg::None));
    }
}

/// The ranges each node depends on. REDUCEs over the same ranges share one loop nest, so each
/// of them counts as depending on everything any of them depends on (iterated to a fixed
/// point, since such a REDUCE may sit inside another).
fn range_sets(topo: &[UOp]) -> FxHashMap<UOp, Vec<UOp>> {
    let mut extra: FxHashMap<Vec<UOp>, Vec<UOp>> = FxHashMap::default();
    loop {
        let mut ranges: FxHashMap<UOp, Vec<UOp>> = FxHashMap::default();
        for n in topo {
            let mut rs: Vec<UOp> = Vec::new();
            for s in n.src() {
                union_sorted(&mut rs, &ranges[s]);
            }
            match n.op() {
                Ops::RANGE => rs.push(n.clone()),
                Ops::REDUCE => {
                    rs.retain(|r| !n.src()[1..].contains(r));
                    if let Some(e) = extra.get(&n.src()[1..]) {
                        union_sorted(&mut rs, e);
                    }
                }
                _ => {}
            }
            ranges.insert(n.clone(), rs);
        }
        let mut changed = false;
        for n in topo.iter().filter(|n| n.op() == Ops::REDUCE) {
            let key = n.src()[1..].to_vec();
            let e = extra.entry(key).or_default();
            let before = e.len();
            union_sorted(e, &ranges[n]);
            changed |= e.len() != before;
        }
        if !changed {
            return ranges;
        }
    }
}

/// Turns a kernel AST (a SINK of STOREs) into a linear program.
pub fn linearize(sink: &UOp, fma_chain_from: usize) -> Vec<UOp> {
    let topo = sink.toposort();
    let mut lin = Linearizer {
        ranges: FxHashMap::default(),
        parent: FxHashMap::default(),
        depth: FxHashMap::default(),
        reduce_of_first: FxHashMap::default(),
        reduce_of_last: FxHashMap::default(),
        block: FxHashMap::default(),
        children: FxHashMap::default(),
        nodes_in: FxHashMap::default(),
        order: FxHashMap::default(),
        loop_uses: FxHashMap::default(),
        prog: Vec::new(),
        emitted: FxHashSet::default(),
        map: FxHashMap::default(),
        accs: FxHashMap::default(),
        fma_chain_from,
    };
    for (i, n) in topo.iter().enumerate() {
        lin.order.insert(n.clone(), i);
    }
    lin.ranges = range_sets(&topo);
    // Reduce ranges: owned by exactly one REDUCE.
    let mut owned: FxHashSet<UOp> = FxHashSet::default();
    for n in topo.iter().filter(|n| n.op() == Ops::REDUCE) {
        owned.extend(n.src()[1..].iter().cloned());
    }
    // Output ranges form one chain, in id order.
    let mut outs: Vec<UOp> = topo.iter().filter(|n| n.op() == Ops::RANGE && !owned.contains(*n)).cloned().collect();
    // A THREAD axis is the outermost loop: each thread runs the whole body for its index.
    outs.sort_by_key(|r| (r.range_arg().1 != AxisType::Thread, r.range_arg().0));
    let mut prev: Block = None;
    for (d, r) in outs.iter().enumerate() {
        lin.parent.insert(r.clone(), prev.clone());
        lin.depth.insert(r.clone(), d + 1);
        prev = Some(r.clone());
    }
    // Reduce chains, outermost reduce first (reverse topological order).
    for n in topo.iter().rev().filter(|n| n.op() == Ops::REDUCE) {
        let mut chain: Vec<UOp> = n.src()[1..].to_vec();
        chain.sort_by_key(|r| r.range_arg().0);
        if lin.parent.contains_key(&chain[0]) {
            // Another REDUCE over the same ranges already placed this loop nest.
            assert!(
                lin.reduce_of_first.get(&chain[0]).is_some_and(|rs| rs.iter().any(|o| o.src()[1..] == n.src()[1..])),
                "linearize: range {:?} is reduced by REDUCEs over different ranges",
                chain[0].range_arg()
            );
        } else {
            let mut p = lin.deepest(&lin.ranges[n]);
            let mut d = p.as_ref().map(|r| lin.depth[r]).unwrap_or(0);
            for r in &chain {
                d += 1;
                lin.parent.insert(r.clone(), p.clone());
                lin.depth.insert(r.clone(), d);
                p = Some(r.clone());
            }
        }
        lin.reduce_of_first.entry(chain[0].clone()).or_default().push(n.clone());
        lin.reduce_of_last.entry(chain[chain.len() - 1].clone()).or_default().push(n.clone());
    }
    for n in &topo {
        if n.op() == Ops::SINK {
            continue;
        }
        if n.op() == Ops::RANGE {
            let p = lin.parent[n].clone();
            lin.children.entry(p).or_default().push(n.clone());
            lin.block.insert(n.clone(), Some(n.clone()));
            continue;
        }
        let b = lin.deepest(&lin.ranges[n]);
        lin.nodes_in.entry(b.clone()).or_default().push(n.clone());
        lin.block.insert(n.clone(), b);
    }
    lin.loop_uses = loop_uses(&lin, &topo);
    lin.emit_block(None);
    let prog = drop_dead_values(lin.prog);
    if let Err(e) = verify_program(&prog) {
        panic!("linearize: the program breaks its contract: {e}");
    }
    prog
}

/// Which values each loop's body uses from the block around the loop (see `Linearizer::loop_uses`).
fn loop_uses(lin: &Linearizer, topo: &[UOp]) -> FxHashMap<UOp, Vec<UOp>> {
    let mut out: FxHashMap<UOp, Vec<UOp>> = FxHashMap::default();
    let mut seen: FxHashSet<(UOp, UOp)> = FxHashSet::default();
    let mut add = |user_block: &Block, s: &UOp| {
        if s.op() == Ops::RANGE {
            return;
        }
        let sb = &lin.block[s];
        if sb != user_block && lin.is_ancestor(sb, user_block.clone()) {
            let child = lin.child_towards(sb, user_block);
            if seen.insert((child.clone(), s.clone())) {
                out.entry(child).or_default().push(s.clone());
            }
        }
    };
    for n in topo.iter().filter(|n| n.op() != Ops::SINK) {
        if n.op() == Ops::RANGE {
            // A loop's bound is used in the block that opens it.
            add(&lin.parent[n], &n.src()[0]);
            continue;
        }
        let nb = lin.block[n].clone();
        for s in n.src() {
            add(&nb, s);
        }
        if n.op() == Ops::REDUCE {
            // The accumulate step runs in the innermost reduce loop and uses the value.
            let last = n.src()[1..].iter().max_by_key(|r| lin.depth[*r]).cloned();
            add(&last, &n.src()[0]);
        }
    }
    out
}

/// Removes values nothing uses (an unrolled dot product's chain that the accumulate step
/// re-rooted on the accumulator, for one): walking backwards, a pure value is kept only when a
/// kept node uses it.
fn drop_dead_values(prog: Vec<UOp>) -> Vec<UOp> {
    let pure = |u: &UOp| {
        u.op().is_alu() || matches!(u.op(), Ops::CAST | Ops::BITCAST | Ops::VECTORIZE | Ops::GEP | Ops::CONST)
    };
    let mut live: FxHashSet<UOp> = FxHashSet::default();
    let mut keep = vec![false; prog.len()];
    for (i, u) in prog.iter().enumerate().rev() {
        if !pure(u) || live.contains(u) {
            keep[i] = true;
            live.extend(u.src().iter().cloned());
        }
    }
    prog.into_iter().zip(keep).filter_map(|(u, k)| k.then_some(u)).collect()
}

/// Checks the program contract: every value is defined before it is used, in its own block or
/// one around it (a loop body or `if` that has closed no longer names its values); loops and
/// `if`s are balanced and each `END` closes the innermost open loop. Cheap (one pass), so it runs
/// on every kernel: a violation would otherwise be a C compile error or a wrong result.
pub fn verify_program(prog: &[UOp]) -> Result<(), String> {
    // Values visible now, and per open block what it defined and its opener.
    let mut visible: FxHashSet<UOp> = FxHashSet::default();
    let mut blocks: Vec<(Option<UOp>, Vec<UOp>)> = vec![(None, Vec::new())];
    for (i, u) in prog.iter().enumerate() {
        for s in u.src() {
            // END refers to its (already closed or closing) loop; LOAD of an accumulator after
            // the loop refers to the END.
            let ok = visible.contains(s) || (u.op() == Ops::END && s.op() == Ops::RANGE) || s.op() == Ops::END;
            if !ok {
                return Err(format!(
                    "step {i} ({:?}) uses a {:?} that is not defined in an open block",
                    u.op(),
                    s.op()
                ));
            }
        }
        match u.op() {
            Ops::RANGE | Ops::IF => {
                blocks.push((Some(u.clone()), Vec::new()));
                if u.op() == Ops::RANGE {
                    visible.insert(u.clone());
                    blocks.last_mut().expect("just pushed").1.push(u.clone());
                }
                continue;
            }
            Ops::END | Ops::ENDIF => {
                let (opener, defined) = blocks
                    .pop()
                    .filter(|_| !blocks.is_empty())
                    .ok_or(format!("step {i}: {:?} with no open block", u.op()))?;
                let opener = opener.ok_or(format!("step {i}: {:?} closes the kernel", u.op()))?;
                let matches = match u.op() {
                    Ops::END => opener.op() == Ops::RANGE && u.src().first() == Some(&opener),
                    _ => opener.op() == Ops::IF,
                };
                if !matches {
                    return Err(format!("step {i}: {:?} does not close the innermost open {:?}", u.op(), opener.op()));
                }
                for d in defined {
                    visible.remove(&d);
                }
                if blocks.is_empty() {
                    return Err(format!("step {i}: unbalanced {:?}", u.op()));
                }
                visible.insert(u.clone());
                continue;
            }
            _ => {}
        }
        if visible.insert(u.clone()) {
            blocks.last_mut().expect("the kernel block").1.push(u.clone());
        }
    }
    if blocks.len() != 1 {
        return Err(format!("{} loop(s) or if(s) never closed", blocks.len() - 1));
    }
    Ok(())
}
