//! The Metal dialect without a Mac: the MSL the code generator writes for every kernel of the
//! shared case set (heuristic opts) is checked in under tests/golden/metal/ (reviewed by eye once),
//! and each must be rendered exactly so; `UPDATE_GOLDEN=1` rewrites the files after a deliberate
//! change (review the diff). Then clang++ checks the syntax and types of every kernel against a
//! stand-in for `<metal_stdlib>` (tests/golden/metal/include), which catches undeclared helpers
//! and type errors though it is not Metal's compiler (skipped without clang++).

mod gpu_cases;

use ferrograd::codegen::get_program;
use ferrograd::renderer::cstyle::metal_renderer;
use ferrograd::schedule::{create_schedule, ItemKind};
use ferrograd::tensor::with_default_device;
use std::path::{Path, PathBuf};
use std::process::Command;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/metal")
}

/// Each case's kernels: (case, [(kernel name, source)]) in schedule order, distinct sources only.
fn rendered() -> Vec<(&'static str, Vec<(String, String)>)> {
    let renderer = metal_renderer("METAL");
    gpu_cases::cases()
        .into_iter()
        .map(|case| {
            let items = with_default_device("CPU", || {
                let outs = (case.build)();
                create_schedule(&outs.iter().map(|t| t.uop()).collect::<Vec<_>>()).items
            });
            let mut kernels: Vec<(String, String)> = Vec::new();
            for item in items.iter().filter(|i| i.kind == ItemKind::Kernel) {
                let spec = get_program(&item.ast, &renderer, None);
                if !kernels.iter().any(|(_, s)| s == &spec.src) {
                    kernels.push((spec.name.clone(), spec.src));
                }
            }
            assert!(!kernels.is_empty(), "{}: no kernels", case.name);
            (case.name, kernels)
        })
        .collect()
}

/// A source split at its kernel: (prelude, kernel).
fn split(src: &str) -> (&str, &str) {
    let at = src.find("\nkernel void ").expect("an MSL kernel") + 1;
    src.split_at(at)
}

/// The golden file of one case: its kernels without the shared prelude, each after a line naming it.
fn golden_text(kernels: &[(String, String)]) -> String {
    kernels.iter().map(|(name, src)| format!("// ---- {name}\n{}", split(src).1)).collect()
}

#[test]
fn metal_sources_match_the_golden_files() {
    let cases = rendered();
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let prelude = split(&cases[0].1[0].1).0.to_string();
    let mut stale = Vec::new();
    for (case, kernels) in &cases {
        for (name, src) in kernels {
            assert_eq!(split(src).0, prelude, "{case}/{name}: another prelude");
        }
        let files = [(format!("{case}.metal"), golden_text(kernels))];
        let files = if *case == cases[0].0 {
            vec![("prelude.metal".to_string(), prelude.clone()), files[0].clone()]
        } else {
            files.to_vec()
        };
        for (file, text) in files {
            let path = golden_dir().join(&file);
            if update {
                std::fs::write(&path, &text).unwrap();
            } else if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "the rendered MSL differs from tests/golden/metal/{{{}}}: rerun with UPDATE_GOLDEN=1 if the change is meant, and review the diff",
        stale.join(",")
    );
    let kernels: usize = cases.iter().map(|(_, k)| k.len()).sum();
    assert!(kernels >= 20, "only {kernels} kernels");
    let all: String = cases.iter().flat_map(|(_, k)| k.iter().map(|(_, s)| s.as_str())).collect();
    for needed in
        ["threadgroup_barrier(mem_flags::mem_threadgroup);", "threadgroup float", "constant int& ", "as_type<"]
    {
        assert!(all.contains(needed), "no kernel of the set uses `{needed}`");
    }
}

fn clang() -> Option<&'static str> {
    ["clang++", "clang++-15", "clang++-14"]
        .into_iter()
        .find(|c| Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
}

#[test]
fn metal_sources_pass_a_syntax_check() {
    let Some(clang) = clang() else {
        eprintln!("SKIPPED: no clang++ to check the MSL's syntax with");
        return;
    };
    let dir = std::env::temp_dir().join(format!("ferrograd-metal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (case, kernels) in rendered() {
        // One translation unit per case: the prelude once, each kernel in a namespace of its own.
        let mut unit = split(&kernels[0].1).0.to_string();
        for (k, (_, src)) in kernels.iter().enumerate() {
            unit.push_str(&format!("namespace k{k} {{\n{}}}\n", split(src).1));
        }
        let file = dir.join(format!("{case}.cpp"));
        std::fs::write(&file, &unit).unwrap();
        let include = golden_dir().join("include");
        let out = Command::new(clang)
            .args(["-std=c++17", "-fsyntax-only", "-Wno-unknown-attributes", "-Werror=return-type", "-I"])
            .arg(&include)
            .arg(&file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{case}: clang++ rejects the MSL:\n{}", String::from_utf8_lossy(&out.stderr));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn metal_elsewhere_than_macos_is_a_clear_error() {
    if cfg!(target_os = "macos") {
        return;
    }
    match ferrograd::runtime::get_device("METAL") {
        Err(ferrograd::Error::DeviceUnavailable { reason, .. }) => {
            // Not "rebuild with --features metal": that would not help here.
            assert!(reason.contains("macOS only"), "{reason}");
        }
        Err(e) => panic!("expected DeviceUnavailable, got {e:?}"),
        Ok(d) => panic!("METAL opened as {} off macOS", d.name()),
    }
}
