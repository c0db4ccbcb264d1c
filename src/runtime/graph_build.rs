//! Which device graph a run of launches becomes: the first device kind whose programs they all
//! are (kept apart from `graph.rs`, which the device files import).

use super::graph::{DeviceGraph, GraphLaunch};
use crate::error::Result;

/// `launches` (one device's programs, in order) as one device graph for TinyJit's replays;
/// `None` where the device has no graphs (its kernels replay one by one).
pub(crate) fn build(device: &str, launches: &[GraphLaunch]) -> Option<Result<Box<dyn DeviceGraph>>> {
    if let Some(g) = super::cpu_graph::build(device, launches) {
        return Some(g);
    }
    #[cfg(feature = "cuda")]
    if let Some(g) = super::cuda::graph::build(device, launches) {
        return Some(g);
    }
    None
}
