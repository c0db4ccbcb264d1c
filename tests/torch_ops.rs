//! The PyTorch-checked op suite. Each group of cases has a fixture written by PyTorch
//! (`tests/fixtures/torch/<group>.json`, made by `scripts/torch_fixtures/gen.py`) and a table of
//! ferrograd closures (`tests/torch/<group>.rs`); this harness runs every closure on the
//! fixture's inputs on every device and compares the output and the input gradients of
//! `out.sum()` with PyTorch's. The format is in `scripts/TORCH_SUITE_FORMAT.md`.
//!
//! One test per group and device: `cargo test --test torch_ops elementwise` runs a group,
//! `cargo test --test torch_ops interp` every group on the interpreter. A failing group lists
//! every failing case with what differed.

mod torch;

use ferrograd::tensor::with_default_device;
use ferrograd::{DType, Element, Tensor};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use torch::{CaseFn, GROUPS, KNOWN_FAILURES, SKIPS};

/// `DEV` when it names a device other than CPU and INTERP (`DEV=CL cargo test --features opencl`):
/// then the whole suite runs once more, on that device only.
fn other_dev() -> Option<String> {
    std::env::var("DEV").ok().filter(|d| !d.is_empty() && !matches!(d.to_uppercase().as_str(), "CPU" | "INTERP"))
}

/// One #[test] per group and device, named `<group>::cpu` and `<group>::interp`. Every group of
/// `torch::GROUPS` must be listed here (checked by `every_group_has_tests`).
macro_rules! group_tests {
    ($($group:ident),* $(,)?) => {
        const TESTED_GROUPS: &[&str] = &[$(stringify!($group)),*];
        $(
            mod $group {
                #[test]
                fn cpu() {
                    crate::run_group(stringify!($group), &crate::other_dev().unwrap_or_else(|| "CPU".into()));
                }
                #[test]
                fn interp() {
                    if crate::other_dev().is_none() {
                        crate::run_group(stringify!($group), "INTERP");
                    }
                }
            }
        )*
    };
}

group_tests!(
    elementwise,
    movement,
    reduce,
    linalg,
    conv,
    shape_ops,
    indexing,
    math,
    activation,
    reduce_ext,
    loss,
    dtype,
    trig,
    sort,
    attention,
    select,
    args,
    sweep,
    special
);

#[test]
fn every_group_has_tests_and_a_fixture() {
    let dir = fixture_dir();
    for (g, _) in GROUPS {
        assert!(TESTED_GROUPS.contains(g), "group {g} is in torch::GROUPS but not in group_tests!(..)");
        assert!(
            dir.join(format!("{g}.json")).exists(),
            "group {g} has no fixture: run scripts/torch_fixtures/gen.py {g}"
        );
    }
    for g in TESTED_GROUPS {
        assert!(GROUPS.iter().any(|(n, _)| n == g), "group_tests!({g}) has no entry in torch::GROUPS");
    }
    for entry in std::fs::read_dir(&dir).expect("tests/fixtures/torch exists") {
        let name = entry.expect("readable dir entry").file_name().to_string_lossy().into_owned();
        if let Some(g) = name.strip_suffix(".json") {
            assert!(GROUPS.iter().any(|(n, _)| *n == g), "fixture {name} has no group in torch::GROUPS");
        }
    }
}

// ---------------------------------------------------------------- fixtures

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/torch")
}

/// Flat row-major values of a fixture tensor.
#[derive(Clone, Debug)]
enum Data {
    Float(Vec<f64>),
    Int(Vec<i128>),
    Bool(Vec<bool>),
}

impl Data {
    fn len(&self) -> usize {
        match self {
            Data::Float(v) => v.len(),
            Data::Int(v) => v.len(),
            Data::Bool(v) => v.len(),
        }
    }
    fn show(&self, i: usize) -> String {
        match self {
            Data::Float(v) => format!("{:?}", v[i]),
            Data::Int(v) => v[i].to_string(),
            Data::Bool(v) => v[i].to_string(),
        }
    }
}

struct Fixture {
    shape: Vec<usize>,
    dtype: DType,
    data: Data,
}

struct CaseSpec {
    name: String,
    inputs: Vec<Fixture>,
    output: Fixture,
    grads: Vec<Option<Fixture>>,
    tol: (f64, f64),
    grad_tol: (f64, f64),
}

fn dtype_named(name: &str) -> Result<DType, String> {
    DType::ALL.iter().copied().find(|d| d.name() == name).ok_or_else(|| format!("unknown dtype {name:?}"))
}

fn parse_float(v: &Value) -> Result<f64, String> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("bad float {n}")),
        Value::String(s) if s == "nan" => Ok(f64::NAN),
        Value::String(s) if s == "inf" => Ok(f64::INFINITY),
        Value::String(s) if s == "-inf" => Ok(f64::NEG_INFINITY),
        other => Err(format!("bad float {other}")),
    }
}

fn parse_fixture(v: &Value) -> Result<Fixture, String> {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .ok_or("tensor without shape")?
        .iter()
        .map(|d| d.as_u64().map(|d| d as usize).ok_or_else(|| format!("bad dim {d}")))
        .collect::<Result<_, _>>()?;
    let dtype = dtype_named(v["dtype"].as_str().ok_or("tensor without dtype")?)?;
    let raw = v["data"].as_array().ok_or("tensor without data")?;
    let data = if dtype.is_float() {
        // Rounded to the dtype: the fixture writes the shortest decimal of each value.
        let round = |x: f64| match dtype {
            DType::F32 => x as f32 as f64,
            DType::F16 => half::f16::from_f64(x).to_f64(),
            DType::BF16 => half::bf16::from_f64(x).to_f64(),
            _ => x,
        };
        Data::Float(raw.iter().map(|v| parse_float(v).map(round)).collect::<Result<_, _>>()?)
    } else if dtype.is_bool() {
        Data::Bool(raw.iter().map(|b| b.as_bool().ok_or_else(|| format!("bad bool {b}"))).collect::<Result<_, _>>()?)
    } else {
        let int = |x: &Value| -> Result<i128, String> {
            x.as_i64().map(i128::from).or_else(|| x.as_u64().map(i128::from)).ok_or_else(|| format!("bad int {x}"))
        };
        Data::Int(raw.iter().map(int).collect::<Result<_, _>>()?)
    };
    let n: usize = shape.iter().product();
    if data.len() != n {
        return Err(format!("shape {shape:?} needs {n} values, data has {}", data.len()));
    }
    Ok(Fixture { shape, dtype, data })
}

fn parse_case(v: &Value) -> Result<CaseSpec, String> {
    let name = v["name"].as_str().ok_or("case without name")?.to_string();
    let ctx = |e: String| format!("case {name}: {e}");
    let list = |key: &str| v[key].as_array().cloned().ok_or_else(|| ctx(format!("no {key} list")));
    let inputs = list("inputs")?.iter().map(parse_fixture).collect::<Result<Vec<_>, _>>().map_err(ctx)?;
    let grads = list("grads")?
        .iter()
        .map(|g| if g.is_null() { Ok(None) } else { parse_fixture(g).map(Some) })
        .collect::<Result<Vec<_>, _>>()
        .map_err(ctx)?;
    if grads.len() != inputs.len() {
        return Err(ctx(format!("{} grads for {} inputs", grads.len(), inputs.len())));
    }
    let output = parse_fixture(&v["output"]).map_err(ctx)?;
    let num = |key: &str| v[key].as_f64().ok_or_else(|| ctx(format!("no {key}")));
    Ok(CaseSpec {
        inputs,
        output,
        grads,
        tol: (num("atol")?, num("rtol")?),
        grad_tol: (num("grad_atol")?, num("grad_rtol")?),
        name,
    })
}

fn load_group(group: &str) -> Result<Vec<CaseSpec>, String> {
    let path = fixture_dir().join(format!("{group}.json"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (run scripts/torch_fixtures/gen.py {group})", path.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if v["group"].as_str() != Some(group) {
        return Err(format!("{}: \"group\" is {}, not {group:?}", path.display(), v["group"]));
    }
    v["cases"].as_array().ok_or("no \"cases\" list")?.iter().map(parse_case).collect()
}

// ---------------------------------------------------------------- tensors

fn typed<T: Element>(data: &[T], shape: &[usize], dev: &str) -> Tensor {
    Tensor::from_slice_on(data, shape, dev)
}

/// The fixture's values as a tensor of its dtype on `dev`.
fn make_tensor(f: &Fixture, dev: &str) -> Tensor {
    let s = &f.shape[..];
    macro_rules! conv {
        ($v:expr, $t:ty, $map:expr) => {
            typed::<$t>(&$v.iter().map($map).collect::<Vec<$t>>(), s, dev)
        };
    }
    match (&f.data, f.dtype) {
        (Data::Float(v), DType::F32) => conv!(v, f32, |&x| x as f32),
        (Data::Float(v), DType::F64) => conv!(v, f64, |&x| x),
        (Data::Float(v), DType::F16) => conv!(v, half::f16, |&x| half::f16::from_f64(x)),
        (Data::Float(v), DType::BF16) => conv!(v, half::bf16, |&x| half::bf16::from_f64(x)),
        (Data::Int(v), DType::I8) => conv!(v, i8, |&x| x as i8),
        (Data::Int(v), DType::I16) => conv!(v, i16, |&x| x as i16),
        (Data::Int(v), DType::I32) => conv!(v, i32, |&x| x as i32),
        (Data::Int(v), DType::I64) => conv!(v, i64, |&x| x as i64),
        (Data::Int(v), DType::U8) => conv!(v, u8, |&x| x as u8),
        (Data::Int(v), DType::U16) => conv!(v, u16, |&x| x as u16),
        (Data::Int(v), DType::U32) => conv!(v, u32, |&x| x as u32),
        (Data::Int(v), DType::U64) => conv!(v, u64, |&x| x as u64),
        (Data::Bool(v), DType::BOOL) => typed(v, s, dev),
        (_, dt) => panic!("fixture data does not match dtype {dt}"),
    }
}

/// A tensor's values (realizing it), exactly for every dtype.
fn read_tensor(t: &Tensor) -> Result<Data, String> {
    fn get<T: Element>(t: &Tensor) -> Result<Vec<T>, String> {
        t.to_vec::<T>().map_err(|e| format!("reading the result failed: {e}"))
    }
    fn ints<T: Element + Into<i128>>(t: &Tensor) -> Result<Data, String> {
        Ok(Data::Int(get::<T>(t)?.into_iter().map(Into::into).collect()))
    }
    Ok(match t.dtype() {
        DType::F32 => Data::Float(get::<f32>(t)?.into_iter().map(f64::from).collect()),
        DType::F64 => Data::Float(get::<f64>(t)?),
        DType::F16 => Data::Float(get::<half::f16>(t)?.into_iter().map(f64::from).collect()),
        DType::BF16 => Data::Float(get::<half::bf16>(t)?.into_iter().map(f64::from).collect()),
        DType::I8 => ints::<i8>(t)?,
        DType::I16 => ints::<i16>(t)?,
        DType::I32 => ints::<i32>(t)?,
        DType::I64 => ints::<i64>(t)?,
        DType::U8 => ints::<u8>(t)?,
        DType::U16 => ints::<u16>(t)?,
        DType::U32 => ints::<u32>(t)?,
        DType::U64 => ints::<u64>(t)?,
        DType::BOOL => Data::Bool(get::<bool>(t)?),
        dt => return Err(format!("cannot read dtype {dt}")),
    })
}

fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for a in (0..shape.len()).rev() {
        idx[a] = i % shape[a];
        i /= shape[a];
    }
    idx
}

/// Whether `got` matches `want`: `|got - want| <= atol + rtol * |want|` for floats (NaN matches
/// NaN, infinities must be equal), exact for ints and bools.
fn close(got: &Data, want: &Data, i: usize, (atol, rtol): (f64, f64)) -> bool {
    match (got, want) {
        (Data::Float(g), Data::Float(w)) => {
            let (g, w) = (g[i], w[i]);
            (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= atol + rtol * w.abs()
        }
        (Data::Int(g), Data::Int(w)) => g[i] == w[i],
        (Data::Bool(g), Data::Bool(w)) => g[i] == w[i],
        _ => false,
    }
}

/// Compares shape, dtype and values; the error names the first few differing elements.
fn compare(what: &str, got: &Tensor, want: &Fixture, tol: (f64, f64)) -> Result<(), String> {
    if got.shape() != want.shape || got.dtype() != want.dtype {
        return Err(format!(
            "{what}: got shape {:?} dtype {}, want shape {:?} dtype {}",
            got.shape(),
            got.dtype(),
            want.shape,
            want.dtype
        ));
    }
    let vals = read_tensor(got).map_err(|e| format!("{what}: {e}"))?;
    let bad: Vec<usize> = (0..want.data.len()).filter(|&i| !close(&vals, &want.data, i, tol)).collect();
    if bad.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = bad
        .iter()
        .take(4)
        .map(|&i| format!("{:?}: got {} want {}", unravel(i, &want.shape), vals.show(i), want.data.show(i)))
        .collect();
    Err(format!(
        "{what}: {} of {} elements differ (shape {:?}, {}, atol {:e}, rtol {:e}): {}",
        bad.len(),
        want.data.len(),
        want.shape,
        want.dtype,
        tol.0,
        tol.1,
        shown.join("; ")
    ))
}

// ---------------------------------------------------------------- running

/// A case whose graph is built but not yet computed: the output and the input gradients of
/// `out.sum()` (`None` where the fixture has none), all lazy.
struct Prepared {
    out: Tensor,
    grads: Vec<Option<Tensor>>,
}

impl Prepared {
    fn tensors(&self) -> Vec<&Tensor> {
        std::iter::once(&self.out).chain(self.grads.iter().flatten()).collect()
    }
}

/// Builds one case's graph on `dev`: inputs, the closure, then backward (before anything is
/// read: realizing `out` would cut it off from its graph).
fn prepare_case(spec: &CaseSpec, f: CaseFn, dev: &str) -> Prepared {
    let inputs: Vec<Tensor> = spec
        .inputs
        .iter()
        .zip(&spec.grads)
        .map(|(x, g)| {
            let t = make_tensor(x, dev);
            if g.is_some() {
                t.requires_grad()
            } else {
                t
            }
        })
        .collect();
    let out = f(&inputs);
    if spec.grads.iter().all(Option::is_none) {
        return Prepared { out, grads: Vec::new() };
    }
    out.sum().backward();
    let grads = inputs
        .iter()
        .zip(&spec.grads)
        // An input the output does not depend on gets no gradient: PyTorch's is zeros.
        .map(|(x, want)| want.as_ref().map(|_| x.grad().unwrap_or_else(|| x.zeros_like())))
        .collect();
    Prepared { out, grads }
}

/// Compares a computed case with its fixture.
fn check_case(spec: &CaseSpec, p: &Prepared) -> Result<(), String> {
    let mut errs: Vec<String> = compare("output", &p.out, &spec.output, spec.tol).err().into_iter().collect();
    for (i, (got, want)) in p.grads.iter().zip(&spec.grads).enumerate() {
        if let (Some(got), Some(want)) = (got, want) {
            errs.extend(compare(&format!("grad of input {i}"), got, want, spec.grad_tol).err());
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("\n      "))
    }
}

thread_local! {
    /// Set while a case runs: its panics are reported as the case's failure, not printed.
    static IN_CASE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where the last quiet panic happened.
    static PANIC_AT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// A panic hook that stays quiet inside a case (remembering where it panicked) and defers to
/// the default hook elsewhere.
fn install_quiet_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_CASE.with(|c| c.get()) {
                let at = info.location().map(|l| format!(" (at {}:{})", l.file(), l.line())).unwrap_or_default();
                PANIC_AT.with(|p| *p.borrow_mut() = at);
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f`, turning a panic into an error that says where it happened.
fn caught<T>(f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    IN_CASE.with(|c| c.set(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    IN_CASE.with(|c| c.set(false));
    result.unwrap_or_else(|p| {
        let msg = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(format!("panicked: {}{}", msg.unwrap_or_default(), PANIC_AT.with(|p| p.borrow().clone())))
    })
}

/// Cases computed together: their graphs are built one by one, then realized in one schedule,
/// so the device compiles their kernels in one batch (a PoCL or C compiler run costs far more
/// per build than per kernel). The graphs share nothing, so each case gets the kernels it would
/// get alone.
const CASES_PER_REALIZE: usize = 24;

/// Runs a chunk of cases on `dev`: each case's result, in order. When the batched realize
/// fails, every case is realized on its own so the failure is pinned on its case; an error that
/// no single case reproduces is returned as the chunk's.
fn run_chunk(chunk: &[(&CaseSpec, CaseFn)], dev: &str) -> (Vec<Result<(), String>>, Option<String>) {
    with_default_device(dev, || {
        let prepared: Vec<Result<Prepared, String>> =
            chunk.iter().map(|&(spec, f)| caught(|| Ok(prepare_case(spec, f, dev)))).collect();
        let all: Vec<&Tensor> = prepared.iter().flatten().flat_map(Prepared::tensors).collect();
        let batch_error = caught(|| Tensor::realize_all(&all).map_err(|e| e.to_string())).err();
        let mut chunk_error = None;
        let results: Vec<Result<(), String>> = chunk
            .iter()
            .zip(&prepared)
            .map(|(&(spec, _), p)| {
                let p = p.as_ref().map_err(Clone::clone)?;
                if batch_error.is_some() {
                    caught(|| Tensor::realize_all(&p.tensors()).map_err(|e| format!("realize failed: {e}")))?;
                }
                caught(|| check_case(spec, p))
            })
            .collect();
        if let Some(e) = batch_error {
            if results.iter().all(Result::is_ok) {
                chunk_error = Some(format!("realizing the chunk failed, but no case alone does: {e}"));
            }
        }
        (results, chunk_error)
    })
}

/// Runs every case of `group` on `dev`, then panics listing all failures (if any).
fn run_group(group: &str, dev: &str) {
    let cases_fn = GROUPS.iter().find(|(g, _)| *g == group).unwrap_or_else(|| panic!("no group {group} in GROUPS")).1;
    if let Some(s) = SKIPS.iter().find(|s| s.case == "*" && s.matches(group, "*", dev)) {
        println!("torch suite, {group} on {dev}: skipped ({})", s.why);
        return;
    }
    let start = std::time::Instant::now();
    let specs = load_group(group).unwrap_or_else(|e| panic!("{group}: {e}"));
    install_quiet_panic_hook();
    let closures = cases_fn();
    let mut failures: Vec<String> = Vec::new();
    let mut by_name: HashMap<&str, CaseFn> = HashMap::new();
    for &(name, f) in &closures {
        if by_name.insert(name, f).is_some() {
            failures.push(format!("{name}: two closures with this name in tests/torch/{group}.rs"));
        }
    }
    let fixture_names: HashSet<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    for (name, _) in &closures {
        if !fixture_names.contains(name) {
            failures.push(format!("{name}: closure without a fixture case (run gen.py {group})"));
        }
    }
    let (mut passed, mut known, mut skipped) = (0, Vec::new(), Vec::new());
    let mut runnable: Vec<(&CaseSpec, CaseFn)> = Vec::new();
    for spec in &specs {
        let name = spec.name.as_str();
        if let Some(s) = SKIPS.iter().find(|s| s.matches(group, name, dev)) {
            skipped.push(format!("{name} ({})", s.why));
            continue;
        }
        match by_name.get(name) {
            Some(&f) => runnable.push((spec, f)),
            None => failures.push(format!("{name}: fixture case without a closure in tests/torch/{group}.rs")),
        }
    }
    for chunk in runnable.chunks(CASES_PER_REALIZE) {
        let (results, chunk_error) = run_chunk(chunk, dev);
        failures.extend(chunk_error);
        for (&(spec, _), result) in chunk.iter().zip(results) {
            let name = spec.name.as_str();
            let kf = KNOWN_FAILURES.iter().find(|k| k.matches(group, name, dev));
            match (result, kf) {
                (Ok(()), None) => passed += 1,
                (Ok(()), Some(_)) => {
                    failures.push(format!("{name} on {dev}: passes now; remove it from KNOWN_FAILURES"))
                }
                (Err(e), Some(k)) => known.push(format!("{name} on {dev} ({}): {e}", k.bug)),
                (Err(e), None) => failures.push(format!("{name} on {dev}: {e}")),
            }
        }
    }
    let summary = format!(
        "torch suite, {group} on {dev}: {passed} passed, {} failed, {} known failures, {} skipped ({:.1} s)",
        failures.len(),
        known.len(),
        skipped.len(),
        start.elapsed().as_secs_f64()
    );
    println!("{summary}");
    for k in &known {
        println!("  known failure: {k}");
    }
    for s in &skipped {
        println!("  skipped: {s}");
    }
    if !failures.is_empty() {
        panic!("{summary}\n  {}", failures.join("\n  "));
    }
}
