//! TinyJit: capture the kernels a function launches and replay them.
//!
//! Call 1 runs the function normally. Call 2 runs it again while the engine records every step
//! it executes (kernel launches and copies, with their buffers). Call 3 runs it once more,
//! recording again, and checks that it launched the same kernels on buffers playing the same
//! roles: a Rust value baked into a kernel as a constant, or a branch, that changed between
//! calls would otherwise be replayed frozen, so that is an error saying why. From call 4 on the
//! front end and the scheduler are skipped: the recorded steps replay with the new inputs'
//! buffers in place of the captured ones.
//!
//! A replay runs each run of consecutive kernels on one device as a device graph where the
//! device has them (`runtime/graph.rs`; the CPU's is a launch list resolved once, run under one
//! lock): only the pointers of the call's inputs and fresh outputs and its variables' values are
//! patched. Copies, devices without graphs, `JIT_GRAPH=0`, an enclosing capture and watched
//! launches (DEBUG=2, `record_kernels`, VIZ) replay step by step through the engine.
//!
//! What replays give back:
//! - outputs computed into buffers the capture allocated get fresh buffers on every replay,
//!   so a result kept from an earlier call is never overwritten by a later one;
//! - an output that is an input (or a reshape of one) is the current call's input;
//! - outputs that are state (an assigned parameter) are that state's buffer.
//!
//! Captures nest: a TinyJit called inside another one's capture runs, captures or replays as
//! usual, and the outer capture records its kernels too. A panic in the function closes the
//! capture (nothing is left behind; the next call captures again). Reading tensor data inside a
//! capture is an error, even if the function ignores it.
//!
//! Not caught: a value that changes only after call 3, and Rust side effects of the function
//! (they run on calls 1–3 only).

use crate::engine::capture::{self, Recorded};
use crate::engine::Step;
use crate::error::{Error, Result};
use crate::runtime::graph::{DeviceGraph, GraphLaunch};
use crate::runtime::Buffer;
use crate::schedule::existing_buffer;
use crate::tensor::{buffer_view_dims, Tensor};
use crate::uop::dim::{binding, rebind};
use crate::uop::{BufferObj, DType, Dim, Ops, Variable};
use std::sync::Arc;

/// What a call's inputs must look like to replay.
#[derive(Clone, Debug, PartialEq)]
struct InputSpec {
    shape: Vec<usize>,
    dtype: DType,
    device: String,
    /// A bound variable passed to `call_vars` (compared by name and range, not value).
    var: Option<Variable>,
}

/// The variable and value of a `Variable::bind` result.
fn binding_of(d: &Dim) -> Result<(Variable, i64)> {
    binding(d)
        .ok_or_else(|| Error::Jit(format!("TinyJit::call_vars: {d:?} is not a bound variable (use Variable::bind)")))
}

/// An output's layout shape, and its symbolic lengths when it has some (rebound to each
/// replay's values).
type OutputShape = (Vec<usize>, Option<Vec<Dim>>);

/// Where an output of a replay comes from.
#[derive(Clone)]
enum OutputSource {
    /// Input buffer `k` itself (the function returned an input or a whole reshape of one; a
    /// spread input counts one buffer per device).
    Input(usize),
    /// A buffer the capture allocated: a fresh one of the same size on every replay.
    Fresh(Arc<Buffer>),
    /// A buffer that existed before the call (state): the same one every time.
    State(Arc<Buffer>),
}

/// One output of a replay: one part, or one per device for a spread tensor (`MULTI` with this
/// argument).
struct Output {
    parts: Vec<(OutputSource, OutputShape)>,
    spread: Option<crate::uop::Arg>,
}

struct Captured {
    steps: Vec<Recorded>,
    /// Index bounds the function checks (run again after every replay).
    checks: Vec<capture::Check>,
    inputs: Vec<InputSpec>,
    /// The input buffers of the captured call, replaced by the new ones on replay.
    input_bufs: Vec<Arc<Buffer>>,
    outputs: Vec<Output>,
    /// The role of every buffer of every step (for checking that call 3 matches).
    roles: Vec<Vec<Role>>,
    /// How replays run the steps (built by the first replay).
    plan: Option<Vec<Segment>>,
}

/// A run of captured steps in a replay: a device graph, or steps one by one through the engine
/// (copies, devices without graphs).
enum Segment {
    Graph {
        graph: Box<dyn DeviceGraph>,
        /// `(launch, argument, k)`: the argument is the k-th buffer a replay replaces (an input
        /// or a fresh output), patched before every run.
        patches: Vec<(usize, usize, usize)>,
        /// `(launch, k, name)`: the launch's k-th variable is the call's variable `name`.
        vars: Vec<(usize, usize, Arc<str>)>,
        kernels: usize,
    },
    Steps(std::ops::Range<usize>),
}

fn graphs_enabled() -> bool {
    crate::flags::int("JIT_GRAPH") != 0
}

/// The segments of a replay of `cap`: each run of consecutive kernels on one device becomes a
/// device graph where the device has them. `replaced` lists the captured buffers a replay
/// swaps for its own, in the order it swaps them.
fn plan_replay(cap: &Captured, replaced: &[Arc<Buffer>]) -> Result<Vec<Segment>> {
    let is_call_var = |name: &str| cap.inputs.iter().any(|s| s.var.as_ref().is_some_and(|v| &*v.name() == name));
    let mut segments = Vec::new();
    let mut i = 0;
    while i < cap.steps.len() {
        let device = &cap.steps[i].device;
        let mut end = i;
        while end < cap.steps.len()
            && &cap.steps[end].device == device
            && matches!(cap.steps[end].step, Step::Kernel(_))
        {
            end += 1;
        }
        if end == i {
            segments.push(Segment::Steps(i..i + 1));
            i += 1;
            continue;
        }
        let run = &cap.steps[i..end];
        let kernels: Vec<&crate::engine::CompiledKernel> = run
            .iter()
            .map(|s| match &s.step {
                Step::Kernel(k) => k,
                Step::Copy => unreachable!("a run holds kernels only"),
            })
            .collect();
        let mut launches = Vec::with_capacity(run.len());
        for (s, k) in run.iter().zip(&kernels) {
            let vals = crate::engine::launch_values(&k.spec, device, &s.var_vals)?;
            launches.push(GraphLaunch { program: &k.program, bufs: &s.bufs, vals });
        }
        match crate::runtime::graph_build::build(device, &launches) {
            None => segments.push(Segment::Steps(i..end)),
            Some(graph) => {
                let mut patches = Vec::new();
                let mut vars = Vec::new();
                for (l, (s, k)) in run.iter().zip(&kernels).enumerate() {
                    for (arg, b) in s.bufs.iter().enumerate() {
                        if let Some(slot) = replaced.iter().position(|x| Arc::ptr_eq(x, b)) {
                            patches.push((l, arg, slot));
                        }
                    }
                    for (kv, name) in k.spec.vars.iter().enumerate() {
                        if is_call_var(name) {
                            vars.push((l, kv, Arc::from(name.as_str())));
                        }
                    }
                }
                match graph {
                    Ok(graph) => segments.push(Segment::Graph { graph, patches, vars, kernels: run.len() }),
                    // The steps still run (and fail there if the launches themselves cannot).
                    Err(e) => {
                        if crate::helpers::debug_level() >= 1 {
                            eprintln!("TinyJit: no device graph on {device} ({e}); its kernels replay one by one");
                        }
                        segments.push(Segment::Steps(i..end));
                    }
                }
            }
        }
        i = end;
    }
    Ok(segments)
}

/// What a buffer is to one captured call.
#[derive(Clone, PartialEq, Debug)]
enum Role {
    Input(usize),
    /// Allocated by the call: the k-th such buffer, in order of first use.
    Allocated(usize),
    /// Existed before (parameters, state, constants): compared by identity.
    Existing(usize),
}

type JitFn = Box<dyn FnMut(&[Tensor], &[Dim]) -> Vec<Tensor>>;

/// A function whose kernels are captured on the second call and replayed after the third.
pub struct TinyJit {
    f: JitFn,
    calls: usize,
    captured: Option<Captured>,
    verified: bool,
}

fn jit_enabled() -> bool {
    crate::flags::int("JIT") != 0
}

/// The buffers holding an input: one, or one per device for a spread tensor (the capture and
/// its replays see these flattened, input by input).
fn buffers_of_input(t: &Tensor) -> Result<Vec<Arc<Buffer>>> {
    let t = t.realize()?;
    let u = t.uop();
    let parts = if u.op() == Ops::MULTI { u.src().to_vec() } else { vec![u] };
    parts
        .iter()
        .map(|p| existing_buffer(p).ok_or_else(|| Error::Jit("TinyJit: an input is not backed by a buffer".into())))
        .collect()
}

/// The role of each buffer of each step: inputs by position, buffers the call allocated
/// (first written by a kernel that is not an assign) by order of appearance, others by
/// identity.
fn roles(steps: &[Recorded], inputs: &[Arc<Buffer>]) -> Vec<Vec<Role>> {
    let mut allocated: Vec<Arc<Buffer>> = Vec::new();
    let mut seen: Vec<Arc<Buffer>> = Vec::new();
    steps
        .iter()
        .map(|s| {
            s.bufs
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    if let Some(k) = inputs.iter().position(|x| Arc::ptr_eq(x, b)) {
                        return Role::Input(k);
                    }
                    if let Some(k) = allocated.iter().position(|x| Arc::ptr_eq(x, b)) {
                        return Role::Allocated(k);
                    }
                    let first_use = !seen.iter().any(|x| Arc::ptr_eq(x, b));
                    seen.push(b.clone());
                    if first_use && i == 0 && !s.assign {
                        allocated.push(b.clone());
                        return Role::Allocated(allocated.len() - 1);
                    }
                    Role::Existing(Arc::as_ptr(b) as *const u8 as usize)
                })
                .collect()
        })
        .collect()
}

impl TinyJit {
    pub fn new(mut f: impl FnMut(&[Tensor]) -> Vec<Tensor> + 'static) -> TinyJit {
        TinyJit::with_vars(move |inputs, _| f(inputs))
    }

    /// A function that also takes bound variables ([`Variable::bind`](crate::Variable::bind)),
    /// called with [`call_vars`](TinyJit::call_vars): a replay launches the captured kernels
    /// with the new values, so a step at a variable position (a KV-cache decode step) is
    /// captured once.
    pub fn with_vars(f: impl FnMut(&[Tensor], &[Dim]) -> Vec<Tensor> + 'static) -> TinyJit {
        TinyJit { f: Box::new(f), calls: 0, captured: None, verified: false }
    }

    /// Number of steps (kernels and copies) a replay runs, once captured.
    pub fn captured_len(&self) -> Option<usize> {
        self.captured.as_ref().map(|c| c.steps.len())
    }

    /// How many device graphs a replay runs (`None` before the first replay): one per run of
    /// consecutive kernels on a device that has graphs.
    pub fn replay_graphs(&self) -> Option<usize> {
        let plan = self.captured.as_ref()?.plan.as_ref()?;
        Some(plan.iter().filter(|s| matches!(s, Segment::Graph { .. })).count())
    }

    /// Calls the function (call 1), captures it (call 2), checks the capture (call 3) or
    /// replays it (later calls).
    pub fn call(&mut self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        self.call_vars(inputs, &[])
    }

    /// `call` with bound variables: each of `vars` is a variable bound to this call's value
    /// (`Variable::bind`). Replays need the same variables (names and ranges), with any values.
    pub fn call_vars(&mut self, inputs: &[&Tensor], vars: &[Dim]) -> Result<Vec<Tensor>> {
        let bindings = vars.iter().map(binding_of).collect::<Result<Vec<_>>>()?;
        let mut specs: Vec<InputSpec> = inputs
            .iter()
            .map(|t| InputSpec { shape: t.shape(), dtype: t.dtype(), device: t.device(), var: None })
            .collect();
        specs.extend(bindings.iter().map(|b| InputSpec {
            shape: vec![],
            dtype: crate::uop::dim::DIM_DTYPE,
            device: String::new(),
            var: Some(b.0.clone()),
        }));
        let values: Vec<(Arc<str>, i64)> = bindings.iter().map(|(v, x)| (v.name(), *x)).collect();
        let mut bufs: Vec<Arc<Buffer>> = Vec::new();
        for t in inputs {
            bufs.extend(buffers_of_input(t)?);
        }
        // Assigns made outside since the last call (a closure's tensor updated by the caller)
        // happen now, so the replay reads them.
        Tensor::realize_all(&[])?;
        if !jit_enabled() {
            return self.run_plain(inputs, vars);
        }
        self.calls += 1;
        match (self.calls, &self.captured) {
            (1, _) => self.run_plain(inputs, vars),
            (_, None) => {
                let result = self.capture(inputs, vars, &bufs);
                let (steps, checks, outputs, outs) = match result {
                    Ok(r) => r,
                    Err(e) => {
                        // Nothing captured: the next call tries again.
                        self.calls -= 1;
                        return Err(e);
                    }
                };
                let roles = roles(&steps, &bufs);
                if crate::helpers::debug_level() >= 1 {
                    eprintln!("TinyJit: captured {} steps", steps.len());
                }
                self.captured =
                    Some(Captured { steps, checks, inputs: specs, input_bufs: bufs, outputs, roles, plan: None });
                Ok(outs)
            }
            (_, Some(_)) if !self.verified => self.verify(inputs, vars, specs, bufs),
            _ => self.replay(&specs, &bufs, &values),
        }
    }

    fn run_plain(&mut self, inputs: &[&Tensor], vars: &[Dim]) -> Result<Vec<Tensor>> {
        let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
        let outs = (self.f)(&owned, vars);
        Tensor::realize_all(&outs.iter().collect::<Vec<_>>())?;
        Ok(outs)
    }

    /// Runs the function while recording; returns the steps, where each output comes from,
    /// and the outputs.
    #[allow(clippy::type_complexity)]
    fn capture(
        &mut self,
        inputs: &[&Tensor],
        vars: &[Dim],
        bufs: &[Arc<Buffer>],
    ) -> Result<(Vec<Recorded>, Vec<capture::Check>, Vec<Output>, Vec<Tensor>)> {
        for (i, a) in bufs.iter().enumerate() {
            if bufs[..i].iter().any(|b| Arc::ptr_eq(a, b)) {
                return Err(Error::Jit("TinyJit: the same buffer is passed as two inputs".into()));
            }
        }
        let guard = capture::begin();
        // A panic unwinds through `guard`, which closes the capture.
        let result = self.run_plain(inputs, vars);
        let captured = guard.finish();
        let outs = result?;
        if captured.read_attempted {
            return Err(Error::Jit(
                "TinyJit: the function read tensor data while being captured; replays would not read it again \
                 (the value would be frozen). Compute with tensors instead, or read the outputs after the call"
                    .into(),
            ));
        }
        let written: Vec<&Arc<Buffer>> = captured
            .steps
            .iter()
            .filter(|s| !s.assign && matches!(s.step, Step::Kernel(_) | Step::Copy))
            .map(|s| &s.bufs[0])
            .collect();
        let part = |u: &crate::UOp| -> Result<(OutputSource, OutputShape)> {
            // A realized symbolic tensor is a window of its buffer (see `realize_all`).
            let symbolic = u.has_symbolic_shape() && u.op() == Ops::SHRINK;
            let base = if symbolic { u.src()[0].clone() } else { u.clone() };
            let b = existing_buffer(&base).ok_or_else(|| Error::Jit("TinyJit: an output is not realized".into()))?;
            let source = if let Some(k) = bufs.iter().position(|x| Arc::ptr_eq(x, &b)) {
                OutputSource::Input(k)
            } else if written.iter().any(|x| Arc::ptr_eq(x, &b)) {
                OutputSource::Fresh(b)
            } else {
                OutputSource::State(b)
            };
            Ok((source, (base.shape().to_vec(), symbolic.then(|| u.sym_shape()))))
        };
        let outputs = outs
            .iter()
            .map(|t| {
                let u = t.uop();
                Ok(match u.op() {
                    // Spread over devices: each device's part.
                    Ops::MULTI => Output {
                        parts: u.src().iter().map(part).collect::<Result<_>>()?,
                        spread: Some(u.arg().clone()),
                    },
                    _ => Output { parts: vec![part(&u)?], spread: None },
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((captured.steps, captured.checks, outputs, outs))
    }

    /// Call 3: runs and records again; the kernels and the roles of their buffers must match
    /// the capture.
    fn verify(
        &mut self,
        inputs: &[&Tensor],
        vars: &[Dim],
        specs: Vec<InputSpec>,
        bufs: Vec<Arc<Buffer>>,
    ) -> Result<Vec<Tensor>> {
        let cap = self.captured.as_ref().expect("verify after a capture");
        if specs != cap.inputs {
            return Err(self.mismatch(&specs));
        }
        let (steps, _, _, outs) = self.capture(inputs, vars, &bufs)?;
        let cap = self.captured.as_ref().expect("verify after a capture");
        let same_kernels = steps.len() == cap.steps.len()
            && steps.iter().zip(&cap.steps).all(|(a, b)| match (&a.step, &b.step) {
                (Step::Kernel(x), Step::Kernel(y)) => x.spec.src == y.spec.src,
                (Step::Copy, Step::Copy) => true,
                _ => false,
            });
        // Variables that are not inputs were bound inside the function: their values are baked
        // into the capture like constants, so they must not change either.
        let is_input = |name: &Arc<str>| specs.iter().any(|s| s.var.as_ref().is_some_and(|v| v.name() == *name));
        let fixed = |r: &Recorded| r.var_vals.iter().filter(|(n, _)| !is_input(n)).cloned().collect::<Vec<_>>();
        let same_fixed_vars = steps.iter().zip(&cap.steps).all(|(a, b)| fixed(a) == fixed(b));
        if same_kernels && !same_fixed_vars {
            return Err(Error::Jit(
                "TinyJit: call 3 bound a variable to another value than call 2, and the variable is not passed to \
                 call_vars: replays would repeat call 2's value. Pass the bound variable to call_vars"
                    .into(),
            ));
        }
        if !same_kernels || roles(&steps, &bufs) != cap.roles {
            let what = if same_kernels { "the same kernels on other buffers" } else { "other kernels" };
            return Err(Error::Jit(format!(
                "TinyJit: call 3 launched {what} than the captured call 2 ({} steps, captured {}): the function \
                 depends on something that is not a tensor input (a Rust value baked into a kernel as a constant, or \
                 a branch), and replays would repeat call 2. Pass changing values as tensor inputs, or use one \
                 TinyJit per variant",
                steps.len(),
                cap.steps.len()
            )));
        }
        self.verified = true;
        Ok(outs)
    }

    fn mismatch(&self, specs: &[InputSpec]) -> Error {
        let cap = self.captured.as_ref().expect("a capture");
        Error::Jit(format!(
            "TinyJit: called with inputs {:?}, but captured with {:?}; make a new TinyJit for other shapes, dtypes or devices",
            specs, cap.inputs
        ))
    }

    fn replay(&mut self, specs: &[InputSpec], bufs: &[Arc<Buffer>], values: &[(Arc<str>, i64)]) -> Result<Vec<Tensor>> {
        let cap = self.captured.as_mut().expect("replay without capture");
        if specs != cap.inputs.as_slice() {
            return Err(self.mismatch(specs));
        }
        // Captured buffer → this call's: the inputs, and a fresh buffer per fresh output.
        let mut swap: Vec<(Arc<Buffer>, Arc<Buffer>)> =
            cap.input_bufs.iter().cloned().zip(bufs.iter().cloned()).collect();
        for (src, _) in cap.outputs.iter().flat_map(|o| &o.parts) {
            if let OutputSource::Fresh(b) = src {
                if !swap.iter().any(|(x, _)| Arc::ptr_eq(x, b)) {
                    let fresh = Buffer::on(BufferObj::device(&**b), BufferObj::dtype(&**b), BufferObj::size(&**b));
                    swap.push((b.clone(), fresh));
                }
            }
        }
        let map = |b: &Arc<Buffer>| {
            swap.iter().find(|(x, _)| Arc::ptr_eq(x, b)).map(|(_, y)| y.clone()).unwrap_or_else(|| b.clone())
        };
        let lock = crate::engine::realize_lock();
        let run_steps = |steps: &[Recorded]| -> Result<()> {
            for s in steps {
                let b: Vec<Arc<Buffer>> = s.bufs.iter().map(map).collect();
                // This call's values for the variables it was given; the captured ones otherwise.
                let var_vals: Vec<(Arc<str>, i64)> = s
                    .var_vals
                    .iter()
                    .map(|(n, v)| values.iter().find(|(m, _)| m == n).cloned().unwrap_or_else(|| (n.clone(), *v)))
                    .collect();
                s.step.run(&b, &s.device, &var_vals)?;
                // An enclosing capture records the replayed kernels.
                let (step, device) = (s.step.clone(), s.device.clone());
                capture::record(Recorded { step, bufs: b, device, assign: s.assign, var_vals });
            }
            Ok(())
        };
        // Device graphs, unless an enclosing capture must see every step or launches are
        // being watched one by one.
        if graphs_enabled() && !capture::is_capturing() && !crate::engine::launches_observed() {
            if cap.plan.is_none() {
                let replaced: Vec<Arc<Buffer>> = swap.iter().map(|(x, _)| x.clone()).collect();
                cap.plan = Some(plan_replay(cap, &replaced)?);
            }
            for seg in cap.plan.as_mut().expect("planned above") {
                match seg {
                    Segment::Steps(r) => run_steps(&cap.steps[r.clone()])?,
                    Segment::Graph { graph, patches, vars, kernels } => {
                        for &(l, arg, k) in patches.iter() {
                            graph.set_buffer(l, arg, &swap[k].1)?;
                        }
                        for (l, kv, name) in vars.iter() {
                            if let Some((_, v)) = values.iter().find(|(m, _)| m == name) {
                                graph.set_value(*l, *kv, *v);
                            }
                        }
                        graph.run()?;
                        crate::engine::count_launches(*kernels);
                    }
                }
            }
        } else {
            run_steps(&cap.steps)?;
        }
        drop(lock);
        for c in &cap.checks {
            let buf = map(&c.buf);
            crate::tensor::checks::verify(&buf, c.lo, c.hi, &c.what, c.condition)?;
            capture::record_check(capture::Check { buf, ..c.clone() });
        }
        let view = |(src, (layout, dims)): &(OutputSource, OutputShape)| {
            let b = match src {
                OutputSource::Input(k) => bufs[*k].clone(),
                OutputSource::Fresh(b) | OutputSource::State(b) => map(b),
            };
            let dims: Option<Vec<Dim>> = dims.as_ref().map(|d| d.iter().map(|d| rebind(d, values)).collect());
            buffer_view_dims(b, layout, dims.as_deref())
        };
        Ok(cap
            .outputs
            .iter()
            .map(|o| {
                let parts: Vec<crate::UOp> = o.parts.iter().map(view).collect();
                Tensor::from_uop(match &o.spread {
                    Some(arg) => crate::UOp::new(Ops::MULTI, parts[0].dtype(), parts, arg.clone()),
                    None => parts.into_iter().next().expect("one part"),
                })
            })
            .collect())
    }
}
