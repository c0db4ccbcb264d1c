//! What the CUDA-like GPU devices (CUDA, AMD) share about a launch: the grid and block a
//! kernel's global and local sizes give, checked against the device's limits, and the kernel's
//! value parameters in 8-byte slots.

use crate::error::{Error, Result};
use crate::renderer::ProgramSpec;
use crate::uop::Ops;

/// Device limits that decide whether a launch geometry is valid.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub block: [u32; 3],
    pub block_total: u32,
    pub grid: [u32; 3],
}

/// The grid (blocks) and block (threads) of `spec` on a device with `limits`: global size =
/// grid × block in each dimension. An error names the kernel when the geometry does not fit.
pub fn grid_and_block(device: &str, spec: &ProgramSpec, limits: Limits) -> Result<([u32; 3], [u32; 3])> {
    let global = spec.global_size;
    let local = spec.local_size.unwrap_or([1, 1, 1]);
    let fail = |message: String| Error::Launch { device: device.to_string(), kernel: spec.name.clone(), message };
    let (mut grid, mut block) = ([0u32; 3], [0u32; 3]);
    for d in 0..3 {
        let (g, l) = (global[d], local[d].max(1));
        if g % l != 0 {
            return Err(fail(format!("global size {global:?} is not a multiple of local size {local:?}")));
        }
        if l > limits.block[d] as usize || g / l > limits.grid[d] as usize {
            return Err(fail(format!("launch {global:?}/{local:?} exceeds the device limits")));
        }
        grid[d] = (g / l) as u32;
        block[d] = l as u32;
    }
    if block.iter().map(|&b| b as u64).product::<u64>() > limits.block_total as u64 {
        return Err(fail(format!("local size {local:?} exceeds {} threads per block", limits.block_total)));
    }
    Ok((grid, block))
}

/// Byte size of each of `spec`'s variable parameters, in argument order.
pub fn var_bytes(spec: &ProgramSpec) -> Vec<usize> {
    spec.uops.iter().filter(|u| u.op() == Ops::DEFINE_VAR).map(|u| u.dtype().itemsize()).collect()
}

/// Each value in an 8-byte slot, written at the front with its parameter's size (the launch APIs
/// copy a parameter's bytes from the pointer they are given).
pub fn value_slots(vals: &[i64], var_bytes: &[usize]) -> Vec<[u8; 8]> {
    vals.iter()
        .zip(var_bytes)
        .map(|(&v, &n)| {
            let mut slot = [0u8; 8];
            match n {
                1 => slot[..1].copy_from_slice(&(v as i8).to_ne_bytes()),
                2 => slot[..2].copy_from_slice(&(v as i16).to_ne_bytes()),
                4 => slot[..4].copy_from_slice(&(v as i32).to_ne_bytes()),
                _ => slot.copy_from_slice(&v.to_ne_bytes()),
            }
            slot
        })
        .collect()
}
