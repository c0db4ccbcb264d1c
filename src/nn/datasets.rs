//! Data sets. MNIST comes from the four standard IDX files (gzipped or not) found in
//! `$MNIST_DIR` or the cache directory; missing files are downloaded with `curl` from a public
//! mirror into the cache directory when possible. Every `.gz` file is checked against its known
//! SHA-256, and every file against the IDX format and the sizes MNIST must have.

use crate::error::{Error, Result};
use crate::tensor::Tensor;
use flate2::read::GzDecoder;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The mirror tinygrad downloads MNIST from (the original site now refuses scripted downloads).
pub const MNIST_MIRROR: &str = "https://storage.googleapis.com/cvdf-datasets/mnist/";

/// The largest IDX payload [`read_idx`] accepts, so that a corrupt header cannot ask for an
/// absurd allocation (the largest common IDX file, EMNIST by class, is about 550 MB).
const MAX_IDX_BYTES: usize = 4 << 30;

/// One of the four MNIST files: its name (without `.gz`), the SHA-256 of its `.gz` form and the
/// shape its IDX header must give.
struct MnistFile {
    name: &'static str,
    sha256: &'static str,
    shape: &'static [usize],
}

const MNIST_FILES: [MnistFile; 4] = [
    MnistFile {
        name: "train-images-idx3-ubyte",
        sha256: "0b367032e93c5d0cea0925647cfdb18614af8ee15f83e6f2fc2ad904a6835971",
        shape: &[60000, 28, 28],
    },
    MnistFile {
        name: "train-labels-idx1-ubyte",
        sha256: "1787548bbe0bff1ec2ecdc0ef292b02df999e2d1a6002d27500982c652b17203",
        shape: &[60000],
    },
    MnistFile {
        name: "t10k-images-idx3-ubyte",
        sha256: "1a1a05eab793c14bb050b398624a11b0ffd1a2953baed553b1b9bd079e2a20be",
        shape: &[10000, 28, 28],
    },
    MnistFile {
        name: "t10k-labels-idx1-ubyte",
        sha256: "b91679a0acfe4ba0e50a2437a903084cba1f5f92592b016a25a7dfd00455798b",
        shape: &[10000],
    },
];

/// MNIST as `(train images u8 [60000, 1, 28, 28], train labels u8 [60000], test images u8
/// [10000, 1, 28, 28], test labels u8 [10000])` on the default device.
///
/// The files are looked up in `$MNIST_DIR`, then in `cache_dir()/mnist` (see
/// [`mnist_dirs`]); the first directory holding all four is used. Otherwise the missing files
/// are downloaded from [`MNIST_MIRROR`] into `cache_dir()/mnist` with `curl`; if that is not
/// possible the error lists the missing files and where to put them.
pub fn mnist() -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    let env: BTreeMap<String, String> =
        crate::flags::text("MNIST_DIR").map(|v| ("MNIST_DIR".into(), v)).into_iter().collect();
    let dirs = mnist_dirs(&env, &crate::helpers::cache_dir());
    if let Some(dir) = dirs.iter().find(|d| missing_mnist_files(d).is_empty()) {
        return mnist_from(dir);
    }
    let cache = dirs.last().expect("mnist_dirs always includes the cache directory");
    match download_mnist(cache, MNIST_MIRROR) {
        Ok(()) => mnist_from(cache),
        Err(Error::NotFound { help: reason, .. }) => {
            let looked: Vec<String> = dirs
                .iter()
                .map(|d| format!("{} (missing: {})", d.display(), missing_mnist_files(d).join(", ")))
                .collect();
            Err(Error::NotFound {
                what: "MNIST data set".into(),
                help: format!(
                    "Looked in {}. Downloading the missing files failed: {reason} \
                     Get the four files (each may be gzipped, with `.gz`) from {MNIST_MIRROR} and put them in \
                     the directory named by $MNIST_DIR or in {}.",
                    looked.join(" and "),
                    cache.display()
                ),
            })
        }
        Err(e) => Err(e),
    }
}

/// The directories MNIST is looked up in, in order: `MNIST_DIR` from `env` (when set and not
/// empty), then `cache_dir/mnist`. Takes the environment as an argument so that it can be
/// tested without touching the process environment.
pub fn mnist_dirs(env: &BTreeMap<String, String>, cache_dir: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = env.get("MNIST_DIR").filter(|d| !d.trim().is_empty()) {
        dirs.push(PathBuf::from(d));
    }
    dirs.push(cache_dir.join("mnist"));
    dirs
}

/// The MNIST file names (without `.gz`) that `dir` holds in neither form.
pub fn missing_mnist_files(dir: &Path) -> Vec<String> {
    MNIST_FILES.iter().filter(|f| locate(dir, f.name).is_none()).map(|f| f.name.to_string()).collect()
}

/// `dir/name.gz` if it exists, else `dir/name`, else nothing.
fn locate(dir: &Path, name: &str) -> Option<PathBuf> {
    [dir.join(format!("{name}.gz")), dir.join(name)].into_iter().find(|p| p.is_file())
}

/// MNIST from the four files in `dir` (no download; see [`mnist`] for the shapes).
pub fn mnist_from(dir: impl AsRef<Path>) -> Result<(Tensor, Tensor, Tensor, Tensor)> {
    let dir = dir.as_ref();
    let missing = missing_mnist_files(dir);
    if !missing.is_empty() {
        return Err(Error::NotFound {
            what: format!("MNIST files {} in {}", missing.join(", "), dir.display()),
            help: format!("Put them there (gzipped as `.gz` or not); they are on {MNIST_MIRROR}."),
        });
    }
    let mut out = Vec::with_capacity(4);
    for f in &MNIST_FILES {
        let path = locate(dir, f.name).expect("checked above");
        let bytes = std::fs::read(&path).map_err(|source| Error::File { path: path.clone(), source })?;
        if is_gzip(&bytes) {
            verify_sha256(&path, &bytes, f.sha256)?;
        }
        let (shape, data) = parse_idx(&path, &bytes)?;
        if shape != f.shape {
            return Err(Error::Format {
                path,
                message: format!(
                    "MNIST file holds shape {shape:?}, expected {:?}; it is not the original file — replace it with \
                     the one from {MNIST_MIRROR}",
                    f.shape
                ),
            });
        }
        // Images get a channel axis: [N, 1, 28, 28].
        let shape = if shape.len() == 3 { vec![shape[0], 1, shape[1], shape[2]] } else { shape };
        out.push(Tensor::from_vec(data, shape));
    }
    let mut it = out.into_iter();
    let mut next = || it.next().expect("four files");
    Ok((next(), next(), next(), next()))
}

/// Reads an unsigned-byte IDX file (gzipped or not; detected by its content) into a u8 tensor
/// of the shape its header gives, on the default device.
pub fn read_idx(path: impl AsRef<Path>) -> Result<Tensor> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| Error::File { path: path.to_path_buf(), source })?;
    let (shape, data) = parse_idx(path, &bytes)?;
    Ok(Tensor::from_vec(data, shape))
}

fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// Parses IDX bytes (gunzipping first if they are gzip): magic `00 00 08 ndim`, `ndim`
/// big-endian u32 dimensions, then exactly their product of bytes.
fn parse_idx(path: &Path, bytes: &[u8]) -> Result<(Vec<usize>, Vec<u8>)> {
    let bad = |message: String| Error::Format { path: path.to_path_buf(), message };
    let gz = is_gzip(bytes);
    let mut r: Box<dyn Read + '_> = if gz { Box::new(GzDecoder::new(bytes)) } else { Box::new(bytes) };
    let what = if gz { "gzip data" } else { "file" };
    // A short read is a truncated file (or, for gzip, corrupt compressed data).
    let short = |e: std::io::Error, part: &str| {
        let why = if e.kind() == std::io::ErrorKind::UnexpectedEof { "ends early".into() } else { e.to_string() };
        bad(format!("{what} {why} while reading the {part}; the file is truncated or corrupt — download it again"))
    };
    let mut magic = [0u8; 4];
    r.read_exact(&mut magic).map_err(|e| short(e, "IDX header"))?;
    if magic[0] != 0 || magic[1] != 0 || magic[2] != 0x08 || magic[3] == 0 {
        return Err(bad(format!(
            "bad magic number {:02x}{:02x}{:02x}{:02x}: not an unsigned-byte IDX file (expected 000008xx{})",
            magic[0],
            magic[1],
            magic[2],
            magic[3],
            if gz { "" } else { ", or gzip data" }
        )));
    }
    let mut shape = Vec::with_capacity(magic[3] as usize);
    for _ in 0..magic[3] {
        let mut d = [0u8; 4];
        r.read_exact(&mut d).map_err(|e| short(e, "IDX header"))?;
        shape.push(u32::from_be_bytes(d) as usize);
    }
    let size = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d)).filter(|&n| n <= MAX_IDX_BYTES);
    let size = size.ok_or_else(|| bad(format!("IDX header gives shape {shape:?}, larger than this reader accepts")))?;
    // Read incrementally (no allocation of the declared size up front), one byte past it to
    // detect trailing data.
    let mut data = Vec::new();
    r.by_ref().take(size as u64 + 1).read_to_end(&mut data).map_err(|e| short(e, "data"))?;
    match data.len().cmp(&size) {
        std::cmp::Ordering::Less => Err(bad(format!(
            "{what} has {} data bytes, the IDX header (shape {shape:?}) needs {size}; the file is truncated — \
             download it again",
            data.len()
        ))),
        std::cmp::Ordering::Greater => Err(bad(format!(
            "{what} has more data than the IDX header (shape {shape:?}) describes; the file is corrupt"
        ))),
        std::cmp::Ordering::Equal => {
            // A gzip stream must also end properly (its CRC and length trailer are checked at EOF).
            let mut rest = Vec::new();
            r.read_to_end(&mut rest).map_err(|e| short(e, "gzip trailer"))?;
            Ok((shape, data))
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn verify_sha256(path: &Path, bytes: &[u8], want: &str) -> Result<()> {
    let have = sha256_hex(bytes);
    if have == want {
        return Ok(());
    }
    Err(Error::Format {
        path: path.to_path_buf(),
        message: format!(
            "SHA-256 is {have}, expected {want}: the file is corrupt or not the original; delete it (it is \
             downloaded again when missing) or replace it with the file from {MNIST_MIRROR}"
        ),
    })
}

/// Downloads the MNIST `.gz` files `dir` lacks (in either form) from `base_url` (ending in `/`;
/// any URL `curl` takes, `file://` included) into `dir`, checking each SHA-256 before it is
/// moved into place. Errors: [`Error::NotFound`] when `curl` is missing or a download fails,
/// [`Error::Format`] when a downloaded file has the wrong checksum.
pub fn download_mnist(dir: &Path, base_url: &str) -> Result<()> {
    let missing: Vec<&MnistFile> = MNIST_FILES.iter().filter(|f| locate(dir, f.name).is_none()).collect();
    if missing.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|source| Error::File { path: dir.to_path_buf(), source })?;
    for f in missing {
        let url = format!("{base_url}{}.gz", f.name);
        let dest = dir.join(format!("{}.gz", f.name));
        let part = dir.join(format!(".{}.gz.part-{}", f.name, std::process::id()));
        let not_found = |reason: String| Error::NotFound { what: format!("MNIST file {url}"), help: reason };
        let run = Command::new("curl")
            .args(["-fsSL", "--connect-timeout", "15", "--retry", "2", "-o"])
            .arg(&part)
            .arg(&url)
            .output();
        let output = match run {
            Ok(o) => o,
            Err(e) => {
                return Err(not_found(format!("could not run `curl` ({e}); install curl or fetch the files by hand.")))
            }
        };
        if !output.status.success() {
            let _ = std::fs::remove_file(&part);
            // With retries curl repeats its message; the last line says it.
            let stderr = String::from_utf8_lossy(&output.stderr);
            let why = stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            return Err(not_found(format!("`curl {url}` failed ({}): {why}.", output.status)));
        }
        let bytes = std::fs::read(&part).map_err(|source| Error::File { path: part.clone(), source })?;
        let have = sha256_hex(&bytes);
        if have != f.sha256 {
            let _ = std::fs::remove_file(&part);
            return Err(Error::Format {
                path: dest,
                message: format!(
                    "the download from {url} has SHA-256 {have}, expected {}; the mirror served another file \
                     (nothing was saved) — fetch the original file by hand",
                    f.sha256
                ),
            });
        }
        std::fs::rename(&part, &dest).map_err(|source| Error::File { path: dest.clone(), source })?;
    }
    Ok(())
}
