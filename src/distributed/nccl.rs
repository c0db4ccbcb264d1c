//! Ranks on NVIDIA GPUs exchanging through NCCL (cargo feature `nccl`, cudarc's NCCL bindings;
//! `libnccl.so.2` and the NVIDIA driver are loaded at run time, so building needs neither).
//! Rank 0 makes NCCL's unique id and hands it to the others over the TCP transport
//! (`MASTER_ADDR`/`MASTER_PORT`, as `torch.distributed`'s NCCL backend does); each rank then
//! drives one GPU (`LOCAL_RANK`, else its rank modulo the GPUs it sees). An exchange copies the
//! bytes to the GPU, all-gathers them with `ncclAllGather` (the lengths first, then the data
//! padded to the longest) and copies the result back.
//!
//! A rank that dies mid-collective is NCCL's to report; NCCL has no timeout of its own, so the
//! others may wait (set `NCCL_ASYNC_ERROR_HANDLING`/watchdogs as with PyTorch).

use super::transport::Transport;
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaStream};
use cudarc::nccl::{Comm, Id};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// NCCL's communicator and the stream its collectives run on.
struct Group {
    comm: Comm,
    stream: Arc<CudaStream>,
}

// SAFETY: an NCCL communicator may be used from any thread as long as no two calls on it
// overlap; `Group` is reached only through the `Mutex` in `Nccl`, so calls never overlap. The
// stream is `Send` already.
unsafe impl Send for Group {}

struct Nccl {
    group: Mutex<Group>,
    rank: usize,
    world: usize,
}

fn err(message: String) -> Error {
    Error::Distributed(message)
}

/// Whether the NVIDIA driver and NCCL libraries can be loaded (cudarc panics on a missing one).
fn libraries_missing() -> Option<&'static str> {
    // SAFETY: each check only tries to open the library by its candidate names.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Some("the NVIDIA driver's libcuda.so.1 (install the NVIDIA driver: NCCL needs a GPU)");
    }
    // SAFETY: as above.
    if !unsafe { cudarc::nccl::sys::is_culib_present() } {
        return Some(
            "NCCL's libnccl.so.2 (apt-get install libnccl2, or pip install nvidia-nccl-cu12 and add its lib \
             folder to LD_LIBRARY_PATH)",
        );
    }
    None
}

/// Joins the group as `rank` of `world`: the unique id travels over TCP from rank 0 at `addr`.
pub(crate) fn connect(rank: usize, world: usize, addr: &str, timeout: Duration) -> Result<Box<dyn Transport>> {
    if let Some(missing) = libraries_missing() {
        return Err(err(format!("the NCCL backend could not load {missing}; without GPUs use TCP or MPI")));
    }
    let gpus = CudaContext::device_count().map_err(|e| err(format!("counting the GPUs: {e}")))?;
    if gpus <= 0 {
        return Err(err("the NCCL backend found no GPU on this machine; use TCP or MPI".into()));
    }
    let local = match std::env::var("LOCAL_RANK").ok().filter(|v| !v.trim().is_empty()) {
        Some(v) => v.trim().parse::<usize>().map_err(|_| err(format!("LOCAL_RANK={v:?} is not a number")))?,
        None => rank % gpus as usize,
    };
    let ctx = CudaContext::new(local).map_err(|e| err(format!("rank {rank}: opening GPU {local}: {e}")))?;
    let stream = ctx.new_stream().map_err(|e| err(format!("rank {rank}: a stream on GPU {local}: {e}")))?;
    // The id: made by rank 0, everyone's copy from its exchange.
    let bootstrap = super::tcp::connect(rank, world, addr, timeout)?;
    let mine = if rank == 0 {
        let id = Id::new().map_err(|e| err(format!("ncclGetUniqueId: {e:?}")))?;
        id.internal().iter().map(|&c| c as u8).collect()
    } else {
        Vec::new()
    };
    let parts = bootstrap.all_gather_bytes(&mine)?;
    let bytes: [u8; 128] = parts[0].as_slice().try_into().map_err(|_| err("rank 0 sent no NCCL id".into()))?;
    let id = Id::uninit(bytes.map(|b| b as std::ffi::c_char));
    let comm = Comm::from_rank(stream.clone(), rank, world, id)
        .map_err(|e| err(format!("rank {rank}: ncclCommInitRank on GPU {local}: {e:?}")))?;
    Ok(Box::new(Nccl { group: Mutex::new(Group { comm, stream }), rank, world }))
}

impl Transport for Nccl {
    fn rank(&self) -> usize {
        self.rank
    }
    fn world_size(&self) -> usize {
        self.world
    }

    fn all_gather_bytes(&self, data: &[u8]) -> Result<Vec<Vec<u8>>> {
        let g = self.group.lock().unwrap_or_else(|e| e.into_inner());
        let fail = |what: &str, e: String| err(format!("rank {}: {what}: {e}", self.rank));
        let gather = |send: &[u8]| -> Result<Vec<u8>> {
            let src = g.stream.clone_htod(send).map_err(|e| fail("copying to the GPU", e.to_string()))?;
            let mut dst =
                g.stream.alloc_zeros::<u8>(send.len() * self.world).map_err(|e| fail("cuMemAlloc", e.to_string()))?;
            g.comm.all_gather(&src, &mut dst).map_err(|e| fail("ncclAllGather", format!("{e:?}")))?;
            g.stream.clone_dtoh(&dst).map_err(|e| fail("copying from the GPU", e.to_string()))
        };
        let lens: Vec<usize> = gather(&(data.len() as u64).to_le_bytes())?
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")) as usize)
            .collect();
        let longest = lens.iter().copied().max().unwrap_or(0);
        if longest == 0 {
            return Ok(vec![Vec::new(); self.world]);
        }
        let mut padded = data.to_vec();
        padded.resize(longest, 0);
        let all = gather(&padded)?;
        Ok(lens.iter().enumerate().map(|(r, &n)| all[r * longest..r * longest + n].to_vec()).collect())
    }
}
