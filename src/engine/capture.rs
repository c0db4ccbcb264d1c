//! Capturing executed steps (for TinyJit): while a capture is open on a thread, every step the
//! engine runs there — kernel launches and copies, with their buffers — is recorded.
//!
//! Captures nest: each open capture is a frame, and a step is recorded in every open frame, so
//! a TinyJit capturing around another one (that runs, captures or replays inside it) sees all
//! of its kernels. A frame is closed by its guard, also when the captured function panics, so a
//! panic never leaves the thread capturing.

use super::step::Step;
use crate::runtime::Buffer;
use std::cell::RefCell;
use std::sync::Arc;

/// One executed step and what it ran on.
#[derive(Clone)]
pub struct Recorded {
    pub step: Step,
    pub bufs: Vec<Arc<Buffer>>,
    pub device: String,
    /// The kernel writes an assign's target (state that outlives the call), not a new buffer.
    pub assign: bool,
    /// The values its variables had (a replay passes the call's own values instead).
    pub var_vals: Vec<(Arc<str>, i64)>,
}

/// A check of values a capture computed: the `[min, max]` in `buf` must lie in `lo..hi`
/// (index bounds; for a `condition`, `max` counts the elements breaking it and must be 0). A
/// replay checks them again after running.
#[derive(Clone)]
pub struct Check {
    pub buf: Arc<Buffer>,
    pub lo: i64,
    pub hi: i64,
    pub what: String,
    pub condition: bool,
}

/// What one capture saw.
#[derive(Default)]
pub struct Captured {
    pub steps: Vec<Recorded>,
    pub checks: Vec<Check>,
    /// Tensor data was read while capturing (an error even if the function ignored it: the
    /// value would be frozen into the replays).
    pub read_attempted: bool,
}

thread_local! {
    static FRAMES: RefCell<Vec<Captured>> = const { RefCell::new(Vec::new()) };
}

/// An open capture; dropping it without `finish` (a panic) discards what it recorded.
pub struct CaptureGuard {
    depth: usize,
    finished: bool,
}

/// Opens a capture on this thread.
pub fn begin() -> CaptureGuard {
    let depth = FRAMES.with(|f| {
        let mut f = f.borrow_mut();
        f.push(Captured::default());
        f.len()
    });
    CaptureGuard { depth, finished: false }
}

impl CaptureGuard {
    /// Closes the capture and returns what it recorded.
    pub fn finish(mut self) -> Captured {
        self.finished = true;
        FRAMES.with(|f| {
            let mut f = f.borrow_mut();
            debug_assert_eq!(f.len(), self.depth, "captures close in the order they opened");
            f.pop().expect("an open capture")
        })
    }
}

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        if !self.finished {
            FRAMES.with(|f| f.borrow_mut().truncate(self.depth - 1));
        }
    }
}

/// Whether a capture is open on this thread.
pub fn is_capturing() -> bool {
    FRAMES.with(|f| !f.borrow().is_empty())
}

/// Notes that tensor data was read while capturing.
pub fn note_read() {
    FRAMES.with(|f| f.borrow_mut().iter_mut().for_each(|c| c.read_attempted = true));
}

/// Records an executed step in every open capture.
pub fn record(rec: Recorded) {
    FRAMES.with(|f| {
        let mut frames = f.borrow_mut();
        if let Some((last, rest)) = frames.split_last_mut() {
            for c in rest {
                c.steps.push(rec.clone());
            }
            last.steps.push(rec);
        }
    });
}

/// Records a check in every open capture.
pub fn record_check(check: Check) {
    FRAMES.with(|f| f.borrow_mut().iter_mut().for_each(|c| c.checks.push(check.clone())));
}
