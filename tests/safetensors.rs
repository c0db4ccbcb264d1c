//! safetensors: interop with the Python package both ways (fixtures in
//! tests/fixtures/safetensors/), round trips of every dtype, and a fuzz-style test that corrupt
//! files give errors, never panics or out-of-bounds reads.

use ferrograd::nn::{safe_load, safe_load_metadata, safe_load_on, safe_save, safe_save_with_metadata};
use ferrograd::{DType, Element, Error, Tensor};
use half::{bf16, f16};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const DEVICES: [&str; 2] = ["CPU", "INTERP"];

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/safetensors").join(name)
}

/// A fresh empty directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("ferrograd-st-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn t<T: Element>(data: &[T], shape: &[usize]) -> Tensor {
    Tensor::from_vec(data.to_vec(), shape.to_vec())
}

/// The values both fixtures hold (the same constants as scripts/safetensors_fixture.py and
/// scripts/check_safetensors.py).
fn common_dict() -> BTreeMap<String, Tensor> {
    let h = |v: &[f32]| v.iter().map(|&x| f16::from_f32(x)).collect::<Vec<_>>();
    let b = |v: &[f32]| v.iter().map(|&x| bf16::from_f32(x)).collect::<Vec<_>>();
    let mut d = BTreeMap::new();
    let mut put = |k: &str, v: Tensor| d.insert(k.to_string(), v);
    put("f32", t(&[1.5f32, -2.25, 3.0, 0.0, 1e-3, -65504.0], &[2, 3]));
    put("f64", t(&[0.1f64, -1e300, 2.5], &[3]));
    put("f16", t(&h(&[0.5, -1.0, 65504.0, 2f32.powi(-14)]), &[2, 2]));
    put("bf16", t(&b(&[1.0, -0.5, 3.140625, 256.0]), &[4]));
    put("i8", t(&[-128i8, 5, 127], &[3]));
    put("i16", t(&[-32768i16, 32767], &[2]));
    put("i32", t(&(-6..6).collect::<Vec<i32>>(), &[2, 3, 2]));
    put("i64", t(&[-(1i64 << 62), 0, (1 << 40) + 7, -1], &[4]));
    put("u8", t(&[0u8, 7, 255], &[3]));
    put("u16", t(&[65535u16, 1], &[2]));
    put("u32", t(&[4294967295u32, 2], &[2]));
    put("u64", t(&[u64::MAX, 3], &[2]));
    put("bool", t(&[true, false, true], &[1, 3]));
    put("scalar", t(&[42.0f32], &[]));
    put("empty", t::<f32>(&[], &[2, 0]));
    put("layer.0.weight", t(&[1.0f32, 2.0, 3.0, 4.0], &[2, 2]));
    d
}

/// Asserts two tensors have the same shape, dtype and bytes.
fn assert_same(name: &str, have: &Tensor, want: &Tensor) {
    assert_eq!(have.shape(), want.shape(), "{name}: shape");
    assert_eq!(have.dtype(), want.dtype(), "{name}: dtype");
    assert_eq!(have.to_bytes().unwrap(), want.to_bytes().unwrap(), "{name}: values");
}

#[test]
fn loads_the_python_fixture() {
    let path = fixture("from_python.safetensors");
    for dev in DEVICES {
        let got = safe_load_on(&path, dev).unwrap();
        let want = common_dict();
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>());
        for (k, w) in &want {
            assert_eq!(got[k].device(), dev);
            assert_same(k, &got[k], w);
        }
        // Spot checks by value, independent of the byte encoding used above.
        assert_eq!(got["i64"].to_vec::<i64>().unwrap(), vec![-(1 << 62), 0, (1 << 40) + 7, -1]);
        assert_eq!(got["bool"].to_vec::<bool>().unwrap(), vec![true, false, true]);
        assert_eq!(got["scalar"].shape(), Vec::<usize>::new());
        assert_eq!(got["scalar"].item::<f32>().unwrap(), 42.0);
        assert_eq!(got["bf16"].to_f64_vec().unwrap(), vec![1.0, -0.5, 3.140625, 256.0]);
        assert_eq!(got["f16"].to_f64_vec().unwrap(), vec![0.5, -1.0, 65504.0, 6.103515625e-05]);
    }
    let meta = safe_load_metadata(&path).unwrap();
    assert_eq!(meta.get("written_by").map(String::as_str), Some("scripts/safetensors_fixture.py"));
}

/// What ferrograd writes for scripts/check_safetensors.py: the common values plus a lazily
/// computed tensor and a transposed view (saved in row-major order of the view).
fn ferrograd_dict() -> BTreeMap<String, Tensor> {
    let mut d = common_dict();
    let computed = (Tensor::arange(6).cast(DType::F32) * 2.0 + 1.0).reshape([2, 3]);
    d.insert("computed".into(), computed);
    d.insert("transposed".into(), t(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).permute([1, 0]));
    d
}

fn ferrograd_metadata() -> BTreeMap<String, String> {
    [("format", "ferrograd"), ("note", "written by tests/safetensors.rs")]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Writes the dict to a temp file and compares it with the committed fixture, which
/// scripts/check_safetensors.py checks with the Python package. Set FERROGRAD_UPDATE_FIXTURES=1
/// (or delete the fixture) to write it afresh.
#[test]
fn writes_the_committed_interop_fixture() {
    let tmp = TempDir::new("interop");
    let out = tmp.0.join("from_ferrograd.safetensors");
    safe_save_with_metadata(&ferrograd_dict(), &ferrograd_metadata(), &out).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let committed = fixture("from_ferrograd.safetensors");
    if std::env::var_os("FERROGRAD_UPDATE_FIXTURES").is_some() || !committed.exists() {
        std::fs::write(&committed, &bytes).unwrap();
    }
    assert!(
        std::fs::read(&committed).unwrap() == bytes,
        "safe_save output differs from {}; if intended, rerun with FERROGRAD_UPDATE_FIXTURES=1 and check it with \
         scripts/check_safetensors.py",
        committed.display()
    );
    // And it reads back.
    let back = safe_load(&out).unwrap();
    let want = ferrograd_dict();
    assert_eq!(back.len(), want.len());
    for (k, w) in &want {
        assert_same(k, &back[k], w);
    }
    assert_eq!(back["transposed"].to_vec::<f32>().unwrap(), vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(safe_load_metadata(&out).unwrap(), ferrograd_metadata());
}

#[test]
fn round_trips_every_dtype_on_every_device() {
    let tmp = TempDir::new("roundtrip");
    for dev in DEVICES {
        let d: BTreeMap<String, Tensor> = common_dict().into_iter().map(|(k, v)| (k, v.to(dev))).collect();
        let p = tmp.0.join(format!("{dev}.safetensors"));
        safe_save(&d, &p).unwrap();
        let back = safe_load_on(&p, dev).unwrap();
        for (k, w) in &d {
            assert_same(k, &back[k], w);
        }
        assert!(safe_load_metadata(&p).unwrap().is_empty());
    }
    // Every tensor dtype is covered by the dict.
    let dtypes: Vec<DType> = common_dict().values().map(|t| t.dtype()).collect();
    assert!(DType::ALL.iter().all(|d| dtypes.contains(d)));
    // An empty dict is a valid file too.
    let p = tmp.0.join("empty.safetensors");
    safe_save(&BTreeMap::new(), &p).unwrap();
    assert!(safe_load(&p).unwrap().is_empty());
}

#[test]
fn missing_file_and_unsupported_dtype_are_errors() {
    let tmp = TempDir::new("errors");
    let p = tmp.0.join("nope.safetensors");
    let e = safe_load(&p).unwrap_err();
    assert!(matches!(e, Error::File { .. }) && e.to_string().contains("nope.safetensors"), "{e}");
    let header = br#"{"x":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}}"#;
    let p = tmp.0.join("f8.safetensors");
    std::fs::write(&p, file_with(header, &[1, 2])).unwrap();
    let msg = safe_load(&p).unwrap_err().to_string();
    assert!(msg.contains("f8.safetensors") && msg.contains("F8_E4M3") && msg.contains("`x`"), "{msg}");
}

/// An 8-byte length, the header, the data.
fn file_with(header: &[u8], data: &[u8]) -> Vec<u8> {
    let mut v = (header.len() as u64).to_le_bytes().to_vec();
    v.extend_from_slice(header);
    v.extend_from_slice(data);
    v
}

/// Loads `bytes` from a file; Ok or Err are both fine, a panic is not. Returns whether it loaded.
fn try_load(path: &Path, bytes: &[u8], what: &str) -> bool {
    std::fs::write(path, bytes).unwrap();
    let r = std::panic::catch_unwind(|| safe_load_on(path, "CPU"));
    match r {
        Err(_) => panic!("safe_load panicked on {what}"),
        Ok(Ok(d)) => {
            // A file that loads must give tensors whose data can be read.
            for t in d.values() {
                assert_eq!(t.to_bytes().unwrap().len(), t.numel() * t.dtype().itemsize(), "{what}");
            }
            true
        }
        Ok(Err(e)) => {
            let msg = e.to_string();
            assert!(msg.contains(&path.display().to_string()), "error for {what} does not name the file: {msg}");
            false
        }
    }
}

/// xorshift64*: deterministic corruptions.
fn rng(state: &mut u64) -> u64 {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    state.wrapping_mul(0x2545_F491_4F6C_DD1D)
}

#[test]
fn corrupt_files_give_errors_never_panics() {
    let tmp = TempDir::new("fuzz");
    let src = tmp.0.join("valid.safetensors");
    let mut d = BTreeMap::new();
    d.insert("a".to_string(), t(&[1.0f32, 2.0, 3.0], &[3]));
    d.insert("b".to_string(), t(&[7i64, -1], &[2, 1]));
    d.insert("c".to_string(), t(&[true], &[]));
    safe_save(&d, &src).unwrap();
    let valid = std::fs::read(&src).unwrap();
    let hlen = u64::from_le_bytes(valid[..8].try_into().unwrap()) as usize;
    let p = tmp.0.join("corrupt.safetensors");
    assert!(try_load(&p, &valid, "the valid file"));

    // Every truncation (and one extra byte).
    for n in 0..valid.len() {
        assert!(!try_load(&p, &valid[..n], &format!("truncation to {n} bytes")), "truncation to {n} loaded");
    }
    let mut longer = valid.clone();
    longer.push(0);
    assert!(!try_load(&p, &longer, "one trailing byte"));

    // Header length field: huge, just past the end, off by a little.
    let total = valid.len() as u64;
    for n in [u64::MAX, 1 << 63, 1 << 32, 100_000_001, total, total - 7, hlen as u64 + 1, hlen as u64 - 1, 0, 1] {
        let mut b = valid.clone();
        b[..8].copy_from_slice(&n.to_le_bytes());
        assert!(!try_load(&p, &b, &format!("header length {n}")));
    }

    // Random byte flips in the header and length field: single and multiple.
    let mut s = 0x1234_5678_9abc_def1u64;
    for i in 0..1500 {
        let mut b = valid.clone();
        for _ in 0..(1 + i % 3) {
            let pos = (rng(&mut s) as usize) % (8 + hlen);
            b[pos] ^= 1 << (rng(&mut s) % 8);
        }
        try_load(&p, &b, &format!("header flips #{i}"));
    }
    // Random bytes anywhere, including the data (always loads or errors).
    for i in 0..300 {
        let mut b = valid.clone();
        let pos = (rng(&mut s) as usize) % b.len();
        b[pos] = rng(&mut s) as u8;
        try_load(&p, &b, &format!("random byte #{i}"));
    }

    // Headers that lie: offsets past the end, overlapping, gaps, reversed, sizes that overflow.
    let lies: &[(&str, usize)] = &[
        (r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,1000000]}}"#, 8),
        (
            r#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}"#,
            12,
        ),
        (
            r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}"#,
            12,
        ),
        (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,0]}}"#, 4),
        (
            r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}"#,
            4,
        ),
        (r#"{"a":{"dtype":"U8","shape":[4294967296,4294967296,4294967296],"data_offsets":[0,0]}}"#, 0),
        (r#"{"a":{"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,18446744073709551615]}}"#, 0),
        (r#"{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}"#, 4),
        (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0.5,4]}}"#, 4),
        (r#"{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}"#, 16),
        (r#"{"a":{"dtype":"F32","shape":[1]}}"#, 4),
        (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"__metadata__":{"k":1}}"#, 4),
        (r#"{"a":{"dtype":"F4","shape":[3],"data_offsets":[0,1]}}"#, 1),
        (r#"[1,2,3]"#, 0),
        (r#"{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}"#, 4),
    ];
    for (i, (header, data_len)) in lies.iter().enumerate() {
        let b = file_with(header.as_bytes(), &vec![0u8; *data_len]);
        assert!(!try_load(&p, &b, &format!("lying header #{i} {header}")), "lying header #{i} loaded: {header}");
    }
    let not_utf8 = file_with(b"{\"a\xff\":{}}", &[]);
    assert!(!try_load(&p, &not_utf8, "a header that is not UTF-8"));
    // Offsets chosen so that "data end + header length" overflows a usize: sixteen tensors of
    // 2^60 bytes claim to end at 2^64 - 1 (the reference reader's own length check would
    // overflow here; ours checks against the file length first).
    let mut parts = Vec::new();
    let mut start: u128 = 0;
    for i in 0..16u128 {
        let len: u128 = if i < 15 { 1 << 60 } else { (1 << 60) - 1 };
        parts.push(format!(r#""t{i:02}":{{"dtype":"U8","shape":[{len}],"data_offsets":[{start},{}]}}"#, start + len));
        start += len;
    }
    let header = format!("{{{}}}", parts.join(","));
    assert!(!try_load(&p, &file_with(header.as_bytes(), &[]), "offsets summing to usize::MAX"));
}

/// `safe_save` to a symbolic link writes the file the link names, as `torch.save` does: the
/// link stays a link (a dangling one gets its target created).
#[test]
fn safe_save_writes_through_symbolic_links() {
    use std::collections::BTreeMap;
    let dir = std::env::temp_dir().join(format!("ferrograd-symlink-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("real")).unwrap();
    let target = dir.join("real").join("weights.safetensors");
    let link = dir.join("link.safetensors");
    std::os::unix::fs::symlink("real/weights.safetensors", &link).unwrap();
    for (round, value) in [(0, 1.5f32), (1, -2.5)] {
        // Round 0: the link dangles; round 1: it names the file round 0 wrote.
        let mut dict = BTreeMap::new();
        dict.insert("w".to_string(), ferrograd::Tensor::from_vec(vec![value; 3], [3]));
        ferrograd::nn::safe_save(&dict, &link).unwrap();
        assert!(
            std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(),
            "round {round}: the link was replaced"
        );
        assert!(std::fs::symlink_metadata(&target).unwrap().is_file(), "round {round}: the target was not written");
        let loaded = ferrograd::nn::safe_load(&target).unwrap();
        assert_eq!(loaded["w"].to_vec::<f32>().unwrap(), vec![value; 3], "round {round}");
    }
    let _ = std::fs::remove_dir_all(dir);
}
