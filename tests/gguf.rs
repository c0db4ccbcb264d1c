//! GGUF: metadata and tensors of every supported type read from a file written by the `gguf`
//! Python package, quantized values equal to that package's dequantization (fixture from
//! scripts/gguf_fixtures.py), quantized weights kept quantized in memory, and corrupt or
//! truncated files giving errors that name the file, never panics.

use ferrograd::nn::{gguf_load, gguf_load_on, GgmlType, GgufValue};
use ferrograd::{DType, Tensor};
use std::path::{Path, PathBuf};

mod common;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gguf/quants.gguf")
}

fn device() -> String {
    std::env::var("DEV").unwrap_or_else(|_| "CPU".into())
}

#[test]
fn metadata_of_every_value_type() {
    let g = gguf_load_on(fixture(), "CPU").unwrap();
    let m = &g.metadata;
    assert_eq!(m["general.architecture"].as_str(), Some("ferrograd-test"));
    assert_eq!(m["test.u8"], GgufValue::U8(200));
    assert_eq!(m["test.i8"], GgufValue::I8(-7));
    assert_eq!(m["test.u16"], GgufValue::U16(60000));
    assert_eq!(m["test.i16"], GgufValue::I16(-30000));
    assert_eq!(m["test.u32"], GgufValue::U32(4_000_000_000));
    assert_eq!(m["test.i32"], GgufValue::I32(-2_000_000_000));
    assert_eq!(m["test.u64"], GgufValue::U64((1 << 40) + 3));
    assert_eq!(m["test.i64"], GgufValue::I64(-(1 << 40) - 3));
    assert_eq!(m["test.f32"], GgufValue::F32(0.25));
    assert_eq!(m["test.f64"], GgufValue::F64(1e-300));
    assert_eq!(m["test.bool"], GgufValue::Bool(true));
    assert_eq!(m["test.string"].as_str(), Some("ferrograd ✓"));
    let strings: Vec<_> = m["test.strings"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(strings, ["a", "bc", ""]);
    let ints: Vec<_> = m["test.ints"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).collect();
    assert_eq!(ints, [1, 2, 3]);
}

/// Every tensor equals its `.ref` twin, dequantized by the `gguf` package, bit for bit.
#[test]
fn dequantized_values_equal_the_gguf_package() {
    let g = gguf_load_on(fixture(), &device()).unwrap();
    let mut checked = Vec::new();
    for (name, t) in &g.tensors {
        let Some(reference) = g.tensors.get(&format!("{name}.ref")) else { continue };
        assert_eq!(t.shape(), reference.shape(), "{name}");
        let got = t.cast(DType::F32).to_vec::<f32>().unwrap();
        let want = reference.to_vec::<f32>().unwrap();
        let bad = got.iter().zip(&want).position(|(a, b)| a.to_bits() != b.to_bits());
        if let Some(i) = bad {
            panic!("{name} ({:?}): element {i} is {} but gguf gives {}", g.types[name], got[i], want[i]);
        }
        checked.push(g.types[name]);
    }
    use GgmlType::*;
    for ty in [F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K] {
        assert!(checked.contains(&ty), "no fixture tensor of type {ty:?}");
    }
    assert_eq!(g.tensors["q8_0_3d"].shape(), vec![2, 3, 64]);
    assert_eq!(g.tensors["i32"].to_vec::<i32>().unwrap(), vec![-3, -2, -1, 0, 1, 2]);
    assert_eq!(g.tensors["f16"].dtype(), DType::F16);
    assert_eq!(g.tensors["bf16"].dtype(), DType::BF16);
}

/// A quantized weight costs its packed bytes in memory, and a matmul reading it dequantizes
/// inside its kernel: no f32 copy of the weight is made.
#[test]
fn quantized_weights_stay_quantized() {
    let g = gguf_load_on(fixture(), &device()).unwrap();
    let w = &g.tensors["q4_k"];
    assert_eq!(w.shape(), vec![3, 512]);
    let x = Tensor::ones([2, 512]);
    let want = g.tensors["q4_k.ref"].sum_axis(1).to_vec::<f32>().unwrap();
    let before = ferrograd::engine::kernels_built_on_this_thread();
    let y = x.matmul(&w.transpose(0, 1)).to_vec::<f32>().unwrap();
    for (i, v) in y.iter().enumerate() {
        let r = want[i % 3];
        assert!((v - r).abs() <= 1e-3 * r.abs().max(1.0), "row {i}: {v} vs {r}");
    }
    let built = ferrograd::engine::kernels_built_on_this_thread() - before;
    assert!(built <= 1, "the matmul over a Q4_K weight took {built} kernels (dequantize fused: 1)");
}

fn try_load(path: &Path, bytes: &[u8], what: &str) -> bool {
    std::fs::write(path, bytes).unwrap();
    match std::panic::catch_unwind(|| gguf_load_on(path, "CPU")) {
        Err(_) => panic!("gguf_load panicked on {what}"),
        Ok(Ok(_)) => true,
        Ok(Err(e)) => {
            let msg = e.to_string();
            assert!(msg.contains(&path.display().to_string()), "error for {what} does not name the file: {msg}");
            false
        }
    }
}

#[test]
fn corrupt_and_truncated_files_give_errors() {
    let dir = std::env::temp_dir().join(format!("ferrograd-gguf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("corrupt.gguf");
    let valid = std::fs::read(fixture()).unwrap();
    assert!(try_load(&p, &valid, "the valid file"));
    // The last tensor's data ends within the final alignment padding (32 bytes); any cut
    // before that loses data.
    for n in (0..valid.len() - 32).step_by(7).chain(valid.len() - 40..valid.len() - 32) {
        assert!(!try_load(&p, &valid[..n], &format!("truncation to {n} bytes")), "truncation to {n} loaded");
    }
    let err = gguf_load(&p).err().unwrap().to_string();
    assert!(err.contains("truncated"), "{err}");
    // Not GGUF, an old version, a big-endian file.
    let mut b = valid.clone();
    b[0] = b'X';
    assert!(!try_load(&p, &b, "bad magic"));
    for version in [1u32, 4, 3u32.swap_bytes()] {
        let mut b = valid.clone();
        b[4..8].copy_from_slice(&version.to_le_bytes());
        assert!(!try_load(&p, &b, &format!("version {version}")));
    }
    // Counts that would allocate without bound.
    for (at, what) in [(8, "tensor count"), (16, "metadata count")] {
        let mut b = valid.clone();
        b[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(!try_load(&p, &b, what));
    }
    // Random bit flips in the header (where every length and offset lives).
    let header_len = 2048.min(valid.len());
    let mut rng = common::Rng::new(0x1234_5678_9abc_def1);
    for i in 0..1500 {
        let mut b = valid.clone();
        for _ in 0..(1 + i % 3) {
            let pos = (rng.next_u64() as usize) % header_len;
            b[pos] ^= 1 << (rng.next_u64() % 8);
        }
        try_load(&p, &b, &format!("header flips #{i}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_file_is_an_error_naming_it() {
    let err = gguf_load("/nonexistent/model.gguf").err().unwrap().to_string();
    assert!(err.contains("/nonexistent/model.gguf"), "{err}");
}
