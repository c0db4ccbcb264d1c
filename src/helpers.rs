//! Small shared helpers: environment variables, stable hashing, the cache directory.

use std::path::PathBuf;
use std::sync::OnceLock;

/// An integer environment variable (`DEBUG=2`), or `default` when unset or not a number.
pub fn getenv_int(name: &str, default: i64) -> i64 {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// `DEBUG`, read once per process.
pub fn debug_level() -> i64 {
    static LEVEL: OnceLock<i64> = OnceLock::new();
    *LEVEL.get_or_init(|| crate::flags::int("DEBUG"))
}

/// A stable 128-bit hash (two FNV-1a lanes) as 32 hex digits; used for on-disk cache keys, so it
/// must not change between runs or Rust versions.
pub fn stable_hash_hex(parts: &[&[u8]]) -> String {
    let mut a: u64 = 0xcbf2_9ce4_8422_2325;
    let mut b: u64 = 0x6c62_272e_07bb_0142;
    for p in parts {
        for &byte in p.iter().chain(std::iter::once(&0xffu8)) {
            a = (a ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3);
            b = (b ^ byte as u64).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(7);
        }
    }
    format!("{a:016x}{b:016x}")
}

/// The user's cache directory for ferrograd: `$FERROGRAD_CACHE`, else `$XDG_CACHE_HOME/ferrograd`,
/// else `~/.cache/ferrograd`, else the system temp dir.
pub fn cache_dir() -> PathBuf {
    if let Some(p) = crate::flags::text("FERROGRAD_CACHE") {
        return PathBuf::from(p);
    }
    if let Ok(p) = std::env::var("XDG_CACHE_HOME") {
        if !p.is_empty() {
            return PathBuf::from(p).join("ferrograd");
        }
    }
    if let Ok(h) = std::env::var("HOME") {
        if !h.is_empty() {
            return PathBuf::from(h).join(".cache").join("ferrograd");
        }
    }
    std::env::temp_dir().join("ferrograd")
}

/// Formats a duration in seconds for DEBUG output (`12.34us`, `1.20ms`, `2.00s`).
pub fn fmt_time(secs: f64) -> String {
    if secs < 1e-3 {
        format!("{:7.2}us", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:7.2}ms", secs * 1e3)
    } else {
        format!("{:7.2}s ", secs)
    }
}
