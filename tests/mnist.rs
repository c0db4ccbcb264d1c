//! MNIST loading: the real files (from ../shared/data/mnist when present), the un-gzipped
//! variant, and clear errors for missing, corrupt, truncated or wrong-sized files. Reference
//! values (label sums, pixel sums) were computed with NumPy from the same files.

use ferrograd::nn::datasets::{download_mnist, missing_mnist_files, mnist_dirs, mnist_from, read_idx};
use ferrograd::{DType, Error, Tensor};
use flate2::write::GzEncoder;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

const NAMES: [&str; 4] =
    ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"];

fn shared_mnist() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/mnist");
    if missing_mnist_files(&dir).is_empty() {
        Some(dir)
    } else {
        println!("skipping: MNIST files not found in {}", dir.display());
        None
    }
}

/// A fresh empty directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("ferrograd-mnist-{tag}-{}", std::process::id()));
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

fn sum_u8(t: &Tensor) -> u64 {
    t.to_vec::<u8>().unwrap().iter().map(|&x| x as u64).sum()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(data), &mut out).unwrap();
    out
}

/// An unsigned-byte IDX file of `shape` filled with `i % 251`.
fn idx_bytes(shape: &[u32]) -> Vec<u8> {
    let mut v = vec![0, 0, 8, shape.len() as u8];
    for d in shape {
        v.extend(d.to_be_bytes());
    }
    let n: u32 = shape.iter().product();
    v.extend((0..n).map(|i| (i % 251) as u8));
    v
}

fn check_full(train_x: &Tensor, train_y: &Tensor, test_x: &Tensor, test_y: &Tensor) {
    assert_eq!(train_x.shape(), vec![60000, 1, 28, 28]);
    assert_eq!(train_y.shape(), vec![60000]);
    assert_eq!(test_x.shape(), vec![10000, 1, 28, 28]);
    assert_eq!(test_y.shape(), vec![10000]);
    for t in [train_x, train_y, test_x, test_y] {
        assert_eq!(t.dtype(), DType::U8);
    }
    let labels = train_y.to_vec::<u8>().unwrap();
    assert_eq!(labels[..10], [5, 0, 4, 1, 9, 2, 1, 3, 1, 4]);
    assert_eq!(test_y.to_vec::<u8>().unwrap()[..10], [7, 2, 1, 0, 4, 1, 4, 9, 5, 9]);
    assert_eq!(labels.iter().map(|&x| x as u64).sum::<u64>(), 267236);
    assert_eq!(sum_u8(test_y), 44434);
    let pixels = train_x.to_vec::<u8>().unwrap();
    assert_eq!(pixels.iter().map(|&x| x as u64).sum::<u64>(), 1567298545);
    assert_eq!(pixels[..784].iter().map(|&x| x as u64).sum::<u64>(), 27525);
    assert_eq!(pixels[14 * 28 + 13..14 * 28 + 19], [81, 240, 253, 253, 119, 25]);
    assert_eq!(sum_u8(test_x), 264923200);
}

#[test]
fn loads_the_gzipped_files() {
    let Some(dir) = shared_mnist() else { return };
    let (a, b, c, d) = mnist_from(&dir).unwrap();
    check_full(&a, &b, &c, &d);
}

#[test]
fn loads_the_ungzipped_files() {
    let Some(dir) = shared_mnist() else { return };
    let tmp = TempDir::new("raw");
    for n in NAMES {
        let gz = std::fs::read(dir.join(format!("{n}.gz"))).unwrap();
        std::fs::write(tmp.0.join(n), gunzip(&gz)).unwrap();
    }
    let (a, b, c, d) = mnist_from(&tmp.0).unwrap();
    check_full(&a, &b, &c, &d);
}

#[test]
fn missing_files_are_named_with_where_to_put_them() {
    let tmp = TempDir::new("missing");
    std::fs::write(tmp.0.join("train-labels-idx1-ubyte"), idx_bytes(&[60000])).unwrap();
    let msg = mnist_from(&tmp.0).unwrap_err().to_string();
    assert!(msg.contains("train-images-idx3-ubyte") && msg.contains("t10k-labels-idx1-ubyte"), "{msg}");
    assert!(!msg.contains("train-labels-idx1-ubyte"), "{msg}");
    assert!(msg.contains(&tmp.0.display().to_string()), "{msg}");
    assert_eq!(missing_mnist_files(&tmp.0).len(), 3);
}

#[test]
fn lookup_order_is_mnist_dir_then_cache() {
    let cache = Path::new("/some/cache/ferrograd");
    let mut env = BTreeMap::new();
    assert_eq!(mnist_dirs(&env, cache), vec![cache.join("mnist")]);
    env.insert("MNIST_DIR".to_string(), "  ".to_string());
    assert_eq!(mnist_dirs(&env, cache), vec![cache.join("mnist")]);
    env.insert("MNIST_DIR".to_string(), "/data/mnist".to_string());
    assert_eq!(mnist_dirs(&env, cache), vec![PathBuf::from("/data/mnist"), cache.join("mnist")]);
}

#[test]
fn reads_small_idx_files_raw_and_gzipped() {
    let tmp = TempDir::new("idx");
    let raw = idx_bytes(&[3, 2, 5]);
    std::fs::write(tmp.0.join("a"), &raw).unwrap();
    std::fs::write(tmp.0.join("a.gz"), gzip(&raw)).unwrap();
    for name in ["a", "a.gz"] {
        let t = read_idx(tmp.0.join(name)).unwrap();
        assert_eq!(t.shape(), vec![3, 2, 5]);
        assert_eq!(t.to_vec::<u8>().unwrap(), (0..30u8).collect::<Vec<_>>());
    }
}

fn idx_error(tag: &str, bytes: &[u8]) -> String {
    let tmp = TempDir::new(tag);
    let p = tmp.0.join("f");
    std::fs::write(&p, bytes).unwrap();
    let e = read_idx(&p).unwrap_err();
    assert!(matches!(e, Error::Format { .. }), "{e:?}");
    let msg = e.to_string();
    assert!(msg.contains(&p.display().to_string()), "error does not name the file: {msg}");
    msg
}

#[test]
fn bad_magic_is_an_error() {
    let mut b = idx_bytes(&[4]);
    b[2] = 0x0d; // float data
    assert!(idx_error("magic1", &b).contains("bad magic"));
    assert!(idx_error("magic2", b"PK\x03\x04 not idx").contains("bad magic"));
    let mut g = gzip(&idx_bytes(&[4]));
    g[0] = 0x1e; // no longer gzip, and not IDX either
    assert!(idx_error("magic3", &g).contains("bad magic"));
}

#[test]
fn truncated_files_are_errors() {
    let raw = idx_bytes(&[10, 7]);
    for cut in [0, 3, 6, 11, raw.len() - 1] {
        let msg = idx_error("trunc", &raw[..cut]);
        assert!(msg.contains("truncated"), "cut at {cut}: {msg}");
    }
    let gz = gzip(&raw);
    for cut in [2, 10, gz.len() / 2, gz.len() - 4, gz.len() - 1] {
        let msg = idx_error("trunc-gz", &gz[..cut]);
        assert!(msg.contains("truncated") || msg.contains("corrupt"), "gz cut at {cut}: {msg}");
    }
    let mut long = raw.clone();
    long.push(0);
    assert!(idx_error("long", &long).contains("more data"));
    // A header asking for an absurd size is refused before any allocation.
    assert!(idx_error("huge", &[0, 0, 8, 3, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255])
        .contains("larger than"));
}

#[test]
fn wrong_counts_are_errors() {
    let tmp = TempDir::new("count");
    std::fs::write(tmp.0.join("train-images-idx3-ubyte"), idx_bytes(&[5, 28, 28])).unwrap();
    std::fs::write(tmp.0.join("train-labels-idx1-ubyte"), idx_bytes(&[60000])).unwrap();
    std::fs::write(tmp.0.join("t10k-images-idx3-ubyte"), idx_bytes(&[10000, 28, 28])).unwrap();
    std::fs::write(tmp.0.join("t10k-labels-idx1-ubyte"), idx_bytes(&[10000])).unwrap();
    let msg = mnist_from(&tmp.0).unwrap_err().to_string();
    assert!(
        msg.contains("train-images-idx3-ubyte") && msg.contains("[5, 28, 28]") && msg.contains("[60000, 28, 28]"),
        "{msg}"
    );
    // Fixing the images makes the crafted set load (labels and images need not be real).
    std::fs::write(tmp.0.join("train-images-idx3-ubyte"), idx_bytes(&[60000, 28, 28])).unwrap();
    let (x, y, _, _) = mnist_from(&tmp.0).unwrap();
    assert_eq!(x.shape(), vec![60000, 1, 28, 28]);
    assert_eq!(y.to_vec::<u8>().unwrap()[..3], [0, 1, 2]);
}

#[test]
fn gzipped_files_must_match_their_checksum() {
    let tmp = TempDir::new("sha");
    std::fs::write(tmp.0.join("train-images-idx3-ubyte"), idx_bytes(&[60000, 28, 28])).unwrap();
    std::fs::write(tmp.0.join("train-labels-idx1-ubyte.gz"), gzip(&idx_bytes(&[60000]))).unwrap();
    std::fs::write(tmp.0.join("t10k-images-idx3-ubyte"), idx_bytes(&[10000, 28, 28])).unwrap();
    std::fs::write(tmp.0.join("t10k-labels-idx1-ubyte"), idx_bytes(&[10000])).unwrap();
    let e = mnist_from(&tmp.0).unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, Error::Format { .. }), "{e:?}");
    assert!(
        msg.contains("train-labels-idx1-ubyte.gz") && msg.contains("SHA-256") && msg.contains("delete it"),
        "{msg}"
    );
}

fn have_curl() -> bool {
    let ok = std::process::Command::new("curl").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        println!("skipping: curl not found");
    }
    ok
}

#[test]
fn downloads_with_curl_and_checks_checksums() {
    let Some(src) = shared_mnist() else { return };
    if !have_curl() {
        return;
    }
    let dest = TempDir::new("dl");
    let base = format!("file://{}/", src.canonicalize().unwrap().display());
    download_mnist(&dest.0, &base).unwrap();
    assert!(missing_mnist_files(&dest.0).is_empty());
    let (x, ..) = mnist_from(&dest.0).unwrap();
    assert_eq!(x.shape(), vec![60000, 1, 28, 28]);

    // A mirror serving other bytes: refused, nothing saved.
    let bad_src = TempDir::new("dl-bad-src");
    for n in NAMES {
        std::fs::write(bad_src.0.join(format!("{n}.gz")), gzip(b"not mnist")).unwrap();
    }
    let dest2 = TempDir::new("dl-bad");
    let e = download_mnist(&dest2.0, &format!("file://{}/", bad_src.0.display())).unwrap_err();
    assert!(matches!(e, Error::Format { .. }) && e.to_string().contains("SHA-256"), "{e}");
    assert_eq!(missing_mnist_files(&dest2.0).len(), 4);
    assert_eq!(std::fs::read_dir(&dest2.0).unwrap().count(), 0, "partial download left behind");

    // A mirror without the files: NotFound naming the URL.
    let e = download_mnist(&dest2.0, &format!("file://{}/nowhere/", dest2.0.display())).unwrap_err();
    assert!(matches!(e, Error::NotFound { .. }) && e.to_string().contains("train-images-idx3-ubyte.gz"), "{e}");
}
