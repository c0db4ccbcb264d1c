//! The rewrite engine: patterns (`UPat`) over nodes, rule tables (`PatternMatcher`) indexed
//! by op, and `graph_rewrite`, which runs a table over a graph to a fixed point with
//! memoization, bottom-up or top-down.
//!
//! API CONTRACT (stub; being implemented):
//! ```ignore
//! let pm = PatternMatcher::new(vec![
//!     rule(UPat::var("x") + UPat::cnst_int(0), |b| Some(b["x"].clone())),
//!     rule(UPat::op(Ops::MUL).src_any_order(vec![UPat::var("x"), UPat::cvar("c")]), |b| ...),
//! ]);
//! let out = graph_rewrite(&root, &pm, RewriteMode::BottomUp);
//! // with a mutable context:
//! let pm2: PatternMatcher<MyCtx> = PatternMatcher::new(vec![rule_ctx(pat, |ctx, b| ...)]);
//! let out = graph_rewrite_ctx(&root, &pm2, &mut ctx, RewriteMode::TopDown);
//! ```

use super::dtype::{ConstValue, DType};
use super::ops::Ops;
use super::uop::{Arg, UOp};

/// Named captures of a successful match. A name used twice in a pattern binds the same node.
pub struct Bindings {
    items: Vec<(&'static str, UOp)>,
}

impl Bindings {
    pub fn get(&self, name: &str) -> Option<&UOp> {
        self.items.iter().find(|(n, _)| *n == name).map(|(_, u)| u)
    }
}

impl std::ops::Index<&str> for Bindings {
    type Output = UOp;
    fn index(&self, name: &str) -> &UOp {
        self.get(name).unwrap_or_else(|| panic!("pattern has no capture named {name:?}"))
    }
}

/// How the sources of a node must match.
#[derive(Clone)]
pub enum SrcPat {
    /// Any sources.
    Any,
    /// Exactly these, in order.
    Exact(Vec<UPat>),
    /// These in any order (commutative matching).
    AnyOrder(Vec<UPat>),
}

/// A pattern over nodes.
#[derive(Clone)]
pub struct UPat {
    pub ops: Option<Vec<Ops>>,
    pub dtypes: Option<Vec<DType>>,
    pub arg: Option<Arg>,
    pub src: SrcPat,
    pub name: Option<&'static str>,
}

impl UPat {
    /// Matches any node.
    pub fn any() -> UPat {
        UPat { ops: None, dtypes: None, arg: None, src: SrcPat::Any, name: None }
    }
    /// Any node, captured as `name`.
    pub fn var(name: &'static str) -> UPat {
        UPat::any().named(name)
    }
    pub fn op(op: Ops) -> UPat {
        UPat { ops: Some(vec![op]), ..UPat::any() }
    }
    pub fn ops(ops: &[Ops]) -> UPat {
        UPat { ops: Some(ops.to_vec()), ..UPat::any() }
    }
    /// A CONST node captured as `name`.
    pub fn cvar(name: &'static str) -> UPat {
        UPat::op(Ops::CONST).named(name)
    }
    /// A CONST with exactly this value (any dtype).
    pub fn cnst(v: ConstValue) -> UPat {
        UPat { arg: Some(Arg::Const(v)), ..UPat::op(Ops::CONST) }
    }
    pub fn named(mut self, name: &'static str) -> UPat {
        self.name = Some(name);
        self
    }
    pub fn src(mut self, src: Vec<UPat>) -> UPat {
        self.src = SrcPat::Exact(src);
        self
    }
    pub fn src_any_order(mut self, src: Vec<UPat>) -> UPat {
        self.src = SrcPat::AnyOrder(src);
        self
    }
    pub fn dtype(mut self, dt: DType) -> UPat {
        self.dtypes = Some(vec![dt]);
        self
    }
    pub fn dtypes(mut self, dts: &[DType]) -> UPat {
        self.dtypes = Some(dts.to_vec());
        self
    }
    pub fn arg(mut self, arg: Arg) -> UPat {
        self.arg = Some(arg);
        self
    }
    /// Matches `node`, returning the captures.
    pub fn matches(&self, node: &UOp) -> Option<Bindings> {
        let _ = node;
        todo!()
    }
}

type RuleFn<C> = Box<dyn Fn(&mut C, &Bindings) -> Option<UOp> + Send + Sync>;

/// A table of rules `pattern -> Option<UOp>`, indexed by op.
pub struct PatternMatcher<C = ()> {
    rules: Vec<(UPat, RuleFn<C>)>,
}

/// A rule without context.
pub fn rule<C>(pat: UPat, f: impl Fn(&Bindings) -> Option<UOp> + Send + Sync + 'static) -> (UPat, RuleFn<C>) {
    (pat, Box::new(move |_c: &mut C, b: &Bindings| f(b)))
}

/// A rule that also sees a mutable context.
pub fn rule_ctx<C>(pat: UPat, f: impl Fn(&mut C, &Bindings) -> Option<UOp> + Send + Sync + 'static) -> (UPat, RuleFn<C>) {
    (pat, Box::new(f))
}

impl<C> PatternMatcher<C> {
    pub fn new(rules: Vec<(UPat, RuleFn<C>)>) -> Self {
        PatternMatcher { rules }
    }
    /// Appends the rules of another table.
    pub fn extend(mut self, other: PatternMatcher<C>) -> Self {
        self.rules.extend(other.rules);
        self
    }
    /// The first rule that matches `node` and returns `Some`.
    pub fn rewrite(&self, node: &UOp, ctx: &mut C) -> Option<UOp> {
        let _ = (node, ctx, &self.rules);
        todo!()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RewriteMode {
    /// Sources first, then the node.
    BottomUp,
    /// The node first (until no rule applies), then its sources.
    TopDown,
}

/// Runs `pm` over the graph under `root` to a fixed point.
pub fn graph_rewrite(root: &UOp, pm: &PatternMatcher<()>, mode: RewriteMode) -> UOp {
    graph_rewrite_ctx(root, pm, &mut (), mode)
}

/// Like [`graph_rewrite`] with a mutable context passed to every rule.
pub fn graph_rewrite_ctx<C>(root: &UOp, pm: &PatternMatcher<C>, ctx: &mut C, mode: RewriteMode) -> UOp {
    let _ = (pm, ctx, mode);
    root.clone() // TODO(helper)
}
