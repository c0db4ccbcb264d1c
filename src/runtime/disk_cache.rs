//! The on-disk kernel cache: one folder per device kind under the user's cache directory, one
//! file per compiled kernel, named by a hash of everything the binary depends on.
//!
//! Entries are written under a temporary name and renamed into place, so a reader never sees
//! half a file (another process may be reading the folder at the same time). Entries are
//! checked before use by the device's validator (an ELF header for shared objects): an invalid
//! one is deleted and compiled again, so a corrupt cache never takes a later run down. Failures
//! to write are reported once per process on stderr (the kernels still run; they are compiled
//! again next time).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub struct DiskCache {
    dir: PathBuf,
    ext: &'static str,
}

/// A name no other writer uses: process id and a per-process counter.
fn unique_suffix() -> String {
    static SERIAL: AtomicUsize = AtomicUsize::new(0);
    format!("{}-{}", std::process::id(), SERIAL.fetch_add(1, Ordering::Relaxed))
}

impl DiskCache {
    /// The cache in `dir` for files ending in `.ext`.
    pub fn new(dir: PathBuf, ext: &'static str) -> DiskCache {
        DiskCache { dir, ext }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the entry for `key` lives.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.{}", self.ext))
    }

    /// A fresh path in the cache folder for a file being written (renamed into place later).
    pub fn temp_path(&self, tag: &str) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(&self.dir)?;
        Ok(self.dir.join(format!("tmp-{tag}-{}.{}", unique_suffix(), self.ext)))
    }

    /// The entry for `key` if it exists and `valid` accepts its bytes; an invalid entry is
    /// removed.
    pub fn lookup(&self, key: &str, valid: impl Fn(&[u8]) -> bool) -> Option<PathBuf> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        if valid(&bytes) {
            return Some(path);
        }
        if crate::helpers::debug_level() >= 1 {
            eprintln!("kernel cache: {} is corrupt; compiling it again", path.display());
        }
        let _ = std::fs::remove_file(&path);
        None
    }

    /// Reads the entry for `key` if it exists and `valid` accepts it (else removes it).
    #[cfg(any(feature = "cuda", feature = "hip"))]
    pub fn read(&self, key: &str, valid: impl Fn(&[u8]) -> bool) -> Option<Vec<u8>> {
        let path = self.lookup(key, valid)?;
        std::fs::read(path).ok()
    }

    /// Stores the finished file `file` (in the cache folder) as the entry of every key in
    /// `keys`: a hard link (or copy) under a temporary name, then an atomic rename.
    pub fn store_file(&self, file: &Path, keys: &[&str]) {
        for key in keys {
            let result = self.temp_path(key).and_then(|tmp| {
                if std::fs::hard_link(file, &tmp).is_err() {
                    std::fs::copy(file, &tmp)?;
                }
                std::fs::rename(&tmp, self.path(key)).inspect_err(|_| {
                    let _ = std::fs::remove_file(&tmp);
                })
            });
            if let Err(e) = result {
                self.report(&e);
            }
        }
    }

    /// Stores `bytes` as the entry for `key` (written to a temporary file, then renamed).
    #[cfg(any(feature = "cuda", feature = "hip"))]
    pub fn store_bytes(&self, key: &str, bytes: &[u8]) {
        let result = self.temp_path(key).and_then(|tmp| {
            std::fs::write(&tmp, bytes)?;
            std::fs::rename(&tmp, self.path(key)).inspect_err(|_| {
                let _ = std::fs::remove_file(&tmp);
            })
        });
        if let Err(e) = result {
            self.report(&e);
        }
    }

    fn report(&self, e: &std::io::Error) {
        static REPORTED: AtomicBool = AtomicBool::new(false);
        if !REPORTED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "ferrograd: could not write the kernel cache in {}: {e}. Kernels run, but are compiled again \
                 in the next process; set FERROGRAD_CACHE to a writable folder.",
                self.dir.display()
            );
        }
    }
}

/// Whether `bytes` is a complete 64-bit little-endian ELF shared object: the header, the
/// program headers and every loadable segment lie inside the file (a truncated file would make
/// the loader map pages past its end, and touching them is SIGBUS), and so do the section
/// headers.
pub fn is_complete_elf_shared_object(bytes: &[u8]) -> bool {
    let u16_at = |o: usize| bytes.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64);
    let u64_at = |o: usize| bytes.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64);
    let len = bytes.len() as u64;
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
        return false;
    }
    let check = || -> Option<bool> {
        let e_type = u16_at(16)?;
        let (phoff, shoff) = (u64_at(32)?, u64_at(40)?);
        let (phentsize, phnum) = (u16_at(54)?, u16_at(56)?);
        let (shentsize, shnum) = (u16_at(58)?, u16_at(60)?);
        if e_type != 3 || phentsize < 56 || phnum == 0 {
            return Some(false);
        }
        if phoff.checked_add(phentsize * phnum)? > len || shoff.checked_add(shentsize * shnum)? > len {
            return Some(false);
        }
        for i in 0..phnum {
            let ph = (phoff + i * phentsize) as usize;
            let (p_type, p_offset, p_filesz) = (u32_at(ph)?, u64_at(ph + 8)?, u64_at(ph + 32)?);
            // PT_LOAD segments are what dlopen maps.
            if p_type == 1 && p_offset.checked_add(p_filesz)? > len {
                return Some(false);
            }
        }
        Some(true)
    };
    check().unwrap_or(false)
}
