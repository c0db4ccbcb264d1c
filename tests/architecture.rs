//! The stages only look down: every `crate::` or `super::` path in `src/` names a file of the
//! same stage or a lower one, in the order ARCHITECTURE.md states, and no two files import each
//! other through a cycle (a `mod.rs` declaring or re-exporting its own children does not count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, lowest first. A file's stage is its top folder under `src/` (or its name for a
/// file directly in `src/`).
const STAGES: &[&[&str]] = &[
    &["helpers", "error", "flags", "compiler_log", "viz"],
    &["uop"],
    &["renderer"],
    &["runtime"],
    &["codegen"],
    &["schedule"],
    &["engine"],
    &["device", "tensor"],
    &["gradient"],
    &["func"],
    &["jit"],
    &["nn"],
    &["distributed"],
    &["models", "onnx"],
];

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The module path of a file: `src/tensor/grad.rs` → `["tensor", "grad"]`, `src/tensor/mod.rs` →
/// `["tensor"]`, `src/lib.rs` → `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src_dir()).unwrap();
    let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().to_string()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs").to_string();
    if stem != "mod" && stem != "lib" {
        parts.push(stem);
    }
    parts
}

fn stage_of(module: &[String]) -> Option<usize> {
    let top = module.first()?;
    STAGES.iter().position(|s| s.contains(&top.as_str()))
}

/// Paths (`crate::a::b::c`, `super::x`) in a file's code (comments dropped), as module paths
/// relative to the crate root, each with whether it is a re-export or a `mod` of a child.
fn imported_modules(file: &Path, modules: &BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(file).unwrap();
    let here = module_of(file);
    let is_mod_file = file.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs");
    let mut out = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let trimmed = code.trim_start();
        // A parent declaring or re-exporting its children is structure, not a dependency.
        if is_mod_file && (trimmed.starts_with("pub use ") || trimmed.starts_with("pub(crate) use ")) {
            continue;
        }
        // A `mod x;` line declares a child: structure.
        if trimmed.starts_with("mod ") || trimmed.starts_with("pub mod ") || trimmed.starts_with("pub(crate) mod ") {
            continue;
        }
        let starts: Vec<usize> = code
            .match_indices("::")
            .filter_map(|(i, _)| {
                // The start of the path this `::` belongs to (only its first segment matters).
                let before = &code[..i];
                let start =
                    before.rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).map(|p| p + 1).unwrap_or(0);
                (!before[start..].contains("::")).then_some(start)
            })
            .collect();
        for i in starts {
            let rest = &code[i..];
            let first = rest.split("::").next().unwrap_or("");
            let mut child = here.clone();
            child.push(first.to_string());
            // Paths from the crate root, from the parent, or into a child module of this file.
            if first != "crate" && first != "super" && !modules.contains(&child) {
                continue;
            }
            let path: Vec<&str> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .collect();
            let (mut module, mut k): (Vec<String>, usize) = match path[0] {
                "crate" => (Vec::new(), 1),
                // `super` from module a::b is a.
                "super" => {
                    let mut m = here.clone();
                    m.pop();
                    (m, 1)
                }
                _ => (here.clone(), 0),
            };
            while path.get(k) == Some(&"super") {
                module.pop();
                k += 1;
            }
            // Walk down while the path names modules; the rest names an item of the last one.
            for seg in &path[k..] {
                let mut next = module.clone();
                next.push(seg.to_string());
                if modules.contains(&next) {
                    module = next;
                } else {
                    break;
                }
            }
            if module != here && !module.is_empty() {
                out.push(module);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(f)).collect();
    files.iter().map(|f| (module_of(f), imported_modules(f, &modules).into_iter().collect())).collect()
}

#[test]
fn no_file_imports_a_higher_stage() {
    let mut bad = Vec::new();
    for (module, deps) in graph() {
        let Some(stage) = stage_of(&module) else { continue };
        for d in deps {
            if let Some(ds) = stage_of(&d) {
                if ds > stage {
                    bad.push(format!(
                        "{} ({}) imports {} ({})",
                        module.join("::"),
                        STAGES[stage][0],
                        d.join("::"),
                        STAGES[ds][0]
                    ));
                }
            }
        }
    }
    assert!(bad.is_empty(), "imports that run up the stages:\n  {}", bad.join("\n  "));
}

#[test]
fn no_import_cycles_between_files() {
    let g = graph();
    // Depth-first search for a back edge; report each cycle found.
    let mut cycles = Vec::new();
    let mut state: BTreeMap<&Vec<String>, u8> = BTreeMap::new();
    fn visit<'a>(
        n: &'a Vec<String>,
        g: &'a BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        state: &mut BTreeMap<&'a Vec<String>, u8>,
        stack: &mut Vec<&'a Vec<String>>,
        cycles: &mut Vec<String>,
    ) {
        state.insert(n, 1);
        stack.push(n);
        for d in g.get(n).into_iter().flatten() {
            match state.get(d) {
                Some(1) => {
                    let from = stack.iter().position(|x| *x == d).unwrap();
                    let names: Vec<String> = stack[from..].iter().map(|m| m.join("::")).collect();
                    cycles.push(format!("{} -> {}", names.join(" -> "), d.join("::")));
                }
                None if g.contains_key(d) => visit(d, g, state, stack, cycles),
                _ => {}
            }
        }
        stack.pop();
        state.insert(n, 2);
    }
    for n in g.keys() {
        if !state.contains_key(n) {
            visit(n, &g, &mut state, &mut Vec::new(), &mut cycles);
        }
    }
    assert!(cycles.is_empty(), "import cycles:\n  {}", cycles.join("\n  "));
}

/// The public modules, each a deliberate part of the API (what a user or a compiler engineer
/// reaches for); everything else is `pub(crate)` and re-exported where it is API. Making a
/// module public is a decision: add it here.
const PUBLIC_MODULES: &[&str] = &[
    "codegen",
    "codegen::opts",
    "codegen::passes",
    "compiler_log",
    "device",
    "distributed",
    "engine",
    "engine::beam",
    "error",
    "flags",
    "func",
    "gradient",
    "helpers",
    "jit",
    "models",
    "models::auto",
    "models::bert",
    "models::config",
    "models::generate",
    "models::gpt2",
    "models::kv_cache",
    "models::llama",
    "models::tokenize",
    "nn",
    "nn::datasets",
    "nn::optim",
    "nn::gguf",
    "nn::safetensors",
    "onnx",
    "onnx::proto",
    "renderer",
    "renderer::cstyle",
    "renderer::ptx",
    "renderer::wgsl",
    "runtime",
    "runtime::cc",
    "runtime::cpu",
    "runtime::cuda",
    "runtime::graph",
    "runtime::hip",
    "runtime::metal",
    "runtime::null",
    "runtime::opencl",
    "runtime::webgpu",
    "schedule",
    "tensor",
    "uop",
    "uop::dtype",
    "uop::pattern",
    "uop::print",
    "uop::symbolic",
    "viz",
];

#[test]
fn public_modules_are_the_documented_api() {
    let mut files = Vec::new();
    rust_files(&src_dir(), &mut files);
    let mut found = BTreeSet::new();
    for f in &files {
        let parent = module_of(f);
        for line in std::fs::read_to_string(f).unwrap().lines() {
            if let Some(name) = line.trim().strip_prefix("pub mod ").and_then(|r| r.strip_suffix(';')) {
                let mut path = parent.clone();
                path.push(name.to_string());
                found.insert(path.join("::"));
            }
        }
    }
    let want: BTreeSet<String> = PUBLIC_MODULES.iter().map(|s| s.to_string()).collect();
    let extra: Vec<_> = found.difference(&want).collect();
    let gone: Vec<_> = want.difference(&found).collect();
    assert!(
        extra.is_empty() && gone.is_empty(),
        "public modules not in PUBLIC_MODULES: {extra:?}; listed but not public: {gone:?}"
    );
}
