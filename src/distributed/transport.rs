//! The contract between a communicator and what moves its bytes.

use crate::error::Result;
use std::time::Duration;

/// Moves bytes between the ranks of a group.
pub trait Transport: Send + Sync {
    fn rank(&self) -> usize;
    fn world_size(&self) -> usize;
    /// Every rank's `data`, in rank order (this rank's own included).
    fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>>;
}

/// How long a collective waits for the other ranks (`DIST_TIMEOUT`, seconds).
pub fn timeout() -> Duration {
    Duration::from_secs(crate::flags::int("DIST_TIMEOUT").max(1) as u64)
}
